// [integration] The result files describe themselves: every dataset of `seisrtm run`, `seisrtm
// migrate` and io::write_observed has a dimension scale (HDF5 H5DS, what netCDF-4 readers such
// as xarray with h5netcdf name dimensions by) on each dimension, with the dimension's name; the
// grid axes hold origin + i h, the time axis (n + 1) dt; dt is a scalar attribute; each dataset
// has units. Readers take dt as a scalar and as the 1-element array of earlier files.
#include <hdf5.h>
#include <hdf5_hl.h>

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "io/observed_data.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"

namespace fs = std::filesystem;
using seisrtm::test::Result;
using seisrtm::test::run_cli;
using seisrtm::test::write_text;

namespace {

constexpr double kDt = 1e-3;  // s, below two_layers' stability limit (about 2.1 ms at 10 m, 2800 m/s)

fs::path fresh_dir(const std::string& name) {
  return seisrtm::test::fresh_dir("seisrtm_test_hdf5_layout_", name);
}

// The datasets of a file (paths without the leading '/').
std::vector<std::string> datasets_of(hid_t f) {
  std::vector<std::string> names;
  auto visit = [](hid_t, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
  };
  REQUIRE(H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC, visit, &names) >= 0);
  return names;
}

std::vector<hsize_t> dims_of(hid_t d) {
  const hid_t s = H5Dget_space(d);
  std::vector<hsize_t> dims(static_cast<size_t>(H5Sget_simple_extent_ndims(s)));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  H5Sclose(s);
  return dims;
}

// The names (H5DSget_scale_name) of the scales attached to dimension `dim` of `d`.
std::vector<std::string> scale_names(hid_t d, unsigned dim) {
  std::vector<std::string> names;
  auto visit = [](hid_t, unsigned, hid_t scale, void* data) -> herr_t {
    const ssize_t n = H5DSget_scale_name(scale, nullptr, 0);
    std::string name(n > 0 ? size_t(n) + 1 : 1, '\0');
    if (n > 0) H5DSget_scale_name(scale, name.data(), name.size());
    name.resize(n > 0 ? size_t(n) : 0);
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
  };
  if (H5DSget_num_scales(d, dim) > 0) H5DSiterate_scales(d, dim, nullptr, visit, &names);
  return names;
}

std::string string_attribute(hid_t loc, const char* name) {
  if (H5Aexists(loc, name) <= 0) return {};
  const hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t t = H5Aget_type(a);
  std::string v(H5Tget_size(t), '\0');
  H5Aread(a, t, v.data());
  H5Tclose(t);
  H5Aclose(a);
  return v.c_str();
}

std::vector<double> read_doubles(hid_t f, const std::string& name) {
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  hsize_t n = 1;
  for (hsize_t v : dims_of(d)) n *= v;
  std::vector<double> v(n);
  REQUIRE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Dclose(d);
  return v;
}

// The root attribute `name`, which must be a scalar.
double scalar_attribute(hid_t f, const char* name) {
  REQUIRE(H5Aexists(f, name) > 0);
  const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  const hid_t s = H5Aget_space(a);
  CHECK(H5Sget_simple_extent_type(s) == H5S_SCALAR);
  double v = 0;
  H5Aread(a, H5T_NATIVE_DOUBLE, &v);
  H5Sclose(s);
  H5Aclose(a);
  return v;
}

// Checks every dataset of `file`: those named in `expected` have the scales of those names on
// their dimensions, every other one is an axis (a scale itself) or a /snapshot_steps view (no
// scales: io/survey_file.cpp says why); every dataset but the index axes has units.
void check_file(const std::string& file, const std::map<std::string, std::vector<std::string>>& expected) {
  INFO(file);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  size_t found = 0;
  for (const std::string& name : datasets_of(f)) {
    INFO("dataset /" << name);
    const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    REQUIRE(d >= 0);
    const auto dims = dims_of(d);
    const bool axis = H5DSis_scale(d) > 0;
    const bool index = name == "shot" || name == "receiver" || name == "component";
    if (!index) CHECK(!string_attribute(d, "units").empty());
    CHECK(!string_attribute(d, "long_name").empty());
    if (axis) {
      CHECK(dims.size() == 1);
      const std::string base = name.substr(name.rfind('/') + 1);
      const ssize_t n = H5DSget_scale_name(d, nullptr, 0);
      std::string scale(n > 0 ? size_t(n) + 1 : 1, '\0');
      if (n > 0) H5DSget_scale_name(d, scale.data(), scale.size());
      CHECK(scale.c_str() == base);
    } else if (name.rfind("snapshot_steps/", 0) != 0) {
      const auto it = expected.find(name);
      CHECK(it != expected.end());
      if (it != expected.end()) {
        ++found;
        REQUIRE(it->second.size() == dims.size());
        for (unsigned k = 0; k < dims.size(); ++k) {
          INFO("dimension " << k);
          CHECK(scale_names(d, k) == std::vector<std::string>{it->second[k]});
        }
      }
    }
    H5Dclose(d);
  }
  CHECK(found == expected.size());
  H5Fclose(f);
}

// /x, /y, /z hold origin + i h (root attributes origin and spacing, [x, y, z]), /time (n + 1) dt.
void check_coordinates(const std::string& file, const std::array<long long, 3>& n, bool with_time) {
  INFO(file);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const auto h = seisrtm::io::read_attribute(f, "spacing");
  const auto o = seisrtm::io::read_attribute(f, "origin");
  REQUIRE(h.size() == 3);
  REQUIRE(o.size() == 3);
  for (int a = 0; a < 3; ++a) {
    const auto c = read_doubles(f, std::string(1, "xyz"[a]));
    REQUIRE(static_cast<long long>(c.size()) == n[a]);
    for (size_t i = 0; i < c.size(); ++i) CHECK(c[i] == o[a] + double(i) * h[a]);
  }
  const double dt = scalar_attribute(f, "dt");
  CHECK(dt == kDt);
  if (with_time) {
    const auto t = read_doubles(f, "time");
    CHECK(static_cast<long long>(t.size()) == static_cast<long long>(scalar_attribute(f, "steps")));
    for (size_t i = 0; i < t.size(); ++i) CHECK(t[i] == double(i + 1) * dt);
  }
  H5Fclose(f);
}

// two_layers with a known dt, spacing different on each axis and snapshots.
const std::string kGrid = "{shape: [36, 30, 32], spacing: [10, 9, 10]}";

const std::map<std::string, std::vector<std::string>> kPositions{{"sources/positions", {"shot", "component"}},
                                                                 {"receivers/positions", {"receiver", "component"}}};

std::map<std::string, std::vector<std::string>> with_positions(std::map<std::string, std::vector<std::string>> m) {
  m.insert(kPositions.begin(), kPositions.end());
  return m;
}

}  // namespace

TEST_CASE("run and migrate files have a named dimension scale on every dimension, units and a scalar dt",
          "[integration]") {
  const fs::path d = fresh_dir("cli");
  const std::string run_cfg = write_text(
      d / "true.yaml", seisrtm::test::two_layers({{"grid", kGrid},
                                                  {"time", "{steps: 60, dt: 0.001}"},
                                                  {"output", "{name: data, pictures: false, snapshot_interval: 20}"}}));
  Result r = run_cli("run " + run_cfg + " --quiet --backend cpu --output " + d.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string data = (d / "data.h5").string();
  check_file(data, with_positions({{"traces", {"shot", "receiver", "time"}},
                                   {"snapshots/shot_0000", {"time", "z", "y", "x"}},
                                   {"model/vp", {"z", "y", "x"}},
                                   {"sources/wavelet", {"wavelet_time"}},
                                   {"sources/record", {"shot"}}}));
  check_coordinates(data, {36, 30, 32}, true);

  const std::string rtm_cfg =
      write_text(d / "migrate.yaml", seisrtm::test::two_layers_migration({{"grid", kGrid},
                                                                          {"time", "{dt: 0.001}"},
                                                                          {"output", "{name: rtm, pictures: false}"},
                                                                          {"migration", "\n  data: " + data}}));
  r = run_cli("migrate " + rtm_cfg + " --quiet --backend cpu --output " + d.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string rtm = (d / "rtm.h5").string();
  check_file(rtm, with_positions({{"image/correlation", {"z", "y", "x"}},
                                  {"image/illumination", {"z", "y", "x"}},
                                  {"image/normalized", {"z", "y", "x"}},
                                  {"image/laplacian", {"z", "y", "x"}},
                                  {"model/vp", {"z", "y", "x"}}}));
  check_coordinates(rtm, {36, 30, 32}, false);
}

TEST_CASE("observed data files have named dimension scales, and dt is read as a scalar or a 1-element array",
          "[integration]") {
  namespace io = seisrtm::io;
  const fs::path d = fresh_dir("observed");
  io::ObservedData o;
  o.dt = kDt;
  o.shots = 2, o.receivers = 3, o.samples = 5;
  o.traces.assign(2 * 3 * 5, 1.0f);
  o.source_positions = {{10, 20, 30}, {40, 50, 60}};
  o.receiver_positions = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  o.wavelet = {0, 1, 0, -1, 0, 0, 0};  // longer than the traces: its own axis
  const std::string file = (d / "observed.h5").string();
  io::write_observed(file, o);
  check_file(file, with_positions({{"traces", {"shot", "receiver", "time"}}, {"sources/wavelet", {"wavelet_time"}}}));
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(scalar_attribute(f, "dt") == kDt);
    const auto t = read_doubles(f, "time");
    REQUIRE(t.size() == 5);
    for (size_t i = 0; i < t.size(); ++i) CHECK(t[i] == double(i + 1) * kDt);
    const auto w = read_doubles(f, "sources/wavelet_time");
    REQUIRE(w.size() == o.wavelet.size());
    for (size_t i = 0; i < w.size(); ++i) CHECK(w[i] == double(i) * kDt);
    H5Fclose(f);
  }
  CHECK(io::read_observed(file).dt == kDt);

  // dt as files before it was a scalar hold it: [dt].
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(H5Adelete(f, "dt") >= 0);
    io::write_attribute(f, "dt", std::vector<double>{2 * kDt});
    REQUIRE(H5Fclose(f) >= 0);
  }
  CHECK(io::read_observed(file).dt == 2 * kDt);
}
