// [integration] The seisrtm binary end to end: every file in configs/ runs, and each kind of bad
// input gets one clear message, a non-zero exit and no output file left behind.
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using seisrtm::test::Result;
using seisrtm::test::run_cli;
using seisrtm::test::write_declared;

namespace {

fs::path fresh_dir(const std::string& name) {
  return seisrtm::test::fresh_dir("seisrtm_test_cli_", name);
}

// A small valid survey (tests/data/small.yaml); tests break one thing at a time.
const std::string kSmall = seisrtm::test::small_survey();

std::string write_config(const fs::path& dir, const std::string& text) {
  return seisrtm::test::write_text(dir / "survey.yaml", text);
}

// Runs a bad case: non-zero exit, one "error:" line containing `needle`, nothing in out/.
void expect_refused(const std::string& name, const std::string& yaml, const std::string& extra,
                    const std::string& needle) {
  const fs::path d = fresh_dir(name);
  const std::string cfg = write_config(d, yaml);
  const fs::path out = d / "out";
  const Result r = run_cli("run " + cfg + " --quiet --output " + out.string() + " " + extra);
  INFO(name << ": " << r.output);
  CHECK(r.code != 0);
  CHECK_THAT(r.output, Contains("seisrtm: error:") && Contains(needle));
  const bool empty = !fs::exists(out) || fs::is_empty(out);
  CHECK(empty);
}

}  // namespace

TEST_CASE("info starts anywhere and reports the GPU or its absence", "[integration]") {
  const Result r = run_cli("info");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("seisrtm") && Contains("CUDA architectures"));
  CHECK((r.output.find("GPU: none usable") != std::string::npos ||
         r.output.find("compute capability") != std::string::npos));
}

TEST_CASE("--help shows an example", "[integration]") {
  const Result r = run_cli("--help");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("Example") && Contains("seisrtm run"));
}

TEST_CASE("every config in configs/ runs and writes HDF5, XDMF and pictures", "[integration]") {
  for (const auto& e : fs::directory_iterator(fs::path(SEISRTM_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".yaml") continue;
    const fs::path d = fresh_dir("configs_" + e.path().stem().string());
    // Shrunk in time so the tier stays short; the full runs are what the README shows.
    const Result r = run_cli("run " + e.path().string() + " --quiet --output " + d.string() +
                             " --set time.steps=60 --set output.snapshot_interval=30");
    INFO(e.path() << ": " << r.output);
    REQUIRE(r.code == 0);
    std::vector<std::string> h5, xmf, png, partial;
    for (const auto& f : fs::directory_iterator(d)) {
      const auto ext = f.path().extension();
      if (ext == ".h5") h5.push_back(f.path());
      if (ext == ".xmf") xmf.push_back(f.path());
      if (ext == ".png") png.push_back(f.path());
      if (ext == ".partial") partial.push_back(f.path());
    }
    CHECK(h5.size() == 1);
    CHECK(xmf.size() == 1);
    CHECK(png.size() >= 3);
    CHECK(partial.empty());
  }
}

TEST_CASE("the migration example in configs/rtm runs: run, then migrate its data", "[integration]") {
  // Shrunk to one shot and 300 steps so the tier stays short; the README shows the full runs. The
  // record must outlast the mute (t0 = 0.2 s at the example's 12 Hz): 150 steps image nothing.
  const fs::path d = fresh_dir("configs_rtm");
  const fs::path rtm = fs::path(SEISRTM_SOURCE_DIR) / "configs" / "rtm";
  const Result a = run_cli("run " + (rtm / "true_model.yaml").string() + " --quiet --output " + d.string() +
                           " --set time.steps=300 --set sources.shots=[[700,345,10]]");
  INFO(a.output);
  REQUIRE(a.code == 0);
  const fs::path m = d / "migration";
  const Result b = run_cli("migrate " + (rtm / "migrate.yaml").string() + " --quiet --output " + m.string() +
                           " --set migration.data=" + (d / "true_model.h5").string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(fs::exists(m / "migrate.h5"));
  CHECK(fs::exists(m / "migrate.xmf"));
  CHECK(fs::exists(m / "migrate_image_xz.png"));
  CHECK(fs::exists(m / "migrate_image_depth.png"));
}

TEST_CASE("the marine streamer example runs on the CPU and images its reflectors within one cell of their depth",
          "[integration]") {
  // configs/marine: six shots on two sail lines in UTM coordinates, streamers that move with the
  // boat (a spread a shot), migrated in a smoothed model. At three x positions on each sail line
  // the Laplacian image's largest positive sample within 25 m of each interface, refined by a
  // parabola through its neighbours, lies within one cell (12.5 m) of the interface's depth.
  const fs::path d = fresh_dir("configs_marine");
  const fs::path dir = fs::path(SEISRTM_SOURCE_DIR) / "configs" / "marine";
  const Result a = run_cli("run " + (dir / "streamer.yaml").string() + " --quiet --backend cpu --output " + d.string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  const Result b = run_cli("migrate " + (dir / "migrate.yaml").string() + " --quiet --backend cpu --output " +
                           d.string() + " --set migration.data=" + (d / "streamer.h5").string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(fs::exists(d / "migrate_image.sgy"));
  const std::vector<float> img = seisrtm::test::read_dataset((d / "migrate.h5").string(), "image/laplacian");
  const long long nx = 192, ny = 100;
  const double h = 12.5, ox = 431000, oy = 6720000, xc = ox + (nx - 1) * h / 2;
  for (const double y : {6720480.0, 6720780.0})
    for (const double x : {432100.0, 432400.0, 432700.0}) {
      const long long ix = std::llround((x - ox) / h), iy = std::llround((y - oy) / h);
      auto at = [&](long long iz) { return double(img[size_t((iz * ny + iy) * nx + ix)]); };
      for (const double z : {400.0, 640 + std::tan(8 * std::numbers::pi / 180) * (x - xc), 960.0}) {
        long long k = std::llround((z - 25) / h);
        for (long long i = k; i <= std::llround((z + 25) / h); ++i)
          if (at(i) > at(k)) k = i;
        const double p = at(k - 1), q = at(k), r = at(k + 1);
        const double zi = h * (double(k) + 0.5 * (p - r) / (p - 2 * q + r));
        INFO("x " << x << ", y " << y << ": interface at " << z << " m imaged at " << zi << " m");
        CHECK(std::abs(zi - z) < h);
      }
    }
}

TEST_CASE("run --shots computes a part of a survey: its shots' rows, names and record numbers are the whole run's",
          "[integration]") {
  // The marine example (6 shots, a spread a shot) shortened to 300 steps with snapshots, run
  // whole and as the parts {1, 3, 4} and {0, 2, 5}: each part's file holds its shots' traces,
  // snapshots, positions and spreads bit for bit the whole run's rows, /shot and /sources/record
  // name them as in the survey, and every SEG-Y copy and gather picture is byte for byte the whole
  // run's (so one glob over the parts' SEG-Y migrates as the whole run's). Bad lists are refused.
  const fs::path d = fresh_dir("run_shots");
  const std::string run = "run " + (fs::path(SEISRTM_SOURCE_DIR) / "configs/marine/streamer.yaml").string() +
                          " --quiet --backend cpu --set time.steps=300 --set output.snapshot_interval=100";
  const Result whole = run_cli(run + " --output " + (d / "whole").string());
  INFO(whole.output);
  REQUIRE(whole.code == 0);
  const std::string w = (d / "whole" / "streamer.h5").string();
  using seisrtm::test::read_dataset;
  auto bytes = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const std::vector<long long>& part : {std::vector<long long>{1, 3, 4}, std::vector<long long>{0, 2, 5}}) {
    const std::string list = part[0] == 1 ? "1,3:5" : ":1,2,5:";
    const fs::path out = d / ("part" + std::to_string(part[0]));
    const Result r = run_cli(run + " --shots " + list + " --output " + out.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    const std::string f = (out / "streamer.h5").string();
    std::vector<float> ids, records;
    for (long long s : part) ids.push_back(float(s)), records.push_back(float(s + 1));  // (first_record 1)
    CHECK(read_dataset(f, "shot") == ids);
    CHECK(read_dataset(f, "sources/record") == records);
    // Row k of a [shot, ...] dataset of the part against row part[k] of the whole run's.
    for (const std::string v : {"traces", "sources/positions", "receivers/positions", "receivers/count"}) {
      INFO(v);
      const std::vector<float> mine = read_dataset(f, v), every = read_dataset(w, v);
      REQUIRE(every.size() % 6 == 0);
      const size_t row = every.size() / 6;
      REQUIRE(mine.size() == part.size() * row);
      for (size_t k = 0; k < part.size(); ++k)
        CHECK(std::memcmp(mine.data() + k * row, every.data() + size_t(part[k]) * row, row * sizeof(float)) == 0);
    }
    for (long long s : part) {
      const std::string n = "shot_000" + std::to_string(s);
      CHECK(read_dataset(f, "snapshots/" + n) == read_dataset(w, "snapshots/" + n));
      CHECK(bytes(out / ("streamer_" + n + ".sgy")) == bytes(d / "whole" / ("streamer_" + n + ".sgy")));
      CHECK(bytes(out / ("streamer_gather_" + n + ".png")) == bytes(d / "whole" / ("streamer_gather_" + n + ".png")));
    }
    CHECK(!fs::exists(out / ("streamer_shot_000" + std::to_string(part[0] == 1 ? 0 : 1) + ".sgy")));
  }
  for (const auto& [list, why] : std::vector<std::pair<std::string, std::string>>{
           {"6", "'6' reaches beyond the last shot"}, {"2:2", "'2:2' holds no shot"}, {"1,,2", "an empty item"}}) {
    const Result bad = run_cli(run + " --shots " + list + " --output " + (d / "bad").string());
    INFO(bad.output);
    CHECK(bad.code != 0);
    CHECK_THAT(bad.output, Catch::Matchers::Contains("--shots '" + list + "': " + why));
    CHECK(!fs::exists(d / "bad" / "streamer.h5"));
  }
}

TEST_CASE("a run that fails keeps its finished shots for the same command; output.resume false keeps none",
          "[integration]") {
  // The marine example shortened to 200 steps; shot 3 (index 2) fails at its start (the test
  // executable's seam). The journal then holds shots 0 and 1, and the same command without the
  // failure computes only the other four. With output.resume false no journal is kept and the
  // command again computes all six.
  const fs::path d = fresh_dir("run_resume_key");
  const std::string run = std::string(SEISRTM_HOOKED_BINARY) + " run " +
                          (fs::path(SEISRTM_SOURCE_DIR) / "configs/marine/streamer.yaml").string() +
                          " --backend cpu --set time.steps=200 --output " + d.string();
  for (const bool keep : {true, false}) {
    INFO("output.resume " << keep);
    fs::remove_all(d);
    const std::string set = keep ? "" : " --set output.resume=false";
    const Result failed = seisrtm::test::run_shell("SEISRTM_TEST_FAIL_SHOT=2 " + run + set);
    INFO(failed.output);
    CHECK(failed.code != 0);
    CHECK(fs::exists(d / "streamer.resume" / "shot_0001") == keep);
    CHECK(fs::exists(d / "streamer.resume") == keep);
    const Result again = seisrtm::test::run_shell(run + set);
    INFO(again.output);
    REQUIRE(again.code == 0);
    CHECK((again.output.find("seisrtm: resuming: 2 of the 6 shots") != std::string::npos) == keep);
    CHECK_THAT(again.output, Contains(keep ? "4 shot(s) computed" : "6 shot(s) computed"));
    CHECK(!fs::exists(d / "streamer.resume"));
  }
}

TEST_CASE("the tti migration example in configs/rtm runs: run, then migrate its data", "[integration]") {
  // Shrunk to one shot and 300 steps so the tier stays short (and the record outlasts the mute's
  // t0 of 0.24 s); the README shows the full runs.
  const fs::path d = fresh_dir("configs_rtm_tti");
  const fs::path rtm = fs::path(SEISRTM_SOURCE_DIR) / "configs" / "rtm";
  const Result a = run_cli("run " + (rtm / "tti_true_model.yaml").string() + " --quiet --output " + d.string() +
                           " --set time.steps=300 --set sources.shots=[[545,175,10]]");
  INFO(a.output);
  REQUIRE(a.code == 0);
  const fs::path m = d / "migration";
  const Result b = run_cli("migrate " + (rtm / "tti_migrate.yaml").string() + " --quiet --output " + m.string() +
                           " --set migration.data=" + (d / "tti_true_model.h5").string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(fs::exists(m / "tti_migrate.h5"));
  CHECK(fs::exists(m / "tti_migrate_image_xz.png"));
}

namespace {
std::vector<hsize_t> dims_of(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  const hid_t s = H5Dget_space(d);
  std::vector<hsize_t> dims(H5Sget_simple_extent_ndims(s));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return dims;
}

std::string string_attribute(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t a = H5Aopen(f, name.c_str(), H5P_DEFAULT);
  const hid_t t = H5Aget_type(a);
  std::string v(H5Tget_size(t), '\0');
  H5Aread(a, t, v.data());
  H5Tclose(t);
  H5Aclose(a);
  H5Fclose(f);
  return v;
}
}  // namespace

TEST_CASE("a tti run stores its anisotropy under /model, angles in degrees, and shows it in the XDMF",
          "[integration]") {
  const fs::path d = fresh_dir("layout_tti");
  const std::string cfg = write_config(
      d, std::string(kSmall) + "physics: {equation: tti}\nmodel: {epsilon: 0.2, delta: 0.1, theta: 30, phi: 45}\n");
  const Result r = run_cli("run " + cfg + " --quiet --backend cpu --output " + d.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string f = (d / "small.h5").string();
  for (const char* name : {"model/epsilon", "model/delta", "model/theta", "model/phi"})
    CHECK(dims_of(f, name) == std::vector<hsize_t>{28, 30, 32});
  const hid_t h = H5Fopen(f.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  std::vector<float> theta(28 * 30 * 32), delta(theta.size());
  const hid_t dt = H5Dopen2(h, "model/theta", H5P_DEFAULT), dd = H5Dopen2(h, "model/delta", H5P_DEFAULT);
  REQUIRE(H5Dread(dt, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, theta.data()) >= 0);
  REQUIRE(H5Dread(dd, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, delta.data()) >= 0);
  H5Dclose(dt);
  H5Dclose(dd);
  H5Fclose(h);
  // As configured (degrees, back from the radians the solver uses: float rounding only).
  CHECK(std::abs(theta[1234] - 30.0f) < 1e-4f);
  CHECK(delta[1234] == 0.1f);
  std::ifstream xmf(d / "small.xmf");
  const std::string text((std::istreambuf_iterator<char>(xmf)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Contains("/model/theta") && Contains("/model/epsilon"));
}

TEST_CASE("output layout: traces, snapshots, model and the resolved config", "[integration]") {
  const fs::path d = fresh_dir("layout");
  const std::string cfg = write_config(d, kSmall);
  const Result r = run_cli("run " + cfg + " --quiet --output " + d.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string f = (d / "small.h5").string();
  CHECK(dims_of(f, "traces") == std::vector<hsize_t>{1, 8, 40});
  CHECK(dims_of(f, "snapshots/shot_0000") == std::vector<hsize_t>{2, 28, 30, 32});
  CHECK(dims_of(f, "model/vp") == std::vector<hsize_t>{28, 30, 32});
  CHECK(dims_of(f, "receivers/positions") == std::vector<hsize_t>{8, 3});
  const std::string config = string_attribute(f, "config");
  // Defaults the file did not give are stored too.
  CHECK_THAT(config, Contains("space_order: 8") && Contains("damping_width: 6") && Contains("safety: 0.8"));
  std::ifstream x(d / "small.xmf");
  const std::string xmf((std::istreambuf_iterator<char>(x)), std::istreambuf_iterator<char>());
  CHECK_THAT(xmf, Contains("small.h5:/snapshot_steps/shot_0000/0001") && Contains("3DCoRectMesh"));
  CHECK(dims_of(f, "snapshot_steps/shot_0000/0001") == std::vector<hsize_t>{28, 30, 32});
}

TEST_CASE("bad input: one clear message, non-zero exit, no output left", "[integration]") {
  const std::string small = kSmall;
  expect_refused("malformed", "grid: {shape: [32, 30, 28], spacing: 10\ntime: {steps: 4}\n", "",
                 "malformed YAML at line");
  expect_refused("unknown_key", small + "extras: 1\n", "", "'extras' is unknown");
  expect_refused("unknown_nested", small, "--set time.stesp=3", "'time.stesp' is unknown; valid keys under 'time'");
  expect_refused("wrong_type", small, "--set time.steps=ten", "'time.steps' must be an integer");
  expect_refused("zero_size", small, "--set grid.shape=[32,0,28]", "'grid.shape[1]' must be a positive");
  expect_refused("negative_spacing", small, "--set grid.spacing=-10", "'grid.spacing' must be a positive");
  expect_refused("unstable_dt", small, "--set time.dt=0.01", "largest stable dt");
  expect_refused("source_outside", small, "--set sources.shots=[[150,150,900]]", "sources.shots[0]");
  expect_refused("receiver_outside", small, "--set receivers.line.end=[250,150,-5]", "receivers.line");
  expect_refused("missing_model", small, "--set model.vp.type=file --set model.vp.file=/nonexistent/vp.h5",
                 "'/nonexistent/vp.h5' does not exist");
  expect_refused("duplicate_key", small + "time: {steps: 4}\n", "", "config key 'time' appears twice");
  expect_refused("duplicate_nested",
                 "grid: {shape: [32, 30, 28], spacing: 10, spacing: 20}\n" + small.substr(small.find('\n') + 1), "",
                 "config key 'grid.spacing' appears twice");
  {
    const Result r = run_cli("run " + fs::temp_directory_path().string());
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Contains("is a directory; give a YAML file"));
  }
  for (const char* limit : {"-1", "nan", "0"}) {  // -1 must not mean 300 s silently, nor nan switch the guard off
    const Result r = run_cli(std::string("validate /nonexistent/survey.yaml --cpu-limit ") + limit);
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Contains("--cpu-limit") && Contains("must be a number of seconds > 0"));
  }
  for (const char* command : {"run", "migrate"}) {
    // An empty --output (an unset shell variable) once wrote into the config's output.directory.
    const Result r = run_cli(std::string(command) + " /nonexistent/survey.yaml --output ''");
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Contains("--output") && Contains("must name a directory"));
  }
  {
    const Result r = run_cli("run /nonexistent/survey.yaml");
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Contains("config file '/nonexistent/survey.yaml' cannot be opened"));
  }
  // Model files of the wrong shape, with NaN, zero or negative velocities.
  const fs::path md = fresh_dir("models");
  std::vector<float> v(28 * 30 * 32, 2000.0f);
  seisrtm::io::write_float_file((md / "shape.h5").string(), "vp", {28, 32, 30}, v);
  expect_refused("model_shape", small, "--set model.vp.type=file --set model.vp.file=" + (md / "shape.h5").string(),
                 "needs [nz, ny, nx] = [28, 30, 32]");
  for (const auto& [name, bad] :
       std::vector<std::pair<std::string, float>>{{"nan", NAN}, {"zero", 0.0f}, {"negative", -1500.0f}}) {
    v[100] = bad;
    const std::string f = (md / (name + ".h5")).string();
    seisrtm::io::write_float_file(f, "vp", {28, 30, 32}, v);
    expect_refused("model_" + name, small, "--set model.vp.type=file --set model.vp.file=" + f,
                   "velocities must be finite and > 0");
  }
  // Wavelet files with a NaN sample or a NaN dt attribute (unchecked, they give all-NaN output and exit 0).
  {
    std::vector<float> w(50, 0.1f);
    w[7] = NAN;
    const std::string f = (md / "wavelet_nan.h5").string();
    seisrtm::io::write_float_file(f, "wavelet", {50}, w);
    expect_refused("wavelet_nan", small, "--set sources.wavelet.type=file --set sources.wavelet.file=" + f,
                   "NaN or infinite value at sample 7");
    w[7] = 0.1f;
    const std::string g = (md / "wavelet_dt.h5").string();
    seisrtm::io::write_float_file(g, "wavelet", {50}, w, NAN);
    expect_refused("wavelet_dt_nan", small, "--set sources.wavelet.type=file --set sources.wavelet.file=" + g,
                   "has the attribute dt = nan");
  }
  // An output directory that cannot be created (a path through a regular file; root ignores modes).
  {
    const fs::path d = fresh_dir("unwritable");
    const std::string cfg = write_config(d, small);
    std::ofstream(d / "file") << "x";
    const Result r = run_cli("run " + cfg + " --quiet --output " + (d / "file" / "out").string());
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Contains("output directory") && Contains("file/out"));
  }
}

TEST_CASE("too few points per wavelength warns with the numbers and still runs", "[integration]") {
  const fs::path d = fresh_dir("ppw");
  const std::string cfg = write_config(d, kSmall);
  // 25 Hz: f_max 62.5 Hz, 2000 / (62.5 x 10) = 3.2 points, between the 2 that are refused and
  // the 5 that order 8 wants.
  const Result r = run_cli("run " + cfg + " --output " + d.string() + " --set sources.wavelet.peak_frequency=25");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("warning: too few points per wavelength") && Contains("62.5 Hz"));
}

TEST_CASE("bench: --compare judges two runs against their spread; bad bench input is refused", "[integration]") {
  const fs::path d = fresh_dir("bench");
  auto json = [&](const std::string& name, double median, double lo, double hi, const std::string& kernel = "",
                  const std::string& more = "") {
    const std::string f = (d / name).string();
    std::ofstream(f) << "{\"tool\": \"seisrtm bench\", \"cells\": [{\"variant\": \"tma\", \"z_block\": 32, "
                        "\"memory\": \"plain\", \"steps\": 1000, "
                     << (kernel.empty() ? "" : "\"kernel\": \"" + kernel + "\", ") << "\"gcells_median\": " << median
                     << ", \"gcells_min\": " << lo << ", \"gcells_max\": " << hi << more << "}]}\n";
    return f;
  };
  const std::string a = json("a.json", 157.0, 156.5, 157.4), b = json("b.json", 157.6, 157.2, 158.0);
  const std::string far = json("far.json", 150.0, 149.8, 150.3);
  Result r = run_cli("bench --compare " + a + " " + b);
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("all agree"));
  CHECK_THAT(r.output, !Contains("kernels differ"));
  // Two launch shapes under one cell name are said (a file without kernels is older: nothing said).
  const std::string rows2 = json("rows2.json", 157.0, 156.5, 157.4, "cuda tma (rows2), z_block 32");
  const std::string rows4 = json("rows4.json", 157.1, 156.6, 157.5, "cuda tma (rows4), z_block 32");
  r = run_cli("bench --compare " + rows2 + " " + rows4);
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("kernels differ: run 1 'cuda tma (rows2), z_block 32', run 2 'cuda tma (rows4)"));
  r = run_cli("bench --compare " + rows2 + " " +
              json("same.json", 157.0, 156.5, 157.4, "cuda tma (rows2), z_block 32"));
  CHECK_THAT(r.output, !Contains("kernels differ"));
  r = run_cli("bench --compare " + a + " " + far);
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("OUTSIDE"));
  CHECK_THAT(r.output, !Contains("SM clocks"));  // older files: no clocks to show
  // A cell outside the spread is shown with the clocks both runs had; one inside is not.
  const std::string clocked = ", \"clocks\": {\"sm_mhz_mean\": 1870.0, \"held_by_power\": 0.87}";
  const std::string a_clocked = json("a_clocked.json", 157.0, 156.5, 157.4, "", clocked);
  r = run_cli("bench --compare " + a_clocked + " " +
              json("far_clocked.json", 150.0, 149.8, 150.3, "",
                   ", \"clocks\": {\"sm_mhz_mean\": 1735.4, \"held_by_power\": 0.94}"));
  CHECK(r.code == 1);
  CHECK_THAT(r.output,
             Contains("OUTSIDE\n  SM clocks: run 1 1870 MHz (held by power 87% of the time), run 2 1735 MHz (94%)"));
  r = run_cli("bench --compare " + a_clocked + " " + json("b_clocked.json", 157.6, 157.2, 158.0, "", clocked));
  CHECK(r.code == 0);
  CHECK_THAT(r.output, !Contains("SM clocks"));
  r = run_cli("bench --compare " + a + " " + (d / "missing.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("missing.json"));
  r = run_cli("bench --compare " + a + " " + d.string());  // once an internal error, exit 3
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("is a directory; give two JSON files"));
  std::ofstream((d / "bad.json").string()) << "{\"cells\": 3}";
  r = run_cli("bench --compare " + a + " " + (d / "bad.json").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("no 'cells' list"));
  r = run_cli("bench --equation elastic");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("valid: acoustic, vti, tti"));
  r = run_cli("bench --equation tti --variants smem");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("no smem variant"));
  r = run_cli("bench --rtm --isic --equation tti");  // refused before any GPU work or data file
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("bench --isic") && Contains("acoustic"));
  // What fp16 storage cannot run in bench --rtm, refused before the GPU is asked for.
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--storage fp32,fp16 --isic", "bench --rtm --isic needs fp32 storage (it reads float fields); drop fp16"},
           {"--storage fp16 --gathers 3", "bench --rtm --gathers needs fp32 storage"},
           {"--storage fp16 --store-precision fp32,bf16", "bf16 and fp16 stores are for fp32 storage"},
           {"--longest --storage fp16", "--longest plans the config's solver.storage"}}) {
    INFO("bench --rtm " << args);
    r = run_cli("bench --rtm " + args);
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains(says));
  }
  r = run_cli("bench --z-block 64,2147483647");  // beyond 2^20 planes the z block count would overflow
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("bench --z-block: '2147483647' is not valid") && Contains("up to 1048576"));
  r = run_cli("bench --json /nonexistent-dir/x.json");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("does not exist"));
}

TEST_CASE("integers: leading zeros, values beyond int and huge thread counts are refused", "[integration]") {
  // Unchecked, steps 010 run as octal 8, space_order 4294967304 as 8, damping_width 4294967297 as 1,
  // threads 1000000000 abort in the OpenMP runtime, a shape of 2^32 cells a side wraps to 0 cells and crashes.
  const std::string small = kSmall;
  std::string octal = small;
  octal.replace(octal.find("steps: 40"), 9, "steps: 010");
  expect_refused("octal_file", octal, "", "config key 'time.steps' = 010 has a leading zero; write 10");
  expect_refused("octal_set", small, "--set output.snapshot_interval=020",
                 "'output.snapshot_interval' = 020 has a leading zero");
  expect_refused("space_order_wide", small, "--set physics.space_order=4294967304",
                 "'physics.space_order' must be 2, 4, 8 or 16, got 4294967304");
  expect_refused("damping_wide", small, "--set boundary.damping_width=4294967297",
                 "'boundary.damping_width' must be an integer in [0, 2147483647]");
  expect_refused("threads_huge", small, "--set solver.threads=1000000000",
                 "'solver.threads' must be an integer in [0, ");
  expect_refused("steps_64bit", small, "--set time.steps=99999999999999999999",
                 "'time.steps' = 99999999999999999999 is out of range");
  expect_refused("shape_overflow", small, "--set grid.shape=[4294967296,4294967296,4294967296]",
                 "'grid.shape' = [4294967296, 4294967296, 4294967296] has too many cells");
}

TEST_CASE("host memory: a run that cannot fit is refused with the numbers and the key", "[integration]") {
  // Before: std::bad_alloc ("internal error") or the kernel's OOM killer. Each case needs
  // terabytes, beyond any host, so the refusal does not depend on the machine.
  const std::string small = kSmall;
  expect_refused("mem_grid", small, "--set grid.shape=[20000,20000,20000]", "shrink grid.shape (8000000000000 cells)");
  expect_refused("mem_steps", small, "--set time.steps=100000000000", "lower time.steps (100000000000)");
  expect_refused("mem_receivers", small, "--set receivers.line.count=100000000000",
                 "lower time.steps (40) or receivers.line.count (100000000000 receivers): traces take 4 B");
}

namespace {
// A file of a few KiB whose float dataset declares `dims` (chunked, never written: no disk).
}  // namespace

TEST_CASE("input files that declare huge datasets are refused quickly, naming the file and both shapes",
          "[integration]") {
  // Before: the model was read in full before its shape was compared (here std::bad_alloc);
  // the wavelet was read and went through a DFT of 512 x 5e7 terms (minutes).
  const fs::path d = fresh_dir("declared");
  const std::string model = write_declared(d / "model.h5", "vp", {10000, 10000, 10000});
  const std::string wavelet = write_declared(d / "wavelet.h5", "wavelet", {50000000});
  expect_refused("declared_model", kSmall, "--set model.vp.type=file --set model.vp.file=" + model,
                 "declares shape [10000, 10000, 10000]; the grid needs [nz, ny, nx] = [28, 30, 32]");
  expect_refused("declared_wavelet", kSmall, "--set sources.wavelet.type=file --set sources.wavelet.file=" + wavelet,
                 "dataset 'wavelet' declares shape [50000000]; the run uses [41] samples");
  // A mis-declared dt of 1e-15 s would make the length limit (4 x the record at the file's dt)
  // admit the 5e7 samples, read in full: the dt is refused before anything is read.
  const std::string fine = write_declared(d / "fine.h5", "wavelet", {50000000}, 1e-15);
  expect_refused("fine_wavelet", kSmall, "--set sources.wavelet.type=file --set sources.wavelet.file=" + fine,
                 "has the attribute dt = 1e-15 s, finer than 1/1024 of the run's dt");
}

TEST_CASE(
    "nothing silently zero: a source on the free surface and receivers in the damping zone warn, a zero wavelet is "
    "refused",
    "[integration]") {
  const fs::path d = fresh_dir("silent");
  const std::string cfg = write_config(d, kSmall);
  // p = 0 on z = 0: a source there gives all-zero traces, which must not pass without a word.
  Result r = run_cli("run " + cfg + " --quiet --output " + (d / "fs").string() +
                     " --set boundary.free_surface=true --set sources.shots=[[150,150,0]]");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("seisrtm: warning: sources.shots[0] = [150, 150, 0] m lies less than one cell below "
                                "the free surface") &&
                           Contains("z >= 10 m"));
  // Receivers from x = 20 m: those at 20 and 52.9 m lie in the 6-cell (60 m) zone.
  r = run_cli("run " + cfg + " --quiet --output " + (d / "zone").string() + " --set receivers.line.start=[20,150,60]");
  CHECK(r.code == 0);
  CHECK_THAT(r.output,
             Contains("seisrtm: warning: 2 of 8 receivers lie in the damping zone (boundary.damping_width 6 cells)") &&
                 Contains("x in [60, 250], y in [60, 230], z in [60, 210] m"));
  // A wavelet of zeros gives an all-zero result, which must not end with exit 0.
  const std::string zero = (d / "zero.h5").string();
  seisrtm::io::write_float_file(zero, "wavelet", {50}, std::vector<float>(50, 0.0f));
  expect_refused("zero_wavelet", kSmall, "--set sources.wavelet.type=file --set sources.wavelet.file=" + zero,
                 "the source wavelet is zero at every one of the 40 time steps (wavelet file '" + zero + "'");
}

TEST_CASE("GPUs users have: the build carries Ampere and Ada code beside Hopper's; the device is explicit",
          "[integration]") {
  // naive and smem must run on an A100 (sm_80) or an L40S (sm_89): the binary carries their code.
  const Result info = run_cli("info");
  INFO(info.output);
  CHECK_THAT(info.output, Contains("80-real") && Contains("89-real") && Contains("90a-real"));
  // A device that is not there is refused by name (with auto as well: no silent CPU run), and a
  // device index out of range is a usage error or a config error naming the key.
  const std::string small = kSmall;
  expect_refused("device_missing", small, "--device 1000", "'solver.device' = 1000");
  expect_refused("device_key_range", small, "--set solver.device=5000", "'solver.device'");
  const Result neg = run_cli("run configs/quickstart.yaml --device -1");
  CHECK(neg.code == 2);
  CHECK_THAT(neg.output, Contains("--device"));
}

TEST_CASE("bench --compare: malformed JSON, a missing key or a wrong type is one message naming the file and the key",
          "[integration]") {
  // Before (the files read through yaml-cpp, which takes more than JSON): a missing key, a wrong
  // type or a cell that is not an object was "internal error: bad conversion" naming neither file
  // nor key; single quotes and a trailing comma were accepted as JSON.
  const fs::path d = fresh_dir("bench_json");
  const std::string cell = R"({"variant": "tma", "z_block": 32, "memory": "plain", "steps": 1000, )"
                           R"("gcells_median": 157.0, "gcells_min": 156.5, "gcells_max": 157.4})";
  const std::string good = seisrtm::test::write_text(d / "good.json", "{\"cells\": [" + cell + "]}");
  auto refused = [&](const std::string& name, const std::string& text, const std::vector<std::string>& needles) {
    const std::string f = seisrtm::test::write_text(d / name, text);
    const Result r = run_cli("bench --compare " + good + " " + f);
    INFO(name << ": " << r.output);
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains("seisrtm: error: bench --compare: '" + f + "'"));
    for (const auto& n : needles) CHECK_THAT(r.output, Contains(n));
    CHECK(r.output.find("OUTSIDE") == std::string::npos);
  };
  refused("truncated.json", "{\"cells\": [" + cell, {"is not valid JSON", "parse error at line 1"});
  refused("single_quotes.json", "{'cells': []}", {"is not valid JSON"});
  refused("trailing_comma.json", "{\"cells\": [" + cell + ",]}", {"is not valid JSON"});
  refused("empty.json", "", {"is not valid JSON"});
  refused("array.json", "[" + cell + "]", {"no 'cells' list"});
  std::string no_median = cell;
  no_median.replace(no_median.find("\"gcells_median\": 157.0, "), 24, "");
  refused("no_median.json", "{\"cells\": [" + cell + ", " + no_median + "]}", {"cells[1] has no key 'gcells_median'"});
  std::string text_steps = cell;
  text_steps.replace(text_steps.find("1000"), 4, "\"1e3\"");
  refused("text_steps.json", "{\"cells\": [" + text_steps + "]}", {"cells[0].steps is \"1e3\", not an integer"});
  std::string real_z = cell;
  real_z.replace(real_z.find("32"), 2, "32.5");
  refused("real_z_block.json", "{\"cells\": [" + real_z + "]}", {"cells[0].z_block is 32.5, not an integer"});
  refused("cell_not_object.json", "{\"cells\": [3]}", {"cells[0] is 3, not an object"});
  std::string clocks = cell;
  clocks.insert(clocks.size() - 1, R"(, "clocks": {"sm_mhz_mean": "fast", "held_by_power": 0.5})");
  refused("clocks_text.json", "{\"cells\": [" + clocks + "]}",
          {"cells[0].clocks.sm_mhz_mean is \"fast\", not a number"});
  std::string clocks_list = cell;
  clocks_list.insert(clocks_list.size() - 1, R"(, "clocks": [1870])");
  refused("clocks_list.json", "{\"cells\": [" + clocks_list + "]}", {"cells[0].clocks is [1870], not an object"});
  // The same schema still loads, whatever the order of the keys and with further keys.
  const std::string reordered = seisrtm::test::write_text(
      d / "reordered.json", R"({"cells": [{"gcells_max": 158.0, "gcells_min": 157.2, "gcells_median": 157.6, )"
                            R"("steps": 1000, "memory": "plain", "z_block": 32, "variant": "tma", "extra": null}]})");
  const Result r = run_cli("bench --compare " + good + " " + reordered);
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("tma z_block 32 plain 1000 steps") && Contains("1 cells compared: all agree"));
}

TEST_CASE("bench --compare reads the committed bench --json files of docs/runs", "[integration]") {
  const fs::path runs = fs::path(SEISRTM_SOURCE_DIR) / "docs" / "runs";
  const Result r = run_cli("bench --compare " + (runs / "2026-11-22-h100-quick1.json").string() + " " +
                           (runs / "2026-11-22-h100-quick2.json").string());
  INFO(r.output);
  CHECK((r.code == 0 || r.code == 1));
  CHECK_THAT(r.output, Contains("24 cells compared"));
  CHECK(r.output.find("error") == std::string::npos);
}

TEST_CASE("physical ranges: vp in km/s or ft/s and a frequency the grid cannot hold stop the run before it starts",
          "[integration]") {
  // vp 2 (km/s meant) and a 15000 Hz peak must not run to exit 0 with a warning at most.
  expect_refused("vp_kms", kSmall, "--set model.vp=2.0",
                 "config key 'model.vp' gives vp = 2 m/s at [z, y, x] = [0, 0, 0], slower than any rock or fluid");
  expect_refused("vp_kms_hint", kSmall, "--set model.vp=2.0", "km/s? use 2000; valid: 100 to 10000 m/s");
  expect_refused("vp_layers_kms", kSmall,
                 "'--set=model.vp={type: layers, layers: [{top: 0, vp: 1.5}, {top: 100, vp: 2.5}]}'", "vp = 1.5 m/s");
  expect_refused("vp_fts", kSmall, "--set model.vp=20000", "ft/s? use 6096");
  // The built values of a model file are checked too: one cell in km/s names the file and the cell.
  const fs::path md = fresh_dir("vp_file");
  std::vector<float> v(28 * 30 * 32, 2000.0f);
  v[100] = 2.0f;
  const std::string f = (md / "kms.h5").string();
  seisrtm::io::write_float_file(f, "vp", {28, 30, 32}, v);
  expect_refused("vp_file_kms", kSmall, "--set model.vp.type=file --set model.vp.file=" + f,
                 "model file '" + f + "' dataset 'vp' (model.vp.file) has vp = 2 m/s at [z, y, x] = [0, 3, 4]");
  // 15000 Hz on 10 m cells: f_max 37500 Hz, 2000 / (37500 x 10) = 0.0053 points per wavelength.
  expect_refused("f_peak", kSmall, "--set sources.wavelet.peak_frequency=15000",
                 "config key 'sources.wavelet.peak_frequency' = 15000 Hz");
  expect_refused("f_peak_hint", kSmall, "--set sources.wavelet.peak_frequency=15000",
                 "0.00533333 points per wavelength; fewer than 2 cannot represent the wave at all; was 15 Hz meant");
  // 0.015 (kHz, 15 Hz meant) would run silently: its delay 1.2 / f = 80 s is beyond the 0.05 s record.
  expect_refused("f_peak_khz", kSmall, "--set sources.wavelet.peak_frequency=0.015",
                 "config key 'sources.wavelet.peak_frequency' = 0.015 Hz is below 0.1 Hz");
  expect_refused("f_peak_khz_hint", kSmall, "--set sources.wavelet.peak_frequency=0.015",
                 "was 15 Hz meant (a value in kHz)?");
  expect_refused("checks_unknown", kSmall, "--set checks.vp=false", "'checks.vp' is unknown");
  // The override runs the rare real case, with the finding as a warning.
  const fs::path d = fresh_dir("ranges_off");
  const std::string cfg = write_config(d, kSmall);
  const Result r = run_cli("run " + cfg + " --quiet --output " + (d / "out").string() +
                           " --set checks.physical_ranges=false --set model.vp=20000 --set time.steps=4");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("seisrtm: warning: config key 'model.vp' gives vp = 20000 m/s") &&
                           Contains("checks.physical_ranges is false: run as given"));
}

TEST_CASE("receivers on a free surface record one cell down, with one warning, instead of zeros", "[integration]") {
  // Before: receivers at z = 0 under a free surface (field SEG-Y with elevation 0) recorded
  // all-zero traces, exit 0 and no warning.
  const fs::path d = fresh_dir("rec_surface");
  const std::string cfg = write_config(d, kSmall);
  const Result r = run_cli("run " + cfg + " --quiet --output " + (d / "out").string() +
                           " --set boundary.free_surface=true --set receivers.line.start=[60,150,0]"
                           " --set receivers.line.end=[250,150,0]");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string warning = "seisrtm: warning: 8 of 8 receivers lie on the free surface";
  CHECK_THAT(r.output, Contains(warning) && Contains("moved one cell down, to z = 10 m"));
  CHECK(r.output.find(warning) == r.output.rfind(warning));
  const std::string h5 = (d / "out" / "small.h5").string();
  const std::vector<float> traces = seisrtm::test::read_dataset(h5, "traces");
  for (int rec = 0; rec < 8; ++rec) {
    float peak = 0;
    for (int t = 0; t < 40; ++t) peak = std::max(peak, std::abs(traces[rec * 40 + t]));
    INFO("receiver " << rec);
    CHECK(peak > 0);
  }
  const std::vector<float> pos = seisrtm::test::read_dataset(h5, "receivers/positions");
  for (int rec = 0; rec < 8; ++rec) CHECK(pos[rec * 3 + 2] == 10.0f);
  // Receivers within the first cell keep their depth (pressure near a free surface is small, not
  // zero) and are said once: 2 m deep, a fifth of their trilinear weight below the zeroed plane.
  const Result shallow = run_cli("run " + cfg + " --quiet --output " + (d / "out2").string() +
                                 " --set boundary.free_surface=true --set receivers.line.start=[60,150,2]"
                                 " --set receivers.line.end=[250,150,2]");
  INFO(shallow.output);
  REQUIRE(shallow.code == 0);
  const std::string weak = "seisrtm: warning: 8 of 8 receivers lie less than one cell below the free surface";
  CHECK_THAT(shallow.output, Contains(weak) && Contains("their traces are weak") && !Contains("moved one cell"));
  CHECK(shallow.output.find(weak) == shallow.output.rfind(weak));
}

TEST_CASE("a config path that is a device or a huge file is refused, not read until memory runs out", "[integration]") {
  // Before: /dev/zero was read into memory without end.
  Result r = run_cli("run /dev/zero --quiet");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("seisrtm: error: config file '/dev/zero' gave more than 16777216 bytes (it is not a "
                                "regular file: a device or a pipe)") &&
                           Contains("at most 16 MiB"));
  // A regular file over the cap is refused from its size, unread (sparse: no disk used).
  const fs::path d = fresh_dir("config_size");
  const fs::path big = d / "big.yaml";
  std::ofstream(big) << "grid: {shape: [32, 30, 28], spacing: 10}\n";
  fs::resize_file(big, (16u << 20) + 1);
  r = run_cli("run " + big.string() + " --quiet");
  CHECK(r.code == 1);
  CHECK_THAT(r.output,
             Contains("config file '" + big.string() + "' has 16777217 bytes") && Contains("nothing was read"));
  // A config through a pipe (process substitution) is still read.
  const std::string cfg = write_config(d, kSmall);
  const int status = std::system(("cat " + cfg + " | " + SEISRTM_BINARY + " run /dev/stdin --quiet --output " +
                                  (d / "out").string() + " --set time.steps=2 >/dev/null 2>&1")
                                     .c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("host memory respects the cgroup limit of a container or batch job", "[integration]") {
  // A fake cgroup tree (SEISRTM_CGROUP_ROOT, read by the executable with seams) limiting the process to 64 MiB, for v2
  // and v1 alike (the limit sits at the mount root, an ancestor of any cgroup /proc/self/cgroup names). 200^3 cells on
  // the CPU backend need vp and three wavefields, 4 x 32 MB: refused with the numbers. Before: MemAvailable alone was
  // compared and the run went ahead (a real job is killed by the kernel instead).
  const fs::path d = fresh_dir("cgroup");
  const fs::path root = d / "cgroup";
  fs::create_directories(root / "memory");
  seisrtm::test::write_text(root / "memory.max", "67108864\n");
  seisrtm::test::write_text(root / "memory.current", "0\n");
  seisrtm::test::write_text(root / "memory" / "memory.limit_in_bytes", "67108864\n");
  seisrtm::test::write_text(root / "memory" / "memory.usage_in_bytes", "0\n");
  const std::string cfg = write_config(d, kSmall);
  REQUIRE(setenv("SEISRTM_CGROUP_ROOT", root.c_str(), 1) == 0);
  const Result r = seisrtm::test::run_shell(std::string(SEISRTM_HOOKED_BINARY) + " run " + cfg + " --quiet --output " +
                                            (d / "out").string() +
                                            " --backend cpu --set grid.shape=[200,200,200] --set time.steps=2 "
                                            "--set output.snapshot_interval=0");
  unsetenv("SEISRTM_CGROUP_ROOT");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("seisrtm: error: the run needs") &&
                           Contains("but 0.062 GiB is available (cgroup limit " + root.string()) &&
                           Contains("shrink grid.shape (8000000 cells)"));
  CHECK(!fs::exists(d / "out" / "small.h5"));
}

TEST_CASE(
    "bench's tuning flags: a value outside the kernels' name tables or ranges is one message naming the flag and "
    "the valid values; a flag the run would ignore is refused; run, migrate and validate take none",
    "[integration]") {
  // Each refused at parsing (exit 2) or before the GPU is asked for (exit 1), so on any machine.
  auto refused = [](const std::string& args, int code, const std::string& expected) {
    const Result r = run_cli("bench " + args);
    INFO("bench " << args << ": " << r.output);
    CHECK(r.code == code);
    CHECK_THAT(r.output, Contains("seisrtm: error: ") && Contains(expected));
    CHECK(r.output.find("error:") == r.output.rfind("error:"));  // one message
  };
  refused("--tma-shape rows3", 2, "--tma-shape: 'rows3' is not a tma shape; valid: rows2, rows4, pairs, quads");
  refused("--fused-shape narrow", 2, "--fused-shape: 'narrow' is not a fused shape; valid: wide, compact, compact1");
  for (const char* rows : {"-1", "two", "3x", "08", "1048577", "99999999999", "' 1'"})
    refused(std::string("--chunk-rows=") + rows, 2,
            "is not valid; valid: tile rows a chunk of the tma launch order, 0 (whole layers) up to 1048576");
  for (const char* hint : {"3", "-1", "1x", "evict", "' 1'"})
    refused(std::string("--l2-hint=") + hint, 2, "is not valid; valid: 0 (no L2 hints), 1 (the loads read once");
  refused("--l2-hint 3", 2, "--l2-hint: '3' is not valid");
  // An empty value is a missing one (CLI11's message, naming the flag).
  refused("--chunk-rows=''", 2, "--chunk-rows: 1 required N missing");
  refused("--l2-hint=''", 2, "--l2-hint: 1 required 0|1|2 missing");
  // Flags that tune no kernel of the run: an A/B of them would compare a kernel with itself.
  refused("--fused-shape wide", 1, "bench --fused-shape: the fused backward step runs in bench --rtm only");
  refused("--rtm --equation vti --fused-shape compact", 1, "bench --fused-shape: the fused backward step is acoustic");
  refused("--equation tti --tma-shape rows4", 1, "bench --tma-shape: the thread shapes are the acoustic tma kernel's");
  refused("--variants naive,smem --chunk-rows 8", 1,
          "bench --chunk-rows tunes the tma kernels; --variants naive,smem has none");
  refused("--variants smem --l2-hint 0", 1, "bench --l2-hint tunes the tma kernels");
  // Valid values of every flag are taken: the run goes on to the next check, a missing --json directory.
  for (const std::string ok : {"--tma-shape rows2 --chunk-rows 0 --l2-hint 2", "--tma-shape quads --chunk-rows 1048576",
                               "--rtm --fused-shape compact1 --l2-hint 0", "--variants smem,tma --chunk-rows 24"})
    refused(ok + " --json /nonexistent-dir/x.json", 1, "bench --json: directory '/nonexistent-dir' does not exist");
  // The help names each flag's valid values, from the kernels' name tables.
  const Result help = run_cli("bench --help");
  CHECK(help.code == 0);
  CHECK_THAT(help.output, Contains("--tma-shape") && Contains("rows2 | rows4 | pairs | quads") &&
                              Contains("--fused-shape") && Contains("wide | compact | compact1") &&
                              Contains("--chunk-rows") && Contains("--l2-hint"));
  // run, migrate and validate run the policy: the flags are bench's alone.
  const fs::path d = fresh_dir("tuning_flags");
  const std::string cfg = write_config(d, kSmall);
  for (const std::string& command :
       {"run " + cfg + " --quiet --backend cpu --output " + (d / "out").string(),
        "migrate " + cfg + " --quiet --backend cpu --output " + (d / "out").string(), "validate " + cfg}) {
    const Result r = run_cli(command + " --tma-shape rows2");
    INFO(command << ": " << r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("--tma-shape"));
    CHECK_FALSE(fs::exists(d / "out"));
  }
}

TEST_CASE("host memory respects ulimit -v and ulimit -d: refused naming the limit, not std::bad_alloc",
          "[integration]") {
  // 200^3 cells on the CPU backend: vp and three wavefields, 4 x 32 MB. ulimit -v 200000 KiB
  // (195 MiB) less what the process already maps (its libraries: VmSize) is too little, as is
  // ulimit -d 100000 KiB (98 MiB) of data. Before: "internal error: std::bad_alloc", exit 3 (-v),
  // or the run went ahead as far as the limit let it (-d).
  const fs::path d = fresh_dir("rlimit");
  const std::string cfg = write_config(d, kSmall);
  const auto limited = [&](const std::string& ulimit, const std::string& set) {
    return seisrtm::test::run_shell("ulimit " + ulimit + " && " + std::string(SEISRTM_BINARY) + " run " + cfg +
                                    " --quiet --backend cpu --output " + (d / "out").string() + " " + set);
  };
  for (const auto& [ulimit, name] :
       {std::pair<std::string, std::string>{"-v 200000", "RLIMIT_AS (ulimit -v) 0.191 GiB less "},
        {"-d 100000", "RLIMIT_DATA (ulimit -d) 0.095 GiB less "}}) {
    fs::remove_all(d / "out");  // the small run's set of the case before
    const Result r =
        limited(ulimit, "--set grid.shape=[200,200,200] --set time.steps=2 --set output.snapshot_interval=0");
    INFO("ulimit " << ulimit << ": " << r.output);
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains("seisrtm: error: the run needs") && Contains(name) &&
                             Contains("shrink grid.shape (8000000 cells)"));
    CHECK(!fs::exists(d / "out" / "small.h5"));
    // A run that fits the limit goes ahead.
    const Result ok = limited(ulimit, "--set time.steps=4");
    INFO("ulimit " << ulimit << ", small: " << ok.output);
    CHECK(ok.code == 0);
  }
}

TEST_CASE("the shipped binary reads no test variable; the executable with seams does", "[integration]") {
  // SEISRTM_TEST_FAIL_SHOT=0 fails the first shot through the seams (solver/hooks.hpp) only where
  // tests/seisrtm_hooked.cpp installs them: the shipped seisrtm runs as if it were not set.
  const fs::path d = fresh_dir("no_test_variables");
  const std::string cfg = write_config(d, kSmall);
  const std::string args = " run " + cfg + " --quiet --backend cpu --set time.steps=2 --output ";
  const Result shipped =
      seisrtm::test::run_shell("SEISRTM_TEST_FAIL_SHOT=0 " + std::string(SEISRTM_BINARY) + args + (d / "a").string());
  INFO(shipped.output);
  CHECK(shipped.code == 0);
  const Result hooked = seisrtm::test::run_shell("SEISRTM_TEST_FAIL_SHOT=0 " + std::string(SEISRTM_HOOKED_BINARY) +
                                                 args + (d / "b").string());
  INFO(hooked.output);
  CHECK(hooked.code == 1);
  CHECK_THAT(hooked.output, Contains("seisrtm: error: SEISRTM_TEST_FAIL: a failure injected by the test suite"));
  CHECK(!fs::exists(d / "b" / "small.h5"));
}
