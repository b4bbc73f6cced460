#include "io/observed_data.hpp"

#include <cmath>
#include <filesystem>

#include "io/hdf5_file.hpp"
#include "solver/error.hpp"

namespace seisrtm::io {

namespace {

struct Dataset {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

// A numeric dataset of the given rank, read as double; `what` says what it should hold.
Dataset read_numbers(hid_t f, const std::string& file, const std::string& name, int rank,
                     const std::string& what) {
  auto fail = [&](const std::string& why) {
    throw Error("data file '" + file + "': " + why + "; expected dataset '" + name + "' = " + what +
                " (as written by seisrtm run)");
  };
  if (H5Lexists(f, name.substr(0, name.find('/', 1)).c_str(), H5P_DEFAULT) <= 0 ||
      H5Lexists(f, name.c_str(), H5P_DEFAULT) <= 0)
    fail("dataset '" + name + "' is missing");
  H5Handle d(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) fail("'" + name + "' is not a dataset");
  H5Handle t(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(t.get()) != H5T_FLOAT && H5Tget_class(t.get()) != H5T_INTEGER)
    fail("dataset '" + name + "' does not hold numbers");
  H5Handle s(H5Dget_space(d.get()), H5Sclose);
  const int r = H5Sget_simple_extent_ndims(s.get());
  if (r != rank) fail("dataset '" + name + "' has rank " + std::to_string(r));
  Dataset ds;
  ds.dims.resize(rank);
  H5Sget_simple_extent_dims(s.get(), ds.dims.data(), nullptr);
  hsize_t n = 1;
  for (auto v : ds.dims) n *= v;
  if (n == 0) fail("dataset '" + name + "' is empty");
  ds.values.resize(n);
  if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds.values.data()) < 0)
    fail("reading dataset '" + name + "' failed (truncated or corrupt file?)");
  for (double v : ds.values)
    if (!std::isfinite(v)) fail("dataset '" + name + "' holds a NaN or infinite value");
  return ds;
}

std::string dims_text(const std::vector<hsize_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

ObservedData read_observed(const std::string& file) {
  H5QuietErrors quiet;
  if (!std::filesystem::exists(file))
    throw Error("data file '" + file + "' (migration.data) does not exist");
  H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("data file '" + file + "' (migration.data) is not a readable HDF5 file");
  ObservedData o;
  o.file = file;

  if (H5Aexists(f.get(), "dt") <= 0)
    throw Error("data file '" + file + "': the root attribute 'dt' (the trace sample interval in s) is missing");
  {
    H5Handle a(H5Aopen(f.get(), "dt", H5P_DEFAULT), H5Aclose);
    H5Handle s(H5Aget_space(a.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(s.get()) != 1 || H5Aread(a.get(), H5T_NATIVE_DOUBLE, &o.dt) < 0 ||
        !(o.dt > 0) || !std::isfinite(o.dt))
      throw Error("data file '" + file + "': the root attribute 'dt' must be one positive number (s)");
  }

  const Dataset tr = read_numbers(f.get(), file, "/traces", 3, "[shot, receiver, time] floats");
  o.shots = static_cast<long long>(tr.dims[0]);
  o.receivers = static_cast<long long>(tr.dims[1]);
  o.samples = static_cast<long long>(tr.dims[2]);
  o.traces.assign(tr.values.begin(), tr.values.end());

  auto positions = [&](const std::string& name, long long count, const std::string& what) {
    const Dataset p = read_numbers(f.get(), file, name, 2, "[" + what + ", 3] positions [x, y, z] in m");
    if (static_cast<long long>(p.dims[0]) != count || p.dims[1] != 3)
      throw Error("data file '" + file + "': dataset '" + name + "' has shape " + dims_text(p.dims) +
                  "; /traces " + dims_text(tr.dims) + " needs [" + std::to_string(count) + ", 3]");
    std::vector<std::array<double, 3>> out(static_cast<size_t>(count));
    for (long long i = 0; i < count; ++i)
      for (int a = 0; a < 3; ++a) out[i][a] = p.values[i * 3 + a];
    return out;
  };
  o.source_positions = positions("/sources/positions", o.shots, "shot");
  o.receiver_positions = positions("/receivers/positions", o.receivers, "receiver");

  const Dataset w = read_numbers(f.get(), file, "/sources/wavelet", 1, "[time] source time function");
  o.wavelet.assign(w.values.begin(), w.values.end());
  return o;
}

void write_observed(const std::string& file, const ObservedData& d) {
  H5QuietErrors quiet;
  H5Handle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("cannot create data file '" + file + "'");
  write_attribute(f.get(), "dt", std::vector<double>{d.dt});
  write_dataset(f.get(), "traces", {hsize_t(d.shots), hsize_t(d.receivers), hsize_t(d.samples)}, d.traces.data());
  for (const char* g : {"sources", "receivers"}) {
    H5Handle grp(H5Gcreate2(f.get(), g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!grp.valid()) throw Error("cannot create group '" + std::string(g) + "' in '" + file + "'");
  }
  auto flat = [](const std::vector<std::array<double, 3>>& v) {
    std::vector<double> out;
    for (const auto& p : v) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const auto sp = flat(d.source_positions), rp = flat(d.receiver_positions);
  write_dataset(f.get(), "sources/positions", {hsize_t(d.source_positions.size()), 3}, sp.data());
  write_dataset(f.get(), "receivers/positions", {hsize_t(d.receiver_positions.size()), 3}, rp.data());
  write_dataset(f.get(), "sources/wavelet", {hsize_t(d.wavelet.size())}, d.wavelet.data());
  if (H5Fflush(f.get(), H5F_SCOPE_GLOBAL) < 0) throw Error("writing data file '" + file + "' failed (disk full?)");
}

}  // namespace seisrtm::io
