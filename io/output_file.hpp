#pragma once
// A run's outputs (the HDF5 file, its XDMF sidecar and the pictures) are one set: every member
// is written under a temporary name unique to the run, all are flushed, closed and checked,
// and only then do they replace the previous set of the same name together (docs/RELIABILITY.md).
// A run that fails or is interrupted before that leaves the previous set as it was and removes
// its own temporaries, and only its own: two runs into one directory never touch each other's.
#include <hdf5.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"

namespace seisrtm {
struct Config;
}

namespace seisrtm::io {

// A file written as `<final>.<pid>.<random>.partial` and renamed to `<final>` by commit();
// removed by the destructor when not committed.
class PartialFile {
 public:
  // `removed_on_signal`: the signal handler unlinks the temporary at once (an output set's
  // member); false for a file that a signal must let its writer finish (a resume journal's).
  explicit PartialFile(std::string final_path, bool removed_on_signal = true);
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile();
  const std::string& temp_path() const { return temp_; }
  const std::string& final_path() const { return final_; }
  // Throws an Error naming the file when the rename could not replace `<final>` (a directory there).
  void check_replaceable() const;
  void commit();

 private:
  std::string final_, temp_;
  bool committed_ = false;
};

// `<final>` for a temporary path `<final>.<pid>.<random>.partial` (for messages); other paths as given.
std::string shown_name(const std::string& path);

// ": File too large" (disk full, quota, file size limit, I/O error, read-only or forbidden) from
// errno after a failed write, for messages; "" for any other errno, which may be stale.
std::string write_failure_reason();

// Creates `directory` (and parents) or throws an Error naming it and saying why.
void ensure_directory(const std::string& directory);

// Removes the temporaries `<directory>/<prefix>*.<pid>.<random>.partial` whose writer is gone
// (a SIGKILL leaves them): those whose process does not exist on this host; with `only_pid` > 0,
// those of that process only. Returns how many were removed.
int remove_dead_temporaries(const std::string& directory, const std::string& prefix, long only_pid = 0);

// No process of this id on this host, or a zombie.
bool process_gone(long pid);

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
  // H5Fflush and H5Fclose, both checked: a full disk often shows only here.
  void close();
  void commit();  // close() and rename
  PartialFile& partial() { return partial_; }

 private:
  PartialFile partial_;
  H5Handle file_;
};

// The files of one result set `<directory>/<name>`: `<name>.h5`, `<name>.xmf` and the pictures
// `<name>_<kind>.png` of the kinds run and migrate draw (gather_shot_NNNN, wavefield_shot_NNNN,
// model_vp, image_xz, image_normalized_xz, image_depth), the SEG-Y shot gathers
// `<name>_shot_NNNN.sgy` and the image cube `<name>_image.sgy` (output.segy). Nothing else in the directory is ever
// taken for part of a set.
bool in_output_set(const std::string& name, const std::string& file_name);

// A file a command reads and what names it ("config file", "model.vp.file", "migration.data").
struct InputFile {
  std::string path;
  std::string named_by;
};

// Every file a command run on `c` reads that a config names: the config file itself,
// model.<volume>.file, sources.wavelet.file, migration.data (each file a SEG-Y glob matches) and
// migration.wavelet.file. Files that are missing are left out (their readers say so).
std::vector<InputFile> input_files(const Config& c);

// Refuses, before any work, the result set `<directory>/<name>` when one of its members already
// in the directory (the files its commit replaces or removes) is a file in `inputs`, compared by
// identity (device and inode: other spellings and symbolic links are caught), or is a directory
// (a member cannot replace it). Throws an Error naming both files and how to avoid it.
void check_output_set(const std::string& directory, const std::string& name, const std::vector<InputFile>& inputs);

class OutputSet {
 public:
  // Creates the directory and the HDF5 member now, so an unwritable directory fails first.
  OutputSet(const std::string& directory, const std::string& name);
  OutputFile& h5() { return h5_; }
  // A further member `<directory>/<name><suffix>` (".xmf", "_model_vp.png"); returns the
  // temporary path to write it at. The writer closes it and checks the close.
  const std::string& add(const std::string& suffix);
  // Closes the HDF5 file, checks that every member can replace its file, removes the files of
  // the previous set that this one does not have, renames the other members and the HDF5 file
  // last. Nothing of the previous set is touched when anything fails before the first rename.
  void commit();
  // Final paths of the members other than the HDF5 file, in the order they were added.
  std::vector<std::string> others() const;

 private:
  std::string directory_, name_;
  OutputFile h5_;
  std::vector<std::unique_ptr<PartialFile>> others_;
};

// XDMF sidecar so ParaView opens the model and the snapshots of each shot (temporal grids).
struct XdmfVolume {
  std::string dataset;        // path in the HDF5 file, e.g. /model/vp or /snapshot_steps/shot_0000
  std::string name;           // attribute name shown in ParaView
  long long time_steps = 0;   // 0: a static 3D dataset; else a group of datasets KKKK, one a step
  std::vector<double> times;  // s, one per time step
};
// Writes the sidecar at `path` (a member's temporary path) through pugixml, so names and paths
// are escaped; checks the close. origin: the survey coordinates of node (0, 0, 0), [x, y, z] m.
void write_xdmf(const std::string& path, const std::string& h5_file_name, const std::array<long long, 3>& n,
                const std::array<double, 3>& h, const std::vector<XdmfVolume>& volumes,
                const std::array<double, 3>& origin = {0, 0, 0});

}  // namespace seisrtm::io
