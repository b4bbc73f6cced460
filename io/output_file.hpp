#pragma once
// Output files are written under a temporary name and renamed when complete, so a run that
// fails or is interrupted never leaves a file that looks finished.
#include <hdf5.h>

#include <string>
#include <vector>

#include "io/hdf5_file.hpp"

namespace seisrtm::io {

// A file written as `<final>.partial` and renamed to `<final>` by commit(); removed by the
// destructor when not committed.
class PartialFile {
 public:
  explicit PartialFile(std::string final_path);
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile();
  const std::string& temp_path() const { return temp_; }
  const std::string& final_path() const { return final_; }
  void commit();

 private:
  std::string final_, temp_;
  bool committed_ = false;
};

// Creates `directory` (and parents) or throws an Error naming it and saying why.
void ensure_directory(const std::string& directory);

// The HDF5 result file of a run.
class OutputFile {
 public:
  OutputFile(const std::string& directory, const std::string& name);
  hid_t root() const { return file_.get(); }
  const std::string& path() const { return partial_.final_path(); }
  std::string file_name() const;

  // A chunked float dataset [d0, d1, ...] filled later slab by slab along the first axis.
  void create_chunked(const std::string& name, const std::vector<hsize_t>& dims);
  // Writes slab `index` of a dataset made by create_chunked (all but the first axis).
  void write_slab(const std::string& name, hsize_t index, const float* data);
  void create_group(const std::string& name);
  void commit();

 private:
  PartialFile partial_;
  H5Handle file_;
};

// XDMF sidecar so ParaView opens the model and the snapshots of each shot (temporal grids).
struct XdmfVolume {
  std::string dataset;  // path in the HDF5 file, e.g. /snapshots/shot_0000
  std::string name;     // attribute name shown in ParaView
  long long time_steps = 0;  // 0: a static 3D dataset; else [time][z][y][x]
  std::vector<double> times;  // s, one per time step
};
void write_xdmf(const std::string& path, const std::string& h5_file_name,
                const std::array<long long, 3>& n, const std::array<double, 3>& h,
                const std::vector<XdmfVolume>& volumes);

}  // namespace seisrtm::io
