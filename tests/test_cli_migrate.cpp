// [integration] seisrtm migrate end to end: a tiny survey is modelled with seisrtm run, migrated
// (boundary and snapshots modes), and every kind of bad migration input (config keys and data
// files) gets one clear message naming the key or dataset, exit code 1 and no output left behind.
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.hpp"
#include "io/config.hpp"
#include "io/hdf5_file.hpp"
#include "solver/device_info.hpp"
#include "solver/migration.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"
#include "tests/segy_file.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using seisrtm::test::Result;
using seisrtm::test::run_cli;
using seisrtm::test::write_text;

using seisrtm::test::Segy;  // tests/segy_file.hpp

namespace {

fs::path fresh_dir(const std::string& name) {
  return seisrtm::test::fresh_dir("seisrtm_test_cli_migrate_", name);
}

// The true model: two layers under a free surface, one shot, a line of 12 receivers.
const std::string kTrueModel = seisrtm::test::two_layers();

// A migration config on the same grid in a constant model; `data` is the migration.data path.
std::string migration_config(const std::string& data) {
  return seisrtm::test::two_layers_migration(
      {{"output", "{name: rtm}"}, {"migration", "\n  data: " + data + "\n  mute: {velocity: 2000}"}});
}

// The data file of `seisrtm run` on kTrueModel, made once per process.
const std::string& good_data() {
  static const std::string file = [] {
    const fs::path d = fresh_dir("data");
    const std::string cfg = write_text(d / "true.yaml", kTrueModel);
    const Result r = run_cli("run " + cfg + " --quiet --backend cpu --output " + d.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    REQUIRE(fs::exists(d / "data.h5"));
    return (d / "data.h5").string();
  }();
  return file;
}

// ---- Small HDF5 C API functions to read the good data file and write broken copies of it. ----

struct Array {
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

Array read_array(const std::string& file, const std::string& name) {
  Array a;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  REQUIRE(d >= 0);
  const hid_t s = H5Dget_space(d);
  a.dims.resize(H5Sget_simple_extent_ndims(s));
  H5Sget_simple_extent_dims(s, a.dims.data(), nullptr);
  hsize_t n = 1;
  for (auto v : a.dims) n *= v;
  a.values.resize(n);
  REQUIRE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()) >= 0);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return a;
}

// /image/correlation of a finished migration: the grid's shape [nz, ny, nx], finite, not zero.
void check_correlation(const std::string& h5, const std::vector<hsize_t>& dims) {
  const Array corr = read_array(h5, "/image/correlation");
  CHECK(corr.dims == dims);
  double top = 0;
  bool finite = true;
  for (double v : corr.values) {
    top = std::max(top, std::abs(v));
    finite = finite && std::isfinite(v);
  }
  CHECK(finite);
  CHECK(top > 0);
}

double read_dt(const std::string& file) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t a = H5Aopen(f, "dt", H5P_DEFAULT);
  double dt = 0;
  H5Aread(a, H5T_NATIVE_DOUBLE, &dt);
  H5Aclose(a);
  H5Fclose(f);
  return dt;
}

// Writes `a` as dataset `name` with file type `type` (H5T_IEEE_F32LE or H5T_IEEE_F64LE).
void write_array(hid_t loc, const std::string& name, const Array& a, hid_t type) {
  const hid_t s = H5Screate_simple(static_cast<int>(a.dims.size()), a.dims.data(), nullptr);
  const hid_t d = H5Dcreate2(loc, name.c_str(), type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(d >= 0);
  REQUIRE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()) >= 0);
  H5Dclose(d);
  H5Sclose(s);
}

// The contents of a data file as seisrtm migrate reads them; tests break one part at a time.
struct DataFile {
  Array traces, sources, receivers, wavelet;
  double dt = 0;
  bool with_traces = true;
  bool with_dt = true;
};

DataFile load_good() {
  const std::string f = good_data();
  DataFile d;
  d.traces = read_array(f, "/traces");
  d.sources = read_array(f, "/sources/positions");
  d.receivers = read_array(f, "/receivers/positions");
  d.wavelet = read_array(f, "/sources/wavelet");
  d.dt = read_dt(f);
  return d;
}

std::string write_data(const fs::path& file, const DataFile& d) {
  const hid_t f = H5Fcreate(file.string().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  if (d.with_dt) {
    const hsize_t one = 1;
    const hid_t s = H5Screate_simple(1, &one, nullptr);
    const hid_t a = H5Acreate2(f, "dt", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, &d.dt);
    H5Aclose(a);
    H5Sclose(s);
  }
  if (d.with_traces) write_array(f, "traces", d.traces, H5T_IEEE_F32LE);
  for (const char* g : {"sources", "receivers"}) H5Gclose(H5Gcreate2(f, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  write_array(f, "sources/positions", d.sources, H5T_IEEE_F64LE);
  write_array(f, "receivers/positions", d.receivers, H5T_IEEE_F64LE);
  write_array(f, "sources/wavelet", d.wavelet, H5T_IEEE_F32LE);
  H5Fclose(f);
  return file.string();
}

bool has_link(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return false;
  // Check the parent group first: H5Lexists on "a/b" fails when "a" is absent.
  const auto slash = name.find('/', 1);
  const bool parent = slash == std::string::npos || H5Lexists(f, name.substr(0, slash).c_str(), H5P_DEFAULT) > 0;
  const bool ok = parent && H5Lexists(f, name.c_str(), H5P_DEFAULT) > 0;
  H5Fclose(f);
  return ok;
}

// Runs `seisrtm migrate` on a config with `yaml` and `extra` arguments and expects a refusal:
// exit 1, "seisrtm: error:" with `needle`, and nothing in the output directory.
void expect_refused(const std::string& name, const std::string& yaml, const std::string& extra,
                    const std::vector<std::string>& needles) {
  const fs::path d = fresh_dir("bad_" + name);
  const std::string cfg = write_text(d / "migrate.yaml", yaml);
  const fs::path out = d / "out";
  const Result r = run_cli("migrate " + cfg + " --quiet --output " + out.string() + " " + extra);
  INFO(name << ": " << r.output);
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("seisrtm: error:"));
  for (const auto& n : needles) CHECK_THAT(r.output, Contains(n));
  const bool empty = !fs::exists(out) || fs::is_empty(out);
  CHECK(empty);
}

}  // namespace

TEST_CASE("migrate: a modelled survey migrates into an image, in boundary and snapshots modes", "[integration]") {
  const std::string data = good_data();
  const fs::path d = fresh_dir("happy");
  const std::string cfg = write_text(d / "migrate.yaml", migration_config(data));
  for (const std::string mode : {"boundary", "snapshots"}) {
    const fs::path out = d / mode;
    const Result r =
        run_cli("migrate " + cfg + " --quiet --backend cpu --output " + out.string() + " --set migration.mode=" + mode);
    INFO(mode << ": " << r.output);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Contains("seisrtm: wrote") && Contains("rtm.h5"));
    const std::string h5 = (out / "rtm.h5").string();
    REQUIRE(fs::exists(h5));
    for (const char* ds : {"/image/correlation", "/image/illumination", "/image/normalized", "/image/laplacian",
                           "/model/vp", "/sources/positions", "/receivers/positions"})
      CHECK(has_link(h5, ds));
    CHECK(fs::exists(out / "rtm.xmf"));
    for (const char* png :
         {"rtm_image_xz.png", "rtm_image_normalized_xz.png", "rtm_image_depth.png", "rtm_model_vp.png"})
      CHECK(fs::exists(out / png));
    for (const auto& f : fs::directory_iterator(out)) CHECK(f.path().extension() != ".partial");

    check_correlation(h5, {32, 30, 36});
    const Array lap = read_array(h5, "/image/laplacian");
    double lap_top = 0;
    for (double v : lap.values) lap_top = std::max(lap_top, std::abs(v));
    CHECK(lap_top > 0);
    const Array vp = read_array(h5, "/model/vp");
    CHECK(vp.values.front() == Approx(2000));
  }
}

TEST_CASE("migrate: fp16 storage (emulated on the CPU backend) images as fp32 does, within the 1% goal",
          "[integration]") {
  const std::string data = good_data();
  const fs::path d = fresh_dir("fp16");
  const std::string cfg = write_text(d / "migrate.yaml", migration_config(data));
  std::vector<double> images[2];
  for (int k = 0; k < 2; ++k) {
    const fs::path out = d / (k ? "fp16" : "fp32");
    const Result r = run_cli("migrate " + cfg + " --backend cpu --output " + out.string() +
                             " --set solver.storage=" + (k ? "fp16" : "fp32"));
    INFO(r.output);
    REQUIRE(r.code == 0);
    if (k) CHECK_THAT(r.output, Contains("fp16 storage emulated"));
    check_correlation((out / "rtm.h5").string(), {32, 30, 36});
    images[k] = read_array((out / "rtm.h5").string(), "/image/correlation").values;
  }
  // The accuracy goal for fp16 storage: 1% relative L2 on the image (docs/BENCHMARKS.md, "RTM").
  double num = 0, den = 0;
  for (size_t i = 0; i < images[0].size(); ++i) {
    num += (images[1][i] - images[0][i]) * (images[1][i] - images[0][i]);
    den += images[0][i] * images[0][i];
  }
  const double rel = std::sqrt(num / den);
  INFO("fp16 against fp32 image: relative L2 " << rel);
  CHECK(rel > 1e-6);  // the emulation is on
  CHECK(rel <= 1e-2);
}

TEST_CASE("migrate: bad migration keys are refused with the key named", "[integration]") {
  const std::string good = migration_config(good_data());
  SECTION("mode") {
    expect_refused("mode", good, "--set migration.mode=foo", {"'migration.mode'", "boundary | snapshots"});
  }
  SECTION("mode not a string") {
    expect_refused("mode_list", good, "--set migration.mode=[a,b]", {"'migration.mode' must be a string"});
  }
  SECTION("image_interval 0") {
    expect_refused("interval0", good, "--set migration.image_interval=0", {"'migration.image_interval' must be >= 1"});
  }
  SECTION("image_interval not an integer") {
    expect_refused("interval_text", good, "--set migration.image_interval=ten",
                   {"'migration.image_interval' must be an integer"});
  }
  SECTION("illumination_epsilon 2") {
    expect_refused("eps2", good, "--set migration.illumination_epsilon=2",
                   {"'migration.illumination_epsilon' must be in (0, 1)"});
  }
  SECTION("illumination_epsilon 0") {
    expect_refused("eps0", good, "--set migration.illumination_epsilon=0", {"'migration.illumination_epsilon'"});
  }
  SECTION("illumination_epsilon text") {
    expect_refused("eps_text", good, "--set migration.illumination_epsilon=small",
                   {"'migration.illumination_epsilon' must be a finite number"});
  }
  SECTION("data_filter") {
    expect_refused("filter", good, "--set migration.data_filter=bar", {"'migration.data_filter'", "derivative | none"});
  }
  SECTION("image_interval above the step count") {
    expect_refused("interval_big", good, "--set migration.image_interval=5000",
                   {"'migration.image_interval' = 5000 exceeds"});
  }
  SECTION("depth_slice below the grid") {
    expect_refused("slice_deep", good, "--set migration.depth_slice=100000",
                   {"'migration.depth_slice' = 100000 m lies below the grid"});
  }
  SECTION("depth_slice negative") {
    expect_refused("slice_neg", good, "--set migration.depth_slice=-5", {"'migration.depth_slice' must be >= 0"});
  }
  SECTION("depth_slice text") {
    expect_refused("slice_text", good, "--set migration.depth_slice=deep", {"'migration.depth_slice'"});
  }
  SECTION("mute without velocity") {
    std::string y = good;
    y.replace(y.find("{velocity: 2000}"), 16, "{t0: 0.1}");
    expect_refused("mute_novel", y, "", {"'migration.mute.velocity' is required"});
  }
  SECTION("mute velocity negative") {
    expect_refused("mute_vneg", good, "--set migration.mute.velocity=-1",
                   {"'migration.mute.velocity' must be a positive"});
  }
  SECTION("mute velocity zero") {
    expect_refused("mute_v0", good, "--set migration.mute.velocity=0", {"'migration.mute.velocity'"});
  }
  SECTION("mute t0 negative") {
    expect_refused("mute_t0", good, "--set migration.mute.t0=-1", {"'migration.mute.t0' must be >= 0"});
  }
  SECTION("mute taper negative") {
    expect_refused("mute_taper", good, "--set migration.mute.taper=-0.1", {"'migration.mute.taper' must be >= 0"});
  }
  SECTION("mute not a mapping") {
    expect_refused("mute_scalar", good, "--set migration.mute=5", {"'migration.mute' must be a mapping"});
  }
  SECTION("mute unknown key") {
    expect_refused("mute_unknown", good, "--set migration.mute.speed=5", {"'migration.mute.speed' is unknown"});
  }
  SECTION("smoothing negative") {
    expect_refused("smoothing", good, "--set model.vp.smoothing=-10", {"'model.vp.smoothing' must be >= 0"});
  }
  SECTION("unknown migration key") {
    expect_refused("unknown", good, "--set migration.colour=red",
                   {"'migration.colour' is unknown", "valid keys under 'migration'"});
  }
  SECTION("time.steps text") {
    expect_refused("steps_text", good, "--set time.steps=many", {"'time.steps' must be an integer"});
  }
}

TEST_CASE("migrate: sources and receivers come from the data, not the config", "[integration]") {
  const std::string good = migration_config(good_data());
  SECTION("sources.shots") {
    expect_refused("shots", good + "sources: {shots: [[175, 145, 20]]}\n", "",
                   {"'sources.shots' is not allowed in a migration config"});
  }
  SECTION("sources.wavelet") {
    expect_refused("wavelet", good + "sources: {wavelet: {peak_frequency: 15}}\n", "",
                   {"'sources.wavelet' is not allowed"});
  }
  SECTION("receivers.line") {
    expect_refused("line", good + "receivers: {line: {start: [70, 145, 20], end: [290, 145, 20], count: 12}}\n", "",
                   {"'receivers.line'", "not allowed in a migration config"});
  }
  SECTION("receivers.list") {
    expect_refused("list", good + "receivers: {list: [[70, 145, 20]]}\n", "", {"'receivers.list'", "not allowed"});
  }
  SECTION("no migration.data") {
    std::string y = good;
    const auto at = y.find("  data: ");
    y.erase(at, y.find('\n', at) + 1 - at);
    expect_refused("nodata", y, "", {"'migration.data' is required"});
  }
  SECTION("a plain run config") {
    expect_refused("plain", kTrueModel, "", {"has no 'migration' section"});
  }
}

TEST_CASE("grid.origin: shifting every coordinate and the origin by one vector keeps the traces and image bits",
          "[integration]") {
  // Survey coordinates (UTM-like eastings and northings, a datum 250 m below cell 0): every
  // position and the origin moved by d. Positions on a lattice of whole metres, so that the
  // shifted values and their differences are exact in float64 and the solver sees the same
  // positions relative to cell 0, bit for bit; the outputs carry survey coordinates.
  const std::array<double, 3> d{500000, 4200000, -250};
  auto shifted = [&](double x, double y, double z) {
    return "[" + std::to_string(x + d[0]) + ", " + std::to_string(y + d[1]) + ", " + std::to_string(z + d[2]) + "]";
  };
  const std::string receivers = "{grid: {origin: [70, 145, 20], spacing: [20, 20], count: [12, 1]}}";
  const std::string receivers_d = "{grid: {origin: " + shifted(70, 145, 20) + ", spacing: [20, 20], count: [12, 1]}}";
  const std::string model_d = "\n  vp:\n    type: layers\n    layers:\n      - {top: " + std::to_string(0 + d[2]) +
                              ", vp: 2000}\n      - {top: " + std::to_string(160 + d[2]) + ", vp: 2800}";
  const std::string grid_d = "{shape: [36, 30, 32], spacing: 10, origin: " + shifted(0, 0, 0) + "}";
  const fs::path dir = fresh_dir("origin");
  const std::string a_cfg = write_text(dir / "a.yaml", seisrtm::test::two_layers({{"receivers", receivers}}));
  const std::string b_cfg = write_text(
      dir / "b.yaml",
      seisrtm::test::two_layers({{"grid", grid_d},
                                 {"model", model_d},
                                 {"sources", "{wavelet: {peak_frequency: 15}, shots: [" + shifted(175, 145, 20) + "]}"},
                                 {"receivers", receivers_d}}));
  for (const auto& [cfg, out] : {std::pair{a_cfg, "a"}, std::pair{b_cfg, "b"}}) {
    const Result r = run_cli("run " + cfg + " --quiet --backend cpu --output " + (dir / out).string());
    INFO(r.output);
    REQUIRE(r.code == 0);
  }
  const std::string a_h5 = (dir / "a" / "data.h5").string(), b_h5 = (dir / "b" / "data.h5").string();
  CHECK(seisrtm::test::read_dataset(a_h5, "traces") == seisrtm::test::read_dataset(b_h5, "traces"));
  for (const char* pos : {"/sources/positions", "/receivers/positions"}) {
    INFO(pos);
    const Array pa = read_array(a_h5, pos), pb = read_array(b_h5, pos);
    REQUIRE(pa.values.size() == pb.values.size());
    for (size_t i = 0; i < pa.values.size(); ++i) CHECK(pb.values[i] == pa.values[i] + d[i % 3]);
  }
  // The files' axes (dimension scales /x, /y, /z) in survey coordinates.
  for (int a = 0; a < 3; ++a) {
    const Array axis = read_array(b_h5, std::string("/") + "xyz"[a]);
    REQUIRE(axis.values.size() >= 2);
    CHECK(axis.values[0] == d[a]);
    CHECK(axis.values[1] == d[a] + 10);
  }
  // Migrations of each data set on its own grid: the same image, bit for bit.
  for (const auto& [data, out, grid] :
       {std::tuple{a_h5, "ma", std::string("{shape: [36, 30, 32], spacing: 10}")}, std::tuple{b_h5, "mb", grid_d}}) {
    const std::string cfg = write_text(
        dir / (std::string(out) + ".yaml"),
        seisrtm::test::two_layers_migration({{"grid", grid},
                                             {"output", "{name: rtm}"},
                                             {"migration", "\n  data: " + data + "\n  mute: {velocity: 2000}"}}));
    const Result r =
        run_cli("migrate " + cfg + " --quiet --backend cpu --set output.segy=rev2 --output " + (dir / out).string());
    INFO(r.output);
    REQUIRE(r.code == 0);
  }
  for (const char* v : {"image/correlation", "image/illumination", "image/laplacian"}) {
    INFO(v);
    CHECK(seisrtm::test::read_dataset((dir / "ma" / "rtm.h5").string(), v) ==
          seisrtm::test::read_dataset((dir / "mb" / "rtm.h5").string(), v));
  }
  // The image cube (output.segy; its layout is test_segy_cube's): a trace of 32 depth samples
  // for each of the 36 x 30 columns, the first column's samples the Laplacian image's there, its
  // CDP x (bytes 181, with the scalar at 71) the survey x of cell 0.
  const fs::path cube = dir / "mb" / "rtm_image.sgy";
  REQUIRE(fs::exists(cube));
  CHECK(fs::file_size(cube) == 3600u + 36u * 30u * (240u + 32u * 4u));
  std::ifstream in(cube, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto be32 = [&](size_t at) {
    return static_cast<std::int32_t>((uint32_t(bytes[at]) << 24) | (uint32_t(bytes[at + 1]) << 16) |
                                     (uint32_t(bytes[at + 2]) << 8) | uint32_t(bytes[at + 3]));
  };
  auto be16 = [&](size_t at) { return static_cast<std::int16_t>((bytes[at] << 8) | bytes[at + 1]); };
  const int scalar = be16(3600 + 70);
  const double cdp_x = scalar < 0 ? double(be32(3600 + 180)) / -scalar : double(be32(3600 + 180)) * std::max(1, scalar);
  CHECK(cdp_x == d[0]);
  const std::vector<float> lap = seisrtm::test::read_dataset((dir / "mb" / "rtm.h5").string(), "image/laplacian");
  for (size_t z = 0; z < 32; ++z) {
    const std::uint32_t u = static_cast<std::uint32_t>(be32(3600 + 240 + 4 * z));
    float v;
    std::memcpy(&v, &u, 4);
    CHECK(v == lap[z * 36 * 30]);
  }
  // A position outside the grid is named in survey coordinates.
  const Result bad =
      run_cli("run " + b_cfg + " --quiet --backend cpu --set 'sources.shots=[[175, 145, 20]]' --output " +
              (dir / "bad").string());
  CHECK(bad.code != 0);
  CHECK_THAT(bad.output, Contains("sources.shots[0]") && Contains("x in [500000, 500350]"));
}

namespace {

// The two-layer survey with `shots` (a YAML list) and `receivers` (a YAML mapping).
std::string spread_config(const std::string& shots, const std::string& receivers) {
  return seisrtm::test::two_layers(
      {{"sources", "{wavelet: {peak_frequency: 15}, shots: " + shots + "}"}, {"receivers", receivers}});
}

// Shot `s`'s gather, [receiver][time], of a run's file, its first `nrec` rows.
std::vector<float> gather(const std::string& h5, long long s, long long nrec) {
  const Array t = read_array(h5, "/traces");
  REQUIRE(t.dims.size() == 3);
  const size_t per = static_cast<size_t>(t.dims[1] * t.dims[2]);
  return std::vector<float>(t.values.begin() + static_cast<std::ptrdiff_t>(per * s),
                            t.values.begin() + static_cast<std::ptrdiff_t>(per * s + nrec * t.dims[2]));
}

}  // namespace

TEST_CASE(
    "receivers that move with each shot (relative) and a spread a shot (per_shot) record and migrate what "
    "each shot alone does, bit for bit",
    "[integration]") {
  const fs::path dir = fresh_dir("spreads");
  const std::string shots = "[[120, 145, 20], [220, 145, 20]]";
  // A towed spread: 4 receivers 20 and 40 m either side of each shot, 20 m deep.
  const std::string towed = "{relative: true, list: [[-40, 0, 20], [-20, 0, 20], [20, 0, 20], [40, 0, 20]]}";
  auto run = [&](const std::string& name, const std::string& yaml, const std::string& extra = "") {
    const std::string cfg = write_text(dir / (name + ".yaml"), yaml);
    return run_cli("run " + cfg + " --quiet --backend cpu --output " + (dir / name).string() + extra);
  };
  Result r = run("towed", spread_config(shots, towed), " --set output.segy=rev1");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string towed_h5 = (dir / "towed" / "data.h5").string();
  // Each shot alone, its spread as an explicit list.
  const char* lists[2] = {"{list: [[80, 145, 20], [100, 145, 20], [140, 145, 20], [160, 145, 20]]}",
                          "{list: [[180, 145, 20], [200, 145, 20], [240, 145, 20], [260, 145, 20]]}"};
  const char* one_shot[2] = {"[[120, 145, 20]]", "[[220, 145, 20]]"};
  for (long long s = 0; s < 2; ++s) {
    INFO("shot " << s);
    const std::string name = "alone" + std::to_string(s);
    r = run(name, spread_config(one_shot[s], lists[s]));
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(gather(towed_h5, s, 4) == gather((dir / name / "data.h5").string(), 0, 4));
  }
  // The positions: [shot, receiver, 3] in survey coordinates, the counts beside them.
  const Array pos = read_array(towed_h5, "/receivers/positions");
  REQUIRE(pos.dims == std::vector<hsize_t>{2, 4, 3});
  CHECK(pos.values[0] == 80);
  CHECK(pos.values[12] == 180);
  CHECK(read_array(towed_h5, "/receivers/count").values == std::vector<double>{4, 4});
  // SEG-Y: each shot's file with its own receivers (4 traces of 201 samples).
  for (const char* f : {"data_shot_0000.sgy", "data_shot_0001.sgy"})
    CHECK(fs::file_size(dir / "towed" / f) == 3600u + 4u * (240u + 201u * 4u));

  // Spreads of their own, of 2 and 4 receivers: shot 0's rows beyond its 2 are zero, its
  // positions NaN there; its traces those of shot 0 alone with that list.
  const std::string per_shot =
      "{per_shot: [[[80, 145, 20], [160, 145, 20]], [[180, 145, 20], [200, 145, 20], [240, 145, 20], [260, 145, "
      "20]]]}";
  r = run("per_shot", spread_config(shots, per_shot));
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string ps_h5 = (dir / "per_shot" / "data.h5").string();
  CHECK(read_array(ps_h5, "/traces").dims == std::vector<hsize_t>{2, 4, 200});
  CHECK(read_array(ps_h5, "/receivers/count").values == std::vector<double>{2, 4});
  const std::vector<float> rows = gather(ps_h5, 0, 4);
  CHECK(std::all_of(rows.begin() + 400, rows.end(), [](float v) { return v == 0; }));
  CHECK(std::isnan(read_array(ps_h5, "/receivers/positions").values[6]));
  r = run("alone_pair", spread_config("[[120, 145, 20]]", "{list: [[80, 145, 20], [160, 145, 20]]}"));
  REQUIRE(r.code == 0);
  CHECK(gather(ps_h5, 0, 2) == gather((dir / "alone_pair" / "data.h5").string(), 0, 2));
  CHECK(gather(ps_h5, 1, 4) == gather(towed_h5, 1, 4));

  // migrate reads the spreads back: the towed survey's image is the sum of each shot's alone
  // (the stack adds the shots in order to zeroed volumes), bit for bit.
  auto migrate = [&](const std::string& name, const std::string& data, const std::string& extra = "") {
    const std::string cfg = write_text(dir / (name + ".yaml"), migration_config(data));
    return run_cli("migrate " + cfg + " --quiet --backend cpu --output " + (dir / name).string() + extra);
  };
  r = migrate("m_towed", towed_h5);
  INFO(r.output);
  REQUIRE(r.code == 0);
  for (long long s = 0; s < 2; ++s) {
    r = migrate("m_alone" + std::to_string(s), (dir / ("alone" + std::to_string(s)) / "data.h5").string());
    REQUIRE(r.code == 0);
  }
  // A migration's images against the float sum of two others', dataset by dataset.
  auto check_sum = [&](const std::string& whole, const std::string& first, const std::string& second) {
    for (const char* v : {"image/correlation", "image/illumination"}) {
      INFO(v);
      const auto a = seisrtm::test::read_dataset((dir / first / "rtm.h5").string(), v);
      const auto b = seisrtm::test::read_dataset((dir / second / "rtm.h5").string(), v);
      std::vector<float> sum(a.size());
      for (size_t i = 0; i < a.size(); ++i) sum[i] = (0.0f + a[i]) + b[i];
      CHECK(seisrtm::test::read_dataset((dir / whole / "rtm.h5").string(), v) == sum);
    }
  };
  check_sum("m_towed", "m_alone0", "m_alone1");
  CHECK(read_array((dir / "m_towed" / "rtm.h5").string(), "/receivers/count").values == std::vector<double>{4, 4});
  // Spreads of 2 and 4 receivers (rows beyond shot 0's 2 are padding): the image is shot 0 alone
  // with its 2 plus shot 1 alone with its 4, bit for bit.
  r = migrate("m_per_shot", ps_h5);
  INFO(r.output);
  REQUIRE(r.code == 0);
  r = migrate("m_pair", (dir / "alone_pair" / "data.h5").string());
  REQUIRE(r.code == 0);
  check_sum("m_per_shot", "m_pair", "m_alone1");
  // z slabs (one rank here; several in test_mpi): each shot's receivers owned by slab, the same
  // traces and image.
  r = run("slabs", spread_config(shots, towed), " --set solver.decomposition=z");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(gather((dir / "slabs" / "data.h5").string(), 1, 4) == gather(towed_h5, 1, 4));
  r = migrate("m_slabs", towed_h5, " --set solver.decomposition=z");
  REQUIRE(r.code == 0);
  CHECK(seisrtm::test::read_dataset((dir / "m_slabs" / "rtm.h5").string(), "image/correlation") ==
        seisrtm::test::read_dataset((dir / "m_towed" / "rtm.h5").string(), "image/correlation"));
  // A spread count that is not the shot count, and relative with per_shot, are refused by key.
  r = run("bad_count", spread_config(shots, "{per_shot: [[[80, 145, 20]]]}"));
  CHECK_THAT(r.output, Contains("receivers.per_shot") && Contains("1 spreads for the 2 shots"));
  r = run("bad_rel", spread_config(shots, "{relative: true, per_shot: [[[80, 145, 20]], [[80, 145, 20]]]}"));
  CHECK_THAT(r.output, Contains("receivers.relative"));
}

TEST_CASE("migrate: broken data files are refused with the dataset named", "[integration]") {
  const fs::path d = fresh_dir("files");
  auto refused = [&](const std::string& name, const std::string& data, const std::vector<std::string>& needles) {
    expect_refused("data_" + name, migration_config(data), "", needles);
  };
  SECTION("missing") {
    refused("missing", (d / "nothing.h5").string(), {"nothing.h5", "(migration.data) does not exist"});
  }
  SECTION("not HDF5") {
    const std::string f = write_text(d / "text.h5", "traces: none\n");
    refused("text", f, {"text.h5", "is not a readable HDF5 file"});
  }
  SECTION("a copy of the good file migrates") {
    // The writer's own copy must be accepted, or the broken copies below prove nothing.
    const std::string f = write_data(d / "copy.h5", load_good());
    const fs::path out = d / "copy_out";
    const Result r = run_cli("migrate " + write_text(d / "copy.yaml", migration_config(f)) +
                             " --quiet --backend cpu --output " + out.string() + " --set output.pictures=false");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(fs::exists(out / "rtm.h5"));
  }
  SECTION("no /traces") {
    DataFile g = load_good();
    g.with_traces = false;
    refused("notraces", write_data(d / "notraces.h5", g), {"'/traces' is missing"});
  }
  SECTION("/traces of rank 2") {
    DataFile g = load_good();
    g.traces.dims = {g.traces.dims[1], g.traces.dims[2]};
    refused("rank2", write_data(d / "rank2.h5", g), {"'/traces' has rank 2", "[shot, receiver, time]"});
  }
  SECTION("/sources/positions with a row too many") {
    DataFile g = load_good();
    g.sources.dims[0] += 1;
    g.sources.values.insert(g.sources.values.end(), {100, 100, 20});
    refused("srcrows", write_data(d / "srcrows.h5", g), {"'/sources/positions' has shape [2, 3]", "needs [1, 3]"});
  }
  SECTION("/receivers/positions with a row too few") {
    DataFile g = load_good();
    g.receivers.dims[0] -= 1;
    g.receivers.values.resize(g.receivers.values.size() - 3);
    refused("recrows", write_data(d / "recrows.h5", g), {"'/receivers/positions' has shape [11, 3]", "needs [12, 3]"});
  }
  SECTION("a receiver outside the migration grid") {
    DataFile g = load_good();
    g.receivers.values[3 * 3 + 0] = 1000;  // row 3, x beyond the 350 m extent
    refused("recout", write_data(d / "recout.h5", g),
            {"/receivers/positions row 3", "outside the migration grid", "x in [0, 350]"});
  }
  SECTION("a source above the surface") {
    DataFile g = load_good();
    g.sources.values[2] = -5;
    refused("srcout", write_data(d / "srcout.h5", g), {"/sources/positions row 0", "outside the migration grid"});
  }
  SECTION("NaN in /traces") {
    DataFile g = load_good();
    g.traces.values[g.traces.values.size() / 2] = std::numeric_limits<double>::quiet_NaN();
    refused("nan", write_data(d / "nan.h5", g), {"'/traces' holds a NaN"});
  }
  SECTION("traces near the float limit blow the wavefields up: refused, nothing written") {
    // Finite data (the reader's check passes) whose adjoint wavefield overflows: the stack holds
    // Inf or NaN, and migrate must fail instead of writing it.
    DataFile g = load_good();
    for (double& v : g.traces.values) v = v >= 0 ? 3e38 : -3e38;
    refused("huge", write_data(d / "huge.h5", g), {"the migrated image holds NaN or Inf", "nothing was written"});
  }
  SECTION("no dt attribute") {
    DataFile g = load_good();
    g.with_dt = false;
    refused("nodt", write_data(d / "nodt.h5", g), {"root attribute 'dt'", "is missing"});
  }
  SECTION("dt not positive") {
    DataFile g = load_good();
    g.dt = 0;
    refused("dt0", write_data(d / "dt0.h5", g), {"'dt' must be one positive number"});
  }
}

TEST_CASE("migrate: zero data warn or are refused, and huge declared data are refused before reading",
          "[integration]") {
  const fs::path d = fresh_dir("zero");
  SECTION("all-zero traces warn that the image will be zero") {
    DataFile g = load_good();
    std::fill(g.traces.values.begin(), g.traces.values.end(), 0.0);
    const std::string f = write_data(d / "zero_traces.h5", g);
    const Result r =
        run_cli("migrate " + write_text(d / "zt.yaml", migration_config(f)) + " --quiet --backend cpu --output " +
                (d / "zt_out").string() + " --set output.pictures=false");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK_THAT(r.output, Contains("seisrtm: warning: data file '" + f + "': every trace of /traces is zero"));
  }
  SECTION("an all-zero wavelet is refused") {
    DataFile g = load_good();
    std::fill(g.wavelet.values.begin(), g.wavelet.values.end(), 0.0);
    expect_refused("zero_wavelet", migration_config(write_data(d / "zero_wavelet.h5", g)), "",
                   {"'/sources/wavelet' is zero at every sample"});
  }
  SECTION("10^11 declared shots are refused from the metadata") {
    // Before: the 10^11 source positions were read (std::bad_alloc, "internal error").
    DataFile g = load_good();
    g.with_traces = false;
    const std::string f = write_data(d / "huge.h5", g);
    const hid_t h = H5Fopen(f.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(h >= 0);
    REQUIRE(H5Ldelete(h, "sources/positions", H5P_DEFAULT) >= 0);
    auto chunked = [&](const char* name, std::vector<hsize_t> dims) {
      const hid_t s = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
      const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
      const std::vector<hsize_t> chunk(dims.size(), 1);
      H5Pset_chunk(p, static_cast<int>(dims.size()), chunk.data());
      REQUIRE(H5Dclose(H5Dcreate2(h, name, H5T_IEEE_F32LE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
      H5Pclose(p);
      H5Sclose(s);
    };
    chunked("traces", {100000000000ULL, 12, 200});
    chunked("sources/positions", {100000000000ULL, 3});
    H5Fclose(h);
    expect_refused("huge", migration_config(f), "",
                   {"/traces declares shape [100000000000, 12, 200]", "nothing was read"});
  }
}

namespace {

// A tiny tilted survey: two layers under a free surface, one shot, a line of 10 receivers;
// isotropic at the surface, where the source and receivers sit (a point injected into p and q
// where epsilon or delta is not zero excites the pseudo-acoustic system's spurious mode:
// tests/test_migration.cpp, the vti reflector).
const char* kTtiAnisotropy = R"(  epsilon: {type: layers, layers: [{top: 0, epsilon: 0}, {top: 60, epsilon: 0.2}]}
  delta: {type: layers, layers: [{top: 0, delta: 0}, {top: 60, delta: 0.1}]}
  theta: 25
  phi: 30
)";

std::string tti_true_model() {
  return std::string(R"(grid: {shape: [30, 24, 28], spacing: 10}
time: {steps: 160}
physics: {equation: tti}
boundary: {damping_width: 6, free_surface: true}
model:
  vp: {type: layers, layers: [{top: 0, vp: 2000}, {top: 150, vp: 2600}]}
)") + kTtiAnisotropy +
         R"(sources: {wavelet: {peak_frequency: 15}, shots: [[145, 115, 20]]}
receivers: {line: {start: [60, 115, 20], end: [230, 115, 20], count: 10}}
output: {name: tti_data, pictures: false}
)";
}

std::string tti_migration_config(const std::string& data) {
  return std::string(R"(grid: {shape: [30, 24, 28], spacing: 10}
physics: {equation: tti}
boundary: {damping_width: 6, free_surface: true}
model:
  vp: 2000
)") + kTtiAnisotropy +
         "output: {name: rtm_tti}\nmigration: {data: " + data + ", mute: {velocity: 2000}}\n";
}

}  // namespace

TEST_CASE("migrate: a tti survey migrates on the CPU backend, on the GPU where there is one, and validates",
          "[integration]") {
  // What holds depends on the machine: with a GPU, auto and an explicit cuda backend migrate
  // with the GPU migrator and validate compares it with the CPU one (and passes); without one,
  // auto takes the CPU and the GPU paths say that there is no GPU.
  const seisrtm::GpuInfo gpu = seisrtm::query_gpu();
  INFO("GPU: " << (gpu.present ? gpu.name : "none (" + gpu.reason + ")"));
  const fs::path d = fresh_dir("tti");
  const std::string truth = write_text(d / "tti_true.yaml", tti_true_model());
  Result r = run_cli("run " + truth + " --quiet --backend cpu --output " + d.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string data = (d / "tti_data.h5").string();
  REQUIRE(fs::exists(data));
  const std::string cfg = write_text(d / "tti_migrate.yaml", tti_migration_config(data));
  {  // isic is the acoustic equation's: refused by name, nothing written
    const Result isic = run_cli("migrate " + cfg +
                                " --quiet --backend cpu --set migration.imaging_condition=isic "
                                "--output " +
                                (d / "isic").string());
    CHECK(isic.code == 1);
    CHECK_THAT(isic.output, Contains("'migration.imaging_condition' isic") && Contains("physics.equation tti"));
    CHECK(!fs::exists(d / "isic" / "rtm_tti.h5"));
  }

  // The image of a finished migration: the four datasets, the grid's shape, finite, not zero.
  auto check_image = [&](const fs::path& out) {
    const std::string h5 = (out / "rtm_tti.h5").string();
    REQUIRE(fs::exists(h5));
    for (const char* ds : {"/image/correlation", "/image/illumination", "/image/normalized", "/image/laplacian"})
      CHECK(has_link(h5, ds));
    check_correlation(h5, {28, 24, 30});
  };

  SECTION("the CPU backend") {
    const fs::path out = d / "cpu";
    r = run_cli("migrate " + cfg + " --backend cpu --output " + out.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Contains("backend cpu tti") && Contains("seisrtm: wrote"));
    check_image(out);
  }

  SECTION("auto: the GPU where there is one") {
    const fs::path out = d / "auto";
    r = run_cli("migrate " + cfg + " --output " + out.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Contains(gpu.present ? "backend cuda tti" : "backend cpu tti"));
    CHECK_THAT(r.output, !Contains("migrates on the CPU backend"));
    if (gpu.present) CHECK_THAT(r.output, Contains("separate backward kernels") && Contains("15 volumes"));
    check_image(out);
  }

  SECTION("an explicit cuda backend") {
    if (gpu.present) {
      const fs::path out = d / "cuda";
      r = run_cli("migrate " + cfg + " --backend cuda --output " + out.string());
      INFO(r.output);
      REQUIRE(r.code == 0);
      CHECK_THAT(r.output, Contains("backend cuda tti") && Contains("seisrtm: wrote"));
      check_image(out);
    } else {
      expect_refused("tti_cuda", tti_migration_config(data), "--backend cuda", {"no usable GPU", "use cpu or auto"});
    }
  }

  SECTION("refusals that stay: smem (no tti variant) and migration.mode snapshots on the GPU") {
    // Without a GPU the missing GPU is the first thing said.
    expect_refused("tti_smem", tti_migration_config(data), "--backend cuda --set solver.kernel=smem",
                   gpu.present ? std::vector<std::string>{"'solver.kernel' is smem", "no tti variant", "naive"}
                               : std::vector<std::string>{"no usable GPU"});
    expect_refused("tti_snapshots", tti_migration_config(data), "--backend cuda --set migration.mode=snapshots",
                   gpu.present ? std::vector<std::string>{"'migration.mode' snapshots", "CPU backend only"}
                               : std::vector<std::string>{"no usable GPU"});
  }

  SECTION("validate compares the GPU migrator with the CPU one") {
    r = run_cli("validate " + cfg);
    INFO(r.output);
    if (gpu.present) {
      CHECK(r.code == 0);
      CHECK_THAT(r.output, Contains("(migration)") && Contains("cuda: cuda tti") && Contains("(tti)") &&
                               Contains("validate: PASS"));
    } else {
      CHECK(r.code == 1);
      CHECK_THAT(r.output, Contains("seisrtm: error:") && Contains("validate needs a GPU"));
      CHECK_THAT(r.output, !Contains("'physics.equation' is tti"));
    }
  }
}

namespace {

// The regular files of `dir` by name with their bytes.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) {
      std::ifstream f(e.path(), std::ios::binary);
      m[e.path().filename().string()] = std::string(std::istreambuf_iterator<char>(f), {});
    }
  return m;
}

// kTrueModel under the default output name, its gathers also as SEG-Y, run into `out`.
void run_default_name_with_segy(const fs::path& d, const fs::path& out) {
  std::string yaml = kTrueModel;
  const std::string named = "output: {name: data, pictures: false}";
  yaml.replace(yaml.find(named), named.size(), "output: {segy: rev1, pictures: false}");
  const Result r =
      run_cli("run " + write_text(d / "true.yaml", yaml) + " --quiet --backend cpu --output " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(out / "seisrtm.h5"));
  REQUIRE(fs::exists(out / "seisrtm_shot_0000.sgy"));
}

// A migration config of the SEG-Y files `glob` (kTrueModel's Ricker) with the default output name.
std::string segy_migration_config(const std::string& glob) {
  return seisrtm::test::two_layers_migration(
      {{"output", "{pictures: false}"},
       {"migration", "{data: '" + glob + "', wavelet: {peak_frequency: 15}, mute: {velocity: 2000}}"}});
}

}  // namespace

TEST_CASE("migrate: the default output name differs from run's, so a migration of run's SEG-Y keeps every file",
          "[integration]") {
  // Before, both defaulted to out/seisrtm: the migration's commit took the run's SEG-Y files for
  // stale members of its set and removed them, and replaced the run's seisrtm.h5 with the image.
  const fs::path d = fresh_dir("default_names");
  const fs::path out = d / "out";
  run_default_name_with_segy(d, out);
  const auto before = files_of(out);
  const std::string cfg = write_text(d / "migrate.yaml", segy_migration_config((out / "seisrtm_shot_*.sgy").string()));
  const Result r = run_cli("migrate " + cfg + " --quiet --backend cpu --output " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("seisrtm_migration.h5"));
  auto after = files_of(out);
  CHECK(after.erase("seisrtm_migration.h5") == 1);
  CHECK(after.erase("seisrtm_migration.xmf") == 1);
  CHECK(after == before);
}

TEST_CASE("migrate: a result set that would replace or remove the data is refused before any work", "[integration]") {
  const std::string kind = GENERATE(std::string("hdf5"), std::string("segy_glob"));
  const fs::path d = fresh_dir("reads_" + kind);
  fs::path out;
  std::string cfg, data, name;
  if (kind == "hdf5") {  // migration.data d/x.h5 into output directory d, name x: the image replaced it
    out = d;
    data = (d / "x.h5").string();
    name = "x";
    fs::copy_file(good_data(), data);
    cfg = write_text(d / "migrate.yaml", migration_config(data));
  } else {  // run's SEG-Y gathers, members of the set of the name the migration is given: removed
    out = d / "out";
    run_default_name_with_segy(d, out);
    data = (out / "seisrtm_shot_0000.sgy").string();
    name = "seisrtm";
    cfg = write_text(d / "migrate.yaml", segy_migration_config((out / "seisrtm_shot_*.sgy").string()));
  }
  const auto before = files_of(out);
  // Not --quiet: anything the migration did would print.
  const Result r = run_cli("migrate " + cfg + " --backend cpu --output " + out.string() + " --set output.name=" + name);
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK_THAT(r.output, Contains("seisrtm: error: migration.data '" + data + "'") && Contains("output.name") &&
                           Contains("--output"));
  CHECK(files_of(out) == before);
}

TEST_CASE("migrate: a memory-plan refusal names the data file, its shape and dt, and what would fit", "[integration]") {
  const std::string data = good_data();
  std::ostringstream dt;  // as the message writes it: 6 significant digits
  dt.precision(6);
  dt << read_dt(data);
  const std::string shape = "data file '" + data + "' (1 shot x 12 receivers x 200 samples of " + dt.str() + " s)";
  SECTION("a store too large: the record length that fits") {
    // Snapshots of every step for 10^7 steps: 10^7 volumes of 36 x 30 x 32 x 4 B = 1.4 TB, beyond
    // any host's memory, while the 19 volumes and the data fit any.
    expect_refused(
        "plan_steps", migration_config(data),
        "--backend cpu --set migration.mode=snapshots --set migration.image_interval=1 --set "
        "time.steps=10000000",
        {"seisrtm: error: " + shape + ": the migration needs", "of its 10000000 steps of", "s (the data hold"});
  }
  SECTION("the volumes alone too large: no step count is offered") {
    // Before, this said "at most about 0 steps would fit (time.steps, ...)".
    const seisrtm::MigrationInput in = seisrtm::prepare_migration(seisrtm::parse_config(migration_config(data)));
    const seisrtm::DataShape declared{data, 1, 12, 200, read_dt(data)};
    // 1 MiB: less than the 19 volumes of 36 x 30 x 32 x 4 B = 138 kB (2.6 MB) the plan holds
    // before any step.
    CHECK_THROWS_WITH(seisrtm::plan_migration(in.problem, declared, 1 << 20),
                      Contains(shape + ": the migration needs") && Contains("no room for the store of even 2 steps") &&
                          Contains("grid.shape") && !Contains("time.steps") && !Contains("0 steps"));
  }
}

TEST_CASE("migrate: a mute velocity outside vp's range, or a mute that zeroes every trace, is refused",
          "[integration]") {
  const std::string good = migration_config(good_data());
  auto prepare = [&](const std::vector<std::string>& sets) {
    return seisrtm::prepare_migration(seisrtm::parse_config(good, sets));
  };
  // 1.8 meant as km/s: refused by the range, named with the unit.
  CHECK_THROWS_WITH(prepare({"migration.mute.velocity=1.8"}), Contains("'migration.mute.velocity' = 1.8 m/s") &&
                                                                  Contains("km/s? use 1800") &&
                                                                  Contains("checks.physical_ranges"));
  CHECK_THROWS_WITH(prepare({"migration.mute.velocity=1e-9"}), Contains("'migration.mute.velocity' = 1e-09 m/s"));
  // t0 = 100 s lies beyond the data's 200 samples (well under 1 s): every sample muted.
  CHECK_THROWS_WITH(prepare({"migration.mute.t0=100"}),
                    Contains("'migration.mute'") && Contains("zeroes every sample of every trace"));
  // With the override the range is a warning, but 1.8 m/s still mutes everything (offsets of
  // 5 m and more / 1.8 m/s > 2.7 s, beyond the record).
  CHECK_THROWS_WITH(prepare({"migration.mute.velocity=1.8", "checks.physical_ranges=false"}),
                    Contains("zeroes every sample of every trace"));
  const seisrtm::MigrationInput in = prepare({});
  CHECK(in.muted_samples < static_cast<long long>(in.traces.size()));
}

TEST_CASE("migrate with image gathers: offset and angle gathers with their axes, pictures, parts stack bit for bit",
          "[integration]") {
  // migration.gathers on the 36 x 30 x 32 grid (interior x 6..29, y 6..23, z 0..25): offsets
  // -4..4, a location every 6th x and y cell from the interior's first: x 6, 12, 18, 24; y 6,
  // 12, 18. The datasets' shapes and axes as the layout says; the parts {0, 3} and {1, 2}
  // stacked: both gathers the whole migration's bits. Bad gathers keys are refused by name.
  const fs::path d = fresh_dir("gathers");
  const std::string true_cfg = write_text(d / "true.yaml", kTrueModel);
  const Result r = run_cli("run " + true_cfg + " --quiet --backend cpu --output " + (d / "data").string() +
                           " --set 'sources.shots=[[125, 145, 20], [175, 145, 20], [225, 145, 20], [200, 100, 20]]'");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string cfg =
      write_text(d / "rtm.yaml", migration_config((d / "data" / "data.h5").string()) +
                                     "  gathers: {offsets: 4, x_every: 6, y_every: 6, max_angle: 40, angle_step: 5}\n");
  auto migrate = [&](const std::string& out, const std::string& args) {
    const Result m = run_cli("migrate " + cfg + " --backend cpu --output " + (d / out).string() + " " + args);
    INFO(out << ": " << m.output);
    REQUIRE(m.code == 0);
    return m;
  };
  const Result whole = migrate("whole", "");
  const std::string h5 = (d / "whole" / "rtm.h5").string();
  CHECK_THAT(whole.output, Contains("rtm_gathers_offset.png") && Contains("rtm_gathers_angle.png"));
  CHECK(fs::exists(d / "whole" / "rtm_gathers_offset.png"));
  const Array offset = read_array(h5, "/gathers/offset"), angle = read_array(h5, "/gathers/angle");
  CHECK(offset.dims == std::vector<hsize_t>{3, 4, 9, 32});
  CHECK(angle.dims == std::vector<hsize_t>{3, 4, 9, 32});  // 0, 5, ..., 40 degrees
  CHECK(read_array(h5, "/gathers/x").values == std::vector<double>{60, 120, 180, 240});
  CHECK(read_array(h5, "/gathers/y").values == std::vector<double>{60, 120, 180});
  CHECK(read_array(h5, "/gathers/h").values == std::vector<double>{-40, -30, -20, -10, 0, 10, 20, 30, 40});
  CHECK(read_array(h5, "/gathers/angle_deg").values == std::vector<double>{0, 5, 10, 15, 20, 25, 30, 35, 40});
  // seisrtm plot lists and draws them (a row along x at the y nearest --at).
  const Result list = run_cli("plot " + h5);
  CHECK_THAT(list.output, Contains("offset_gathers") && Contains("angle_gathers") && Contains("3 x 4 locations"));
  const Result pa = run_cli("plot " + h5 + " angle_gathers --at 130");
  INFO(pa.output);
  CHECK(pa.code == 0);
  CHECK(fs::exists(d / "whole" / "rtm_plot_angle_gathers_y_120m.png"));
  const Result pz = run_cli("plot " + h5 + " offset_gathers --slice z");
  CHECK(pz.code != 0);
  CHECK_THAT(pz.output, Contains("gathers are drawn along x at a y"));
  // The zero-offset trace of a gather is the image's column there (the same sum of S R).
  const Array image = read_array(h5, "/image/correlation");
  for (long long z = 0; z < 26; ++z)
    CHECK(offset.values[((1 * 4 + 2) * 9 + 4) * 32 + z] == image.values[(z * 30 + 12) * 36 + 18]);
  // SEG-Y (output.segy): a gather a location (ensemble 21, y slowest), its traces in order (25),
  // byte 37 the half-offset in m or the angle in degrees, inline and crossline the location's
  // cell + 1, the samples the file's bit for bit.
  migrate("segy", "--quiet --set output.segy=rev2");
  {
    const std::vector<float> h5v = seisrtm::test::read_dataset((d / "segy" / "rtm.h5").string(), "gathers/offset");
    Segy sg((d / "segy" / "rtm_gathers_offset.sgy").string());
    REQUIRE(sg.traces == 3 * 4 * 9);
    REQUIRE(sg.samples == 32);
    long long wrong = 0;
    for (int t = 0; t < sg.traces; ++t) {
      const auto hdr = sg.header(t);
      const int loc = t / 9, k = t % 9, jy = loc / 4, jx = loc % 4;
      wrong += Segy::field(hdr, 21) != loc + 1 || Segy::field(hdr, 25) != k + 1 ||
               Segy::field(hdr, 37) != (k - 4) * 10 || Segy::field(hdr, 189) != 6 * jy + 7 ||
               Segy::field(hdr, 193) != 6 * jx + 7 || Segy::field(hdr, 181) != 60 * jx + 60;
      const std::vector<float> v = sg.trace(t);
      wrong += std::memcmp(v.data(), h5v.data() + t * 32, 32 * sizeof(float)) != 0;
    }
    CHECK(wrong == 0);
    Segy sa((d / "segy" / "rtm_gathers_angle.sgy").string());
    CHECK(sa.traces == 3 * 4 * 9);
    CHECK(Segy::field(sa.header(10), 37) == 5);  // the second trace of the second gather: 5 degrees
  }
  migrate("p03", "--quiet --shots 0,3");
  migrate("p12", "--quiet --shots 1:3");
  const Result s = run_cli("stack " + cfg + " --output " + (d / "stack").string() + " " +
                           (d / "p03" / "rtm.h5").string() + " " + (d / "p12" / "rtm.h5").string());
  INFO(s.output);
  REQUIRE(s.code == 0);
  for (const char* name : {"gathers/offset", "gathers/angle", "image/correlation"}) {
    INFO(name);
    const std::vector<float> w = seisrtm::test::read_dataset(h5, name);
    CHECK(seisrtm::test::read_dataset((d / "stack" / "rtm.h5").string(), name) == w);
    CHECK(seisrtm::test::read_dataset((d / "p03" / "rtm.h5").string(), name) != w);
  }
  // A rerun into the same place without gathers replaces the whole set: no gather file stays.
  {
    const std::string plain = write_text(d / "plain.yaml", migration_config((d / "data" / "data.h5").string()));
    const Result again = run_cli("migrate " + plain + " --quiet --backend cpu --output " + (d / "segy").string());
    INFO(again.output);
    REQUIRE(again.code == 0);
    for (const char* f :
         {"rtm_gathers_offset.sgy", "rtm_gathers_angle.sgy", "rtm_gathers_offset.png", "rtm_gathers_angle.png"})
      CHECK(!fs::exists(d / "segy" / f));
  }
  const Result no_gathers =
      run_cli("stack " + cfg + " --set migration.gathers.offsets=3 --output " + (d / "bad").string() + " " +
              (d / "p03" / "rtm.h5").string() + " " + (d / "p12" / "rtm.h5").string());
  CHECK(no_gathers.code != 0);
  CHECK_THAT(no_gathers.output, Contains("other settings or data") && Contains("offsets: 3"));
  const std::string good = migration_config(good_data());
  expect_refused("gathers_no_offsets", good + "  gathers: {x_every: 4}\n", "",
                 {"'migration.gathers.offsets' is required"});
  expect_refused("gathers_offsets0", good + "  gathers: {offsets: 0}\n", "",
                 {"'migration.gathers.offsets'", "[1, 512]"});
  expect_refused("gathers_every0", good + "  gathers: {offsets: 4, x_every: 0}\n", "",
                 {"'migration.gathers.x_every' must be >= 1"});
  expect_refused("gathers_angles", good + "  gathers: {offsets: 4, max_angle: 10, angle_step: 20}\n", "",
                 {"'migration.gathers.angle_step'", "must not exceed migration.gathers.max_angle"});
  expect_refused("gathers_angle_step", good + "  gathers: {offsets: 4, angle_step: 0.01}\n", "",
                 {"'migration.gathers.angle_step' must be >= 0.1 degrees"});
  expect_refused("gathers_key", good + "  gathers: {offsets: 4, every: 3}\n", "",
                 {"'migration.gathers.every' is unknown"});
  // Gathers that do not fit the host: refused before the traces are read, naming the keys (on a
  // grid of 400^3 cells around the data's, every cell a location with 1025 offsets: terabytes).
  expect_refused("gathers_memory", good + "  gathers: {offsets: 512, x_every: 1, y_every: 1}\n",
                 "--backend cpu --set grid.shape=[400,400,400]",
                 {"for the image gathers", "migration.gathers.x_every, y_every", "migration.gathers.offsets"});
}

TEST_CASE("migrate with migration.imaging_condition isic writes /image/isic, its images and XDMF; refusals by name",
          "[integration]") {
  // The image datasets under the condition's name (the normalised and Laplacian images made from
  // it, the XDMF pointing at it, the root attribute naming it); with snapshots or gathers isic is
  // refused naming both keys. (Its physics: tests/test_migration.cpp, "isic: ...".)
  const fs::path d = fresh_dir("isic");
  const std::string cfg = write_text(d / "rtm.yaml", migration_config(good_data()));
  const Result r =
      run_cli("migrate " + cfg + " --quiet --backend cpu --set migration.imaging_condition=isic --output " +
              (d / "out").string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string h5 = (d / "out" / "rtm.h5").string();
  CHECK(has_link(h5, "/image/isic"));
  CHECK(!has_link(h5, "/image/correlation"));
  CHECK(has_link(h5, "/image/laplacian"));
  std::ifstream x(d / "out" / "rtm.xmf");
  const std::string xmf((std::istreambuf_iterator<char>(x)), std::istreambuf_iterator<char>());
  CHECK_THAT(xmf, Contains("/image/isic") && !Contains("/image/correlation"));
  const Result c = run_cli("migrate " + cfg + " --quiet --backend cpu --output " + (d / "corr").string());
  REQUIRE(c.code == 0);
  CHECK(seisrtm::test::read_dataset(h5, "image/illumination") ==
        seisrtm::test::read_dataset((d / "corr" / "rtm.h5").string(), "image/illumination"));
  CHECK(seisrtm::test::read_dataset(h5, "image/isic") !=
        seisrtm::test::read_dataset((d / "corr" / "rtm.h5").string(), "image/correlation"));
  const std::string good = migration_config(good_data());
  expect_refused("isic_snapshots", good, "--set migration.imaging_condition=isic --set migration.mode=snapshots",
                 {"'migration.imaging_condition' isic", "migration.mode: boundary"});
  expect_refused("isic_gathers", good + "  gathers: {offsets: 4}\n", "--set migration.imaging_condition=isic",
                 {"'migration.imaging_condition' isic and 'migration.gathers'"});
  expect_refused("isic_bad", good, "--set migration.imaging_condition=energy",
                 {"'migration.imaging_condition'", "correlation | isic"});
}

TEST_CASE("migrate --shots and seisrtm stack: parts of a survey add up to the whole migration, bit for bit",
          "[integration]") {
  // Four shots migrated whole, and as the parts {0, 3}, {1} and {2} stacked (two of them first,
  // the third added to that stack): every image dataset the same bits. Overlapping parts, a part
  // of other settings, a file that is not a part and bad --shots lists are refused by name.
  const fs::path d = fresh_dir("parts");
  const std::string true_cfg = write_text(d / "true.yaml", kTrueModel);
  const Result r = run_cli("run " + true_cfg + " --quiet --backend cpu --output " + (d / "data").string() +
                           " --set 'sources.shots=[[125, 145, 20], [175, 145, 20], [225, 145, 20], [200, 100, 20]]'");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string cfg = write_text(d / "rtm.yaml", migration_config((d / "data" / "data.h5").string()));
  auto migrate = [&](const std::string& out, const std::string& shots) {
    return run_cli("migrate " + cfg + " --quiet --backend cpu --output " + (d / out).string() +
                   (shots.empty() ? "" : " --shots " + shots));
  };
  auto stack = [&](const std::string& out, const std::string& parts) {
    return run_cli("stack " + cfg + " --output " + (d / out).string() + " " + parts);
  };
  auto part = [&](const std::string& out) { return (d / out / "rtm.h5").string(); };
  for (const auto& [out, shots] : std::vector<std::pair<std::string, std::string>>{
           {"whole", ""}, {"p03", "0,3"}, {"p1", "1:2"}, {"p2", "2"}, {"p12", "1:3"}}) {
    const Result m = migrate(out, shots);
    INFO(out << ": " << m.output);
    REQUIRE(m.code == 0);
  }
  const Result s1 = stack("s1", part("p03") + " " + part("p1"));
  INFO(s1.output);
  REQUIRE(s1.code == 0);
  CHECK_THAT(s1.output, Contains("3 of the survey's 4 shots (itself a part"));
  const Result s2 = stack("s2", part("s1") + " " + part("p2"));
  INFO(s2.output);
  REQUIRE(s2.code == 0);
  {
    // Its host memory planned before the sums are allocated: a (fake) cgroup of 1 MiB refuses it.
    const fs::path root = d / "cgroup";
    fs::create_directories(root);
    write_text(root / "memory.max", "1048576\n");
    write_text(root / "memory.current", "0\n");
    const Result small =
        seisrtm::test::run_shell("SEISRTM_CGROUP_ROOT=" + root.string() + " " + SEISRTM_HOOKED_BINARY + " stack " +
                                 cfg + " --output " + (d / "small").string() + " " + part("p03") + " " + part("p1"));
    INFO(small.output);
    CHECK(small.code == 1);
    CHECK_THAT(small.output, Contains("seisrtm stack needs") && Contains("48 bytes a cell") &&
                                 Contains("cgroup limit " + root.string()));
    CHECK(!fs::exists(d / "small" / "rtm.h5"));
  }
  for (const char* name : {"image/correlation", "image/illumination", "image/normalized", "image/laplacian"}) {
    INFO(name);
    const std::vector<float> whole = seisrtm::test::read_dataset(part("whole"), name);
    CHECK(seisrtm::test::read_dataset(part("s2"), name) == whole);
    CHECK(seisrtm::test::read_dataset(part("p03"), name) != whole);
  }
  // Refusals: nothing written, the reason named.
  const Result overlap = stack("bad1", part("p03") + " " + part("p12") + " " + part("p1"));
  CHECK(overlap.code != 0);
  CHECK_THAT(overlap.output, Contains("both hold shot 1") && Contains("must not overlap"));
  const Result other = run_cli("stack " + cfg + " --set migration.mute.velocity=2100 --output " +
                               (d / "bad2").string() + " " + part("p03") + " " + part("p1"));
  CHECK(other.code != 0);
  CHECK_THAT(other.output, Contains("other settings or data") && Contains("migration.mute.velocity: 2100"));
  // Settings that keep a shot's bits (how the boundary is rebuilt, epsilon of the images made
  // from the stack) do not part the parts; the model's contents do, whatever its file's name.
  const Result same = run_cli("stack " + cfg +
                              " --set migration.illumination_epsilon=0.5 --set migration.reconstruction=checkpoint "
                              "--output " +
                              (d / "same").string() + " " + part("p03") + " " + part("p1"));
  INFO(same.output);
  CHECK(same.code == 0);
  const Result whole_file = stack("bad3", part("whole") + " " + part("p1"));
  CHECK(whole_file.code != 0);
  CHECK_THAT(whole_file.output, Contains("is not a part of a survey"));
  for (const char* bad : {"4", "2:2", "1:x", "", "0,,1"}) {
    const Result b = migrate("bad4", std::string("'") + bad + "'");
    INFO("--shots '" << bad << "': " << b.output);
    CHECK(b.code != 0);
    CHECK_THAT(b.output, Contains("--shots"));
  }
  // Another model (the same velocity in a file, then a slower slab in it: the same file name).
  const std::vector<float> vp(36 * 30 * 32, 2000.0f);
  seisrtm::io::write_float_file((d / "vp.h5").string(), "vp", {32, 30, 36}, vp);
  const std::string vp_part = "--set model.vp.type=file --set model.vp.file=" + (d / "vp.h5").string();
  const Result fa =
      run_cli("migrate " + cfg + " --quiet --backend cpu --shots 0 " + vp_part + " --output " + (d / "vpa").string());
  INFO(fa.output);
  REQUIRE(fa.code == 0);
  std::vector<float> slower = vp;
  std::fill(slower.begin() + 20 * 30 * 36, slower.end(), 1900.0f);
  seisrtm::io::write_float_file((d / "vp.h5").string(), "vp", {32, 30, 36}, slower);
  const Result fb =
      run_cli("migrate " + cfg + " --quiet --backend cpu --shots 1: " + vp_part + " --output " + (d / "vpb").string());
  INFO(fb.output);
  REQUIRE(fb.code == 0);
  const Result models = run_cli("stack " + cfg + " " + vp_part + " --output " + (d / "bad5").string() + " " +
                                part("vpa") + " " + part("vpb"));
  CHECK(models.code != 0);
  CHECK_THAT(models.output, Contains("other settings or data") && Contains("model vp:"));
  for (const char* out : {"bad1", "bad2", "bad3", "bad4", "bad5"}) CHECK(!fs::exists(d / out / "rtm.h5"));
}
