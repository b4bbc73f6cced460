// [unit] The config schema: defaults, overrides, and one clear message for each kind of bad input.
#include "base/error.hpp"
#include "io/config.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;

namespace {
const char* kBase = R"(
grid: {shape: [40, 30, 20], spacing: 10}
time: {steps: 10}
sources: {shots: [[200, 150, 100]]}
receivers: {line: {start: [50, 150, 50], end: [350, 150, 50], count: 4}}
)";
}

TEST_CASE("defaults fill every key and survive a round trip through to_yaml", "[unit]") {
  const Config c = parse_config(kBase);
  CHECK(c.physics.space_order == 8);
  CHECK(c.boundary.damping_width == 30);
  CHECK(!c.time.dt.has_value());
  CHECK(c.grid.spacing[2] == 10.0);
  const Config again = parse_config(to_yaml(c));
  CHECK(to_yaml(again) == to_yaml(c));
  CHECK_THAT(to_yaml(c), Contains("space_order: 8") && Contains("dt: auto"));
}

TEST_CASE("--set overrides reach nested keys and parse their values as YAML", "[unit]") {
  const Config c =
      parse_config(kBase, {"time.steps=77", "grid.shape=[41, 31, 21]", "model.vp.value=1800", "time.dt=0.001"});
  CHECK(c.time.steps == 77);
  CHECK(c.grid.shape[0] == 41);
  CHECK(c.model.vp == 1800);
  CHECK(*c.time.dt == 0.001);
  CHECK_THROWS_WITH(parse_config(kBase, {"time.steps"}), Contains("key.path=value"));
}

TEST_CASE("each bad input names the key and what is valid", "[unit]") {
  CHECK_THROWS_WITH(parse_config("grid: [1, 2"), Contains("malformed YAML"));
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.shpe=[1,2,3]"}),
                    Contains("'grid.shpe' is unknown") && Contains("shape, spacing"));
  CHECK_THROWS_WITH(parse_config(kBase, {"time.steps=many"}), Contains("'time.steps' must be an integer"));
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.shape=[40, 0, 20]"}), Contains("'grid.shape[1]' must be a positive"));
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.spacing=-5"}), Contains("'grid.spacing'"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.space_order=6"}), Contains("2, 4, 8 or 16"));
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.backend=gpu"}), Contains("auto | cpu | cuda"));
  CHECK_THROWS_WITH(parse_config(kBase, {"boundary.free_surface=maybe"}), Contains("true or false"));
  CHECK_THROWS_WITH(parse_config(kBase, {"sources.shots=[[1, 2]]"}), Contains("sources.shots[0]"));
  CHECK_THROWS_WITH(parse_config("time: {steps: 3}"), Contains("'grid' is required"));
}

TEST_CASE("problem checks: stability, geometry, sampling", "[unit]") {
  SECTION("an unstable dt gives the largest stable dt") {
    const Config c = parse_config(kBase, {"time.dt=0.01", "boundary.damping_width=5"});
    CHECK_THROWS_WITH(build_problem(c), Contains("'time.dt'") && Contains("largest stable dt") && Contains("0.00226"));
  }
  SECTION("a source outside the grid names the shot and the valid ranges") {
    const Config c = parse_config(kBase, {"sources.shots=[[200, 150, 500]]", "boundary.damping_width=5"});
    CHECK_THROWS_WITH(build_problem(c), Contains("sources.shots[0]") && Contains("z in [0, 190]"));
  }
  SECTION("a receiver outside the grid") {
    const Config c = parse_config(kBase, {"receivers.line.end=[450, 150, 50]", "boundary.damping_width=5"});
    CHECK_THROWS_WITH(build_problem(c), Contains("receivers.line") && Contains("outside the grid"));
  }
  SECTION("too few points per wavelength is a warning with the numbers") {
    const Config c = parse_config(kBase, {"sources.wavelet.peak_frequency=60", "boundary.damping_width=5"});
    const Problem p = build_problem(c);
    REQUIRE(!p.warnings.empty());
    CHECK_THAT(p.warnings[0], Contains("points per wavelength") && Contains("150 Hz"));
  }
  SECTION("a grid too small for the damping zone") {
    const Config c = parse_config(kBase);
    CHECK_THROWS_WITH(build_problem(c), Contains("grid.shape") && Contains("damping_width"));
  }
}

TEST_CASE("integers are decimal 64-bit values checked against each key's range", "[unit]") {
  // yaml-cpp read 010 as octal 8; values beyond int were cast (4294967304 -> 8, 4294967297 -> 1).
  CHECK_THROWS_WITH(parse_config(kBase, {"time.steps=010"}),
                    Contains("'time.steps' = 010 has a leading zero; write 10"));
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.shape=[40, 030, 20]"}),
                    Contains("'grid.shape[1]' = 030 has a leading zero"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.space_order=4294967304"}),
                    Contains("'physics.space_order' must be 2, 4, 8 or 16, got 4294967304"));
  CHECK_THROWS_WITH(
      parse_config(kBase, {"boundary.damping_width=4294967297"}),
      Contains("'boundary.damping_width' must be an integer in [0, 2147483647]") && Contains("got 4294967297"));
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.threads=1000000000"}),
                    Contains("'solver.threads' must be an integer in [0, ") && Contains("got 1000000000"));
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.z_block=4294967296"}),
                    Contains("'solver.z_block' must be an integer in"));
  CHECK_THROWS_WITH(parse_config(kBase, {"time.steps=99999999999999999999"}),
                    Contains("'time.steps' = 99999999999999999999 is out of range"));
  CHECK_THROWS_WITH(parse_config(kBase, {"receivers.line.count=1e3"}),
                    Contains("'receivers.line.count' must be an integer"));
  CHECK_THROWS_WITH(parse_config(kBase, {"receivers.line.count=0x10"}),
                    Contains("'receivers.line.count' must be an integer"));
  // 2^32 cells a side: the product wrapped to 0 in 64 bits.
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.shape=[4294967296, 4294967296, 4294967296]"}),
                    Contains("'grid.shape' = [4294967296, 4294967296, 4294967296] has too many cells"));
  // What stays valid: 0, signs, the largest thread count of the range's floor.
  CHECK(parse_config(kBase, {"solver.threads=0"}).solver.threads == 0);
  CHECK(parse_config(kBase, {"solver.threads=256"}).solver.threads == 256);
  CHECK(parse_config(kBase, {"time.steps=+12"}).time.steps == 12);
  CHECK(parse_config(kBase, {"time.steps=10"}).time.steps == 10);
}

TEST_CASE("host memory: the estimate counts what a run holds and refuses what does not fit", "[unit]") {
  // 40 x 30 x 20 = 24000 cells; 4 receivers (trilinear: 8 cells each); 10 steps; pictures on.
  const Config c = parse_config(kBase, {"boundary.damping_width=5"});
  const HostMemoryEstimate cpu = estimate_host_memory(c, "cpu");
  const double v = 4 * 24000.0;  // one float volume, bytes
  CHECK(cpu.model == v);
  CHECK(cpu.wavefields == 3 * v);         // m, p^n, p^{n-1}
  CHECK(cpu.volumes == v);                // the picture's copy of the wavefield
  CHECK(cpu.traces == 3 * 4 * 4 * 10.0);  // backend, survey and picture copies of 4 x 10 samples
  CHECK(cpu.geometry == 4 * (64 + 8 * 12.0) + 12 * 10.0);
  CHECK(cpu.total == cpu.model + cpu.wavefields + cpu.volumes + cpu.traces + cpu.geometry);
  const HostMemoryEstimate gpu = estimate_host_memory(c, "cuda");
  CHECK(gpu.wavefields == v);  // only the padded model staged for the upload
  // Refused above 90% of the available memory, with the figures and the key; fits below.
  CHECK_NOTHROW(check_host_memory(cpu, c, cpu.total / 0.9 * 1.001));
  CHECK_THROWS_WITH(check_host_memory(cpu, c, cpu.total / 0.9 * 0.999),
                    Contains("of host memory (cpu backend: model") && Contains("is available (MemAvailable") &&
                        Contains("shrink grid.shape (24000 cells)"));
  CHECK_NOTHROW(check_host_memory(cpu, c, 0));  // unknown: no check
  // Traces dominate: a million steps x 4 receivers; the message names time.steps and the receivers' key.
  const Config t = parse_config(kBase, {"boundary.damping_width=5", "time.steps=1000000"});
  const HostMemoryEstimate e = estimate_host_memory(t, "cpu");
  CHECK_THROWS_WITH(check_host_memory(e, t, 1e6),
                    Contains("lower time.steps (1000000) or receivers.line.count (4 receivers)"));
  // A grid far beyond any machine is refused by build_problem before anything is allocated.
  CHECK_THROWS_WITH(build_problem(parse_config(kBase, {"grid.shape=[100000, 100000, 100000]", "solver.backend=cpu"})),
                    Contains("of host memory") && Contains("shrink grid.shape (1000000000000000 cells)"));
}
