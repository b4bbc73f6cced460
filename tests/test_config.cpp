// [unit] The config schema: defaults, overrides, and one clear message for each kind of bad input.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "io/config.hpp"
#include "io/config_keys.hpp"
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
  CHECK(c.model.vp.value == 1800);
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

TEST_CASE("solver.storage: fp32 or fp16, fp16 refused where it does not apply, with the key and the way out",
          "[unit]") {
  CHECK(parse_config(kBase).solver.storage == SolverStorage::fp32);
  const Config c = parse_config(kBase, {"solver.storage=fp16"});
  CHECK(c.solver.storage == SolverStorage::fp16);
  CHECK_THAT(to_yaml(c), Contains("storage: fp16"));
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.storage=fp8"}),
                    Contains("'solver.storage'") && Contains("fp32 | fp16"));
  // vti and tti store halves too (their naive and tma kernels).
  CHECK(parse_config(kBase, {"solver.storage=fp16", "physics.equation=tti"}).solver.storage == SolverStorage::fp16);
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.storage=fp16", "solver.kernel=smem"}),
                    Contains("'solver.storage' = fp16") && Contains("tma, naive or auto"));
  CHECK(parse_config(kBase, {"solver.storage=fp16", "physics.equation=vti"}).solver.storage == SolverStorage::fp16);
  CHECK(parse_config("grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5}\n", {"solver.storage=fp16"})
            .solver.storage == SolverStorage::fp16);
  CHECK_THROWS_WITH(parse_config("grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5, mode: snapshots}\n",
                                 {"solver.storage=fp16"}),
                    Contains("'solver.storage' = fp16") && Contains("migration.mode boundary"));
  CHECK_THROWS_WITH(parse_config("grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5}\n",
                                 {"solver.storage=fp16", "physics.equation=tti"}),
                    Contains("'solver.storage' = fp16") && Contains("migrates physics.equation acoustic only"));
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.storage=fp16", "solver.decomposition=z"}),
                    Contains("'solver.storage' = fp16") && Contains("solver.decomposition: none"));
  // The run is told what fp16 storage costs in accuracy, with this config's growth factor.
  const Problem p = build_problem(parse_config(kBase, {"solver.storage=fp16", "boundary.damping_width=5"}));
  bool told = false;
  for (const auto& w : p.warnings) told = told || w.find("solver.storage fp16") != std::string::npos;
  CHECK(told);
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
    // 30 Hz: f_max 75 Hz, 2000 / (75 x 10) = 2.7 points, above the 2 that are refused.
    const Config c = parse_config(kBase, {"sources.wavelet.peak_frequency=30", "boundary.damping_width=5"});
    const Problem p = build_problem(c);
    REQUIRE(!p.warnings.empty());
    CHECK_THAT(p.warnings[0], Contains("points per wavelength") && Contains("75 Hz"));
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
  // Beyond 2^20 planes the launches' z block count would overflow an int.
  CHECK_THROWS_WITH(parse_config(kBase, {"solver.z_block=2147483647"}),
                    Contains("'solver.z_block' must be an integer in [0, 1048576]") && Contains("got 2147483647"));
  CHECK(parse_config(kBase, {"solver.z_block=1048576"}).solver.z_block == 1048576);
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
  // output.name: a stem the output files' suffixes still fit behind (a 300-byte one failed at the
  // first file, after the run).
  CHECK(parse_config(kBase, {"output.name=" + std::string(128, 'x')}).output.name.size() == 128);
  CHECK_THROWS_WITH(parse_config(kBase, {"output.name=" + std::string(129, 'x')}),
                    Contains("'output.name' has 129 bytes; valid: at most 128"));
  CHECK_THROWS_WITH(parse_config(kBase, {"output.name=a/b"}), Contains("'output.name' must be a non-empty file stem"));
}

TEST_CASE("host memory: the estimate counts what a run holds and refuses what does not fit", "[unit]") {
  // 40 x 30 x 20 = 24000 cells; 4 receivers (trilinear: 8 cells each); 10 steps; pictures on.
  const Config c = parse_config(kBase, {"boundary.damping_width=5"});
  const HostMemoryEstimate cpu = estimate_host_memory(c, SolverBackend::cpu);
  const double v = 4 * 24000.0;  // one float volume, bytes
  CHECK(cpu.model == v);
  CHECK(cpu.wavefields == 3 * v);         // m, p^n, p^{n-1}
  CHECK(cpu.volumes == v);                // the picture's copy of the wavefield
  CHECK(cpu.traces == 3 * 4 * 4 * 10.0);  // backend, survey and picture copies of 4 x 10 samples
  CHECK(cpu.geometry == 4 * (64 + 8 * 12.0) + 12 * 10.0);
  CHECK(cpu.journal == 2 * v);  // the resume journal's piece being written and the one waiting
  CHECK(cpu.total == cpu.model + cpu.wavefields + cpu.volumes + cpu.traces + cpu.journal + cpu.geometry);
  const HostMemoryEstimate gpu = estimate_host_memory(c, SolverBackend::cuda);
  CHECK(gpu.wavefields == v);  // only the padded model staged for the upload
  // Refused above 90% of the available memory, with the figures and the key; fits below.
  CHECK_NOTHROW(check_host_memory(cpu, c, cpu.total / 0.9 * 1.001));
  CHECK_THROWS_WITH(check_host_memory(cpu, c, cpu.total / 0.9 * 0.999),
                    Contains("of host memory (cpu backend: model") && Contains("is available (MemAvailable") &&
                        Contains("shrink grid.shape (24000 cells)"));
  CHECK_NOTHROW(check_host_memory(cpu, c, 0));  // unknown: no check
  // Traces dominate: a million steps x 4 receivers; the message names time.steps and the receivers' key.
  const Config t = parse_config(kBase, {"boundary.damping_width=5", "time.steps=1000000"});
  const HostMemoryEstimate e = estimate_host_memory(t, SolverBackend::cpu);
  CHECK_THROWS_WITH(check_host_memory(e, t, 1e6),
                    Contains("lower time.steps (1000000) or receivers.line.count (4 receivers)"));
  // A migration's receivers come from its data file: the message names the file, not a key
  // the migration config refuses.
  Config m = t;
  m.migration.emplace();
  m.migration->data = "observed.h5";
  CHECK_THROWS_WITH(
      check_host_memory(e, m, 1e6),
      Contains("or the receivers of migration.data 'observed.h5' (4 receivers)") && !Contains("receivers.line.count"));
  // A grid far beyond any machine is refused by build_problem before anything is allocated.
  CHECK_THROWS_WITH(build_problem(parse_config(kBase, {"grid.shape=[100000, 100000, 100000]", "solver.backend=cpu"})),
                    Contains("of host memory") && Contains("shrink grid.shape (1000000000000000 cells)"));
}

TEST_CASE("anisotropy volumes take every form of model.vp, the value under the volume's own name", "[unit]") {
  SECTION("defaults: constant 0 with the volume's own dataset name") {
    const Config c = parse_config(kBase, {"physics.equation=tti"});
    CHECK(c.physics.equation == Equation::tti);
    for (const VolumeConfig* v : {&c.model.epsilon, &c.model.delta, &c.model.theta, &c.model.phi}) {
      CHECK(v->type == VolumeType::constant);
      CHECK(v->value == 0);
    }
    CHECK(c.model.epsilon.dataset == "epsilon");
    CHECK(c.model.theta.dataset == "theta");
    CHECK(c.model.vp.dataset == "vp");
    CHECK(c.model.vp.value == 2000);
    CHECK(!c.model.clamp_delta);
  }
  SECTION("a number is a constant") {
    const Config c = parse_config(kBase, {"physics.equation=tti", "model.epsilon=0.2", "model.theta=30"});
    CHECK(c.model.epsilon.type == VolumeType::constant);
    CHECK(c.model.epsilon.value == 0.2);
    CHECK(c.model.theta.value == 30);
  }
  SECTION("a mapping: value, gradient") {
    const Config c = parse_config(kBase, {"physics.equation=vti", "model.epsilon={value: 0.1}",
                                          "model.delta={type: gradient, value: 0.05, gradient: 0.001}"});
    CHECK(c.model.epsilon.value == 0.1);
    CHECK(c.model.delta.type == VolumeType::gradient);
    CHECK(c.model.delta.gradient == 0.001);
  }
  SECTION("layers with dips and bodies, the value key named after the volume") {
    const Config c = parse_config(
        kBase,
        {"physics.equation=tti",
         "model.epsilon={type: layers, layers: [{top: 0, epsilon: 0.1}, {top: 100, epsilon: 0.3, dip: [10, 0]}]}",
         "model.theta={value: 10, bodies: [{center: [200, 150, 100], radii: 50, theta: 45}]}"});
    REQUIRE(c.model.epsilon.layers.size() == 2);
    CHECK(c.model.epsilon.layers[1].top == 100);
    CHECK(c.model.epsilon.layers[1].value == 0.3);
    CHECK(c.model.epsilon.layers[1].dip[0] == 10);
    REQUIRE(c.model.theta.bodies.size() == 1);
    CHECK(c.model.theta.bodies[0].value == 45);
    CHECK(c.model.theta.bodies[0].radii[2] == 50);
    CHECK(c.model.theta.value == 10);
  }
  SECTION("file: the dataset defaults to the volume's name") {
    const Config c = parse_config(kBase, {"physics.equation=tti", "model.epsilon={type: file, file: aniso.h5}",
                                          "model.phi={type: file, file: aniso.h5, dataset: azimuth}"});
    CHECK(c.model.epsilon.file == "aniso.h5");
    CHECK(c.model.epsilon.dataset == "epsilon");
    CHECK(c.model.phi.dataset == "azimuth");
  }
  SECTION("clamp_delta") {
    CHECK(parse_config(kBase, {"physics.equation=vti", "model.clamp_delta=true"}).model.clamp_delta);
  }
}

TEST_CASE("anisotropy keys are refused where they would be ignored or are invalid", "[unit]") {
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=elastic"}), Contains("acoustic | vti | tti"));
  CHECK_THROWS_WITH(parse_config(kBase, {"model.epsilon=0.1"}),
                    Contains("'model.epsilon' applies to physics.equation vti or tti only") &&
                        Contains("physics.equation is acoustic"));
  CHECK_THROWS_WITH(parse_config(kBase, {"model.clamp_delta=true"}),
                    Contains("'model.clamp_delta' applies to physics.equation vti or tti only"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=vti", "model.theta=30"}),
                    Contains("'model.theta' is not valid with physics.equation: vti") && Contains("use tti"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=vti", "model.phi={value: 10}"}),
                    Contains("'model.phi' is not valid with physics.equation: vti"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=tti", "model.epsilon={value: 0.1, smoothing: 50}"}),
                    Contains("'model.epsilon.smoothing' is not valid") && Contains("model.vp only"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=vti", "model.clamp_delta=maybe"}),
                    Contains("'model.clamp_delta' must be true or false, got 'maybe'"));
  CHECK_THROWS_WITH(
      parse_config(kBase, {"physics.equation=vti", "model.epsilon={type: layers, layers: [{top: 0, vp: 0.1}]}"}),
      Contains("'model.epsilon.layers[0].vp' is unknown") && Contains("top, epsilon, dip"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=vti", "model.epsilon={type: layers}"}),
                    Contains("'model.epsilon.layers' must be a list of {top: m, epsilon: dimensionless}"));
  CHECK_THROWS_WITH(
      parse_config(kBase, {"physics.equation=tti", "model.theta={bodies: [{center: [0, 0, 0], radii: 5}]}"}),
      Contains("'model.theta.bodies[0].theta' is required"));
  CHECK_THROWS_WITH(parse_config(kBase, {"physics.equation=tti", "model.theta={type: file}"}),
                    Contains("'model.theta.file' is required for type file"));
  // Only vp must be positive: a negative tilt or epsilon is a valid configuration.
  CHECK(parse_config(kBase, {"physics.equation=tti", "model.theta=-20", "model.epsilon=-0.1"}).model.theta.value ==
        -20);
}

TEST_CASE("to_yaml round-trips a tti model and writes anisotropy only where the equation takes it", "[unit]") {
  const Config c = parse_config(
      kBase, {"physics.equation=tti", "model.clamp_delta=true",
              "model.vp={type: layers, layers: [{top: 0, vp: 1500}, {top: 80, vp: 2500, dip: [5, -3]}], smoothing: 20}",
              "model.epsilon={type: gradient, value: 0.1, gradient: 0.0005}",
              "model.delta={type: layers, layers: [{top: 0, delta: 0.02}, {top: 120, delta: 0.08}]}",
              "model.theta={value: 15, bodies: [{center: [200, 150, 100], radii: [40, 30, 20], theta: 40}]}",
              "model.phi={type: file, file: phi.h5, dataset: azimuth}"});
  const std::string text = to_yaml(c);
  const Config again = parse_config(text);
  CHECK(to_yaml(again) == text);
  CHECK(again.physics.equation == Equation::tti);
  CHECK(again.model.clamp_delta);
  CHECK(again.model.vp.layers[1].value == 2500);
  CHECK(again.model.vp.smoothing == 20);
  CHECK(again.model.epsilon.gradient == 0.0005);
  CHECK(again.model.delta.layers[1].value == 0.08);
  CHECK(again.model.theta.bodies[0].value == 40);
  CHECK(again.model.phi.dataset == "azimuth");
  CHECK_THAT(text, Contains("{top: 120, delta: 0.08") && Contains("theta: 40}") && Contains("clamp_delta: true"));
  // vti: no angles (they would be refused); acoustic: no anisotropy at all.
  const std::string vti = to_yaml(parse_config(kBase, {"physics.equation=vti", "model.epsilon=0.2"}));
  CHECK(to_yaml(parse_config(vti)) == vti);
  CHECK_THAT(vti, Contains("epsilon:") && !Contains("theta") && !Contains("phi:"));
  const std::string acoustic = to_yaml(parse_config(kBase));
  CHECK_THAT(acoustic, !Contains("epsilon") && !Contains("clamp_delta"));
}

TEST_CASE("host memory of vti and tti: the anisotropy volumes and the CPU solver's 15 volumes", "[unit]") {
  const double v = 4 * 24000.0;  // one float volume of kBase's grid, bytes
  const Config tti = parse_config(kBase, {"boundary.damping_width=5", "physics.equation=tti"});
  const HostMemoryEstimate cpu = estimate_host_memory(tti, SolverBackend::cpu);
  CHECK(cpu.anisotropy == 4 * v);   // epsilon, delta, theta, phi
  CHECK(cpu.wavefields == 15 * v);  // p, p_prev, q, q_prev, 7 coefficients, 4 derivative scratch fields
  CHECK(cpu.total ==
        cpu.model + cpu.anisotropy + cpu.wavefields + cpu.volumes + cpu.traces + cpu.journal + cpu.geometry);
  CHECK_THAT(cpu.describe(), Contains("anisotropy"));
  CHECK(estimate_host_memory(tti, SolverBackend::cuda).wavefields == v);  // one padded volume staged at a time
  const Config vti = parse_config(kBase, {"boundary.damping_width=5", "physics.equation=vti"});
  CHECK(estimate_host_memory(vti, SolverBackend::cpu).anisotropy == 2 * v);
  CHECK(estimate_host_memory(parse_config(kBase), SolverBackend::cpu).anisotropy == 0);
}

namespace {
// A fake cgroup tree under `root`: writes `text` to root/rel.
void put(const std::filesystem::path& root, const std::string& rel, const std::string& text) {
  std::filesystem::create_directories((root / rel).parent_path());
  std::ofstream(root / rel) << text;
}
}  // namespace

TEST_CASE(
    "host memory: the cgroup limit of the process or an ancestor binds, v2 and v1, 'max' and v1's huge value are none",
    "[unit]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "seisrtm_test_cgroup";
  fs::remove_all(root);
  const double gi = 1073741824.0, mi = 1048576.0;
  SECTION("v2: the job's limit, less its usage without the reclaimable file cache") {
    put(root, "job/memory.max", "2147483648\n");
    put(root, "job/memory.current", std::to_string(300 * 1048576LL) + "\n");
    put(root, "job/memory.stat", "anon 104857600\ninactive_file " + std::to_string(200 * 1048576LL) + "\n");
    put(root, "job/step/memory.max", "max\n");
    put(root, "job/step/memory.current", "1000\n");
    const AvailableMemory a = cgroup_headroom(root.string(), "0::/job/step\n");
    CHECK(a.bytes == 2 * gi - 100 * mi);
    CHECK_THAT(a.source, Contains("job/memory.max 2.000 GiB less 0.098 GiB in use"));
    // A 700^3 run in this 2 GiB cgroup is refused with the numbers instead of being killed.
    const Config c = parse_config(kBase, {"grid.shape=[700, 700, 700]"});
    CHECK_THROWS_WITH(check_host_memory(estimate_host_memory(c, SolverBackend::cpu), c, a.bytes, a.source),
                      Contains("of host memory (cpu backend") && Contains("but 1.902 GiB is available (cgroup limit") &&
                          Contains("shrink grid.shape (343000000 cells)"));
  }
  SECTION("v2 on a hybrid mount (unified), the smaller of two levels") {
    put(root, "unified/memory.max", "1073741824\n");
    put(root, "unified/a/memory.max", "2147483648\n");
    CHECK(cgroup_headroom(root.string(), "0::/a\n").bytes == gi);
  }
  SECTION("v2 'max' everywhere: no limit") {
    put(root, "memory.max", "max\n");
    put(root, "job/memory.max", "max\n");
    CHECK(std::isinf(cgroup_headroom(root.string(), "0::/job\n").bytes));
  }
  SECTION("v1: memory.limit_in_bytes less memory.usage_in_bytes") {
    put(root, "memory/batch/memory.limit_in_bytes", "1073741824\n");
    put(root, "memory/batch/memory.usage_in_bytes", "268435456\n");
    const AvailableMemory a = cgroup_headroom(root.string(), "5:cpuacct,cpu:/\n4:memory:/batch\n0::/\n");
    CHECK(a.bytes == 0.75 * gi);
    CHECK_THAT(a.source, Contains("memory.limit_in_bytes"));
  }
  SECTION("v1's 'no limit' (2^63 less a page) and missing files: no limit") {
    put(root, "memory/batch/memory.limit_in_bytes", "9223372036854771712\n");
    put(root, "memory/batch/memory.usage_in_bytes", "268435456\n");
    CHECK(std::isinf(cgroup_headroom(root.string(), "4:memory:/batch\n").bytes));
    CHECK(std::isinf(cgroup_headroom((root / "absent").string(), "4:memory:/batch\n0::/x\n").bytes));
  }
  SECTION("usage above the limit leaves nothing") {
    put(root, "memory.max", "1000\n");
    put(root, "memory.current", "5000\n");
    CHECK(cgroup_headroom(root.string(), "0::/\n").bytes == 0);
  }
  fs::remove_all(root);
}

TEST_CASE(
    "physical ranges: vp outside 100..10000 m/s and fewer than 2 points per wavelength are refused by build_problem",
    "[unit]") {
  const std::vector<std::string> base{"boundary.damping_width=5"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return parse_config(kBase, more);
  };
  CHECK_THROWS_WITH(build_problem(with({"model.vp=1.48"})), Contains("vp = 1.48 m/s") && Contains("km/s? use 1480"));
  CHECK_THROWS_WITH(build_problem(with({"model.vp={type: gradient, value: 1.5, gradient: 0.001}"})),
                    Contains("config key 'model.vp' gives vp = 1.5") && Contains("km/s? use 15"));
  CHECK_THROWS_WITH(build_problem(with({"model.vp={type: constant, value: 2000, bodies: [{center: [200, 150, 100], "
                                        "radii: 50, vp: 4.5}]}"})),
                    Contains("km/s? use"));
  CHECK_THROWS_WITH(build_problem(with({"model.vp=15000"})),
                    Contains("faster than any rock") && Contains("ft/s? use 4572"));
  CHECK_NOTHROW(build_problem(with({"model.vp=100", "sources.wavelet.peak_frequency=1", "time.steps=200"})));
  CHECK_NOTHROW(build_problem(with({"model.vp=10000", "time.steps=2"})));
  // 2000 / (2.5 f 10) < 2 from f = 40 Hz.
  CHECK_THROWS_WITH(build_problem(with({"sources.wavelet.peak_frequency=41"})),
                    Contains("'sources.wavelet.peak_frequency' = 41 Hz") && Contains("peak frequency <= 40 Hz"));
  CHECK_NOTHROW(build_problem(with({"sources.wavelet.peak_frequency=39"})));
  // checks.physical_ranges: false makes both warnings.
  const Problem p = build_problem(with({"checks.physical_ranges=false", "model.vp=2", "time.dt=0.001"}));
  REQUIRE(p.warnings.size() >= 2);
  CHECK_THAT(p.warnings[0], Contains("vp = 2 m/s") && Contains("run as given"));
  CHECK_THAT(p.warnings[1], Contains("points per wavelength") && Contains("run as given"));
  CHECK(to_yaml(parse_config(kBase)).find("physical_ranges: true") != std::string::npos);
}

TEST_CASE("receivers whose weights lie on the free surface plane only are moved one cell down", "[unit]") {
  // 10 m cells, p = 0 enforced on z = 0: nearest rounds z < 5 m onto it, trilinear and hicks
  // only an on-plane point (z = 0); a point between planes keeps a weight below.
  const char* list = "receivers.list=[[100, 150, 0], [110, 150, 4], [120, 150, 6], [130, 150, 3]]";
  for (const std::string method : {"nearest", "trilinear", "hicks"}) {
    INFO(method);
    const Problem p =
        build_problem(parse_config(kBase, {"boundary.damping_width=5", "boundary.free_surface=true",
                                           "receivers.line=null", list, "receivers.interpolation=" + method}));
    const bool nearest = method == "nearest";
    CHECK(p.receivers.position[0][2] == 10.0);
    CHECK(p.receivers.position[1][2] == (nearest ? 10.0 : 4.0));
    CHECK(p.receivers.position[2][2] == 6.0);
    CHECK(p.receivers.position[3][2] == (nearest ? 10.0 : 3.0));
    const long long plane = 40 * 30;  // cells of one z plane
    for (long long k = p.receivers.offset[0]; k < p.receivers.offset[1]; ++k) CHECK(p.receivers.cell[k] / plane >= 1);
    const std::string moved = nearest ? "3 of 4" : "1 of 4";
    const auto w = std::count_if(p.warnings.begin(), p.warnings.end(), [](const std::string& s) {
      return s.find("lie on the free surface") != std::string::npos;
    });
    CHECK(w == 1);
    CHECK(std::any_of(p.warnings.begin(), p.warnings.end(), [&](const std::string& s) {
      return s.find(moved + " receivers lie on the free surface (z = 0, " + method) != std::string::npos &&
             s.find("moved one cell down, to z = 10 m") != std::string::npos;
    }));
  }
  // Without a free surface nothing moves.
  const Problem q = build_problem(parse_config(kBase, {"boundary.damping_width=5", "receivers.line=null", list}));
  CHECK(q.receivers.position[0][2] == 0.0);
}

TEST_CASE("model.vp.smoothing wider than the grid's largest extent is refused by build_problem", "[unit]") {
  // kBase: 40 x 30 x 20 cells of 10 m, the largest extent (40 - 1) x 10 = 390 m. 1e10 m would
  // overflow the tap count and crash; 1e5 m would take seconds.
  const std::pair<std::string, std::string> lengths[] = {{"1e10", "1e+10"}, {"1e5", "100000"}, {"391", "391"}};
  for (const auto& [length, printed] : lengths) {
    INFO("smoothing " << length);
    CHECK_THROWS_WITH(
        build_problem(parse_config(
            kBase, {"boundary.damping_width=5", "model.vp={type: constant, value: 2000, smoothing: " + length + "}"})),
        Contains("'model.vp.smoothing' = " + printed + " m") && Contains("largest extent 390 m") &&
            Contains("valid: 0 to 390 m"));
  }
  const Problem p = build_problem(
      parse_config(kBase, {"boundary.damping_width=5", "model.vp={type: constant, value: 2000, smoothing: 390}"}));
  // A constant model stays constant (to float rounding of 1 / (1 / 2000)).
  CHECK(std::abs(p.v_min - 2000) < 1e-3);
  CHECK(std::abs(p.v_max - 2000) < 1e-3);
}

TEST_CASE("time.dt below the largest stable dt / 2896 is refused by build_problem, a warning with the override",
          "[unit]") {
  // kBase with damping_width 5: dt_max = 0.00226 s (above), dt_min = dt_max sqrt(2^-23) = 7.8e-7 s.
  for (const std::string dt : {"1e-300", "1e-20", "7e-7"}) {
    INFO("time.dt " << dt);
    CHECK_THROWS_WITH(build_problem(parse_config(kBase, {"boundary.damping_width=5", "time.dt=" + dt})),
                      Contains("'time.dt' = ") && Contains("is below 7.8") && Contains("float rounding") &&
                          Contains("checks.physical_ranges"));
  }
  CHECK_NOTHROW(build_problem(parse_config(kBase, {"boundary.damping_width=5", "time.dt=8e-7"})));
  const Problem p =
      build_problem(parse_config(kBase, {"boundary.damping_width=5", "time.dt=1e-20", "checks.physical_ranges=false"}));
  CHECK(std::any_of(p.warnings.begin(), p.warnings.end(), [](const std::string& w) {
    return w.find("'time.dt' = 1e-20 s is below") != std::string::npos && w.find("run as given") != std::string::npos;
  }));
}

TEST_CASE("receivers.grid.count beyond the grid's cells is refused naming the key, not an overflowed count", "[unit]") {
  // Before: [4294967296, 4294967296] overflowed 64 bits and a memory refusal printed
  // "(-9223372036854775808 receivers)".
  const auto grid = [](const std::string& count) {
    return "receivers={grid: {origin: [50, 50, 50], spacing: [1, 1], count: " + count + "}}";
  };
  for (const char* count : {"[4294967296, 4294967296]", "[9223372036854775807, 2]", "[241, 100]"})
    CHECK_THROWS_WITH(
        parse_config(kBase, {grid(count)}),
        Contains("config key 'receivers.grid.count'") && Contains("more receivers than the grid has cells (24000)"));
  CHECK(parse_config(kBase, {grid("[240, 100]")}).receivers.grid.count[1] == 100);  // one a cell: allowed
}

TEST_CASE("numbers in messages are printed with %g: tiny and huge values keep their magnitude", "[unit]") {
  // %f would give "got -0.000000" for -1e-9 and 301 digits for 1e300.
  CHECK_THROWS_WITH(parse_config(kBase, {"grid.spacing=-1e-9"}), Contains("got -1e-09"));
  CHECK_THROWS_WITH(parse_config(kBase, {"time.safety=1e300"}), Contains("got 1e+300"));
  CHECK_THROWS_WITH(parse_config(kBase, {"boundary.reflection=-1e-300"}), Contains("got -1e-300"));
  CHECK_THROWS_WITH(parse_config(kBase, {"time.dt=-1e-9"}), Contains("got -1e-09"));
  const std::string mig =
      "grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5, illumination_epsilon: 1e300}\n";
  CHECK_THROWS_WITH(parse_config(mig), Contains("illumination_epsilon") && Contains("got 1e+300"));
}

TEST_CASE("output.name: '.', '..', a leading '.', '/' or a control character is refused", "[unit]") {
  // Before: '.' wrote the hidden file "..h5", and a newline in the name was accepted.
  for (const char* name : {"output.name=.", "output.name=..", "output.name=.hidden", "output.name=a/b"})
    CHECK_THROWS_WITH(parse_config(kBase, {name}),
                      Contains("config key 'output.name'") && Contains("not starting with '.'"));
  CHECK_THROWS_WITH(parse_config(kBase, {"output.name=\"a\\nb\""}),
                    Contains("config key 'output.name'") && Contains("a name holding a control character"));
  CHECK_THROWS_WITH(parse_config(kBase, {"output.name=\"a\\tb\""}), Contains("control character"));
  CHECK(parse_config(kBase, {"output.name=shot.v2"}).output.name == "shot.v2");
}

namespace {

// One enumerated key: its values (the enum's name table), the config it is set in, and the
// overrides a value needs to be valid (a file for type file, layers for type layers).
struct EnumKey {
  std::string key;
  std::vector<std::string> values;
  std::string base;
  std::vector<std::pair<std::string, std::string>> needs;  // value -> override
};

const char* kMigrationBase = "grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5}\n";
const char* kSegyBase =
    "grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.sgy, wavelet: {peak_frequency: 15}}\n";

std::vector<EnumKey> enum_keys() {
  return {
      {"physics.equation", enum_texts<Equation>(), kBase, {}},
      {"model.vp.type",
       enum_texts<VolumeType>(),
       kBase,
       {{"layers", "model.vp.layers=[{top: 0, vp: 1500}]"}, {"file", "model.vp.file=v.h5"}}},
      {"sources.wavelet.type", enum_texts<WaveletType>(), kBase, {{"file", "sources.wavelet.file=w.h5"}}},
      {"sources.interpolation", enum_texts<Interpolation>(), kBase, {}},
      {"receivers.interpolation", enum_texts<Interpolation>(), kBase, {}},
      {"output.segy", enum_texts<SegyRevision>(), kBase, {}},
      {"solver.backend", enum_texts<SolverBackend>(), kBase, {}},
      {"solver.kernel", enum_texts<SolverKernel>(), kBase, {}},
      {"solver.memory", enum_texts<SolverMemory>(), kBase, {}},
      {"solver.storage", enum_texts<SolverStorage>(), kBase, {}},
      {"solver.decomposition", enum_texts<Decomposition>(), kBase, {}},
      {"migration.mode", enum_texts<MigrationMode>(), kMigrationBase, {}},
      {"migration.data_filter", enum_texts<DataFilter>(), kMigrationBase, {}},
      {"migration.store", enum_texts<StoreLocation>(), kMigrationBase, {}},
      {"migration.fused", enum_texts<FusedStep>(), kMigrationBase, {}},
      {"migration.wavelet.type", enum_texts<WaveletType>(), kSegyBase, {{"file", "migration.wavelet.file=w.h5"}}},
  };
}

// The scalar at a dotted path of a YAML document.
std::string scalar_at(const std::string& yaml, const std::string& path) {
  YAML::Node n = YAML::Load(yaml);
  for (size_t start = 0;;) {
    const size_t dot = path.find('.', start);
    n = n[path.substr(start, dot - start)];
    if (dot == std::string::npos) return n.Scalar();
    start = dot + 1;
  }
}

}  // namespace

TEST_CASE("migration.fused takes YAML's spellings of a bool, as when it was one, and auto", "[unit]") {
  for (const auto& [text, want] : std::vector<std::pair<std::string, FusedStep>>{{"true", FusedStep::on},
                                                                                 {"True", FusedStep::on},
                                                                                 {"yes", FusedStep::on},
                                                                                 {"on", FusedStep::on},
                                                                                 {"false", FusedStep::off},
                                                                                 {"no", FusedStep::off},
                                                                                 {"off", FusedStep::off},
                                                                                 {"auto", FusedStep::automatic}}) {
    INFO("migration.fused: " << text);
    const Config c = parse_config(kMigrationBase, {"migration.fused=" + text});
    CHECK(c.migration->fused == want);
  }
  CHECK(parse_config(kMigrationBase, {}).migration->fused == FusedStep::automatic);
  CHECK(parse_config("grid: {shape: [40, 30, 20], spacing: 10}\nmigration: {data: d.h5, fused: no}\n", {})
            .migration->fused == FusedStep::off);
  CHECK_THROWS_WITH(parse_config(kMigrationBase, {"migration.fused=maybe"}),
                    Contains("'migration.fused' must be one of auto | true | false, got 'maybe'"));
}

TEST_CASE("every enumerated key: each value round-trips through to_yaml, a bad one is refused naming them all",
          "[unit]") {
  for (const EnumKey& k : enum_keys()) {
    for (const std::string& value : k.values) {
      INFO(k.key << " = " << value);
      std::vector<std::string> sets = {k.key + "=" + value};
      for (const auto& [v, o] : k.needs)
        if (v == value) sets.push_back(o);
      const Config c = parse_config(k.base, sets);
      const std::string yaml = to_yaml(c);
      const std::string written = scalar_at(yaml, k.key);
      CHECK(written == value);
      // Read back: the written text selects the same value, and the config writes the same text.
      sets[0] = k.key + "=" + written;
      CHECK(to_yaml(parse_config(k.base, sets)) == yaml);
      // A run config's whole resolved text parses back to itself.
      if (!c.migration) CHECK(to_yaml(parse_config(yaml)) == yaml);
    }
    std::string valid;
    for (const std::string& value : k.values) valid += (valid.empty() ? "" : " | ") + value;
    CHECK_THROWS_WITH(parse_config(k.base, {k.key + "=not_a_value"}),
                      Contains("config key '" + k.key + "' must be one of " + valid + ", got 'not_a_value'"));
  }
}

TEST_CASE("every interval in the key table is enforced by the parser, naming the key", "[unit]") {
  // Each key with an interval gets a value just outside each finite end; list entries and
  // volume keys are written into a layer, a body or model.vp.
  int keys = 0;
  for (const ConfigKey& k : config_keys()) {
    const KeyRange& r = k.check;
    if (r.must.empty()) continue;
    ++keys;
    const bool integer = k.type == "integer" || k.path == "receivers.grid.count";
    std::vector<double> outside;
    if (std::isfinite(r.lo)) outside.push_back(r.lo_open ? r.lo : integer ? r.lo - 1 : r.lo - 1e-6);
    if (std::isfinite(r.hi)) outside.push_back(r.hi_open ? r.hi : integer ? r.hi + 1 : r.hi + 1e-6);
    REQUIRE(!outside.empty());
    for (const double v : outside) {
      char text[64];
      std::snprintf(text, sizeof text, integer ? "%.0f" : "%.17g", v);
      std::string path = k.path, set, base = kBase;
      if (path.rfind("model.<volume>.", 0) == 0) path.replace(6, 8, "vp");
      if (path == "model.vp.layers[].dip") {
        set = std::string("model.vp={type: layers, layers: [{top: 0, vp: 2000, dip: [") + text + ", 0]}]}";
        path = "model.vp.layers[0].dip";
      } else if (path == "model.vp.bodies[].radii") {
        set = std::string("model.vp={bodies: [{center: [200, 150, 100], radii: [") + text + ", 10, 10], vp: 3000}]}";
        path = "model.vp.bodies[0].radii";
      } else if (path == "receivers.grid.count") {
        set = std::string("receivers={grid: {origin: [0, 0, 0], spacing: [10, 10], count: [") + text + ", 1]}}";
      } else if (path.rfind("migration.", 0) == 0) {
        base = kSegyBase;
        set = path.rfind("migration.mute.", 0) == 0 && path != "migration.mute.velocity"
                  ? "migration.mute={velocity: 1500, " + path.substr(15) + ": " + text + "}"
                  : path + "=" + text;
      } else {
        set = path + "=" + text;
      }
      INFO(set);
      CHECK_THROWS_WITH(parse_config(base, {set}), Contains("config key '" + path + "' must"));
    }
  }
  CHECK(keys >= 20);
}

TEST_CASE("every key in the table is written by to_yaml through the table", "[unit]") {
  // A value key has a writer, a list of mappings its entries' keys, a mapping its own keys.
  for (const ConfigKey& k : config_keys()) {
    INFO(k.path);
    if (k.type == "mapping") {
      CHECK(!k.write);
      CHECK(!keys_under(k.path.rfind("model.", 0) == 0 ? "model.<volume>" : k.path).empty());
    } else if (k.entries) {
      CHECK(!keys_under(k.path + "[]").empty());
    } else {
      CHECK(k.write);
    }
  }
}
