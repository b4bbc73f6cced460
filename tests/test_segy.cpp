// [integration] SEG-Y out of `run` and into `migrate` (io/segy.hpp, docs/SEGY.md): a written
// gather read back with segyio's own calls gives the same samples bit for bit and the headers;
// a migration from the SEG-Y copies equals the one from the HDF5 file bit for bit; bad SEG-Y
// (truncated, a sample format seisrtm does not read, inconsistent geometry) is refused with one
// message naming the file, the trace and the header bytes, exit code 1, no output.
#include <hdf5.h>
#include <segyio/segy.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "io/hdf5_file.hpp"
#include "io/segy.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"
#include "tests/segy_file.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using seisrtm::test::read_dataset;
using seisrtm::test::Result;
using seisrtm::test::run_cli;
using seisrtm::test::write_declared;
using seisrtm::test::write_text;

namespace {

fs::path fresh_dir(const std::string& name) {
  return seisrtm::test::fresh_dir("seisrtm_test_segy_", name);
}

// The survey of test_cli_migrate (two layers, free surface) with two shots and output.segy.
const std::string kTrueModel =
    seisrtm::test::two_layers({{"sources", "{wavelet: {peak_frequency: 15}, shots: [[175, 145, 20], [215, 145, 20]]}"},
                               {"output", "{name: data, pictures: false, segy: rev1}"}});

std::string migration_config(const std::string& name, const std::string& data, bool segy) {
  return seisrtm::test::two_layers_migration({{"output", "{name: " + name + ", pictures: false}"},
                                              {"migration", "\n  data: '" + data + "'\n  mute: {velocity: 2000}" +
                                                                (segy ? "\n  wavelet: {peak_frequency: 15}" : "")}});
}

// The run's directory (data.h5, data_shot_0000.sgy, data_shot_0001.sgy), made once.
const fs::path& run_dir() {
  static const fs::path dir = [] {
    const fs::path d = fresh_dir("run");
    const std::string cfg = write_text(d / "true.yaml", kTrueModel);
    const Result r = run_cli("run " + cfg + " --quiet --backend cpu --output " + d.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    return d;
  }();
  return dir;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

using seisrtm::test::Segy;  // tests/segy_file.hpp

}  // namespace

TEST_CASE("a SEG-Y gather reads back with segyio: samples bit for bit, headers, exact dt", "[integration][segy]") {
  using namespace seisrtm;
  const fs::path d = fresh_dir("unit");
  // Positions with centimetres (scalar -100), a dt that is no whole number of microseconds.
  const std::vector<std::array<double, 3>> src{{101.25, 40.5, 12.75}};
  const std::vector<std::array<double, 3>> rec{{20.5, 40.5, 5.25}, {180.75, 40.5, 5.25}, {101.25, 60.0, 0.0}};
  const double dt = 0.0012938729237669145;
  const long long steps = 50;
  std::vector<float> traces(rec.size() * steps);
  std::mt19937 gen(7);
  std::normal_distribution<float> noise(0.0f, 1e-3f);
  for (auto& v : traces) v = noise(gen);
  traces[3] = 1e-41f;  // a denormal goes through untouched
  for (int rev : {1, 2}) {
    DYNAMIC_SECTION("rev " << rev) {
      io::SegyRun run = io::plan_segy(rev, dt, steps, src, rec);
      CHECK(run.coordinate_scalar == -100);
      CHECK(run.elevation_scalar == -100);
      run.producer = "seisrtm test";
      const std::string file = (d / ("g" + std::to_string(rev) + ".sgy")).string();
      io::write_segy_shot(file, run, 4, src[0], rec, traces.data());
      {
        Segy s(file);
        CHECK(s.bfield(SEGY_BIN_FORMAT) == 5);
        CHECK(s.bfield(SEGY_BIN_INTERVAL) == 1294);
        CHECK(s.bfield(SEGY_BIN_SAMPLES) == steps + 1);
        CHECK(s.bfield(SEGY_BIN_SEGY_REVISION) == (rev == 1 ? 0x0100 : 0x0200));
        CHECK(s.bfield(SEGY_BIN_TRACE_FLAG) == 1);
        REQUIRE(s.traces == 3);
        for (int r = 0; r < 3; ++r) {
          const auto h = s.header(r);
          CHECK(Segy::field(h, SEGY_TR_FIELD_RECORD) == 5);
          CHECK(Segy::field(h, SEGY_TR_SEQ_FILE) == r + 1);
          CHECK(Segy::field(h, SEGY_TR_SOURCE_GROUP_SCALAR) == -100);
          CHECK(Segy::field(h, SEGY_TR_ELEV_SCALAR) == -100);
          CHECK(Segy::field(h, SEGY_TR_SOURCE_X) == 10125);
          CHECK(Segy::field(h, SEGY_TR_SOURCE_Y) == 4050);
          CHECK(Segy::field(h, SEGY_TR_SOURCE_DEPTH) == 1275);
          CHECK(Segy::field(h, SEGY_TR_GROUP_X) == std::lround(rec[r][0] * 100));
          CHECK(Segy::field(h, SEGY_TR_GROUP_Y) == std::lround(rec[r][1] * 100));
          CHECK(Segy::field(h, SEGY_TR_RECV_GROUP_ELEV) == -std::lround(rec[r][2] * 100));
          CHECK(Segy::field(h, SEGY_TR_COORD_UNITS) == 1);
          CHECK(Segy::field(h, SEGY_TR_SAMPLE_COUNT) == steps + 1);
          CHECK(Segy::field(h, SEGY_TR_SAMPLE_INTER) == 1294);
          CHECK(Segy::field(h, SEGY_TR_DELAY_REC_TIME) == 0);
          const auto v = s.trace(r);
          CHECK(v[0] == 0.0f);  // t = 0
          CHECK(std::memcmp(v.data() + 1, traces.data() + r * steps, steps * sizeof(float)) == 0);
        }
        // Offsets: whole metres, negative towards -x.
        CHECK(Segy::field(s.header(0), SEGY_TR_OFFSET) == -81);
        CHECK(Segy::field(s.header(1), SEGY_TR_OFFSET) == 80);
        CHECK(Segy::field(s.header(2), SEGY_TR_OFFSET) == 20);
      }
      // seisrtm's reader: the same positions (exact with the scalar), the exact dt, the samples.
      const io::ObservedData o = io::read_segy(file, SegyHeaderConfig{});
      CHECK(o.dt == dt);
      CHECK(o.shots == 1);
      CHECK(o.samples == steps);
      CHECK(o.source_positions == src);
      CHECK(o.receiver_positions == rec);
      CHECK(std::memcmp(o.traces.data(), traces.data(), traces.size() * sizeof(float)) == 0);
    }
  }
  SECTION("another writer's file: no exact dt in the textual header, dt from the microseconds") {
    io::SegyRun run = io::plan_segy(1, dt, steps, src, rec);
    const std::string file = (d / "plain.sgy").string();
    io::write_segy_shot(file, run, 0, src[0], rec, traces.data());
    {
      Segy s(file, "r+b");
      std::string blank(3200, ' ');
      REQUIRE(segy_write_textheader(s.f, 0, blank.c_str()) == SEGY_OK);
    }
    CHECK(io::read_segy(file, SegyHeaderConfig{}).dt == 1294e-6);
  }
}

TEST_CASE("a rev 2 sample count that overflows the trace size is refused from the header", "[integration][segy]") {
  using namespace seisrtm;
  const fs::path d = fresh_dir("samples");
  const std::vector<std::array<double, 3>> src{{100, 40, 10}};
  const std::vector<std::array<double, 3>> rec{{20, 40, 5}, {180, 40, 5}};
  const long long steps = 10;  // 11 samples a trace
  const std::vector<float> traces(rec.size() * steps, 0.5f);
  io::SegyRun run = io::plan_segy(2, 0.002, steps, src, rec);
  const std::string file = (d / "wrap.sgy").string();
  io::write_segy_shot(file, run, 0, src[0], rec, traces.data());
  // Bytes 3269-3272 (big-endian) = 2^30 + 11: 4 bytes a sample wrap segyio's int trace size to
  // 44 bytes, the size of the real traces, so the file looked whole with 2^30 + 11 samples.
  const uint32_t declared = (1u << 30) + 11;
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3268);
    const char be[4] = {char(declared >> 24), char((declared >> 16) & 0xff), char((declared >> 8) & 0xff),
                        char(declared & 0xff)};
    f.write(be, 4);
    REQUIRE(f.good());
  }
  // Headers only: read unchecked, this header gives 2^30 + 10 samples a trace (and a read of
  // them plans GiB per trace).
  CHECK_THROWS_WITH(io::read_segy(file, SegyHeaderConfig{}, false),
                    Contains("SEG-Y file '" + file + "'") && Contains("bytes 3269-3272") &&
                        Contains("= " + std::to_string(declared)) && Contains("valid: 1 to 536870851 samples"));
}

TEST_CASE("run -> SEG-Y -> migrate gives the image of run -> HDF5 -> migrate, bit for bit", "[integration][segy]") {
  const fs::path& d = run_dir();
  REQUIRE(fs::exists(d / "data_shot_0000.sgy"));
  REQUIRE(fs::exists(d / "data_shot_0001.sgy"));
  // The traces of the SEG-Y files are those of the HDF5 file, after a zero at t = 0.
  const auto h5 = read_dataset((d / "data.h5").string(), "traces");
  for (int s = 0; s < 2; ++s) {
    Segy f((d / ("data_shot_000" + std::to_string(s) + ".sgy")).string());
    REQUIRE(f.traces == 12);
    for (int r = 0; r < 12; ++r) {
      const auto v = f.trace(r);
      REQUIRE(v.size() == 201);
      CHECK(std::memcmp(v.data() + 1, h5.data() + (s * 12 + r) * 200, 200 * sizeof(float)) == 0);
    }
  }
  // The same data (samples, exact dt, positions) give the same arithmetic: equal images.
  const fs::path m = fresh_dir("roundtrip");
  const std::string a = write_text(m / "h5.yaml", migration_config("from_h5", (d / "data.h5").string(), false));
  const std::string b =
      write_text(m / "sgy.yaml", migration_config("from_sgy", (d / "data_shot_*.sgy").string(), true));
  for (const auto& cfg : {a, b}) {
    const Result r = run_cli("migrate " + cfg + " --quiet --backend cpu --output " + m.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
  }
  for (const char* k :
       {"image/correlation", "image/illumination", "image/laplacian", "sources/positions", "receivers/positions"}) {
    INFO(k);
    const auto x = read_dataset((m / "from_h5.h5").string(), k), y = read_dataset((m / "from_sgy.h5").string(), k);
    CHECK(same_bits(x, y));
  }
  // A rerun without SEG-Y leaves none of the earlier set's .sgy files; look-alikes stay.
  const fs::path re = fresh_dir("rerun");
  for (const auto& f : fs::directory_iterator(d)) fs::copy(f.path(), re / f.path().filename());
  write_text(re / "data_shot_notes.sgy", "x");
  std::string cfg = kTrueModel;
  cfg.replace(cfg.find("segy: rev1"), 10, "segy: none");
  const Result r =
      run_cli("run " + write_text(re / "none.yaml", cfg) + " --quiet --backend cpu --output " + re.string());
  REQUIRE(r.code == 0);
  CHECK_FALSE(fs::exists(re / "data_shot_0000.sgy"));
  CHECK_FALSE(fs::exists(re / "data_shot_0001.sgy"));
  CHECK(fs::exists(re / "data_shot_notes.sgy"));
}

namespace {

// A copy of the run's SEG-Y files in a fresh directory, broken by `edit`; migrate must refuse it
// with one message holding every `expected` part, exit 1 and no output.
template <class Edit>
void expect_refused(const std::string& name, Edit edit, const std::vector<std::string>& expected) {
  const fs::path d = fresh_dir("bad_" + name);
  for (int s = 0; s < 2; ++s) {
    const std::string f = "data_shot_000" + std::to_string(s) + ".sgy";
    fs::copy(run_dir() / f, d / f);
  }
  edit(d);
  const std::string cfg = write_text(d / "m.yaml", migration_config("rtm", (d / "data_shot_*.sgy").string(), true));
  const Result r = run_cli("migrate " + cfg + " --quiet --backend cpu --output " + (d / "out").string());
  INFO(r.output);
  CHECK(r.code == 1);
  for (const auto& e : expected) CHECK_THAT(r.output, Contains(e));
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(d / "out" / "rtm.h5"));
}

}  // namespace

TEST_CASE("a survey run in parts keeps its field records apart (sources.first_record) and migrates as one",
          "[integration][segy]") {
  // The two shots of the run, each run alone as a part with its own first record (1 and 2) and
  // output name: the parts' SEG-Y files, read together by one glob, group into the same two
  // field records as the whole run's and give its image bit for bit.
  const fs::path d = fresh_dir("parts");
  const char* shots[2] = {"[[175, 145, 20]]", "[[215, 145, 20]]"};
  for (int p = 0; p < 2; ++p) {
    const std::string cfg = write_text(
        d / ("part" + std::to_string(p) + ".yaml"),
        seisrtm::test::two_layers({{"sources", "{wavelet: {peak_frequency: 15}, shots: " + std::string(shots[p]) +
                                                   ", first_record: " + std::to_string(p + 1) + "}"},
                                   {"output", "{name: part" + std::to_string(p) + ", pictures: false, segy: rev1}"}}));
    const Result r = run_cli("run " + cfg + " --quiet --backend cpu --output " + d.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    Segy f((d / ("part" + std::to_string(p) + "_shot_0000.sgy")).string());
    CHECK(Segy::field(f.header(0), SEGY_TR_FIELD_RECORD) == p + 1);
    CHECK(read_dataset((d / ("part" + std::to_string(p) + ".h5")).string(), "sources/record") ==
          std::vector<float>{float(p + 1)});
  }
  const std::string cfg = write_text(d / "m.yaml", migration_config("parts", (d / "part*_shot_*.sgy").string(), true));
  const Result r = run_cli("migrate " + cfg + " --quiet --backend cpu --output " + (d / "out").string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const fs::path whole = fresh_dir("parts_whole");
  const std::string wcfg =
      write_text(whole / "m.yaml", migration_config("whole", (run_dir() / "data_shot_*.sgy").string(), true));
  const Result w = run_cli("migrate " + wcfg + " --quiet --backend cpu --output " + whole.string());
  REQUIRE(w.code == 0);
  for (const char* k : {"image/correlation", "image/illumination", "sources/positions"}) {
    INFO(k);
    CHECK(
        same_bits(read_dataset((d / "out" / "parts.h5").string(), k), read_dataset((whole / "whole.h5").string(), k)));
  }
}

TEST_CASE("SEG-Y shots whose receivers differ migrate with a spread each (CPU)", "[integration][segy]") {
  // Shot 2's receiver 3 moved 5 m: the field records no longer share one layout, so each shot
  // keeps its own spread (ObservedData::spreads); the output lists them per shot.
  const fs::path d = fresh_dir("spreads");
  for (int s = 0; s < 2; ++s) {
    const std::string f = "data_shot_000" + std::to_string(s) + ".sgy";
    fs::copy(run_dir() / f, d / f);
  }
  Segy((d / "data_shot_0001.sgy").string(), "r+b").set(2, SEGY_TR_GROUP_X, 115);
  const std::string cfg = write_text(d / "m.yaml", migration_config("rtm", (d / "data_shot_*.sgy").string(), true));
  const Result r = run_cli("migrate " + cfg + " --quiet --backend cpu --output " + (d / "out").string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto count = read_dataset((d / "out" / "rtm.h5").string(), "receivers/count");
  REQUIRE(count.size() == 2);
  CHECK(count[0] == count[1]);
  const auto pos = read_dataset((d / "out" / "rtm.h5").string(), "receivers/positions");
  REQUIRE(pos.size() == 2 * size_t(count[0]) * 3);
  CHECK(pos[size_t(count[0]) * 3 + 2 * 3] == 115);  // shot 2, receiver 3, x
  CHECK(pos[2 * 3] == 110);                         // shot 1 keeps its own
}

TEST_CASE("bad SEG-Y is refused with one message naming file, trace and header bytes", "[integration][segy]") {
  run_dir();
  SECTION("truncated") {
    expect_refused("truncated", [](const fs::path& d) { fs::resize_file(d / "data_shot_0001.sgy", 16128 - 100); },
                   {"data_shot_0001.sgy", "trace 12 is cut short", "truncated"});
  }
  SECTION("shorter than the file header") {
    expect_refused("stub", [](const fs::path& d) { fs::resize_file(d / "data_shot_0000.sgy", 1000); },
                   {"data_shot_0000.sgy", "less than the 3600-byte file header"});
  }
  SECTION("a sample format seisrtm does not read") {
    expect_refused(
        "format",
        [](const fs::path& d) { Segy((d / "data_shot_0000.sgy").string(), "r+b").set_binary(SEGY_BIN_FORMAT, 2); },
        {"data_shot_0000.sgy", "bytes 3225-3226", "= 2 (4-byte integer)", "reads 5 (4-byte IEEE float) and 1"});
  }
  SECTION("samples per trace that vary") {
    expect_refused(
        "samples",
        [](const fs::path& d) { Segy((d / "data_shot_0001.sgy").string(), "r+b").set(4, SEGY_TR_SAMPLE_COUNT, 150); },
        {"data_shot_0001.sgy', trace 5", "bytes 115-116", "= 150", "gives 201"});
  }
  SECTION("a source that moves within a shot") {
    expect_refused(
        "source",
        [](const fs::path& d) { Segy((d / "data_shot_0000.sgy").string(), "r+b").set(7, SEGY_TR_SOURCE_X, 176); },
        {"data_shot_0000.sgy', trace 8", "source position [176, 145, 20] m", "bytes 73, 77, 49 - 45",
         "field record 1"});
  }
  SECTION("a coordinate scalar that is not a power of ten") {
    expect_refused("scalar",
                   [](const fs::path& d) {
                     Segy((d / "data_shot_0000.sgy").string(), "r+b").set(0, SEGY_TR_SOURCE_GROUP_SCALAR, 7);
                   },
                   {"data_shot_0000.sgy', trace 1", "bytes 71 (coordinate scalar) = 7", "valid: 1, 10, 100"});
  }
  SECTION("no wavelet for SEG-Y data, and header bytes that start no field") {
    const fs::path d = fresh_dir("keys");
    std::string cfg = migration_config("rtm", (run_dir() / "data_shot_*.sgy").string(), false);
    Result r = run_cli("migrate " + write_text(d / "a.yaml", cfg) + " --quiet --backend cpu --output " + d.string());
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains("'migration.wavelet' is required for SEG-Y data"));
    cfg = migration_config("rtm", (run_dir() / "data_shot_*.sgy").string(), true) + "  segy_headers: {source_x: 74}\n";
    r = run_cli("migrate " + write_text(d / "b.yaml", cfg) + " --quiet --backend cpu --output " + d.string());
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains("'migration.segy_headers.source_x' = 74 is not the first byte"));
  }
}

namespace {
// A file of a few KiB whose float dataset declares `dims` (chunked, never written: no disk).
}  // namespace

TEST_CASE("a migration.wavelet file of SEG-Y data is held to run's rules: declared length and dt",
          "[integration][segy]") {
  const fs::path d = fresh_dir("wavelet");
  const std::string data = (run_dir() / "data_shot_*.sgy").string();
  // The SEG-Y migration with `file` as its wavelet must stop with one message holding every
  // `expected` part, exit 1 and no output.
  auto refused = [&](const std::string& name, const std::string& file, const std::vector<std::string>& expected) {
    std::string cfg = migration_config("rtm", data, true);
    const std::string ricker = "{peak_frequency: 15}";
    cfg.replace(cfg.find(ricker), ricker.size(), "{type: file, file: '" + file + "'}");
    const Result r = run_cli("migrate " + write_text(d / (name + ".yaml"), cfg) + " --quiet --backend cpu --output " +
                             (d / name).string());
    INFO(name << ": " << r.output);
    CHECK(r.code == 1);
    for (const auto& e : expected) CHECK_THAT(r.output, Contains(e));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(d / name / "rtm.h5"));
  };
  // 5e7 samples declared (a few KiB on disk): run refuses such a file from its shape; the SEG-Y
  // path read it in full (200 MB) and took its spectrum. Without a dt attribute the file is at
  // the data's dt; the record's 200 samples use 201 of it, so the 2^20-sample floor applies.
  const std::string huge = write_declared(d / "huge.h5", "wavelet", {50000000});
  refused("declared", huge,
          {"wavelet file '" + huge + "' dataset 'wavelet' declares shape [50000000]", "at most [1048576]",
           "migration.wavelet.file", "nothing was read"});
  // A mis-declared dt of 1e-15 s would make that limit (4 x the record at the file's dt) admit
  // the 5e7 samples: the dt is refused before anything is read.
  const std::string fine = write_declared(d / "fine.h5", "wavelet", {50000000}, 1e-15);
  refused("fine_dt", fine,
          {"wavelet file '" + fine + "' dataset 'wavelet' has the attribute dt = 1e-15 s, finer than 1/1024",
           "migration.wavelet.file", "nothing was read"});
  // A dt attribute that is negative or NaN was ignored (the samples taken at the data's dt).
  std::vector<float> w(60, 0.0f);
  w[10] = 1.0f;
  for (const double dt : {-0.002, std::nan("")}) {
    const std::string name = std::isnan(dt) ? "dt_nan" : "dt_negative";
    const std::string f = (d / (name + ".h5")).string();
    seisrtm::io::write_float_file(f, "wavelet", {60}, w, dt);
    refused(name, f,
            {"wavelet file '" + f + "' dataset 'wavelet' has the attribute dt = " + (std::isnan(dt) ? "nan" : "-0.002"),
             "must be a positive sample interval in s"});
  }
}

TEST_CASE("a migration.wavelet file whose dt attribute is not one number is refused naming file and attribute",
          "[integration][segy]") {
  const fs::path d = fresh_dir("wavelet_dt_form");
  const std::string data = (run_dir() / "data_shot_*.sgy").string();
  std::vector<float> w(60, 0.0f);
  w[10] = 1.0f;
  // A string dt was ignored (the samples taken at the data's dt); two values were read into one
  // double past its end.
  for (const std::string form : {"string", "two values"}) {
    const std::string name = form == "string" ? "dt_string" : "dt_two";
    const std::string f = (d / (name + ".h5")).string();
    seisrtm::io::write_float_file(f, "wavelet", {60}, w);
    {
      seisrtm::io::H5Handle file(H5Fopen(f.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
      seisrtm::io::H5Handle ds(H5Dopen2(file.get(), "wavelet", H5P_DEFAULT), H5Dclose);
      REQUIRE(ds.valid());
      if (form == "string")
        seisrtm::io::write_attribute(ds.get(), "dt", std::string("x"));
      else
        seisrtm::io::write_attribute(ds.get(), "dt", std::vector<double>{0.001, 0.002});
    }
    std::string cfg = migration_config("rtm", data, true);
    const std::string ricker = "{peak_frequency: 15}";
    cfg.replace(cfg.find(ricker), ricker.size(), "{type: file, file: '" + f + "'}");
    const Result r = run_cli("migrate " + write_text(d / (name + ".yaml"), cfg) + " --quiet --backend cpu --output " +
                             (d / name).string());
    INFO(name << ": " << r.output);
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains("HDF5 file '" + f + "': the attribute 'dt' of dataset 'wavelet' " +
                                  (form == "string" ? "holds a string" : "holds 2 values")));
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(d / name / "rtm.h5"));
  }
}
