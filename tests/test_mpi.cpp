// [integration] Shot-parallel runs under mpirun (solver/cluster.hpp) on the CPU backend, ranks
// oversubscribed on this machine: the output equals the single-rank run's, a failed rank ends the
// job with its rank and shot named and leaves the earlier output as it was. Needs Open MPI's
// mpirun (.ci/install-deps installs it); without it these tests fail, they do not skip.
#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"

namespace fs = std::filesystem;
using seisrtm::test::fresh_dir;
using seisrtm::test::Override;
using seisrtm::test::read_dataset;
using seisrtm::test::Result;
using seisrtm::test::run_shell;

namespace {

// Root may run mpirun here only with both variables set (CI runs as root). A job that hangs is
// ended after 300 s (timeout), so a deadlock fails the test instead of stalling the tier.
const std::string kMpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun --oversubscribe --bind-to none";

// configs/quickstart.yaml on the CPU backend: 60 x 40 x 50 cells, a damping zone of 10, 200
// steps, snapshots every 50 steps and a line of 30 receivers with SEG-Y copies (rev2), each
// replaced where `sets` name the same key; the other `sets` (shots, the line's ends) follow.
std::string quickstart_args(const std::vector<Override>& sets) {
  std::vector<Override> all = {{"grid.shape", "[60,40,50]"},     {"time.steps", "200"},
                               {"boundary.damping_width", "10"}, {"output.snapshot_interval", "50"},
                               {"receivers.line.count", "30"},   {"output.segy", "rev2"}};
  for (const Override& s : sets) {
    auto at = std::find_if(all.begin(), all.end(), [&](const Override& a) { return a.first == s.first; });
    if (at != all.end())
      at->second = s.second;
    else
      all.push_back(s);
  }
  return std::string(SEISRTM_SOURCE_DIR) + "/configs/quickstart.yaml --backend cpu" + seisrtm::test::set_args(all);
}

// Five shots on a small grid, snapshots and SEG-Y copies on: every kind of result travels.
const std::string kArgs =
    quickstart_args({{"sources.shots", "[[200,195,20],[300,195,20],[400,195,20],[250,195,30],[350,195,30]]"},
                     {"receivers.line.start", "[110,195,20]"},
                     {"receivers.line.end", "[480,195,20]"}});

// The five shots of configs/rtm/true_model.yaml on a coarse grid (70 x 35 x 55 cells of 20 m)
// for the shot-parallel migrations; their data (kCoarseSteps steps) is made once per process.
const std::string kRtm = std::string(SEISRTM_SOURCE_DIR) + "/configs/rtm/";
const std::string kCoarse =
    " --backend cpu --quiet --set grid.shape=[70,35,55] --set grid.spacing=20 --set boundary.damping_width=8";
constexpr long long kCoarseSteps = 300, kCoarseShots = 5;
const fs::path& coarse_data() {
  static const fs::path file = [] {
    const fs::path d = fresh_dir("seisrtm_mpi_", "coarse_data");
    const Result data = seisrtm::test::run_cli("run " + kRtm + "true_model.yaml" + kCoarse + " --set time.steps=" +
                                               std::to_string(kCoarseSteps) + " --output " + d.string());
    INFO(data.output);
    REQUIRE(data.code == 0);
    return d / "true_model.h5";
  }();
  return file;
}

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The names in `dir` but the resume journal (<name>.resume), which a stopped or failed job keeps
// for the same command again (its own tests: "a run killed at random moments ...", "a migration
// killed ...").
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> n;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() != ".resume") n.push_back(e.path().filename().string());
  std::sort(n.begin(), n.end());
  return n;
}

// A finished run in a fresh directory `name`: what a failed or stopped job must leave as it was
// (its file names and the HDF5 file's bytes) and the run's own output.
struct EarlierRun {
  fs::path dir;
  Result result;
  std::vector<std::string> names;
  std::string h5;
};
EarlierRun earlier_run(const std::string& name, const std::string& args) {
  EarlierRun e{fresh_dir("seisrtm_mpi_", name), {}, {}, {}};
  e.result = seisrtm::test::run_cli("run " + args + " --output " + e.dir.string());
  REQUIRE(e.result.code == 0);
  e.names = names_in(e.dir);
  e.h5 = bytes_of(e.dir / "quickstart.h5");
  return e;
}

// How often `what` occurs in `text`.
size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a shot-parallel run on 2, 3 and 4 ranks writes what one rank writes, bit for bit", "[integration]") {
  const fs::path one = fresh_dir("seisrtm_mpi_", "one");
  const Result a = seisrtm::test::run_cli("run " + kArgs + " --quiet --output " + one.string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  const std::vector<float> traces = read_dataset(one / "quickstart.h5", "traces");
  for (int ranks : {2, 3, 4}) {  // 4: as many as the GPUs of a four-GPU node
    const fs::path many = fresh_dir("seisrtm_mpi_", std::to_string(ranks));
    const Result b = run_shell(kMpirun + " -np " + std::to_string(ranks) + " " + SEISRTM_BINARY + " run " + kArgs +
                               " --output " + many.string());
    INFO(b.output);
    REQUIRE(b.code == 0);
    // The other ranks did compute shots (not rank 0 alone).
    std::smatch m;
    REQUIRE(std::regex_search(b.output, m, std::regex(R"(([0-9]+) of 5 shot\(s\) computed by ranks 1)")));
    CHECK(std::stoi(m[1]) >= 1);
    CHECK(names_in(many) == names_in(one));
    CHECK(read_dataset(many / "quickstart.h5", "traces") == traces);
    for (int s = 0; s < 5; ++s) {
      const std::string shot = "shot_000" + std::to_string(s);
      CHECK(read_dataset(many / "quickstart.h5", "snapshots/" + shot) ==
            read_dataset(one / "quickstart.h5", "snapshots/" + shot));
      CHECK(bytes_of(many / ("quickstart_" + shot + ".sgy")) == bytes_of(one / ("quickstart_" + shot + ".sgy")));
    }
  }
}

TEST_CASE("a shot-parallel migration on 2, 3 and 4 ranks images what one rank images, bit for bit", "[integration]") {
  // The five shots of the migration example on a coarse grid: the CPU migrator images each shot
  // into zeroed volumes and rank 0 adds them to the exact stack as they arrive, from one rank or
  // from many.
  const fs::path d = fresh_dir("seisrtm_mpi_", "rtm");
  const std::string migrate =
      " migrate " + kRtm + "migrate.yaml" + kCoarse + " --set migration.data=" + coarse_data().string();
  const Result one = seisrtm::test::run_cli(migrate + " --output " + (d / "one").string());
  INFO(one.output);
  REQUIRE(one.code == 0);
  for (int ranks : {2, 3, 4}) {
    const fs::path many = d / ("np" + std::to_string(ranks));
    const Result r = run_shell(kMpirun + " -np " + std::to_string(ranks) + " " + SEISRTM_BINARY + migrate +
                               " --output " + many.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(names_in(many) == names_in(d / "one"));
    for (const char* v : {"image/correlation", "image/illumination", "image/normalized", "image/laplacian"}) {
      INFO(v);
      CHECK(read_dataset(many / "migrate.h5", v) == read_dataset(d / "one" / "migrate.h5", v));
    }
  }
  // Image gathers: a farm of 3 and z slabs on 2 ranks form those of one rank, bit for bit.
  const std::string gathers = " --set migration.gathers.offsets=6 --set migration.gathers.x_every=9";
  const Result g1 = seisrtm::test::run_cli(migrate + gathers + " --output " + (d / "one_gathers").string());
  INFO(g1.output);
  REQUIRE(g1.code == 0);
  const Result g3 =
      run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + migrate + gathers + " --output " + (d / "np3_gathers").string());
  INFO(g3.output);
  REQUIRE(g3.code == 0);
  for (const char* v : {"gathers/offset", "gathers/angle", "image/correlation"}) {
    INFO(v);
    const std::vector<float> one_g = read_dataset(d / "one_gathers" / "migrate.h5", v);
    CHECK(!one_g.empty());
    CHECK(read_dataset(d / "np3_gathers" / "migrate.h5", v) == one_g);
  }
  const Result gz = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + migrate + gathers +
                              " --set solver.decomposition=z --output " + (d / "z_gathers").string());
  INFO(gz.output);
  REQUIRE(gz.code == 0);
  for (const char* v : {"gathers/offset", "gathers/angle"}) {
    INFO(v);
    CHECK(read_dataset(d / "z_gathers" / "migrate.h5", v) == read_dataset(d / "one_gathers" / "migrate.h5", v));
  }
  // isic in z slabs on 2 ranks: a slab's gradients read its neighbour's planes at the slab
  // boundary; the image of one rank bit for bit.
  const std::string isic = " --set migration.imaging_condition=isic";
  const Result i1 = seisrtm::test::run_cli(migrate + isic + " --output " + (d / "one_isic").string());
  INFO(i1.output);
  REQUIRE(i1.code == 0);
  const Result iz = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + migrate + isic +
                              " --set solver.decomposition=z --output " + (d / "z_isic").string());
  INFO(iz.output);
  REQUIRE(iz.code == 0);
  const std::vector<float> one_isic = read_dataset(d / "one_isic" / "migrate.h5", "image/isic");
  CHECK(!one_isic.empty());
  CHECK(read_dataset(d / "z_isic" / "migrate.h5", "image/isic") == one_isic);
  // Checkpoints every 23 levels in every rank's migrator: the shots' images, so the stack, are the
  // store's bit for bit.
  const fs::path ck = d / "np3_checkpoint";
  const Result c = run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + migrate +
                             " --set migration.reconstruction=checkpoint --set migration.checkpoint_interval=23"
                             " --output " +
                             ck.string());
  INFO(c.output);
  REQUIRE(c.code == 0);
  for (const char* v : {"image/correlation", "image/illumination"}) {
    INFO(v);
    CHECK(read_dataset(ck / "migrate.h5", v) == read_dataset(d / "one" / "migrate.h5", v));
  }
  // A failed shot ends the migration too, and the image of the earlier run stays.
  const std::string image = bytes_of(d / "np3" / "migrate.h5");
  const Result f = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_SHOT=3 " + SEISRTM_HOOKED_BINARY + migrate +
                             " --output " + (d / "np3").string());
  INFO(f.output);
  CHECK(f.code != 0);
  CHECK(std::regex_search(f.output, std::regex(R"(seisrtm: error: rank [0-2] failed on shot 4/5: SEISRTM_TEST_FAIL)")));
  const Result w = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_RANK=2 " + SEISRTM_HOOKED_BINARY + migrate +
                             " --output " + (d / "np3").string());
  INFO(w.output);
  CHECK(w.code != 0);
  CHECK(std::regex_search(w.output, std::regex(R"(seisrtm: error: rank 2 failed on shot [1-5]/5: SEISRTM_TEST_FAIL)")));
  // The earlier set as it was, and the journal of the shots stacked before the failure (the same
  // command resumes from it).
  CHECK(names_in(d / "np3") == names_in(d / "one"));
  CHECK(fs::exists(d / "np3" / "migrate.resume"));
  CHECK(bytes_of(d / "np3" / "migrate.h5") == image);
}

TEST_CASE("parts of a survey migrated as a shot farm and in z slabs stack to one process's image, bit for bit",
          "[integration]") {
  // The exact stack (solver/exact_stack.hpp) adds the shots as integers: a part of three shots
  // migrated by 3 ranks handing out shots, the other two by 2 ranks in z slabs, stacked, is the
  // image of one process migrating all five.
  const fs::path d = fresh_dir("seisrtm_mpi_", "parts");
  const std::string cfg = kRtm + "migrate.yaml" + kCoarse + " --set migration.data=" + coarse_data().string();
  const std::string migrate = std::string(SEISRTM_BINARY) + " migrate " + cfg;
  const Result one = run_shell(migrate + " --quiet --output " + (d / "one").string());
  INFO(one.output);
  REQUIRE(one.code == 0);
  const Result a = run_shell(kMpirun + " -np 3 " + migrate + " --shots 0:3 --quiet --output " + (d / "farm").string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  const Result b = run_shell(kMpirun + " -np 2 " + migrate +
                             " --shots 3: --set solver.decomposition=z --quiet --output " + (d / "slabs").string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  // (stack runs no backend: the grid keys of kCoarse without --backend)
  const std::string grid = kCoarse.substr(kCoarse.find(" --set"));
  const Result s = run_shell(std::string(SEISRTM_BINARY) + " stack " + kRtm + "migrate.yaml" + grid +
                             " --set migration.data=" + coarse_data().string() + " --output " + (d / "stack").string() +
                             " " + (d / "farm" / "migrate.h5").string() + " " + (d / "slabs" / "migrate.h5").string());
  INFO(s.output);
  REQUIRE(s.code == 0);
  for (const char* v : {"image/correlation", "image/illumination", "image/laplacian"}) {
    INFO(v);
    const auto whole = read_dataset(d / "one" / "migrate.h5", v);
    CHECK(read_dataset(d / "stack" / "migrate.h5", v) == whole);
    CHECK(read_dataset(d / "farm" / "migrate.h5", v) != whole);
  }
}

TEST_CASE("a failed rank ends the job naming its rank and shot; the earlier output stays as it was", "[integration]") {
  const auto [dir, first, before, h5] = earlier_run("fail", kArgs + " --quiet");
  // Shot 3 of 5 (index 2) fails on whichever rank takes it.
  const Result r = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_SHOT=2 " + SEISRTM_HOOKED_BINARY + " run " + kArgs +
                             " --output " + dir.string());
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(std::regex_search(r.output, std::regex(R"(seisrtm: error: rank [0-2] failed on shot 3/5: SEISRTM_TEST_FAIL)")));
  CHECK(names_in(dir) == before);  // no temporaries left, nothing replaced
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
  // The same with the failure on rank 1 for certain (a worker's report, not rank 0's own).
  const Result w = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_RANK=1 " + SEISRTM_HOOKED_BINARY + " run " + kArgs +
                             " --output " + dir.string());
  INFO(w.output);
  CHECK(w.code != 0);
  CHECK(std::regex_search(w.output, std::regex(R"(seisrtm: error: rank 1 failed on shot [1-5]/5: SEISRTM_TEST_FAIL)")));
  CHECK(names_in(dir) == before);
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE("SIGINT to mpirun in the middle of a shot-parallel run leaves no temporaries and the earlier output",
          "[integration]") {
  const auto [dir, first, before, h5] = earlier_run("sigint", kArgs + " --quiet");
  // 20000 steps a shot: several seconds a shot on these oversubscribed ranks; SIGINT after 3 s,
  // to mpirun itself, once, as Ctrl-C in a terminal does. (`pid` is timeout's, which would pass
  // a signal on to mpirun twice, and a second SIGINT makes mpirun kill its ranks at once.)
  const Result r =
      run_shell("(" + kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kArgs + " --set time.steps=20000 --output " +
                dir.string() + " & pid=$!; sleep 3; kill -INT $(pgrep -P $pid mpirun); wait $pid; echo exit=$?)");
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) != 0);
  CHECK(names_in(dir) == before);  // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE(
    "SIGINT and SIGTERM to mpirun stop every rank at its next check: one message, no MPI_Abort, nothing committed",
    "[integration]") {
  const std::string sig = GENERATE(std::string("INT"), std::string("TERM"));
  const auto [dir, first, before, h5] = earlier_run("stop_" + sig, kArgs);
  // One rank's 5 shots of 200 steps, 1000 steps in all (the summary's "time stepping T s"): a
  // shot of the job below (20000 steps, 3 ranks on these cores) takes 20 T or more.
  std::smatch t;
  REQUIRE(std::regex_search(first.output, t, std::regex(R"(time stepping ([0-9.]+) s)")));
  const double steps_1000 = std::stod(t[1]);  // s
  // Open MPI's mpirun answers SIGINT or SIGTERM with SIGCONT to the ranks, SIGTERM 1 s later and
  // SIGKILL 1 s after that (odls_base_sigkill_timeout, 1 s): the job ends within those 2 s plus
  // one chunk of steps (50, a snapshot interval) of each rank and the teardown; 1000 steps, a
  // twentieth of the shot under way, bound that.
  const double bound = 2.0 + steps_1000;  // s
  const Result r =
      run_shell("(" + kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kArgs + " --set time.steps=20000 --output " +
                dir.string() + " & pid=$!; sleep 3; t0=$(date +%s.%N); kill -" + sig +
                " $(pgrep -P $pid mpirun); wait $pid; echo exit=$?; "
                "echo stopped_in=$(echo \"$(date +%s.%N) - $t0\" | bc))");
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) != 0);
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(stopped_in=([0-9.]+))")));
  INFO("stopped in " << m[1] << " s, bound " << bound << " s");
  CHECK(std::stod(m[1]) < bound);
  // Every rank got SIGTERM from mpirun: rank 0 says it once, no rank ends the job on its own.
  CHECK(count_of(r.output, "seisrtm: interrupted by SIGTERM during run of") == 1);
  CHECK(count_of(r.output, "seisrtm: error") == 0);
  CHECK(count_of(r.output, "MPI_ABORT") == 0);
  CHECK(names_in(dir) == before);  // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

// Starts `job` (an mpirun command line) in the background with its output in `log`; once `ready`
// shows in the log (within 60 s), sends SIGTERM to the process of rank `rank` alone. The output
// says "exit=<mpirun's exit code>" and "stopped_in=<s from the signal to the job's end>", then the log.
Result signal_rank_once(const std::string& job, const fs::path& log, const std::string& ready, int rank) {
  return run_shell("(" + job + " >" + log.string() +
                   " 2>&1 & pid=$!; "
                   "desc() { for c in $(pgrep -P $1); do echo $c; desc $c; done; }; "
                   "i=0; while [ $i -lt 600 ] && ! grep -q '" +
                   ready + "' " + log.string() +
                   "; do sleep 0.1; i=$((i+1)); done; t0=$(date +%s.%N); "
                   "for c in $(desc $pid); do grep -qz '^OMPI_COMM_WORLD_RANK=" +
                   std::to_string(rank) +
                   "$' /proc/$c/environ 2>/dev/null && kill -TERM $c; "
                   "done; wait $pid; echo exit=$?; echo stopped_in=$(echo \"$(date +%s.%N) - $t0\" | bc); cat " +
                   log.string() + ")");
}

TEST_CASE("SIGTERM to one worker rank of a shot-parallel run stops every rank with 143, said once by rank 0",
          "[integration]") {
  // Rank 1 alone gets SIGTERM once rank 0 has printed its first progress line: it reports the
  // signal to rank 0 (ShotFarm::check_interrupt), which stops every rank, says it once and exits
  // 143 as every other rank does, so mpirun returns 143; no rank ends the job with MPI_Abort.
  const auto [dir, first, before, h5] = earlier_run("worker_sigterm", kArgs + " --quiet");
  const fs::path log = fresh_dir("seisrtm_mpi_", "worker_sigterm_log") / "run.log";
  const Result r = signal_rank_once(
      kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kArgs + " --set time.steps=20000 --output " + dir.string(), log,
      "step", 1);
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) == 143);
  CHECK(count_of(r.output, "seisrtm: interrupted by SIGTERM during run of") == 1);
  CHECK(count_of(r.output, "seisrtm: error") == 0);
  CHECK(count_of(r.output, "MPI_ABORT") == 0);
  CHECK(names_in(dir) == before);  // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

// mpirun under `timeout -k 5 <seconds>`: a job that hangs is ended (exit 124), and killed 5 s
// later if mpirun does not end on timeout's SIGTERM (it may wait for ranks that never end).
std::string mpirun_within(double seconds) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 " + std::to_string(seconds) +
         " mpirun --oversubscribe --bind-to none";
}

TEST_CASE("SIGTERM to rank 0 while a worker that was told no shot is left still holds its last traces: no hang",
          "[integration]") {
  // Two shots on 2 ranks: rank 1 computes shot 2, asks for another at 90% of it and is told that
  // none is left; past its last check it holds the shot's traces (SEISRTM_TEST_DELAY_FINAL_RESULT)
  // and rank 0 alone gets SIGTERM meanwhile. Rank 0 must take those traces before it ends: once it
  // sat in MPI_Finalize, rank 1's send of them (over the eager limit) was never matched and the
  // job hung.
  const std::string args = kArgs + " --set time.steps=2000 --set sources.shots=[[200,195,20],[300,195,20]]";
  const auto [dir, first, before, h5] = earlier_run("stop_last_traces", args);
  const fs::path log = fresh_dir("seisrtm_mpi_", "stop_last_traces_log") / "run.log";
  std::smatch t;
  REQUIRE(std::regex_search(first.output, t, std::regex(R"(time stepping ([0-9.]+) s)")));
  const double stepping = std::stod(t[1]);  // s, both shots on one rank
  // Rank 1 holds its traces `hold` s: more than the 0.1 s poll below and rank 0's next check
  // (2 ms apart in drain, one chunk of 50 steps in its own shot, under a fortieth of `stepping`).
  const double hold = 2.0;  // s
  REQUIRE(stepping / 40 < hold - 0.1);
  // After the signal: the rest of the hold, rank 0's next check (under `stepping`), mpirun's kill
  // sequence once rank 0 exits non-zero (SIGTERM after 1 s, SIGKILL 1 s later:
  // odls_base_sigkill_timeout) and 1 s for MPI_Finalize and mpirun's exit (under 0.1 s here
  // with odls_base_sigkill_timeout 0).
  const double bound = hold + stepping + 2.0 + 1.0;  // s
  // The whole job: the 60 s the wait for rank 1's hold may take, then `bound`.
  const Result r =
      signal_rank_once(mpirun_within(60 + bound) + " -np 2 -x SEISRTM_TEST_DELAY_FINAL_RESULT=" + std::to_string(hold) +
                           " " + SEISRTM_HOOKED_BINARY + " run " + args + " --output " + dir.string(),
                       log, "rank 1 holds the last result of shot 2", 0);
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) == 143);  // rank 0's 128 + SIGTERM, not timeout's 124
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(stopped_in=([0-9.]+))")));
  INFO("stopped in " << m[1] << " s, bound " << bound << " s");
  CHECK(std::stod(m[1]) < bound);
  CHECK(count_of(r.output, "seisrtm: interrupted by SIGTERM during run of") == 1);
  CHECK(count_of(r.output, "seisrtm: error") == 0);
  CHECK(count_of(r.output, "MPI_ABORT") == 0);
  CHECK(names_in(dir) == before);  // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE("a worker that fails while rank 0 is stopping ends the job with its failure named, instead of a hang",
          "[integration]") {
  // Rank 0 alone gets SIGTERM once it is 2000 steps into its first shot (the workers are in
  // theirs: rank 0 has answered their first asks at its first checks); rank 1 fails at the check
  // that finds rank 0's stop (SEISRTM_TEST_FAIL_ON_STOP_RANK) and reports it instead of
  // answering. Rank 0 dropped that report and waited for an answer that never came: a hang.
  // Now it says the stop and the failure in one message and ends the job (MPI_Abort: the failed
  // rank waits for it).
  const auto [dir, first, before, h5] = earlier_run("fail_while_stopping", kArgs);
  const fs::path log = fresh_dir("seisrtm_mpi_", "fail_while_stopping_log") / "run.log";
  std::smatch t;
  REQUIRE(std::regex_search(first.output, t, std::regex(R"(time stepping ([0-9.]+) s)")));
  const double steps_1000 = std::stod(t[1]);  // s: 5 shots of 200 steps on one rank
  // As in the test of SIGINT to mpirun: one chunk of steps of each rank (50, under 1000 steps),
  // then the abort, which mpirun carries out with its kill sequence (2 s).
  const double bound = 2.0 + steps_1000;  // s
  const Result r =
      signal_rank_once(mpirun_within(60 + bound) + " -np 3 -x SEISRTM_TEST_FAIL_ON_STOP_RANK=1 " +
                           SEISRTM_HOOKED_BINARY + " run " + kArgs + " --set time.steps=20000 --output " + dir.string(),
                       log, "shot 1/5 step 2000/", 0);
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) != 0);
  CHECK(std::stoi(m[1]) != 124);  // not ended by timeout
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(stopped_in=([0-9.]+))")));
  INFO("stopped in " << m[1] << " s, bound " << bound << " s");
  CHECK(std::stod(m[1]) < bound);
  CHECK(count_of(r.output, "seisrtm: interrupted by SIGTERM during run of") == 1);
  CHECK(std::regex_search(r.output,
                          std::regex(R"(\(as the job stopped, rank 1 failed on shot [1-5]/5: SEISRTM_TEST_FAIL)")));
  CHECK(count_of(r.output, "seisrtm: error") == 0);
  CHECK(names_in(dir) == before);  // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE("SIGINT to mpirun within 1 s of the end, before mpirun passes SIGTERM on, commits nothing", "[integration]") {
  // mpirun answers SIGINT with SIGCONT at once and SIGTERM 1 s later: a job that ends within that
  // second could commit its set and end as if no signal had come. This job (kArgs: 5 shots of
  // 200 steps on 3 ranks) ends within about a second of its first progress line, when SIGINT
  // comes; rank 0 waits for the SIGTERM before it commits (cluster::settle_before_commit).
  const auto [dir, first, before, h5] = earlier_run("stop_near_end", kArgs + " --quiet");
  const fs::path log = fresh_dir("seisrtm_mpi_", "stop_near_end_log") / "run.log";
  const Result r = run_shell("(" + kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kArgs + " --output " +
                             dir.string() + " >" + log.string() +
                             " 2>&1 & pid=$!; "
                             "i=0; while [ $i -lt 3000 ] && ! grep -q 'step' " +
                             log.string() +
                             " 2>/dev/null; do sleep 0.01; i=$((i+1)); done; "
                             "kill -INT $(pgrep -P $pid mpirun); wait $pid; echo exit=$?; cat " +
                             log.string() + ")");
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) != 0);
  CHECK(count_of(r.output, "MPI_ABORT") == 0);
  CHECK(names_in(dir) == before);  // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE("fewer shots than ranks: one shot on 3 ranks writes what one rank writes", "[integration]") {
  const fs::path one = fresh_dir("seisrtm_mpi_", "oneshot1");
  const fs::path many = fresh_dir("seisrtm_mpi_", "oneshot3");
  const std::string args = kArgs + " --set sources.shots=[[300,195,20]]";
  REQUIRE(seisrtm::test::run_cli("run " + args + " --quiet --output " + one.string()).code == 0);
  const Result r = run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + args + " --output " + many.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(names_in(many) == names_in(one));
  CHECK(read_dataset(many / "quickstart.h5", "traces") == read_dataset(one / "quickstart.h5", "traces"));
}

TEST_CASE("under mpirun, a bad config is said once, by rank 0, and every rank ends with 1", "[integration]") {
  const fs::path dir = fresh_dir("seisrtm_mpi_", "bad");
  const Result r = run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kArgs + " --set time.steps=-5 --output " +
                             dir.string());
  INFO(r.output);
  CHECK(r.code == 1);
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = r.output.find(what); at != std::string::npos; at = r.output.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("seisrtm: error:") == 1);
  CHECK(count("time.steps") >= 1);
  CHECK(count("MPI_ABORT") == 0);
  CHECK(fs::is_empty(dir));
}

TEST_CASE("under mpirun, info lists each rank's GPU and other commands than run are refused", "[integration]") {
  const Result info = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + " info");
  INFO(info.output);
  CHECK(info.code == 0);
  CHECK(info.output.find("MPI: 2 ranks") != std::string::npos);
  CHECK(info.output.find("rank 0/2") != std::string::npos);
  CHECK(info.output.find("rank 1/2") != std::string::npos);
  const Result v =
      run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + " validate " + SEISRTM_SOURCE_DIR + "/configs/quickstart.yaml");
  INFO(v.output);
  CHECK(v.code != 0);
  CHECK(v.output.find("under mpirun with 2 ranks seisrtm runs 'run' and 'migrate' (shot-parallel) and 'info'") !=
        std::string::npos);
  CHECK(v.output.find("MPI_ABORT") == std::string::npos);  // every rank refuses alike and ends on its own
}

// ---- solver.decomposition z: every shot over z slabs of the grid, one per rank ----------------

namespace {

// Under mpirun the ranks of a node share its cores (one OpenMP thread a rank on this 2-core
// machine); the one-rank runs they are compared with take both cores, so the thread count is not
// what makes them equal.
const std::string kSlabs = " --set solver.decomposition=z";

// `seisrtm run <args>` decomposed in z over `ranks` ranks into `out`: `mpi` goes before the binary
// (mpirun's -x options, ending in a space), `more` after the arguments.
Result run_slabs(int ranks, const std::string& args, const fs::path& out, const std::string& more = "",
                 const std::string& mpi = "") {
  // A test's SEISRTM_TEST_* variables (`mpi`) need the executable with seams.
  const char* binary = mpi.empty() ? SEISRTM_BINARY : SEISRTM_HOOKED_BINARY;
  return run_shell(kMpirun + " -np " + std::to_string(ranks) + " " + mpi + binary + " run " + args + kSlabs + more +
                   " --output " + out.string());
}

// Four hicks shots and a receiver line diagonal in z over 50 planes (order 8: halo 4 planes;
// 2 ranks own planes 0..24 | 25..49, 3 ranks 0..16 | 17..33 | 34..49). Hicks puts an off-grid
// point on 8 planes in z and an on-grid one on its plane alone, so:
//   z 250: on plane 25 alone, the first plane of rank 1 of 2 and in rank 0's halo;
//   z 340: on plane 34 alone, the first plane of rank 2 of 3;
//   z 172: planes 14..21, across the boundary at 17 of 3 ranks; plane 21 is in rank 1's halo of 2;
//   z 233: planes 20..27, across the boundary at 25 of 2 ranks: 21..24 in rank 1's halo, 25..27 in
//   rank 0's.
// The receivers step 1.6 planes in z from plane 2 to 48: several footprints cross each slab
// boundary (one rank records each, from its halo) and the traces come from every rank.
const std::string kSlabArgs =
    quickstart_args({{"sources.shots", "[[200,195,250],[250,195,340],[305,195,172],[400,195,233]]"},
                     {"sources.interpolation", "hicks"},
                     {"receivers.interpolation", "hicks"},
                     {"receivers.line.start", "[110,195,20]"},
                     {"receivers.line.end", "[480,195,480]"}});

// configs/tti.yaml (tilted axis, free surface) on 37 planes in z: 2 ranks own 0..18 | 19..36,
// 3 ranks 0..12 | 13..24 | 25..36. Trilinear shots at z 20 (plane 2: the slab with the free
// surface), 185 (planes 18, 19: across the boundary of 2 ranks) and 130 (on plane 13 alone, the
// first plane of rank 1 of 3); receivers from z 0 (the surface) to 360, 1.5 planes apart.
const std::string kTtiArgs =
    " --backend cpu --set grid.shape=[40,30,37] --set grid.spacing=10 --set time.steps=120 "
    "--set boundary.damping_width=6 --set output.snapshot_interval=40 "
    "--set sources.shots=[[200,150,20],[150,150,185],[250,150,130]] --set receivers.line.start=[50,150,0] "
    "--set receivers.line.end=[350,150,360] --set receivers.line.count=25 --set boundary.free_surface=true "
    "--set output.segy=rev2";

// `many` holds what `one` holds, bit for bit: the same file names, every file but the HDF5 one
// byte for byte (SEG-Y copies, pictures, .xmf), and in the HDF5 file the traces and every
// shot's snapshots. (The HDF5 files differ in their attributes: the config, the backend's name,
// which names the slab, and the timings.)
void check_same_output(const fs::path& one, const fs::path& many, const std::string& name, int shots) {
  REQUIRE(names_in(many) == names_in(one));
  for (const std::string& f : names_in(one)) {
    if (f == name + ".h5") continue;
    INFO(f);
    CHECK(bytes_of(many / f) == bytes_of(one / f));
  }
  const std::string h5 = name + ".h5";
  CHECK(read_dataset(many / h5, "traces") == read_dataset(one / h5, "traces"));
  for (int s = 0; s < shots; ++s) {
    const std::string snap = "snapshots/shot_000" + std::to_string(s);
    INFO(snap);
    CHECK(read_dataset(many / h5, snap) == read_dataset(one / h5, snap));
  }
}

}  // namespace

TEST_CASE("an acoustic run decomposed in z over 2, 3 and 4 ranks writes what one rank writes, bit for bit",
          "[integration]") {
  // Proves the halo exchange, the injection of sources on a slab's first plane and across slab
  // boundaries, the recording of receivers whose footprints cross a boundary, and rank 0's
  // gather of snapshots, traces and the wavefield picture.
  const fs::path one = fresh_dir("seisrtm_mpi_", "slab_one");
  const Result a = seisrtm::test::run_cli("run " + kSlabArgs + " --quiet --output " + one.string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  REQUIRE(fs::exists(one / "quickstart_shot_0003.sgy"));
  // 4 ranks: as many as the GPUs of a four-GPU node, checked here on the CPU backend.
  for (int ranks : {2, 3, 4}) {
    const fs::path many = fresh_dir("seisrtm_mpi_", "slab_" + std::to_string(ranks));
    const Result b = run_slabs(ranks, kSlabArgs, many, " --quiet");
    INFO(b.output);
    REQUIRE(b.code == 0);
    CHECK(b.output.find("every shot over " + std::to_string(ranks) + " z slabs") != std::string::npos);
    check_same_output(one, many, "quickstart", 4);
  }
}

TEST_CASE("tti with a free surface, and vti, decomposed in z over 2 and 3 ranks write what one rank writes",
          "[integration]") {
  // The p/q pair of the pseudo-acoustic equations: both fields' halos travel, the free surface
  // stays with the top slab, and the anisotropy volumes are sliced with the slabs (vti: without
  // theta and phi).
  const std::string tti = std::string(SEISRTM_SOURCE_DIR) + "/configs/tti.yaml" + kTtiArgs;
  const fs::path one = fresh_dir("seisrtm_mpi_", "slab_tti_one");
  const Result a = seisrtm::test::run_cli("run " + tti + " --quiet --output " + one.string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  for (int ranks : {2, 3}) {
    const fs::path many = fresh_dir("seisrtm_mpi_", "slab_tti_" + std::to_string(ranks));
    const Result b = run_slabs(ranks, tti, many, " --quiet");
    INFO(b.output);
    REQUIRE(b.code == 0);
    CHECK(b.output.find("every shot over " + std::to_string(ranks) + " z slabs") != std::string::npos);
    check_same_output(one, many, "tti", 3);
  }
  const std::string vti = std::string(SEISRTM_SOURCE_DIR) + "/configs/quickstart.yaml" + kTtiArgs +
                          " --set physics.equation=vti --set model.epsilon=0.2 --set model.delta=0.1";
  const fs::path vone = fresh_dir("seisrtm_mpi_", "slab_vti_one");
  const Result v = seisrtm::test::run_cli("run " + vti + " --quiet --output " + vone.string());
  INFO(v.output);
  REQUIRE(v.code == 0);
  const fs::path vmany = fresh_dir("seisrtm_mpi_", "slab_vti_3");
  const Result w = run_slabs(3, vti, vmany, " --quiet");
  INFO(w.output);
  REQUIRE(w.code == 0);
  check_same_output(vone, vmany, "quickstart", 3);
}

TEST_CASE("a failed rank of a decomposed run stops every rank, named once; the earlier output stays as it was",
          "[integration]") {
  // Rank 1 fails at the start of every shot: the verdict after the shot's start stops rank 0
  // too, which names rank 1 and shot 1 once, removes its temporaries and leaves the earlier
  // output set alone. Then every rank fails at shot 3, after rank 0 has written two shots into
  // its temporaries: the lowest rank is named, and again nothing is left behind.
  const auto [dir, first, before, h5] = earlier_run("slab_fail", kSlabArgs + " --quiet");
  const std::string sgy = bytes_of(dir / "quickstart_shot_0000.sgy");
  const Result r = run_slabs(2, kSlabArgs, dir, "", "-x SEISRTM_TEST_FAIL_RANK=1 ");
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(std::regex_search(r.output, std::regex(R"(seisrtm: error: rank 1 failed on shot 1/4: SEISRTM_TEST_FAIL)")));
  CHECK(count_of(r.output, "failed on shot") == 1);
  CHECK(count_of(r.output, "seisrtm: error:") == 1);
  CHECK(count_of(r.output, "MPI_ABORT") == 0);  // a verdict every rank agreed on, not an abort
  CHECK(names_in(dir) == before);               // no temporaries left, nothing replaced
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
  CHECK(bytes_of(dir / "quickstart_shot_0000.sgy") == sgy);
  const Result s = run_slabs(3, kSlabArgs, dir, "", "-x SEISRTM_TEST_FAIL_SHOT=2 ");
  INFO(s.output);
  CHECK(s.code != 0);
  CHECK(s.output.find("shot 2/4 done") != std::string::npos);  // two shots were written first
  CHECK(std::regex_search(s.output, std::regex(R"(seisrtm: error: rank 0 failed on shot 3/4: SEISRTM_TEST_FAIL)")));
  CHECK(count_of(s.output, "failed on shot") == 1);
  CHECK(names_in(dir) == before);
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
  CHECK(bytes_of(dir / "quickstart_shot_0000.sgy") == sgy);
}

TEST_CASE("a decomposition with slabs thinner than the halo is refused once, naming grid.shape; the limit runs",
          "[integration]") {
  // 9 planes in z, order 8 (halo 4): 3 ranks would own 3 planes each, fewer than they send.
  const std::string args = quickstart_args({{"grid.shape", "[60,40,9]"},
                                            {"boundary.damping_width", "2"},
                                            {"sources.shots", "[[200,195,45]]"},
                                            {"receivers.line.start", "[110,195,0]"},
                                            {"receivers.line.end", "[480,195,80]"}});
  const fs::path dir = fresh_dir("seisrtm_mpi_", "slab_thin");
  const Result r = run_slabs(3, args, dir);
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(count_of(r.output, "seisrtm: error:") == 1);
  CHECK(r.output.find("config key 'grid.shape': solver.decomposition z splits its 9 planes in z over 3 ranks, 3 a "
                      "rank, but every slab must own at least 4") != std::string::npos);
  CHECK(r.output.find("valid: at most 2 ranks, or more planes in z") != std::string::npos);
  CHECK(count_of(r.output, "MPI_ABORT") == 0);
  CHECK(fs::is_empty(dir));
  // The limit itself is valid: 2 ranks own 5 and 4 planes, rank 1 sends all of its own planes as
  // its halo, and the result is the one-rank result.
  const fs::path one = fresh_dir("seisrtm_mpi_", "slab_thin_one");
  const Result a = seisrtm::test::run_cli("run " + args + " --quiet --output " + one.string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  const Result b = run_slabs(2, args, dir, " --quiet");
  INFO(b.output);
  REQUIRE(b.code == 0);
  check_same_output(one, dir, "quickstart", 1);
}

TEST_CASE("SIGINT to one rank other than 0 stops a decomposed run with 130; no temporaries, the earlier output stays",
          "[integration]") {
  // 20000 steps a shot (several seconds on these ranks). Rank 1 alone gets SIGINT once rank 0 has
  // printed its first progress line: the verdict after the chunk stops every rank, and rank 0,
  // which got no signal itself, ends the job as a one-process run does: it removes its
  // temporaries, says "interrupted by SIGINT" once and exits with 130, which is what mpirun
  // returns only if every other rank exits with it (they return rank 0's code: QuietExit).
  // (SIGINT to mpirun itself, which passes SIGTERM on to every rank, is the shot-parallel test's.)
  const auto [dir, first, before, h5] = earlier_run("slab_sigint", kSlabArgs + " --quiet");
  const fs::path log = fresh_dir("seisrtm_mpi_", "slab_sigint_log") / "run.log";
  // `pid` is timeout's; rank 1 is found among its descendants (mpirun's children) by its rank.
  const Result r = run_shell(
      "(" + kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kSlabArgs + kSlabs + " --set time.steps=20000 --output " +
      dir.string() + " >" + log.string() +
      " 2>&1 & pid=$!; "
      "desc() { for c in $(pgrep -P $1); do echo $c; desc $c; done; }; "
      "i=0; while [ $i -lt 600 ] && ! grep -q 'shot 1/4 step' " +
      log.string() +
      "; do sleep 0.1; i=$((i+1)); done; "
      "for c in $(desc $pid); do grep -qz '^OMPI_COMM_WORLD_RANK=1$' /proc/$c/environ 2>/dev/null && kill -INT $c; "
      "done; wait $pid; echo exit=$?; cat " +
      log.string() + ")");
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) == 130);
  CHECK(count_of(r.output, "seisrtm: interrupted by SIGINT during run of") == 1);
  CHECK(r.output.find("at shot 1/4") != std::string::npos);  // stopped in the first shot, not at the end
  CHECK(names_in(dir) == before);                            // no .partial left
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE("a migration decomposed in z over 2, 3 and 4 ranks images what one process images, bit for bit",
          "[integration]") {
  // The migration example on a coarse grid, 2 shots, acoustic and tti: each slab keeps the
  // boundary store of its own planes, injects the data entries on its own planes and images its
  // own planes of the interior; rank 0 adds the gathered shot images in shot order, the sum one
  // process makes.
  const fs::path d = fresh_dir("seisrtm_mpi_", "slab_rtm");
  const std::string coarse =
      " --backend cpu --quiet --set grid.shape=[50,25,39] --set grid.spacing=28 "
      "--set boundary.damping_width=6";
  const std::string shots = " --set 'sources.shots=[[400,350,10],[900,350,10]]'";
  for (const std::string model : {"true_model", "tti_true_model"}) {
    INFO(model);
    const std::string data = (d / model).string();
    const Result run = seisrtm::test::run_cli("run " + kRtm + model + ".yaml" + coarse + shots +
                                              " --set time.steps=250 --output " + data);
    INFO(run.output);
    REQUIRE(run.code == 0);
    const std::string cfg = model == "true_model" ? "migrate.yaml" : "tti_migrate.yaml";
    const std::string name = model == "true_model" ? "migrate" : "tti_migrate";
    const std::string migrate =
        " migrate " + kRtm + cfg + coarse + " --set migration.data=" + data + "/" + model + ".h5";
    const Result one = seisrtm::test::run_cli(migrate + " --output " + (d / (name + "_one")).string());
    INFO(one.output);
    REQUIRE(one.code == 0);
    for (int ranks : {2, 3, 4}) {
      const fs::path many = d / (name + "_np" + std::to_string(ranks));
      const Result r = run_shell(kMpirun + " -np " + std::to_string(ranks) + " " + SEISRTM_BINARY + migrate +
                                 " --set solver.decomposition=z --output " + many.string());
      INFO(r.output);
      REQUIRE(r.code == 0);
      CHECK(names_in(many) == names_in(d / (name + "_one")));
      for (const char* v : {"image/correlation", "image/illumination", "image/normalized", "image/laplacian"}) {
        INFO(v);
        const std::vector<float> a = read_dataset(d / (name + "_one") / (name + ".h5"), v);
        CHECK(read_dataset(many / (name + ".h5"), v) == a);
        CHECK(*std::max_element(a.begin(), a.end()) > 0);  // an image, not zeros
      }
    }
    // Checkpoints every 17 levels on 3 ranks: each slab replays its segments from its own
    // checkpoints, exchanging halos as the forward pass does; the same image as the store.
    const fs::path ck = d / (name + "_checkpoint");
    const Result r = run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + migrate +
                               " --set solver.decomposition=z --set migration.reconstruction=checkpoint"
                               " --set migration.checkpoint_interval=17 --output " +
                               ck.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    for (const char* v : {"image/correlation", "image/illumination"}) {
      INFO(v);
      CHECK(read_dataset(ck / (name + ".h5"), v) == read_dataset(d / (name + "_one") / (name + ".h5"), v));
    }
    // An fp16 store: every slab scales by the shot's whole source field (the shots lie in the
    // top slab alone), so 3 ranks round the shells one process rounds, bit for bit.
    const std::string fp16 = " --set migration.store_precision=fp16 --output ";
    const Result f1 = seisrtm::test::run_cli(migrate + fp16 + (d / (name + "_fp16_one")).string());
    INFO(f1.output);
    REQUIRE(f1.code == 0);
    const Result f3 = run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + migrate + " --set solver.decomposition=z" +
                                fp16 + (d / (name + "_fp16_np3")).string());
    INFO(f3.output);
    REQUIRE(f3.code == 0);
    for (const char* v : {"image/correlation", "image/illumination"}) {
      INFO(v);
      const std::vector<float> a = read_dataset(d / (name + "_fp16_one") / (name + ".h5"), v);
      CHECK(read_dataset(d / (name + "_fp16_np3") / (name + ".h5"), v) == a);
      if (std::string(v) == "image/correlation")  // the rounding shows against the fp32 store
        CHECK(a != read_dataset(d / (name + "_one") / (name + ".h5"), v));
    }
  }
}

TEST_CASE("a decomposed run too large for the node's memory is refused before building, counting its ranks",
          "[integration]") {
  // 4000^3 cells: 238 GiB of vp alone, which every rank would build before taking its slab.
  const fs::path dir = fresh_dir("seisrtm_mpi_", "slab_memory");
  const Result r = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + " run " + std::string(SEISRTM_SOURCE_DIR) +
                             "/configs/quickstart.yaml --backend cpu --set grid.shape=[4000,4000,4000] "
                             "--set solver.decomposition=z --output " +
                             dir.string());
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(std::regex_search(r.output,
                          std::regex(R"(seisrtm: error: the run needs [0-9.]+ GiB of host memory \(2 ranks )"
                                     R"(on this node, each: cpu backend: model 238\.419 GiB, its slab's copy)")));
  CHECK(r.output.find("MPI_ABORT") == std::string::npos);  // agreed by both ranks, said once
  CHECK(fs::is_empty(dir));
}

TEST_CASE(
    "a survey with a spread a shot (the marine streamer example) runs and migrates as a shot farm and in z slabs, bit "
    "for bit",
    "[integration]") {
  // configs/marine, shortened to 300 steps: each worker's traces carry their shot's receiver
  // count; rank 0 writes them and stacks the images in shot order, as one process does.
  const fs::path d = fresh_dir("seisrtm_mpi_", "spreads");
  const std::string dir = std::string(SEISRTM_SOURCE_DIR) + "/configs/marine/";
  const std::string args = " --backend cpu --quiet --set time.steps=300 --output ";
  const Result one = seisrtm::test::run_cli("run " + dir + "streamer.yaml" + args + (d / "one").string());
  INFO(one.output);
  REQUIRE(one.code == 0);
  const Result three =
      run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + dir + "streamer.yaml" + args + (d / "three").string());
  INFO(three.output);
  REQUIRE(three.code == 0);
  CHECK(read_dataset((d / "three" / "streamer.h5").string(), "traces") ==
        read_dataset((d / "one" / "streamer.h5").string(), "traces"));
  CHECK(read_dataset((d / "three" / "streamer.h5").string(), "receivers/positions") ==
        read_dataset((d / "one" / "streamer.h5").string(), "receivers/positions"));
  const std::string migrate = " migrate " + dir + "migrate.yaml --backend cpu --quiet --set migration.data=" +
                              (d / "one" / "streamer.h5").string() + " --output ";
  const Result m1 = seisrtm::test::run_cli(migrate + (d / "m_one").string());
  INFO(m1.output);
  REQUIRE(m1.code == 0);
  // A migration's images against one process's, dataset by dataset.
  auto same_as_one = [&](const std::string& out) {
    for (const char* v : {"image/correlation", "image/illumination"}) {
      INFO(v);
      CHECK(read_dataset((d / out / "migrate.h5").string(), v) ==
            read_dataset((d / "m_one" / "migrate.h5").string(), v));
    }
  };
  const Result m3 = run_shell(kMpirun + " -np 3 " + SEISRTM_BINARY + migrate + (d / "m_three").string());
  INFO(m3.output);
  REQUIRE(m3.code == 0);
  same_as_one("m_three");
  // z slabs on 2 ranks: each shot's receivers recorded by the slab that holds them, gathered by
  // rank 0 in receiver order; the data injected by the slabs that own their planes.
  const Result s2 = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + " run " + dir + "streamer.yaml" + args +
                              (d / "slabs").string() + " --set solver.decomposition=z");
  INFO(s2.output);
  REQUIRE(s2.code == 0);
  CHECK(read_dataset((d / "slabs" / "streamer.h5").string(), "traces") ==
        read_dataset((d / "one" / "streamer.h5").string(), "traces"));
  const Result ms2 = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + migrate + (d / "m_slabs").string() +
                               " --set solver.decomposition=z");
  INFO(ms2.output);
  REQUIRE(ms2.code == 0);
  same_as_one("m_slabs");
  // Spreads of their own across the slabs (receivers from 20 to 290 m deep, 3 and 4 of them):
  // each shot's receivers owned by the slab that holds them, gathered in receiver order.
  const std::string per_shot = seisrtm::test::two_layers(
      {{"sources", "{wavelet: {peak_frequency: 15}, shots: [[120, 145, 20], [220, 145, 20]]}"},
       {"receivers",
        "{per_shot: [[[100, 145, 20], [150, 145, 150], [200, 145, 280]], "
        "[[180, 145, 30], [200, 145, 100], [240, 145, 200], [260, 145, 290]]]}"}});
  const std::string ps_cfg = seisrtm::test::write_text(d / "per_shot.yaml", per_shot);
  const std::string ps_args = " run " + ps_cfg + " --backend cpu --quiet --output ";
  const Result p1 = seisrtm::test::run_cli(ps_args + (d / "ps_one").string());
  INFO(p1.output);
  REQUIRE(p1.code == 0);
  const Result p2 = run_shell(kMpirun + " -np 2 " + SEISRTM_BINARY + ps_args + (d / "ps_slabs").string() +
                              " --set solver.decomposition=z");
  INFO(p2.output);
  REQUIRE(p2.code == 0);
  CHECK(read_dataset((d / "ps_slabs" / "data.h5").string(), "traces") ==
        read_dataset((d / "ps_one" / "data.h5").string(), "traces"));
}

namespace {

// Waits until no process has `out` among its arguments (a rank of a job writing there), up to
// 120 s: mpirun can end before its ranks have (the test saw a rank of a job stopped by SIGTERM
// still holding the run's journal lock when the next run started). A zombie's arguments are
// empty: an ended rank not yet reaped does not count.
void wait_for_ranks_writing(const fs::path& out) {
  const std::string want = out.string();
  auto running = [&] {
    std::error_code ec;
    const std::string self = std::to_string(::getpid());
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const std::string pid = e.path().filename().string();  // (not self, thread-self: this process)
      if (pid == self || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream f(e.path() / "cmdline", std::ios::binary);
      std::string arg;
      while (std::getline(f, arg, '\0'))
        if (arg == want) return true;
    }
    return false;
  };
  const auto t0 = std::chrono::steady_clock::now();
  while (running() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(!running());
}

// `command` (writing to --output) killed with SIGKILL at random moments, from 0.15 to 1 times
// `seconds` (the whole run's), and run again until it ends, three times (into <d>/killed0..2);
// each ending checked by `same_as_whole`. At least 3 kills and 1 run resumed from a journal: the
// first attempt of each run, which starts from nothing and takes about `seconds`, is killed
// before 0.45 of them (a kill drawn late could land after the run's end on a lighter-loaded
// machine than the one `seconds` was measured on: under ctest -j2 the whole run can be timed
// beside another test and the killed runs run alone; at 0.6 a first attempt outlived its run).
void kill_until_done(const std::string& command, const fs::path& d, double seconds,
                     const std::function<void(const fs::path&)>& same_as_whole) {
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<double> when(0.15, 1.0), first(0.15, 0.45);  // times the whole run's seconds
  long long kills = 0, resumed = 0;
  for (int run = 0; run < 3; ++run) {
    const fs::path out = d / ("killed" + std::to_string(run));
    Result r;
    for (int attempt = 0; attempt < 40; ++attempt) {
      const double t = (attempt == 0 ? first(gen) : when(gen)) * seconds;
      r = run_shell("timeout -s KILL " + std::to_string(t) + " " + command + " --output " + out.string());
      INFO("run " << run << ", attempt " << attempt << ", killed after " << t << " s: " << r.output);
      resumed += r.output.find("seisrtm: resuming:") != std::string::npos;
      if (r.code == 0) break;
      REQUIRE(r.code == 137);  // killed, nothing else
      ++kills;
    }
    INFO(r.output);
    REQUIRE(r.code == 0);
    same_as_whole(out);
  }
  INFO(kills << " kills, " << resumed << " runs resumed from a journal");
  CHECK(kills >= 3);
  CHECK(resumed >= 1);
}

}  // namespace

TEST_CASE("a migration killed at random moments and run again ends bit for bit as one never stopped", "[integration]") {
  // The coarse migration example (5 shots, with image gathers) killed with SIGKILL at random moments, each time run
  // again with the same command until it ends: the journal (<name>.resume) holds the shots
  // stacked so far, whole or not at all, and the exact stack makes the rest add up to the bits of
  // a run never stopped. Three such runs; then one stopped by SIGTERM under mpirun (a shot farm of
  // 3) and finished in z slabs on 2 ranks; and a run again with another setting, refused by name.
  const fs::path d = fresh_dir("seisrtm_mpi_", "resume");
  // A finer grid than the data's (about 5 s on two cores), so that kills land inside shots.
  const std::string migrate = std::string(SEISRTM_BINARY) + " migrate " + kRtm +
                              "migrate.yaml --backend cpu --set grid.shape=[100,50,80] --set grid.spacing=14 "
                              "--set boundary.damping_width=8 --set migration.gathers.offsets=5 --set "
                              "migration.gathers.x_every=7 --set migration.data=" +
                              coarse_data().string();
  const auto t0 = std::chrono::steady_clock::now();
  const Result whole = run_shell(migrate + " --output " + (d / "whole").string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(whole.output);
  REQUIRE(whole.code == 0);
  const char* names[] = {"image/correlation", "image/illumination", "image/normalized",
                         "image/laplacian",   "gathers/offset",     "gathers/angle"};
  auto same_as_whole = [&](const fs::path& dir) {
    for (const char* v : names) {
      INFO(v);
      CHECK(read_dataset(dir / "migrate.h5", v) == read_dataset(d / "whole" / "migrate.h5", v));
    }
    CHECK(!fs::exists(dir / "migrate.resume"));  // removed with the outputs in place
  };
  kill_until_done(migrate, d, seconds, same_as_whole);
  // SIGTERM to a shot farm of 3 (mpirun passes it on), once a shot is in the journal; then the
  // same migration in z slabs on 2 ranks: the journal is the stack's, not the ranks'.
  const fs::path farm = d / "farm";
  // (SIGTERM once the journal holds a shot; mpirun passes it on to every rank.)
  fs::create_directories(farm);
  const std::string journal = (farm / "migrate.resume").string();
  const Result a = run_shell(
      "(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 mpirun "
      "--oversubscribe --bind-to none -np 3 " +
      migrate + " --output " + farm.string() + " & p=$!; for i in $(seq 1 3000); do [ -e " + journal +
      " ] && break; kill -0 $p 2>/dev/null || break; sleep 0.02; done; kill -TERM " + "$p; wait $p)");
  INFO(a.output);
  REQUIRE(a.code != 0);
  wait_for_ranks_writing(farm);
  REQUIRE(fs::exists(farm / "migrate.resume"));
  // Another setting: refused, naming it; the journal stays.
  const Result other = run_shell(migrate + " --set model.vp.smoothing=60 --output " + farm.string());
  INFO(other.output);
  CHECK(other.code != 0);
  CHECK_THAT(other.output, Catch::Matchers::Contains("other settings or data") &&
                               Catch::Matchers::Contains("model.vp.smoothing: 60"));
  CHECK(fs::exists(farm / "migrate.resume"));
  const Result b = run_shell(kMpirun + " -np 2 " + migrate + " --set solver.decomposition=z --output " + farm.string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(b.output.find("seisrtm: resuming:") != std::string::npos);
  same_as_whole(farm);
}

TEST_CASE("a run killed at random moments and run again ends bit for bit as one never stopped", "[integration]") {
  // The marine streamer example (6 shots, a spread a shot) with snapshots, SEG-Y copies and
  // pictures, killed with SIGKILL at random moments, each time run again with the same command
  // until it ends: the journal (<name>.resume) holds each finished shot whole or not at all, and
  // the journal's shots go into the outputs as computed. Three such runs, every output the bits
  // of a run never stopped; a shot's file damaged on the disk is computed again; then one stopped
  // by SIGTERM under mpirun (a shot farm of 3) and finished in z slabs on 2 ranks; and a run again
  // with another setting, refused by name.
  const fs::path d = fresh_dir("seisrtm_mpi_", "run_resume");
  const std::string run = std::string(SEISRTM_BINARY) + " run " + SEISRTM_SOURCE_DIR +
                          "/configs/marine/streamer.yaml --backend cpu --set output.snapshot_interval=250";
  const auto t0 = std::chrono::steady_clock::now();
  const Result whole = run_shell(run + " --output " + (d / "whole").string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(whole.output);
  REQUIRE(whole.code == 0);
  std::vector<std::string> datasets = {"traces",         "receivers/positions", "receivers/count", "sources/positions",
                                       "sources/record", "sources/wavelet",     "model/vp",        "snapshots/time"};
  for (int s = 0; s < 6; ++s) datasets.push_back("snapshots/shot_000" + std::to_string(s));
  auto same_as_whole = [&](const fs::path& dir) {
    long long files = 0;
    for (const auto& e : fs::directory_iterator(d / "whole")) {
      const std::string name = e.path().filename().string();
      INFO(name);
      ++files;
      if (name != "streamer.h5") {
        CHECK(bytes_of(dir / name) == bytes_of(e.path()));  // SEG-Y, pictures, XDMF
        continue;
      }
      for (const std::string& v : datasets) {
        INFO(v);
        const std::vector<float> a = read_dataset((dir / name).string(), v), b = read_dataset(e.path().string(), v);
        CHECK(a.size() == b.size());
        CHECK(std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()) * sizeof(float)) == 0);  // (NaN too)
      }
    }
    CHECK(files == 16);
    // Nothing else: no journal (removed with the outputs in place), no temporaries of the killed runs.
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == files);
  };
  kill_until_done(run, d, seconds, same_as_whole);

  // SIGTERM to a shot farm of 3 (mpirun passes it on) once the journal holds two shots.
  const fs::path farm = d / "farm";
  fs::create_directories(farm);
  const fs::path journal = farm / "streamer.resume";
  // What a run killed while removing its journal leaves (renamed away whole first): removed.
  fs::create_directories(farm / "streamer.resume.removed.4242");
  std::ofstream(farm / "streamer.resume.removed.4242" / "shot_0000") << "x";
  const Result a = run_shell(
      "(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 mpirun "
      "--oversubscribe --bind-to none -np 3 " +
      run + " --output " + farm.string() + " & p=$!; for i in $(seq 1 3000); do [ -e " +
      (journal / "shot_0001").string() + " ] && break; kill -0 $p 2>/dev/null || break; " +
      "sleep 0.02; done; kill -TERM $p; wait $p)");
  INFO(a.output);
  REQUIRE(a.code != 0);
  wait_for_ranks_writing(farm);
  REQUIRE(fs::exists(journal / "shot_0001"));
  // A shot's file damaged on the disk (one byte of its traces flipped): dropped and computed again.
  {
    std::fstream f(journal / "shot_0001", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(journal / "shot_0001") / 2));
    f.put('\x5a');
  }
  // Another setting: refused, naming it; the journal stays.
  const Result other = run_shell(run + " --set boundary.damping_width=12 --output " + farm.string());
  INFO(other.output);
  CHECK(other.code != 0);
  CHECK_THAT(other.output, Catch::Matchers::Contains("other settings or data") &&
                               Catch::Matchers::Contains("boundary.damping_width: 12"));
  CHECK(fs::exists(journal / "shot_0001"));
  const Result b = run_shell(kMpirun + " -np 2 " + run + " --set solver.decomposition=z --output " + farm.string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(b.output.find("seisrtm: resuming:") != std::string::npos);
  CHECK_THAT(b.output, Catch::Matchers::Contains("shot_0001' of the resume journal does not check (damaged)"));
  same_as_whole(farm);
}
