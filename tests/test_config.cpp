// [unit] The config schema: defaults, overrides, and one clear message for each kind of bad input.
#include "tests/catch.hpp"

#include "io/config.hpp"
#include "solver/error.hpp"
#include "solver/problem.hpp"

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
  const Config c = parse_config(kBase, {"time.steps=77", "grid.shape=[41, 31, 21]", "model.vp.value=1800",
                                        "time.dt=0.001"});
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
  CHECK_THROWS_WITH(parse_config(kBase, {"time.steps=many"}),
                    Contains("'time.steps' must be an integer"));
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.shape=[40, 0, 20]"}),
                    Contains("'grid.shape[1]' must be a positive"));
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
    CHECK_THROWS_WITH(build_problem(c), Contains("'time.dt'") && Contains("largest stable dt") &&
                                            Contains("0.00226"));
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
