#include "io/observed_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/error.hpp"
#include "base/format.hpp"
#include "io/hdf5_file.hpp"

namespace seisrtm::io {

namespace {

struct Dataset {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

[[noreturn]] void fail(const std::string& file, const std::string& name, const std::string& what,
                       const std::string& why) {
  throw Error("data file '" + file + "': " + why + "; expected dataset '" + name + "' = " + what +
              " (as written by seisrtm run)");
}

// Opens a numeric dataset of the given rank and reads its shape; `what` says what it should hold.
H5Handle open_numbers(hid_t f, const std::string& file, const std::string& name, int rank, const std::string& what,
                      std::vector<hsize_t>& dims) {
  if (H5Lexists(f, name.substr(0, name.find('/', 1)).c_str(), H5P_DEFAULT) <= 0 ||
      H5Lexists(f, name.c_str(), H5P_DEFAULT) <= 0)
    fail(file, name, what, "dataset '" + name + "' is missing");
  H5Handle d(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) fail(file, name, what, "'" + name + "' is not a dataset");
  H5Handle t(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(t.get()) != H5T_FLOAT && H5Tget_class(t.get()) != H5T_INTEGER)
    fail(file, name, what, "dataset '" + name + "' does not hold numbers");
  H5Handle s(H5Dget_space(d.get()), H5Sclose);
  const int r = H5Sget_simple_extent_ndims(s.get());
  if (r != rank) fail(file, name, what, "dataset '" + name + "' has rank " + std::to_string(r));
  dims.assign(rank, 0);
  if (H5Sget_simple_extent_dims(s.get(), dims.data(), nullptr) != rank)
    fail(file, name, what, "the shape of dataset '" + name + "' cannot be read");
  for (auto v : dims)
    if (v == 0) fail(file, name, what, "dataset '" + name + "' is empty");
  return d;
}

// Reads a whole dataset as T (double or float), checking that every value is finite (unless
// `finite` is false: the caller checks the values it uses).
template <class T>
void read_values(hid_t d, const std::string& file, const std::string& name, const std::string& what,
                 std::vector<T>& out, size_t n, bool finite = true) {
  out.resize(n);
  const hid_t type = sizeof(T) == 8 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  if (H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    fail(file, name, what, "reading dataset '" + name + "' failed (truncated or corrupt file?)");
  if (finite)
    for (T v : out)
      if (!std::isfinite(v)) fail(file, name, what, "dataset '" + name + "' holds a NaN or infinite value");
}

std::string dims_text(const std::vector<hsize_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

ObservedData read_observed(const std::string& file, bool with_traces, double max_bytes) {
  H5QuietErrors quiet;
  if (!std::filesystem::exists(file)) throw Error("data file '" + file + "' (migration.data) does not exist");
  H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("data file '" + file + "' (migration.data) is not a readable HDF5 file");
  ObservedData o;
  o.file = file;

  if (H5Aexists(f.get(), "dt") <= 0)
    throw Error("data file '" + file + "': the root attribute 'dt' (the trace sample interval in s) is missing");
  {
    // A scalar (this version) or a 1-element array (files written before): both hold one value.
    std::vector<double> dt;
    try {
      dt = read_attribute(f.get(), "dt");
    } catch (const Error&) {  // not numbers: refused below with what dt must be
    }
    if (dt.size() != 1 || !(dt[0] > 0) || !std::isfinite(dt[0]))
      throw Error("data file '" + file + "': the root attribute 'dt' must be one positive number (s)");
    o.dt = dt[0];
  }

  const std::string traces_what = "[shot, receiver, time] floats";
  std::vector<hsize_t> tdims;
  H5Handle traces = open_numbers(f.get(), file, "/traces", 3, traces_what, tdims);
  o.shots = static_cast<long long>(tdims[0]);
  o.receivers = static_cast<long long>(tdims[1]);
  o.samples = static_cast<long long>(tdims[2]);

  // Every shape is compared with the others and the bytes to be read with max_bytes before any
  // value is read: a small file can declare huge datasets (chunked, never written: no disk).
  const std::string wavelet_what = "[time] source time function";
  std::vector<hsize_t> wdims;
  H5Handle wavelet = open_numbers(f.get(), file, "/sources/wavelet", 1, wavelet_what, wdims);
  // The wavelet is resampled over the record and its spectrum taken: longer than 4 times the
  // record (or 2^20 samples, whichever is more) is a mis-declared dataset.
  const double wavelet_limit = std::max(4.0 * double(o.samples), double(1 << 20));
  if (double(wdims[0]) > wavelet_limit)
    throw Error("data file '" + file + "': dataset '/sources/wavelet' declares shape " + dims_text(wdims) +
                "; /traces " + dims_text(tdims) + " has " + std::to_string(o.samples) +
                " samples a trace, and at most [" + std::to_string(static_cast<long long>(wavelet_limit)) +
                "] is accepted; nothing was read");
  // Bytes held while reading: positions as doubles twice (read, then [x, y, z]), the wavelet as
  // double and float, the traces as float. In double: the declared products may overflow.
  const double bytes = 48.0 * (double(o.shots) + double(o.receivers)) + 12.0 * double(wdims[0]) +
                       (with_traces ? 4.0 * double(o.shots) * double(o.receivers) * double(o.samples) : 0.0);
  if (max_bytes > 0 && bytes > max_bytes)
    throw Error("data file '" + file + "': /traces declares shape " + dims_text(tdims) + " (" +
                std::to_string(o.shots) + " shots, " + std::to_string(o.receivers) + " receivers, " +
                std::to_string(o.samples) + " samples); reading it needs " + gib(bytes) +
                " of host memory but at most " + gib(max_bytes) + " may be used; nothing was read");

  auto positions = [&](const std::string& name, long long count, const std::string& what) {
    const std::string expect = "[" + what + ", 3] positions [x, y, z] in m";
    Dataset p;
    H5Handle d = open_numbers(f.get(), file, name, 2, expect, p.dims);
    if (static_cast<long long>(p.dims[0]) != count || p.dims[1] != 3)
      throw Error("data file '" + file + "': dataset '" + name + "' has shape " + dims_text(p.dims) + "; /traces " +
                  dims_text(tdims) + " needs [" + std::to_string(count) + ", 3]; nothing was read");
    read_values(d.get(), file, name, expect, p.values, static_cast<size_t>(count) * 3);
    std::vector<std::array<double, 3>> out(static_cast<size_t>(count));
    for (long long i = 0; i < count; ++i)
      for (int a = 0; a < 3; ++a) out[i][a] = p.values[i * 3 + a];
    return out;
  };
  o.source_positions = positions("/sources/positions", o.shots, "shot");
  if (H5Lexists(f.get(), "/receivers/count", H5P_DEFAULT) > 0) {
    // A spread a shot: the counts, then [shot, receiver, 3] positions, each shot's first rows.
    Dataset c;
    H5Handle cd = open_numbers(f.get(), file, "/receivers/count", 1, "[shot] receivers of each shot", c.dims);
    if (static_cast<long long>(c.dims[0]) != o.shots)
      throw Error("data file '" + file + "': dataset '/receivers/count' has shape " + dims_text(c.dims) + "; /traces " +
                  dims_text(tdims) + " needs [" + std::to_string(o.shots) + "]; nothing was read");
    read_values(cd.get(), file, "/receivers/count", "[shot] receivers of each shot", c.values,
                static_cast<size_t>(o.shots));
    const std::string expect = "[shot, receiver, 3] positions [x, y, z] in m";
    Dataset p;
    H5Handle pd = open_numbers(f.get(), file, "/receivers/positions", 3, expect, p.dims);
    if (static_cast<long long>(p.dims[0]) != o.shots || static_cast<long long>(p.dims[1]) != o.receivers ||
        p.dims[2] != 3)
      throw Error("data file '" + file + "': dataset '/receivers/positions' has shape " + dims_text(p.dims) +
                  "; /traces " + dims_text(tdims) + " and /receivers/count need [" + std::to_string(o.shots) + ", " +
                  std::to_string(o.receivers) + ", 3]; nothing was read");
    // NaN beyond each shot's count (run's padding); the positions of its receivers checked below.
    read_values(pd.get(), file, "/receivers/positions", expect, p.values,
                static_cast<size_t>(o.shots * o.receivers * 3), false);
    for (long long s = 0; s < o.shots; ++s) {
      const double n = c.values[static_cast<size_t>(s)];
      if (!(n >= 0 && n <= double(o.receivers) && n == std::floor(n)))
        throw Error("data file '" + file + "': /receivers/count gives " + std::to_string(n) + " receivers to shot " +
                    std::to_string(s) + "; valid: a whole number from 0 to " + std::to_string(o.receivers) +
                    " (the /traces rows)");
      std::vector<std::array<double, 3>> spread(static_cast<size_t>(n));
      for (size_t r = 0; r < spread.size(); ++r)
        for (int a = 0; a < 3; ++a) {
          spread[r][a] = p.values[(static_cast<size_t>(s * o.receivers) + r) * 3 + static_cast<size_t>(a)];
          if (!std::isfinite(spread[r][a]))
            throw Error("data file '" + file +
                        "': dataset '/receivers/positions' holds a NaN or infinite value at "
                        "shot " +
                        std::to_string(s) + ", receiver " + std::to_string(r) +
                        ", within the shot's /receivers/count; expected " + expect);
        }
      o.spreads.push_back(std::move(spread));
    }
    size_t most = 0;
    for (const auto& spread : o.spreads) most = std::max(most, spread.size());
    if (static_cast<long long>(most) != o.receivers)
      throw Error("data file '" + file + "': /traces has " + std::to_string(o.receivers) +
                  " rows a shot but the largest spread of /receivers/count has " + std::to_string(most) +
                  "; valid: as many rows as the largest spread; nothing was read");
    o.receiver_positions = o.spreads.empty() ? std::vector<std::array<double, 3>>{} : o.spreads[0];
  } else {
    o.receiver_positions = positions("/receivers/positions", o.receivers, "receiver");
  }

  std::vector<double> w;
  read_values(wavelet.get(), file, "/sources/wavelet", wavelet_what, w, static_cast<size_t>(wdims[0]));
  o.wavelet.assign(w.begin(), w.end());
  if (with_traces)
    read_values(traces.get(), file, "/traces", traces_what, o.traces,
                static_cast<size_t>(o.shots * o.receivers * o.samples));
  return o;
}

void write_observed(const std::string& file, const ObservedData& d) {
  if (!d.spreads.empty())
    throw Error("write_observed: '" + file + "' would hold a spread a shot, which this minimal writer does not write");
  H5QuietErrors quiet;
  H5Handle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw Error("cannot create data file '" + file + "'");
  const hid_t root = f.get();
  write_attribute(root, "dt", d.dt);
  // The axes of run's file (io/survey_file.hpp) that these datasets use.
  write_index_axis(root, "shot", d.shots, "shot index");
  write_index_axis(root, "receiver", d.receivers, "receiver index");
  write_component_axis(root);
  std::vector<double> time(static_cast<size_t>(d.samples));
  for (long long n = 0; n < d.samples; ++n) time[n] = (n + 1) * d.dt;
  write_axis(root, "time", time, "s", "time of the trace sample ((n + 1) dt)");
  write_dataset(root, "traces", {hsize_t(d.shots), hsize_t(d.receivers), hsize_t(d.samples)}, d.traces.data());
  describe_dataset(root, "traces", "same as sources/wavelet (pressure-like, unit source)", "p at the receivers");
  attach_axes(root, "traces", {"shot", "receiver", "time"});
  for (const char* g : {"sources", "receivers"}) {
    H5Handle grp(H5Gcreate2(root, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!grp.valid()) throw Error("cannot create group '" + std::string(g) + "' in '" + file + "'");
  }
  auto flat = [](const std::vector<std::array<double, 3>>& v) {
    std::vector<double> out;
    for (const auto& p : v) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const auto sp = flat(d.source_positions), rp = flat(d.receiver_positions);
  write_dataset(root, "sources/positions", {hsize_t(d.source_positions.size()), 3}, sp.data());
  describe_dataset(root, "sources/positions", "m", "source position [x, y, z]");
  attach_axes(root, "sources/positions", {"shot", "component"});
  write_dataset(root, "receivers/positions", {hsize_t(d.receiver_positions.size()), 3}, rp.data());
  describe_dataset(root, "receivers/positions", "m", "receiver position [x, y, z]");
  attach_axes(root, "receivers/positions", {"receiver", "component"});
  // f(n dt), n = 0..: its own axis, as long as the wavelet (which may differ from the traces).
  std::vector<double> wavelet_time(d.wavelet.size());
  for (size_t n = 0; n < wavelet_time.size(); ++n) wavelet_time[n] = double(n) * d.dt;
  write_axis(root, "sources/wavelet_time", wavelet_time, "s", "time of the wavelet sample (n dt)");
  write_dataset(root, "sources/wavelet", {hsize_t(d.wavelet.size())}, d.wavelet.data());
  describe_dataset(root, "sources/wavelet", "arbitrary (traces are in its units)", "source time function");
  attach_axes(root, "sources/wavelet", {"sources/wavelet_time"});
  if (H5Fflush(f.get(), H5F_SCOPE_GLOBAL) < 0) throw Error("writing data file '" + file + "' failed (disk full?)");
}

}  // namespace seisrtm::io
