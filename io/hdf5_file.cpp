#include "io/hdf5_file.hpp"

#include <hdf5_hl.h>

#include <filesystem>

#include "base/error.hpp"
#include "io/output_file.hpp"

namespace seisrtm::io {

H5Handle& H5Handle::operator=(H5Handle&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

H5Handle::~H5Handle() {
  if (id_ >= 0 && closer_) closer_(id_);
}

H5QuietErrors::H5QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
H5QuietErrors::~H5QuietErrors() {
  H5Eset_auto2(H5E_DEFAULT, func_, data_);
}

namespace {

H5Handle open_dataset(const std::string& file, const std::string& dataset, H5Handle& f) {
  if (!std::filesystem::exists(file)) throw Error("HDF5 file '" + file + "' does not exist");
  f = H5Handle(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("'" + file + "' is not a readable HDF5 file");
  if (H5Lexists(f.get(), dataset.c_str(), H5P_DEFAULT) <= 0)
    throw Error("HDF5 file '" + file + "' has no dataset '" + dataset + "'");
  H5Handle d(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw Error("HDF5 file '" + file + "': '" + dataset + "' is not a dataset");
  H5Handle t(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(t.get()) != H5T_FLOAT && H5Tget_class(t.get()) != H5T_INTEGER)
    throw Error("HDF5 file '" + file + "': dataset '" + dataset + "' must hold numbers");
  return d;
}

std::vector<hsize_t> dims_of(hid_t d) {
  H5Handle s(H5Dget_space(d), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(s.get());
  std::vector<hsize_t> dims(rank > 0 ? rank : 0);
  if (rank > 0) H5Sget_simple_extent_dims(s.get(), dims.data(), nullptr);
  return dims;
}

// The attribute dt (s) of dataset `d`: 0 when absent. `problem` says why it is not one number
// (a string, several values): such a dt was ignored, or read into one double past its end.
struct DtAttribute {
  double value = 0;
  std::string problem;
};
DtAttribute dt_attribute(hid_t d) {
  DtAttribute out;
  if (H5Aexists(d, "dt") <= 0) return out;
  H5Handle a(H5Aopen(d, "dt", H5P_DEFAULT), H5Aclose);
  if (!a.valid()) return {0, "cannot be opened"};
  H5Handle t(H5Aget_type(a.get()), H5Tclose);
  H5Handle s(H5Aget_space(a.get()), H5Sclose);
  const H5T_class_t type = H5Tget_class(t.get());
  const hssize_t n = H5Sget_simple_extent_npoints(s.get());
  if (type == H5T_STRING) return {0, "holds a string"};
  if (type != H5T_FLOAT && type != H5T_INTEGER) return {0, "does not hold a number"};
  if (n != 1) return {0, "holds " + std::to_string(n) + " values"};
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &out.value) < 0) return {0, "cannot be read as a number"};
  return out;
}

}  // namespace

Array3 read_float3(const std::string& file, const std::string& dataset) {
  H5QuietErrors quiet;
  H5Handle f;
  H5Handle d = open_dataset(file, dataset, f);
  const auto dims = dims_of(d.get());
  if (dims.size() != 3)
    throw Error("HDF5 file '" + file + "': dataset '" + dataset + "' must be 3D [nz, ny, nx], has rank " +
                std::to_string(dims.size()));
  Array3 a;
  for (int i = 0; i < 3; ++i) a.shape[i] = static_cast<long long>(dims[i]);
  a.data.resize(dims[0] * dims[1] * dims[2]);
  if (H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.data.data()) < 0)
    throw Error("HDF5 file '" + file + "': reading dataset '" + dataset + "' failed");
  return a;
}

std::vector<float> read_float1(const std::string& file, const std::string& dataset, double* dt) {
  H5QuietErrors quiet;
  H5Handle f;
  H5Handle d = open_dataset(file, dataset, f);
  const auto dims = dims_of(d.get());
  if (dims.size() != 1 || dims[0] == 0)
    throw Error("HDF5 file '" + file + "': dataset '" + dataset + "' must be a non-empty 1D array");
  std::vector<float> v(dims[0]);
  if (H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw Error("HDF5 file '" + file + "': reading dataset '" + dataset + "' failed");
  if (dt) {
    // Its value (NaN, negative) is judged by the caller, which names its key; its form here.
    const DtAttribute a = dt_attribute(d.get());
    if (!a.problem.empty())
      throw Error("HDF5 file '" + file + "': the attribute 'dt' of dataset '" + dataset + "' " + a.problem +
                  "; it must be one number, the sample interval in s (or absent)");
    *dt = a.value;
  }
  return v;
}

DeclaredDataset declared_dataset(const std::string& file, const std::string& dataset) {
  H5QuietErrors quiet;
  DeclaredDataset out;
  if (!std::filesystem::exists(file)) return out;
  H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid() || H5Lexists(f.get(), dataset.c_str(), H5P_DEFAULT) <= 0) return out;
  H5Handle d(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) return out;
  H5Handle sp(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(sp.get());
  std::vector<hsize_t> dims(rank > 0 ? rank : 0);
  if (rank <= 0 || H5Sget_simple_extent_dims(sp.get(), dims.data(), nullptr) != rank) return out;
  out.dims = dims;
  // A dt that is not one number is taken as absent here (model files never use theirs); the
  // reader of a sampled dataset (read_float1) refuses it.
  out.dt = dt_attribute(d.get()).value;
  for (const hid_t at : {d.get(), f.get()}) {
    if (out.origin.empty()) out.origin = read_attribute(at, "origin");
    if (out.spacing.empty()) out.spacing = read_attribute(at, "spacing");
  }
  return out;
}

namespace {

// " to '<file>' failed" for messages about writes at `loc` (the final name for a run's
// temporary), with the reason of the failed system call when there is one (": File too large").
std::string failed_at(hid_t loc) {
  const std::string why = write_failure_reason();
  std::string where;
  const ssize_t n = H5Fget_name(loc, nullptr, 0);
  if (n > 0) {
    std::string name(static_cast<size_t>(n) + 1, '\0');
    H5Fget_name(loc, name.data(), name.size());
    name.resize(static_cast<size_t>(n));
    where = " to '" + shown_name(name) + "'";
  }
  return where + " failed" + why;
}

void write_any(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t mem, hid_t file_type,
               const void* data) {
  H5Handle s(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  H5Handle d(H5Dcreate2(loc, name.c_str(), file_type, s.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.valid() || H5Dwrite(d.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw Error("writing HDF5 dataset '" + name + "'" + failed_at(loc));
}
}  // namespace

void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const float* data) {
  write_any(loc, name, dims, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, data);
}
void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const double* data) {
  write_any(loc, name, dims, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, data);
}

void write_dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, const long long* data) {
  write_any(loc, name, dims, H5T_NATIVE_LLONG, H5T_STD_I64LE, data);
}

void write_attribute(hid_t loc, const std::string& name, const std::string& value) {
  H5Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), value.size() + 1);
  H5Tset_strpad(t.get(), H5T_STR_NULLTERM);
  H5Handle s(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle a(H5Acreate2(loc, name.c_str(), t.get(), s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), t.get(), value.c_str()) < 0)
    throw Error("writing HDF5 attribute '" + name + "'" + failed_at(loc));
}

void write_attribute(hid_t loc, const std::string& name, const std::vector<double>& value) {
  const hsize_t n = value.size();
  H5Handle s(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Handle a(H5Acreate2(loc, name.c_str(), H5T_IEEE_F64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, value.data()) < 0)
    throw Error("writing HDF5 attribute '" + name + "'" + failed_at(loc));
}

void write_attribute(hid_t loc, const std::string& name, long long value) {
  H5Handle s(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle a(H5Acreate2(loc, name.c_str(), H5T_STD_I64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_LLONG, &value) < 0)
    throw Error("writing HDF5 attribute '" + name + "'" + failed_at(loc));
}

void write_attribute(hid_t loc, const std::string& name, const std::vector<long long>& value) {
  const hsize_t n = value.size();
  H5Handle s(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Handle a(H5Acreate2(loc, name.c_str(), H5T_STD_I64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_LLONG, value.data()) < 0)
    throw Error("writing HDF5 attribute '" + name + "'" + failed_at(loc));
}

void write_attribute(hid_t loc, const std::string& name, double value) {
  H5Handle s(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle a(H5Acreate2(loc, name.c_str(), H5T_IEEE_F64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw Error("writing HDF5 attribute '" + name + "'" + failed_at(loc));
}

std::vector<double> read_attribute(hid_t loc, const std::string& name) {
  if (H5Aexists(loc, name.c_str()) <= 0) return {};
  H5Handle a(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!a.valid()) throw Error("HDF5 attribute '" + name + "' cannot be opened");
  H5Handle t(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(t.get()) != H5T_FLOAT && H5Tget_class(t.get()) != H5T_INTEGER)
    throw Error("HDF5 attribute '" + name + "' does not hold numbers");
  H5Handle s(H5Aget_space(a.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(s.get());  // 1 for a scalar
  std::vector<double> v(n > 0 ? size_t(n) : 0);
  if (n <= 0 || H5Aread(a.get(), H5T_NATIVE_DOUBLE, v.data()) < 0)
    throw Error("HDF5 attribute '" + name + "' cannot be read as numbers");
  return v;
}

namespace {

H5Handle open_for_write(hid_t loc, const std::string& name) {
  H5Handle d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw Error("opening HDF5 dataset '" + name + "'" + failed_at(loc));
  return d;
}

// The last path component: the dimension's name in netCDF-4 readers.
std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void describe_dataset(hid_t loc, const std::string& dataset, const std::string& units, const std::string& long_name) {
  H5Handle d = open_for_write(loc, dataset);
  if (!units.empty()) write_attribute(d.get(), "units", units);
  write_attribute(d.get(), "long_name", long_name);
}

void make_axis(hid_t loc, const std::string& name, const std::string& units, const std::string& long_name) {
  describe_dataset(loc, name, units, long_name);
  H5Handle d = open_for_write(loc, name);
  if (H5DSset_scale(d.get(), base_name(name).c_str()) < 0)
    throw Error("making HDF5 dataset '" + name + "' a dimension scale" + failed_at(loc));
}

void write_axis(hid_t loc, const std::string& name, const std::vector<double>& values, const std::string& units,
                const std::string& long_name) {
  write_dataset(loc, name, {hsize_t(values.size())}, values.data());
  make_axis(loc, name, units, long_name);
}

void write_index_axis(hid_t loc, const std::string& name, long long count, const std::string& long_name) {
  std::vector<long long> index(static_cast<size_t>(count));
  for (long long i = 0; i < count; ++i) index[i] = i;
  write_dataset(loc, name, {hsize_t(count)}, index.data());
  make_axis(loc, name, "", long_name);
}

void attach_axes(hid_t loc, const std::string& dataset, const std::vector<std::string>& axes) {
  H5Handle d = open_for_write(loc, dataset);
  for (size_t k = 0; k < axes.size(); ++k) {
    H5Handle a = open_for_write(loc, axes[k]);
    if (H5DSattach_scale(d.get(), a.get(), static_cast<unsigned>(k)) < 0)
      throw Error("attaching the axis '" + axes[k] + "' to dimension " + std::to_string(k) + " of HDF5 dataset '" +
                  dataset + "'" + failed_at(loc));
  }
}

void write_grid_axes(hid_t root, const std::array<long long, 3>& n, const std::array<double, 3>& h,
                     const std::array<double, 3>& origin) {
  for (int a = 0; a < 3; ++a) {
    std::vector<double> c(static_cast<size_t>(n[a]));
    for (long long i = 0; i < n[a]; ++i) c[i] = origin[a] + double(i) * h[a];
    const std::string name(1, "xyz"[a]);
    write_axis(root, name, c, "m", a == 2 ? "depth z (positive down) of the cell" : name + " of the cell");
  }
}

void write_component_axis(hid_t root) {
  write_index_axis(root, "component", 3, "position component: 0 x, 1 y, 2 z");
}

void write_float_file(const std::string& file, const std::string& dataset, const std::vector<hsize_t>& dims,
                      const std::vector<float>& data, double dt_attribute) {
  H5Handle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("cannot create HDF5 file '" + file + "'");
  write_dataset(f.get(), dataset, dims, data.data());
  if (dt_attribute != 0) {  // 0: no attribute; anything else (NaN included) is written
    H5Handle d(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
    H5Handle s(H5Screate(H5S_SCALAR), H5Sclose);
    H5Handle a(H5Acreate2(d.get(), "dt", H5T_IEEE_F64LE, s.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &dt_attribute);
  }
}

}  // namespace seisrtm::io
