// [gpu] Checkpointed reconstruction on the GPU (migration.reconstruction: checkpoint) and the
// 16-bit boundary stores (migration.store_precision): the
// replays rebuild the first pass's levels from checkpoints, so the image, the illumination and
// the rebuilt source field equal the full store's bit for bit, for every backward path (fused
// step, separate kernels of each variant, fp16 storage, vti/tti), with graphs and without, at
// intervals that divide the record and that do not. The plan's refusals name their keys.
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "io/config.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/device_info.hpp"
#include "tests/catch.hpp"
#include "tests/fixtures.hpp"
#include "validation/cpu_migration.hpp"
#include "validation/norms.hpp"
#include "validation/tolerance.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;

namespace {

// 77 x 53 x 61 cells (tests/data/gpu_migration.yaml) (no multiple of a tile), an off-grid source and receivers, a
// damping zone and a free surface; 300 steps (298 saved levels: 7 and 40 do not divide them).
std::string grid_yaml() {
  return test::fixture("gpu_migration.yaml");
}

// interval 0: the full store (reconstruction: store); else checkpoints every `interval` levels
// (in two levels, groups of `coarse` levels, where coarse > 0).
Problem problem(long long interval, const std::vector<std::string>& sets = {}, bool fused = true,
                StorePrecision precision = StorePrecision::fp32, long long coarse = 0) {
  Config c = parse_config(grid_yaml(), sets);
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 3;
  mc.fused = fused ? FusedStep::on : FusedStep::off;
  mc.reconstruction = interval > 0 ? Reconstruction::checkpoint : Reconstruction::store;
  mc.checkpoint_interval = interval;
  mc.coarse_checkpoint_interval = coarse;
  mc.store_precision = precision;
  c.migration = mc;
  return build_problem(c);
}

std::vector<float> noise(const Problem& p) {
  std::mt19937 gen(5);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> v(static_cast<size_t>(p.receivers.size() * p.steps));
  for (auto& x : v) x = d(gen);
  return v;
}

struct Result {
  std::vector<float> image, illumination, levels;  // levels: the rebuilt source field at kLevels
};
constexpr long long kLevels[] = {290, 151, 1};

// One shot; with `levels`, the rebuilt source field at kLevels too (which turns graphs off).
Result migrate(const Problem& p, const CudaOptions& o, const std::vector<float>& data, bool levels, std::string* name) {
  CudaMigrator m(p, o);
  if (name) *name = m.name();
  Result r{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
  if (levels)
    m.on_source_level = [&](long long n, const float* f) {
      for (long long k : kLevels)
        if (n == k) r.levels.insert(r.levels.end(), f, f + p.grid.cells());
    };
  m.migrate_shot(0, data.data(), r.image.data(), r.illumination.data(), [](const std::string&, long long) {});
  return r;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Path {
  const char* name;
  kernels::Variant variant;
  bool fused;
  std::vector<std::string> sets;
  StorePrecision precision = StorePrecision::fp32;  // migration.store_precision
};

// The backward paths: each generated case one path and one interval, named in its INFO.
const std::vector<Path>& paths() {
  static const std::vector<Path> all = {
      {"naive", kernels::Variant::naive, false, {}},
      {"smem", kernels::Variant::smem, false, {}},
      {"tma fused", kernels::Variant::tma, true, {}},
      {"tma separate", kernels::Variant::tma, false, {}},
      {"tma fused, compressible", kernels::Variant::tma, true, {"solver.memory=compressible"}},
      {"tma fp16", kernels::Variant::tma, false, {"solver.storage=fp16"}},
      {"tma vti", kernels::Variant::tma, false, {"physics.equation=vti", "model.epsilon=0.2", "model.delta=0.1"}},
      {"tma tti",
       kernels::Variant::tma,
       false,
       {"physics.equation=tti", "model.epsilon=0.2", "model.delta=0.1", "model.theta=30", "model.phi=20"}},
      {"naive tti",
       kernels::Variant::naive,
       false,
       {"physics.equation=tti", "model.epsilon=0.2", "model.delta=0.1", "model.theta=30", "model.phi=20"}},
      {"tma fused, bf16 store", kernels::Variant::tma, true, {}, StorePrecision::bf16},
      {"tma fused, fp16 store", kernels::Variant::tma, true, {}, StorePrecision::fp16},
      {"tma tti, bf16 store",
       kernels::Variant::tma,
       false,
       {"physics.equation=tti", "model.epsilon=0.2", "model.delta=0.1", "model.theta=30", "model.phi=20"},
       StorePrecision::bf16},
      {"naive separate, fp16 store", kernels::Variant::naive, false, {}, StorePrecision::fp16},
      {"tma fused, fp16 storage", kernels::Variant::tma, true, {"solver.storage=fp16"}}};
  return all;
}

CudaOptions options_of(const Problem& p, const Path& path) {
  CudaOptions o = cuda_options(p.config);
  o.variant = path.variant;
  o.z_block = path.variant == kernels::Variant::naive ? 0 : 16;
  return o;
}

// The full store's image and rebuilt levels of a path, made once a process.
const std::pair<Result, Result>& store_reference(size_t k) {
  static std::map<size_t, std::pair<Result, Result>> made;
  if (!made.count(k)) {
    const Path& path = paths()[k];
    const Problem full = problem(0, path.sets, path.fused, path.precision);
    const CudaOptions o = options_of(full, path);
    const auto data = noise(problem(0));
    made[k] = {migrate(full, o, data, false, nullptr), migrate(full, o, data, true, nullptr)};
  }
  return made.at(k);
}

}  // namespace

TEST_CASE("checkpointed GPU migration equals the full store bit for bit on every backward path", "[gpu]") {
  const size_t k = GENERATE(range(size_t(0), size_t(14)));
  // One level every 7, 40 and 1 levels; two levels: groups of 3 segments of 7 levels (43
  // segments, 15 groups) and of 10 of 5 (60 segments, 6 groups), which keep their own checkpoints
  // from the replay field.
  const auto [interval, coarse] = GENERATE(table<long long, long long>({{7, 0}, {40, 0}, {1, 0}, {7, 21}, {5, 50}}));
  const Path& path = paths()[k];
  INFO(path.name << ", checkpoints every " << interval << " levels" << (coarse ? " in groups of " : "")
                 << (coarse ? std::to_string(coarse) : ""));
  if (path.variant == kernels::Variant::tma && !query_gpu().tma) {
    WARN(path.name << ": no tma on this GPU");
    return;
  }
  const auto& [ref, ref_levels] = store_reference(k);
  REQUIRE(ref_levels.levels.size() == 3 * ref.image.size());
  const auto data = noise(problem(0));
  const Problem p = problem(interval, path.sets, path.fused, path.precision, coarse);
  CudaOptions o = options_of(p, path);
  std::string name;
  const Result r = migrate(p, o, data, false, &name);
  INFO(name);
  CHECK_THAT(name, Contains("levels on the device") && Contains("checkpoints in pinned host memory"));
  // The backward path the case names ran (a fused path that fell back would compare separate with separate).
  CHECK_THAT(name, Contains(path.fused ? "fused backward step" : "separate backward kernels"));
  if (coarse > 0) CHECK_THAT(name, Contains("two levels, groups of " + std::to_string(coarse)));
  CHECK(same(r.image, ref.image));
  CHECK(same(r.illumination, ref.illumination));
  if (interval == 7) {
    const Result rl = migrate(p, o, data, true, nullptr);  // graphs off: every level read
    CHECK(same(rl.levels, ref_levels.levels));
    CHECK(same(rl.image, ref.image));
  }
  if (interval == 40 || coarse == 50) {
    o.graphs = false;
    CHECK(same(migrate(p, o, data, false, nullptr).image, ref.image));
  }
}

TEST_CASE("checkpoints in files (migration.checkpoint_location disk) keep the store's bits; the files go", "[gpu]") {
  // Every checkpoint through a file and the pinned bounce state: the first pass's (written by
  // the writer thread while the steps go on) and, in two levels, a sweep's own (from the replay
  // field); read back before each sweep.
  const size_t k = GENERATE(2, 7, 12);  // tma fused, tma tti, naive separate with an fp16 store
  const auto [interval, coarse] = GENERATE(table<long long, long long>({{7, 0}, {7, 21}}));
  const Path& path = paths()[k];
  INFO(path.name << ", checkpoints every " << interval << (coarse ? " in groups of 21" : "") << ", in files");
  if (path.variant == kernels::Variant::tma && !query_gpu().tma) {
    WARN(path.name << ": no tma on this GPU");
    return;
  }
  const auto& [ref, ref_levels] = store_reference(k);
  const auto data = noise(problem(0));
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "seisrtm_gpu_checkpoint_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Problem p = problem(interval, path.sets, path.fused, path.precision, coarse);
  p.config.migration->checkpoint_location = CheckpointLocation::disk;
  p.config.migration->checkpoint_directory = dir.string();
  const CudaOptions o = options_of(p, path);
  std::string name;
  const Result r = migrate(p, o, data, false, &name);
  INFO(name);
  CHECK_THAT(name, Contains("0 checkpoints in pinned host memory") && Contains("in files"));
  CHECK(same(r.image, ref.image));
  CHECK(same(r.illumination, ref.illumination));
  const Result rl = migrate(p, o, data, true, nullptr);
  CHECK(same(rl.levels, ref_levels.levels));
  CHECK(std::filesystem::is_empty(dir));  // the migrator removed its files
  std::filesystem::remove_all(dir);
}

TEST_CASE("a 16-bit store on the GPU images as the CPU reference's; in host memory the same bits", "[gpu]") {
  // The GPU rounds as the CPU reference does (__float2bfloat16_rn and round_to_bfloat16;
  // __float2half_rn and round_to_half over the same field scale), so the two images differ by the
  // fp32 arithmetic alone: validate's migration tolerance.
  const auto data = noise(problem(0));
  const StorePrecision precision = GENERATE(StorePrecision::bf16, StorePrecision::fp16);
  const bool fused = GENERATE(true, false);
  {
    INFO(to_text(precision) << (fused ? ", fused" : ", separate"));
    const Problem p = problem(0, {}, fused, precision);
    const CudaOptions o = cuda_options(p.config);
    validation::CpuMigrator cpu(p);
    Result ref{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
    cpu.migrate_shot(0, data.data(), ref.image.data(), ref.illumination.data(), [](const std::string&, long long) {});
    std::string name;
    const Result gpu = migrate(p, o, data, false, &name);
    INFO(name);
    CHECK_THAT(name, Contains("boundary store in " + to_text(precision)));
    const double tol = validation::migration_tolerance(p);
    const double ei = validation::relative_l2(gpu.image.data(), ref.image.data(), ref.image.size());
    INFO("GPU against CPU, both 16-bit stores: image relative L2 " << ei << " (tolerance " << tol << ")");
    CHECK(ei <= tol);
    // Against the fp32 store the rounding shows, and the GPU follows the CPU's rounding more
    // closely than it departs from fp32 (a GPU that stored fp32 would be the other way round).
    const Result f32 = migrate(problem(0, {}, fused), o, data, false, nullptr);
    const double e32 = validation::relative_l2(gpu.image.data(), f32.image.data(), f32.image.size());
    INFO("GPU 16-bit store against the GPU's fp32 store: " << e32);
    CHECK(e32 > 4 * ei);
    // The store in pinned host memory: the same slots, the same bits.
    Problem host = p;
    host.config.migration->store = StoreLocation::host;
    CHECK(same(migrate(host, o, data, false, nullptr).image, gpu.image));
  }
}

TEST_CASE("a checkpoint interval beyond the record is the full store; a host store with checkpoints is refused",
          "[gpu]") {
  const auto data = noise(problem(0));
  const Problem full = problem(0);
  const CudaOptions o = cuda_options(full.config);
  std::string name;
  const Result ref = migrate(full, o, data, false, nullptr);
  const Result r = migrate(problem(298), o, data, false, &name);  // one segment: no checkpoint
  CHECK_THAT(name, Contains("boundary store on the device"));
  CHECK(same(r.image, ref.image));
  Problem host = problem(7);
  host.config.migration->store = StoreLocation::host;
  CHECK_THROWS_WITH(CudaMigrator(host, o), Contains("migration.store") && Contains("migration.reconstruction") &&
                                               Contains("use migration.store: auto or device"));
}
