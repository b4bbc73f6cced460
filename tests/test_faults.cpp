// [integration] Results are never lost or corrupted: a write that fails (a file size limit
// standing in for a full disk), two runs into one directory, a member that cannot replace its
// file, a rerun with fewer outputs, SIGINT and SIGTERM mid-run; and the command line's usage
// errors. Each case runs the seisrtm binary over an earlier good result set and checks that set
// afterwards. docs/RELIABILITY.md lists the guarantees and these tests.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using seisrtm::test::files_of;
using seisrtm::test::Result;
using seisrtm::test::SpawnOptions;
using seisrtm::test::temporaries;

namespace {

fs::path fresh_dir(const std::string& name) {
  return seisrtm::test::fresh_dir("seisrtm_test_faults_", name);
}

// A small survey whose result set has every kind of member: HDF5, XDMF (snapshots), pictures.
const std::string kSmall = seisrtm::test::small_survey({{"solver", "{backend: cpu}"}});

Result run_args(const std::vector<std::string>& args, const SpawnOptions& o = {}) {
  auto c = seisrtm::test::spawn_cli(args, o);
  return seisrtm::test::wait_cli(c);
}

std::vector<std::string> names_of(const fs::path& dir) {
  std::vector<std::string> v;
  for (const auto& [name, file] : files_of(dir)) v.push_back(name);
  return v;
}

long lines(const std::string& text) {
  return std::count(text.begin(), text.end(), '\n');
}

int lines_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

// The earlier good result set the failing runs must leave as it is.
fs::path good_set(const fs::path& d, const std::string& cfg) {
  const fs::path out = d / "out";
  const Result r = run_args({"run", cfg, "--quiet", "--output", out.string()});
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE(names_of(out) == std::vector<std::string>{"small.h5", "small.xmf", "small_gather_shot_0000.png",
                                                    "small_model_vp.png", "small_wavefield_shot_0000.png"});
  return out;
}

}  // namespace

TEST_CASE("a write that fails (file size limit as a full disk) keeps the earlier set and no temporary",
          "[integration]") {
  const fs::path d = fresh_dir("disk_full");
  const std::string cfg = seisrtm::test::write_text(d / "survey.yaml", kSmall);
  const fs::path out = good_set(d, cfg);
  const auto before = files_of(out);
  // The rerun draws no pictures, so the HDF5 file (size S, the same as the earlier one: same
  // config) is its largest member and the limit fails it: at S/10 while the datasets are
  // written, at S - 1 only when the last bytes are flushed at the close, in between where the
  // chunk cache and the metadata go out.
  const auto size = static_cast<long long>(fs::file_size(out / "small.h5"));
  for (const long long limit : {size / 10, size / 2, size * 9 / 10, size - 1}) {
    SpawnOptions o;
    o.file_size_limit = limit;
    const Result r = run_args({"run", cfg, "--quiet", "--output", out.string(), "--set", "output.pictures=false"}, o);
    INFO("limit " << limit << " of " << size << " bytes: " << r.output);
    CHECK(r.code == 1);
    CHECK(lines_with(r.output, "seisrtm: error:") == 1);
    CHECK_THAT(r.output, Contains("small.h5") && Contains("File too large"));
    CHECK(lines(r.output) == 1);  // nothing but that line (no HDF5 error stack, no crash)
    CHECK(files_of(out) == before);
    CHECK(temporaries(out).empty());
    CHECK(seisrtm::io::read_float3((out / "small.h5").string(), "traces").data.size() == 8 * 40);
  }
}

TEST_CASE("two runs into one directory at once, HDF5 file locking off: both succeed, one whole result",
          "[integration]") {
  const fs::path d = fresh_dir("concurrent");
  const std::string cfg = seisrtm::test::write_text(d / "survey.yaml", kSmall);
  // Long enough (steps) that the two runs are writing their files at the same time.
  const std::vector<std::string> steps{"--set", "time.steps=200"};
  auto args = [&](const fs::path& out) {
    std::vector<std::string> a{"run", cfg, "--quiet", "--output", out.string()};
    a.insert(a.end(), steps.begin(), steps.end());
    return a;
  };
  const Result ref = run_args(args(d / "ref"));
  REQUIRE(ref.code == 0);
  SpawnOptions o;
  o.env = {{"HDF5_USE_FILE_LOCKING", "FALSE"}};
  auto a = seisrtm::test::spawn_cli(args(d / "out"), o);
  auto b = seisrtm::test::spawn_cli(args(d / "out"), o);
  const Result ra = seisrtm::test::wait_cli(a), rb = seisrtm::test::wait_cli(b);
  INFO(ra.output << rb.output);
  CHECK(ra.code == 0);
  CHECK(rb.code == 0);
  CHECK(temporaries(d / "out").empty());
  CHECK(names_of(d / "out") == names_of(d / "ref"));
  // The same arithmetic on the same backend: the traces bit for bit.
  const auto want = seisrtm::io::read_float3((d / "ref" / "small.h5").string(), "traces");
  const auto got = seisrtm::io::read_float3((d / "out" / "small.h5").string(), "traces");
  CHECK(got.shape == want.shape);
  CHECK(got.data == want.data);
}

TEST_CASE("a member that cannot replace its file fails the run before the HDF5 file is replaced", "[integration]") {
  // Were the HDF5 file renamed first and the XDMF file and the pictures after it, such a failure
  // would leave the new HDF5 file beside the old members.
  const std::string member = GENERATE(std::string("small.xmf"), std::string("small_model_vp.png"));
  const fs::path d = fresh_dir("blocked_" + member);
  const std::string cfg = seisrtm::test::write_text(d / "survey.yaml", kSmall);
  const fs::path out = good_set(d, cfg);
  fs::remove(out / member);
  fs::create_directories(out / member / "keep");  // a directory where the member goes
  const auto before = files_of(out);
  const Result r = run_args({"run", cfg, "--quiet", "--output", out.string()});
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(lines_with(r.output, "seisrtm: error:") == 1);
  CHECK_THAT(r.output, Contains(member));
  CHECK(files_of(out) == before);
  CHECK(temporaries(out).empty());
}

TEST_CASE("a run never replaces or removes a file it reads, however it is spelled", "[integration]") {
  // The model file, the wavelet file or the config file itself is a member of the set the run
  // writes. Before, the commit replaced it (or removed it as a stale member) and the run exited 0.
  const std::string kind = GENERATE(std::string("model"), std::string("wavelet"), std::string("config"));
  const fs::path d = fresh_dir("reads_" + kind);
  const fs::path out = good_set(d, seisrtm::test::write_text(d / "survey.yaml", kSmall));
  std::string cfg = (d / "survey.yaml").string(), path, named;
  std::vector<std::string> sets;
  if (kind == "model") {  // another spelling of out/small.h5
    path = (d / "out" / ".." / "out" / "small.h5").string();
    named = "model.vp.file";
    sets = {"model.vp={type: file, file: '" + path + "', dataset: model/vp}"};
  } else if (kind == "wavelet") {  // a symbolic link to out/small.h5
    path = (d / "wavelet.h5").string();
    fs::create_symlink(out / "small.h5", path);
    named = "sources.wavelet.file";
    sets = {"sources.wavelet={type: file, file: '" + path + "', dataset: sources/wavelet}"};
  } else {  // a stale member: the gather picture of a shot this one-shot run does not have
    path = cfg = seisrtm::test::write_text(out / "small_gather_shot_0007.png", kSmall);
    named = "config file";
  }
  const auto before = files_of(out);
  std::vector<std::string> args{"run", cfg, "--output", out.string()};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const Result r = run_args(args);  // not --quiet: anything the run did would print
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(lines(r.output) == 1);
  CHECK_THAT(r.output, Contains("seisrtm: error: " + named + " '" + path + "'") && Contains("output.name") &&
                           Contains("--output"));
  CHECK(files_of(out) == before);
  CHECK(temporaries(out).empty());
}

TEST_CASE("an output file that is an existing directory is refused before the run", "[integration]") {
  // Before, the run stepped every shot and failed only at the commit, when the HDF5 file could
  // not be renamed over the directory.
  const fs::path d = fresh_dir("h5_directory");
  const std::string cfg = seisrtm::test::write_text(d / "survey.yaml", kSmall);
  const fs::path out = d / "out";
  fs::create_directories(out / "small.h5" / "keep");
  const Result r = run_args({"run", cfg, "--output", out.string()});  // not --quiet, as above
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(lines(r.output) == 1);
  CHECK_THAT(r.output, Contains("seisrtm: error: output file '" + (out / "small.h5").string() + "'") &&
                           Contains("is an existing directory") && Contains("output.name"));
  CHECK(fs::is_directory(out / "small.h5" / "keep"));
  CHECK(temporaries(out).empty());
}

TEST_CASE("a rerun with fewer outputs leaves none of the earlier set's members", "[integration]") {
  const fs::path d = fresh_dir("fewer");
  const std::string cfg = seisrtm::test::write_text(d / "survey.yaml", kSmall);
  const fs::path out = d / "out";
  fs::create_directories(out);
  // Files that only look related stay: they are not members of the set 'small'.
  for (const char* other : {"small_notes.png", "small.h5.backup", "other.h5", "small_gather_shot_x.png"})
    seisrtm::test::write_text(out / other, "keep");
  const std::vector<std::string> others{"other.h5", "small.h5.backup", "small_gather_shot_x.png", "small_notes.png"};
  auto run = [&](const std::vector<std::string>& sets) {
    std::vector<std::string> a{"run", cfg, "--quiet", "--output", out.string()};
    for (const auto& s : sets) a.insert(a.end(), {"--set", s});
    const Result r = run_args(a);
    INFO(r.output);
    REQUIRE(r.code == 0);
    std::vector<std::string> set;
    for (const auto& n : names_of(out))
      if (std::find(others.begin(), others.end(), n) == others.end()) set.push_back(n);
    CHECK(temporaries(out).empty());
    return set;
  };
  CHECK(run({"sources.shots=[[150,150,100],[160,150,100]]"}) ==
        std::vector<std::string>{"small.h5", "small.xmf", "small_gather_shot_0000.png", "small_gather_shot_0001.png",
                                 "small_model_vp.png", "small_wavefield_shot_0000.png"});
  // One shot, neither snapshots nor the model in the file: no second gather, no XDMF file.
  CHECK(run({"output.snapshot_interval=0", "output.model=false"}) ==
        std::vector<std::string>{"small.h5", "small_gather_shot_0000.png", "small_model_vp.png",
                                 "small_wavefield_shot_0000.png"});
  CHECK(run({"output.snapshot_interval=0", "output.model=false", "output.pictures=false"}) ==
        std::vector<std::string>{"small.h5"});
  for (const auto& o : others) CHECK(fs::exists(out / o));
}

// A one-shot CPU run of n^3 cells of 10 m whose output set (40 steps) is already in d, started
// again with 20000 steps (a minute or more on 2 cores unless stopped) and read up to its first
// progress line, so that its signal handlers are in place and its files open.
struct LongRun {
  std::string cfg;
  fs::path out;
  std::map<std::string, std::pair<ino_t, std::string>> before;  // files_of(out) before the run
  seisrtm::test::Child child;
  std::string seen;
};
LongRun start_long_run(const fs::path& d, int n, int snapshot_interval) {
  const int c = n * 10 / 2, far = n * 10 - 80;
  const std::string yaml =
      "grid: {shape: [" + std::to_string(n) + ", " + std::to_string(n) + ", " + std::to_string(n) +
      "], spacing: 10}\ntime: {steps: 40}\nboundary: {damping_width: 6}\n"
      "sources: {wavelet: {peak_frequency: 15}, shots: [[" +
      std::to_string(c) + ", " + std::to_string(c) + ", 200]]}\nreceivers: {line: {start: [60, " + std::to_string(c) +
      ", 60], end: [" + std::to_string(far) + ", " + std::to_string(c) +
      ", 60], count: 8}}\noutput: {name: small, snapshot_interval: " + std::to_string(snapshot_interval) +
      "}\nsolver: {backend: cpu}\n";
  LongRun r;
  r.cfg = seisrtm::test::write_text(d / "survey.yaml", yaml);
  r.out = good_set(d, r.cfg);
  r.before = files_of(r.out);
  r.child = seisrtm::test::spawn_cli({"run", r.cfg, "--output", r.out.string(), "--set", "time.steps=20000"});
  REQUIRE(seisrtm::test::read_until(r.child, "shot 1/1 step", r.seen));
  return r;
}

TEST_CASE("SIGTERM and SIGINT stop a run cleanly: exit 128 + signal, one message, earlier set kept", "[integration]") {
  const int sig = GENERATE(SIGTERM, SIGINT);
  const std::string name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
  // The signal comes once the time loop has reported its first progress line.
  LongRun run = start_long_run(fresh_dir("signal_" + name), 64, 20);
  kill(run.child.pid, sig);
  const Result r = seisrtm::test::wait_cli(run.child, run.seen);
  INFO(r.output);
  CHECK(r.code == 128 + sig);
  CHECK(lines_with(r.output, "seisrtm: interrupted by " + name + " during run of " + run.cfg + " at shot 1/1") == 1);
  CHECK_THAT(r.output, Contains("earlier results in " + run.out.string() + " are unchanged"));
  CHECK(files_of(run.out) == run.before);
  CHECK(temporaries(run.out).empty());
}

TEST_CASE("SIGTERM then SIGKILL before the next check (mpirun's way) leaves no temporary", "[integration]") {
  // mpirun passes SIGTERM on and sends SIGKILL 1 s later; a rank busy in a long chunk of steps
  // never reaches its check. The handler removes the temporaries itself (io/interrupt.hpp):
  // SIGKILL 50 ms after SIGTERM, long before the next check of this run (its chunks are 200
  // steps of 128^3 cells, over a second here), leaves the earlier set and nothing else.
  LongRun run = start_long_run(fresh_dir("signal_kill"), 128, 0);
  CHECK(!temporaries(run.out).empty());  // the run's set is being written
  kill(run.child.pid, SIGTERM);
  usleep(50000);
  kill(run.child.pid, SIGKILL);
  const Result r = seisrtm::test::wait_cli(run.child, run.seen);
  INFO(r.output);
  CHECK(files_of(run.out) == run.before);
  CHECK(temporaries(run.out).empty());
}

TEST_CASE("SIGTERM and SIGINT stop a migration cleanly as well", "[integration]") {
  const int sig = GENERATE(SIGTERM, SIGINT);
  const std::string name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
  const fs::path d = fresh_dir("signal_migrate_" + name);
  const std::string survey = seisrtm::test::write_text(
      d / "survey.yaml",
      seisrtm::test::small64_survey({{"time", "{steps: 200}"}, {"output", "{name: small, pictures: false}"}}));
  const Result data = run_args({"run", survey, "--quiet", "--output", (d / "data").string()});
  REQUIRE(data.code == 0);
  const std::string cfg = seisrtm::test::write_text(
      d / "mig.yaml",
      "grid: {shape: [64, 64, 64], spacing: 10}\nboundary: {damping_width: 6}\nmodel: {vp: 1500}\n"
      "migration: {data: " +
          (d / "data" / "small.h5").string() + "}\noutput: {name: mig, pictures: false}\nsolver: {backend: cpu}\n");
  const fs::path out = d / "out";
  REQUIRE(run_args({"migrate", cfg, "--quiet", "--output", out.string()}).code == 0);  // the earlier set
  const auto before = files_of(out);
  // A larger grid: tens of seconds of passes on 2 cores unless stopped.
  auto c = seisrtm::test::spawn_cli({"migrate", cfg, "--output", out.string(), "--set", "grid.shape=[240,240,240]"});
  std::string seen;
  REQUIRE(seisrtm::test::read_until(c, "shot 1/1 forward step", seen));
  kill(c.pid, sig);
  const Result r = seisrtm::test::wait_cli(c, seen);
  INFO(r.output);
  CHECK(r.code == 128 + sig);
  CHECK(lines_with(r.output, "seisrtm: interrupted by " + name + " during migrate of " + cfg + " at shot 1/1") == 1);
  CHECK(files_of(out) == before);
  CHECK(temporaries(out).empty());
}

TEST_CASE("--output is a path, taken as it is: quotes and backslashes included", "[integration]") {
  const fs::path d = fresh_dir("output_path");
  const std::string cfg = seisrtm::test::write_text(d / "survey.yaml", kSmall);
  const fs::path out = d / "a \"quoted\" \\dir\\";
  const Result r = run_args({"run", cfg, "--quiet", "--output", out.string()});
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(fs::exists(out / "small.h5"));
  // Nothing anywhere else in the scratch directory: the config and the one output directory.
  std::vector<std::string> top;
  for (const auto& e : fs::directory_iterator(d)) top.push_back(e.path().filename().string());
  std::sort(top.begin(), top.end());
  CHECK(top == std::vector<std::string>{out.filename().string(), "survey.yaml"});
}

TEST_CASE("usage: --version, an unknown subcommand, usage errors exit 2, --help exits 0", "[integration]") {
  const Result v = run_args({"--version"});
  CHECK(v.code == 0);
  // The version `info` prints on its first line.
  const Result info = run_args({"info"});
  CHECK(v.output == info.output.substr(0, info.output.find('\n') + 1));
  CHECK_THAT(v.output, Contains("seisrtm 0.") || Contains("seisrtm 1."));

  const Result u = run_args({"frobnicate"});
  INFO(u.output);
  CHECK(u.code == 2);
  CHECK_THAT(u.output, Contains("unknown subcommand 'frobnicate'") && Contains("run") && Contains("migrate") &&
                           Contains("validate") && Contains("bench") && Contains("info"));
  CHECK(lines(u.output) == 1);

  for (const std::vector<std::string>& bad : {std::vector<std::string>{},
                                              {"run"},
                                              {"run", "x.yaml", "--bogus"},
                                              {"run", "x.yaml", "--backend", "gpu"},
                                              {"--bogus"},
                                              {"bench", "--repeat", "three"}}) {
    const Result r = run_args(bad);
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK(lines_with(r.output, "seisrtm: error:") == 1);
  }
  CHECK(run_args({"--help"}).code == 0);
  CHECK(run_args({"run", "--help"}).code == 0);
}
