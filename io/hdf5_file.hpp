#pragma once
// Small RAII layer over the HDF5 C API: handles close themselves, errors become
// seisrtm::Error naming the file and the object.
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace seisrtm::io {

class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  H5Handle& operator=(H5Handle&& o) noexcept;
  ~H5Handle();
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Gives up ownership, for a close whose result the caller checks (H5Fclose of an output).
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Silences HDF5's own error stack printing for the life of the object (we report ourselves).
class H5QuietErrors {
 public:
  H5QuietErrors();
  ~H5QuietErrors();
  H5QuietErrors(const H5QuietErrors&) = delete;
  H5QuietErrors& operator=(const H5QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

struct Array3 {
  std::array<long long, 3> shape{0, 0, 0};  // [n0, n1, n2] as stored (slowest first)
  std::vector<float> data;
};

// Reads a float dataset (any stored float type, converted) of rank 3.
Array3 read_float3(const std::string& file, const std::string& dataset);
// Reads a 1D float dataset; `dt` receives the attribute "dt" when present (else 0). A dt that
// is not one number (a string, several values) is refused naming the file, dataset and attribute.
std::vector<float> read_float1(const std::string& file, const std::string& dataset, double* dt);

// What a dataset declares, from the file's metadata only: its shape (empty when it cannot be
// read: the reader then says why) and its attribute dt (0 when absent or not one number: the
// reader then says why). A small file can declare a huge dataset (a chunked one that was never
// written costs no disk), so shapes are compared with what a reader accepts before any value
// is read.
// origin, spacing: the dataset's attributes of those names, else the file root's (a result file
// of seisrtm run or migrate), as [x, y, z] m; empty when absent.
struct DeclaredDataset {
  std::vector<hsize_t> dims;
  double dt = 0;
  std::vector<double> origin, spacing;
};
DeclaredDataset declared_dataset(const std::string& file, const std::string& dataset);

// Dataset writers used by the output file and by tests that make inputs.
void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const float* data);
void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const double* data);
void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const long long* data);
void write_attribute(hid_t loc, const std::string& name, const std::string& value);
void write_attribute(hid_t loc, const std::string& name, const std::vector<double>& value);
void write_attribute(hid_t loc, const std::string& name, long long value);
void write_attribute(hid_t loc, const std::string& name, const std::vector<long long>& value);
// A scalar float64 (dt, stepping_seconds): h5py and xarray read it as a number, not an array.
void write_attribute(hid_t loc, const std::string& name, double value);
// A numeric attribute of `loc` as doubles (a scalar as one value, an array as its values);
// empty when absent. Readers of dt take either form: files before dt was a scalar hold [dt].
std::vector<double> read_attribute(hid_t loc, const std::string& name);

// Dimension scales (HDF5 High-Level H5DS, the netCDF-4 data model): a 1D coordinate dataset
// ("axis") attached to each dimension of a dataset names that dimension for xarray, h5netcdf,
// ncdump and HDFView (instead of phony_dim_N) and gives its coordinates. The dimension's name
// is the axis' last path component: /x, /time, /snapshots/time.
//
// Writes the axis `name` (float64 coordinates, with `units` and `long_name` attributes).
void write_axis(hid_t loc, const std::string& name, const std::vector<double>& values, const std::string& units,
                const std::string& long_name);
// Writes the axis `name` of indices 0..count-1 (int64, no units: shot, receiver, component).
void write_index_axis(hid_t loc, const std::string& name, long long count, const std::string& long_name);
// Makes the existing 1D dataset `name` an axis, with `units` (none when empty) and `long_name`.
void make_axis(hid_t loc, const std::string& name, const std::string& units, const std::string& long_name);
// Attaches axes[d] to dimension d of `dataset` (one axis a dimension, slowest first).
void attach_axes(hid_t loc, const std::string& dataset, const std::vector<std::string>& axes);
// The `units` and `long_name` attributes of the dataset `dataset` (units omitted when empty).
void describe_dataset(hid_t loc, const std::string& dataset, const std::string& units, const std::string& long_name);

// The grid's axes /x, /y, /z (float64, m): cell i of axis a is at origin[a] + i h[a], the
// position the solver gives it. n, h and origin are [x, y, z]. Volumes attach {"z", "y", "x"}.
void write_grid_axes(hid_t root, const std::array<long long, 3>& n, const std::array<double, 3>& h,
                     const std::array<double, 3>& origin);
// /component: int64 0, 1, 2 for the columns [x, y, z] of position datasets [n, 3].
void write_component_axis(hid_t root);

// Creates a file holding one float32 dataset (used for model and wavelet inputs).
void write_float_file(const std::string& file, const std::string& dataset, const std::vector<hsize_t>& dims,
                      const std::vector<float>& data, double dt_attribute = 0);

}  // namespace seisrtm::io
