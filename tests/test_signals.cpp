// [integration] Hang-ups and signals: SIGHUP (a closed terminal, a dropped ssh connection) stops
// a run or a migration as SIGTERM does: exit 128 + 1, one message, the earlier result set kept
// and no temporary left. docs/RELIABILITY.md lists the guarantees and these tests.
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using seisrtm::test::files_of;
using seisrtm::test::Result;
using seisrtm::test::temporaries;

namespace {

int lines_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

Result run_args(const std::vector<std::string>& args) {
  auto c = seisrtm::test::spawn_cli(args);
  return seisrtm::test::wait_cli(c);
}

// A one-shot survey of 64^3 cells of 10 m (snapshots every 20 steps, so the set has an XDMF
// member too) and the earlier result set it wrote with 40 steps into d/out.
struct EarlierSet {
  std::string cfg;
  fs::path out;
  std::map<std::string, std::pair<ino_t, std::string>> before;
};
EarlierSet earlier_set(const fs::path& d) {
  EarlierSet e;
  e.cfg = seisrtm::test::write_text(d / "survey.yaml", seisrtm::test::small64_survey());
  e.out = d / "out";
  const Result r = run_args({"run", e.cfg, "--quiet", "--output", e.out.string()});
  INFO(r.output);
  REQUIRE(r.code == 0);
  e.before = files_of(e.out);
  REQUIRE(e.before.count("small.h5") == 1);
  return e;
}

}  // namespace

TEST_CASE("SIGHUP stops a run as SIGTERM does: exit 129, one message naming SIGHUP, earlier set kept",
          "[integration]") {
  const EarlierSet e = earlier_set(seisrtm::test::fresh_dir("seisrtm_test_signals_", "hup_run"));
  // 20000 steps: a minute or more on 2 cores unless stopped; the signal comes once the time loop
  // has printed its first progress line (the handlers are in place, the set's files are open).
  auto c = seisrtm::test::spawn_cli({"run", e.cfg, "--output", e.out.string(), "--set", "time.steps=20000"});
  std::string seen;
  REQUIRE(seisrtm::test::read_until(c, "shot 1/1 step", seen));
  REQUIRE(!temporaries(e.out).empty());  // the run's set is being written
  kill(c.pid, SIGHUP);
  const Result r = seisrtm::test::wait_cli(c, seen);
  INFO(r.output);
  CHECK(r.code == 128 + SIGHUP);
  CHECK(lines_with(r.output, "seisrtm: interrupted by SIGHUP during run of " + e.cfg + " at shot 1/1") == 1);
  CHECK_THAT(r.output, Contains("earlier results in " + e.out.string() + " are unchanged"));
  // The message says the same command resumes; with no shot finished there is no journal to keep.
  CHECK_THAT(r.output, Contains("the same command again resumes after the shots in its journal"));
  CHECK(!std::filesystem::exists(e.out / "small.resume"));
  CHECK(files_of(e.out) == e.before);
  CHECK(temporaries(e.out).empty());
}

TEST_CASE("SIGHUP stops a migration as SIGTERM does", "[integration]") {
  const fs::path d = seisrtm::test::fresh_dir("seisrtm_test_signals_", "hup_migrate");
  const EarlierSet data = earlier_set(d);
  const std::string cfg = seisrtm::test::write_text(
      d / "mig.yaml",
      "grid: {shape: [64, 64, 64], spacing: 10}\nboundary: {damping_width: 6}\nmodel: {vp: 1500}\n"
      "migration: {data: " +
          (data.out / "small.h5").string() + "}\noutput: {name: mig, pictures: false}\n" + "solver: {backend: cpu}\n");
  const fs::path out = d / "mig";
  REQUIRE(run_args({"migrate", cfg, "--quiet", "--output", out.string()}).code == 0);  // the earlier set
  const auto before = files_of(out);
  // A larger grid: tens of seconds of passes on 2 cores unless stopped.
  auto c = seisrtm::test::spawn_cli({"migrate", cfg, "--output", out.string(), "--set", "grid.shape=[240,240,240]"});
  std::string seen;
  REQUIRE(seisrtm::test::read_until(c, "shot 1/1 forward step", seen));
  kill(c.pid, SIGHUP);
  const Result r = seisrtm::test::wait_cli(c, seen);
  INFO(r.output);
  CHECK(r.code == 128 + SIGHUP);
  CHECK(lines_with(r.output, "seisrtm: interrupted by SIGHUP during migrate of " + cfg + " at shot 1/1") == 1);
  CHECK(files_of(out) == before);
  CHECK(temporaries(out).empty());
}

TEST_CASE(
    "A signal ignored by the caller stays ignored: nohup's SIGHUP and a background job's SIGINT do not stop a run",
    "[integration]") {
  const EarlierSet e = earlier_set(seisrtm::test::fresh_dir("seisrtm_test_signals_", "ignored"));
  // An ignored disposition survives fork and exec, as nohup and a shell's '&' pass it on; this
  // process's own is put back once the child has started.
  struct sigaction ignore {
  }, old_hup{}, old_int{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  REQUIRE(sigaction(SIGHUP, &ignore, &old_hup) == 0);
  REQUIRE(sigaction(SIGINT, &ignore, &old_int) == 0);
  // 1000 steps: a few seconds on 2 cores, long enough for the signals to reach the time loop.
  auto c = seisrtm::test::spawn_cli({"run", e.cfg, "--output", e.out.string(), "--set", "time.steps=1000"});
  sigaction(SIGHUP, &old_hup, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  std::string seen;
  REQUIRE(seisrtm::test::read_until(c, "shot 1/1 step", seen));
  kill(c.pid, SIGHUP);
  kill(c.pid, SIGINT);
  const Result r = seisrtm::test::wait_cli(c, seen);
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(lines_with(r.output, "interrupted") == 0);
  CHECK(temporaries(e.out).empty());
  CHECK(files_of(e.out) != e.before);  // the new set, 1000 steps, replaced the earlier one
}
