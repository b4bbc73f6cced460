// [integration] Shot-parallel runs under mpirun (solver/cluster.hpp) on the CPU backend, ranks
// oversubscribed on this machine: the output equals the single-rank run's, a failed rank ends the
// job with its rank and shot named and leaves the earlier output as it was. Needs Open MPI's
// mpirun (.ci/install-deps installs it); without it these tests fail, they do not skip.
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli_util.hpp"

namespace fs = std::filesystem;
using seisrtm::test::fresh_dir;
using seisrtm::test::read_dataset;
using seisrtm::test::Result;

namespace {

// Root may run mpirun here only with both variables set (CI runs as root). A job that hangs is
// ended after 300 s (timeout), so a deadlock fails the test instead of stalling the tier.
const std::string kMpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun --oversubscribe --bind-to none";

Result run_shell(const std::string& cmd) {
  Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) r.output += buf;
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Five shots on a small grid, snapshots and SEG-Y copies on: every kind of result travels.
const std::string kArgs = std::string(SEISRTM_SOURCE_DIR) +
                          "/configs/quickstart.yaml --backend cpu --set grid.shape=[60,40,50] "
                          "--set time.steps=200 --set boundary.damping_width=10 --set output.snapshot_interval=50 "
                          "--set sources.shots=[[200,195,20],[300,195,20],[400,195,20],[250,195,30],[350,195,30]] "
                          "--set receivers.line.start=[110,195,20] --set receivers.line.end=[480,195,20] "
                          "--set receivers.line.count=30 --set output.segy=rev2";

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> n;
  for (const auto& e : fs::directory_iterator(dir)) n.push_back(e.path().filename().string());
  std::sort(n.begin(), n.end());
  return n;
}

}  // namespace

TEST_CASE("a shot-parallel run on 2 and 3 ranks writes what one rank writes, bit for bit", "[integration]") {
  const fs::path one = fresh_dir("seisrtm_mpi_", "one");
  const Result a = seisrtm::test::run_cli("run " + kArgs + " --quiet --output " + one.string());
  INFO(a.output);
  REQUIRE(a.code == 0);
  const std::vector<float> traces = read_dataset(one / "quickstart.h5", "traces");
  for (int ranks : {2, 3}) {
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

TEST_CASE("a shot-parallel migration on 2 and 3 ranks images what one rank images, bit for bit", "[integration]") {
  // The five shots of the migration example on a coarse grid: the CPU migrator images each shot
  // into zeroed volumes and the stack adds them in shot order, on one rank or on rank 0 of many.
  const fs::path d = fresh_dir("seisrtm_mpi_", "rtm");
  const std::string rtm = std::string(SEISRTM_SOURCE_DIR) + "/configs/rtm/";
  const std::string coarse =
      " --backend cpu --quiet --set grid.shape=[70,35,55] --set grid.spacing=20 --set boundary.damping_width=8";
  const Result data = seisrtm::test::run_cli("run " + rtm + "true_model.yaml" + coarse +
                                             " --set time.steps=300 --output " + (d / "data").string());
  INFO(data.output);
  REQUIRE(data.code == 0);
  const std::string migrate =
      " migrate " + rtm + "migrate.yaml" + coarse + " --set migration.data=" + (d / "data/true_model.h5").string();
  const Result one = seisrtm::test::run_cli(migrate + " --output " + (d / "one").string());
  INFO(one.output);
  REQUIRE(one.code == 0);
  for (int ranks : {2, 3}) {
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
  // Rank 0 handing out one shot at a time beyond those stacked (the window the stack keeps rank 0's
  // buffer in, at its smallest): the same image, and no rank waits forever.
  {
    const fs::path w = d / "window1";
    const Result r = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_SHOT_WINDOW=1 " + SEISRTM_BINARY + migrate +
                               " --output " + w.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    for (const char* v : {"image/correlation", "image/illumination"})
      CHECK(read_dataset(w / "migrate.h5", v) == read_dataset(d / "one" / "migrate.h5", v));
  }
  // A failed shot ends the migration too, and the image of the earlier run stays.
  const std::string image = bytes_of(d / "np3" / "migrate.h5");
  const Result f = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_SHOT=3 " + SEISRTM_BINARY + migrate + " --output " +
                             (d / "np3").string());
  INFO(f.output);
  CHECK(f.code != 0);
  CHECK(std::regex_search(f.output, std::regex(R"(seisrtm: error: rank [0-2] failed on shot 4/5: SEISRTM_TEST_FAIL)")));
  const Result w = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_RANK=2 " + SEISRTM_BINARY + migrate + " --output " +
                             (d / "np3").string());
  INFO(w.output);
  CHECK(w.code != 0);
  CHECK(std::regex_search(w.output, std::regex(R"(seisrtm: error: rank 2 failed on shot [1-5]/5: SEISRTM_TEST_FAIL)")));
  CHECK(names_in(d / "np3") == names_in(d / "one"));
  CHECK(bytes_of(d / "np3" / "migrate.h5") == image);
}

TEST_CASE("a failed rank ends the job naming its rank and shot; the earlier output stays as it was", "[integration]") {
  const fs::path dir = fresh_dir("seisrtm_mpi_", "fail");
  const Result first = seisrtm::test::run_cli("run " + kArgs + " --quiet --output " + dir.string());
  REQUIRE(first.code == 0);
  const std::vector<std::string> before = names_in(dir);
  const std::string h5 = bytes_of(dir / "quickstart.h5");
  // Shot 3 of 5 (index 2) fails on whichever rank takes it.
  const Result r = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_SHOT=2 " + SEISRTM_BINARY + " run " + kArgs +
                             " --output " + dir.string());
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(std::regex_search(r.output, std::regex(R"(seisrtm: error: rank [0-2] failed on shot 3/5: SEISRTM_TEST_FAIL)")));
  CHECK(names_in(dir) == before);  // no temporaries left, nothing replaced
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
  // The same with the failure on rank 1 for certain (a worker's report, not rank 0's own).
  const Result w = run_shell(kMpirun + " -np 3 -x SEISRTM_TEST_FAIL_RANK=1 " + SEISRTM_BINARY + " run " + kArgs +
                             " --output " + dir.string());
  INFO(w.output);
  CHECK(w.code != 0);
  CHECK(std::regex_search(w.output, std::regex(R"(seisrtm: error: rank 1 failed on shot [1-5]/5: SEISRTM_TEST_FAIL)")));
  CHECK(names_in(dir) == before);
  CHECK(bytes_of(dir / "quickstart.h5") == h5);
}

TEST_CASE("SIGINT to mpirun in the middle of a shot-parallel run leaves no temporaries and the earlier output",
          "[integration]") {
  const fs::path dir = fresh_dir("seisrtm_mpi_", "sigint");
  const Result first = seisrtm::test::run_cli("run " + kArgs + " --quiet --output " + dir.string());
  REQUIRE(first.code == 0);
  const std::vector<std::string> before = names_in(dir);
  const std::string h5 = bytes_of(dir / "quickstart.h5");
  // 2000 steps a shot: several seconds a shot on these oversubscribed ranks; SIGINT after 3 s.
  const Result r =
      run_shell("(" + kMpirun + " -np 3 " + SEISRTM_BINARY + " run " + kArgs + " --set time.steps=2000 --output " +
                dir.string() + " & pid=$!; sleep 3; kill -INT $pid; wait $pid; echo exit=$?)");
  INFO(r.output);
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, std::regex(R"(exit=([0-9]+))")));
  CHECK(std::stoi(m[1]) != 0);
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
