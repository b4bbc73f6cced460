// [gpu] Migration on the GPU against the CPU migrator, on a grid that is no multiple of the
// block: every variant, with and without z-blocking, plain and compressible memory, a free
// surface; the rebuilt source field; device memory; the refusal of a store that does not fit.
// vti and tti (the TTI step, the store of p and q) against the CPU migrator the same way.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "io/config.hpp"
#include "kernels/image_isic.hpp"
#include "kernels/rtm.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_buffer.hpp"
#include "solver/device_info.hpp"
#include "solver/storage.hpp"
#include "tests/catch.hpp"
#include "tests/fixtures.hpp"
#include "validation/cpu_migration.hpp"
#include "validation/cpu_propagator.hpp"
#include "validation/norms.hpp"
#include "validation/tolerance.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;

namespace {

// 77 x 53 x 61 cells (tests/data/gpu_migration.yaml), an off-grid source, receivers off the grid, a damping zone and a
// free surface; 300 steps.
std::string grid_yaml() {
  return test::fixture("gpu_migration.yaml");
}

Problem migration_problem(const std::vector<std::string>& sets = {}, bool fused = true,
                          const std::string& store = "auto") {
  Config c = parse_config(grid_yaml(), sets);
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 2;
  mc.fused = fused ? FusedStep::on : FusedStep::off;
  mc.store = *from_text<StoreLocation>(store);
  c.migration = mc;
  return build_problem(c);
}

std::vector<float> noise_data(const Problem& p) {
  std::mt19937 gen(3);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> v(static_cast<size_t>(p.receivers.size() * p.steps));
  for (auto& x : v) x = d(gen);
  return v;
}

struct Result {
  std::vector<float> image, illumination, level;  // level: the source field at kLevel (interior)
};
constexpr long long kLevel = 150;

template <class M>
Result migrate(M& m, const Problem& p, const std::vector<float>& data) {
  Result r{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
  const CellBox b = interior_box(p);
  m.on_source_level = [&](long long n, const float* f) {
    if (n != kLevel) return;
    for (long long iz = b.lo[2]; iz < b.hi[2]; ++iz)
      for (long long iy = b.lo[1]; iy < b.hi[1]; ++iy)
        for (long long ix = b.lo[0]; ix < b.hi[0]; ++ix) r.level.push_back(f[p.grid.index(ix, iy, iz)]);
  };
  m.migrate_shot(0, data.data(), r.image.data(), r.illumination.data(), [](const std::string&, long long) {});
  return r;
}

// The CPU migrator's result for `p`, made once per `key` in this process: every generated
// combination of one problem compares with it, and a CPU migration costs more than the GPU runs
// of one combination, so the sweep runs each once, as the loops it replaces did.
// `half`: the CPU migrator's emulation of fp16 storage (store_as_half) instead.
const Result& cpu_reference(const std::string& key, const Problem& p, const std::vector<float>& data,
                            bool half = false) {
  static std::map<std::string, Result> made;
  auto at = made.find(key);
  if (at == made.end()) {
    validation::CpuMigrator cpu(p);
    if (half) cpu.store_as_half(kHalfPeakExponent);
    at = made.emplace(key, migrate(cpu, p, data)).first;
  }
  return at->second;
}

const char* variant_name(kernels::Variant v) {
  return v == kernels::Variant::naive ? "naive" : v == kernels::Variant::smem ? "smem" : "tma";
}

}  // namespace

// Each combination of order, fused or separate steps, variant, fused shape and z_block is one
// generated case (its INFO names it); plain and compressible memory, compared bit for bit, run
// inside it, and each fused shape is compared with the first shape run at its order and z_block.
TEST_CASE("GPU migration: every variant, z_block and memory kind agrees with the CPU migrator", "[gpu]") {
  const int order = GENERATE(8, 4, 16);
  const bool fused = GENERATE(true, false);
  // fused = false matters for tma only (the others always run separate kernels); the other
  // orders are checked on tma, whose fused step covers radius <= 4.
  const kernels::Variant variant =
      GENERATE_COPY(filter([=](kernels::Variant v) { return v == kernels::Variant::tma || (fused && order == 8); },
                           values({kernels::Variant::naive, kernels::Variant::smem, kernels::Variant::tma})));
  // The fused step's launch shapes (TmaTuning::fused_shape): each that can be chosen.
  const std::optional<kernels::FusedShape> shape =
      GENERATE_COPY(from_range(fused && variant == kernels::Variant::tma
                                   ? std::vector<std::optional<kernels::FusedShape>>(std::begin(kernels::kFusedShapes),
                                                                                     std::end(kernels::kFusedShapes))
                                   : std::vector<std::optional<kernels::FusedShape>>{std::nullopt}));
  const int zb =
      GENERATE_COPY(filter([=](int z) { return variant != kernels::Variant::naive || z == 0; }, values({0, 16, 7})));
  const std::string vname = variant_name(variant);
  INFO("order " << order << (fused ? ", fused" : ", separate") << ", " << vname << ", fused shape "
                << (shape ? fused_shape_name(*shape) : "none") << ", z_block " << zb);
  const auto data = noise_data(migration_problem());
  // validate's tolerance: 2 T eps_f32 sqrt(2 steps) (validation/tolerance.hpp says why).
  const Problem p = migration_problem({"physics.space_order=" + std::to_string(order)}, fused);
  const double tol = validation::migration_tolerance(p);
  const Result& ref = cpu_reference(std::to_string(order) + (fused ? " fused" : " separate"), p, data);
  REQUIRE(validation::max_abs(ref.image.data(), ref.image.size()) > 0);
  REQUIRE(ref.level.size() > 0);
  std::map<std::string, Result> results;
  for (MemoryKind mem : {MemoryKind::plain, MemoryKind::compressible}) {
    CudaOptions o;
    o.variant = variant;
    o.z_block = zb;
    o.memory = mem;
    o.tuning.fused_shape = shape;
    CudaMigrator gpu(p, o);
    if (mem == MemoryKind::compressible && query_gpu().compression)
      REQUIRE(gpu.name().find("compressible memory") != std::string::npos);
    // migration.fused true where the fused step does not run: the name says why.
    if (fused && variant != kernels::Variant::tma)
      CHECK_THAT(gpu.name(), Contains("migration.fused is ignored: the fused step is the tma variant's"));
    if (fused && variant == kernels::Variant::tma && order > 8)
      CHECK_THAT(gpu.name(), Contains("migration.fused is ignored: the fused step takes space orders up to 8"));
    if (fused && variant == kernels::Variant::tma && order <= 8) CHECK_THAT(gpu.name(), !Contains("is ignored"));
    const Result r = migrate(gpu, p, data);
    const double ei = validation::relative_l2(r.image.data(), ref.image.data(), ref.image.size());
    const double el = validation::relative_l2(r.illumination.data(), ref.illumination.data(), ref.image.size());
    const double es = r.level.size() == ref.level.size()
                          ? validation::relative_l2(r.level.data(), ref.level.data(), ref.level.size())
                          : 1.0;
    INFO(gpu.name() << ", order " << order << ": image rel L2 " << ei << ", illumination " << el << ", source level "
                    << kLevel << " " << es << " (tolerance " << tol << ")");
    CHECK(ei <= tol);
    CHECK(el <= tol);
    CHECK(es <= tol);
    results[mem == MemoryKind::plain ? "plain" : "compressible"] = r;
  }
  // Same kernels, same arithmetic: plain and compressible memory give the same bits.
  INFO(vname << " z_block " << zb << " order " << order << (fused ? " fused" : " separate"));
  CHECK(std::memcmp(results["plain"].image.data(), results["compressible"].image.data(), ref.image.size() * 4) == 0);
  // Every shape runs the same arithmetic per cell: the same bits as the first shape run
  // at this order and z_block (the generated cases run in order: wide first).
  if (!shape) return;
  static std::map<std::string, std::vector<float>> first_shape;
  const std::string key = std::to_string(order) + "/" + std::to_string(zb);
  if (!first_shape.count(key)) first_shape[key] = results["plain"].image;
  CHECK(std::memcmp(first_shape[key].data(), results["plain"].image.data(), ref.image.size() * 4) == 0);
}

TEST_CASE(
    "GPU migration in fp16 storage: naive and tma (fused and separate), orders 4/8/16, host and device store, "
    "against the CPU",
    "[gpu]") {
  // The GPU's fp16 error against the fp32 CPU migrator held to the band of the CPU's emulation
  // of the same storage (validation::half_storage_band, the migration tolerance beside it);
  // the band's lower end well above that tolerance, so a GPU that did not round would fail.
  // One generated case per order and store (the host store at order 8 alone), variant and z_block.
  const auto order_store =
      GENERATE(table<int, std::string>({{8, "device"}, {8, "host"}, {4, "device"}, {16, "device"}}));
  const int order = std::get<0>(order_store);
  const std::string store = std::get<1>(order_store);
  const kernels::Variant variant =
      GENERATE(filter([](kernels::Variant v) { return v != kernels::Variant::tma || query_gpu().tma; },
                      values({kernels::Variant::naive, kernels::Variant::tma})));
  const int zb =
      GENERATE_COPY(filter([=](int z) { return variant != kernels::Variant::naive || z == 0; }, values({0, 7})));
  // The fused backward step (tma, order <= 8) and the separate kernels.
  const bool fused_asked =
      GENERATE_COPY(filter([=](int f) { return variant == kernels::Variant::tma || f == 0; }, values({1, 0}))) == 1;
  INFO("order " << order << ", " << store << " store, " << variant_name(variant) << ", z_block " << zb
                << (fused_asked ? ", migration.fused" : ""));
  const auto data = noise_data(migration_problem());
  const Problem p =
      migration_problem({"physics.space_order=" + std::to_string(order), "solver.storage=fp16"}, fused_asked, store);
  const double tol = validation::migration_tolerance(p);
  const std::string key = "fp16, " + std::to_string(order) + ", " + store + " store";
  const Result& ref = cpu_reference(key, p, data);
  const Result& em = cpu_reference(key + ", emulated", p, data, true);
  const double e16_image = validation::relative_l2(em.image.data(), ref.image.data(), ref.image.size());
  const double e16_level = validation::relative_l2(em.level.data(), ref.level.data(), ref.level.size());
  INFO("order " << order << ": fp16 storage error (emulated) image " << e16_image << ", source level " << e16_level);
  const validation::HalfStorageBand band_image = validation::half_storage_band(e16_image, tol);
  const validation::HalfStorageBand band_level = validation::half_storage_band(e16_level, tol);
  REQUIRE(band_image.lo > 2 * tol);
  REQUIRE(band_level.lo > 2 * tol);
  CudaOptions o = cuda_options(p.config);
  o.variant = variant;
  o.z_block = zb;
  REQUIRE(o.storage == kernels::Storage::fp16);
  CudaMigrator gpu(p, o);
  REQUIRE(gpu.fused() == (fused_asked && order <= 8));
  const Result r = migrate(gpu, p, data);
  const double ei = validation::relative_l2(r.image.data(), ref.image.data(), ref.image.size());
  const double es = r.level.size() == ref.level.size()
                        ? validation::relative_l2(r.level.data(), ref.level.data(), ref.level.size())
                        : 1.0;
  INFO(gpu.name() << ", " << store << " store: image " << ei << " (band " << band_image.lo << " .. " << band_image.hi
                  << "), source level " << es << " (band " << band_level.lo << " .. " << band_level.hi << ")");
  CHECK(band_image.holds(ei));
  CHECK(band_level.holds(es));
  // The separate steps' forward kernel launched in chunks of one tile row
  // (TmaTuning::chunk_rows) instead of the policy's order: the same bits.
  if (variant == kernels::Variant::tma && store == "device") {
    CudaOptions one_row = o;
    one_row.tuning.chunk_rows = 1;
    CudaMigrator rows(p, one_row);
    const Result rr = migrate(rows, p, data);
    INFO("chunks of one tile row");
    CHECK(std::memcmp(rr.image.data(), r.image.data(), r.image.size() * 4) == 0);
    CHECK(std::memcmp(rr.illumination.data(), r.illumination.data(), r.image.size() * 4) == 0);
  }
  // Without the level hook the steps run as CUDA graphs (the per-shot injections and
  // scales captured): the same band.
  if (variant == kernels::Variant::tma && store == "device") {
    CudaMigrator graphed(p, o);
    std::vector<float> image(p.grid.cells(), 0.0f), illumination(image.size(), 0.0f);
    graphed.migrate_shot(0, data.data(), image.data(), illumination.data(), [](const std::string&, long long) {});
    const double eg = validation::relative_l2(image.data(), ref.image.data(), ref.image.size());
    INFO("graphs: image " << eg);
    CHECK(band_image.holds(eg));
  }
}

TEST_CASE("migration.fused auto: the migrator takes the fused step in fp32 storage, separate kernels in fp16",
          "[gpu]") {
  for (const std::string storage : {"fp32", "fp16"}) {
    INFO("solver.storage " << storage);
    Problem p = migration_problem({"solver.storage=" + storage});
    p.config.migration->fused = FusedStep::automatic;
    CudaOptions o = cuda_options(p.config);
    o.variant = kernels::Variant::tma;
    const CudaMigrator gpu(p, o);
    CHECK(gpu.fused() == (storage == "fp32"));
    CHECK_THAT(gpu.name(), Contains(storage == "fp32" ? "fused backward step" : "separate backward kernels"));
  }
}

TEST_CASE("GPU migration takes at most 7 volumes + the store + the data + 10% of a volume", "[gpu]") {
  const Problem p = migration_problem({"grid.shape=[256,192,160]", "time.steps=60"});
  const auto data = noise_data(p);
  CudaOptions o;
  CudaMigrator gpu(p, o);
  std::vector<float> image(p.grid.cells(), 0.0f), illum(image.size(), 0.0f);
  gpu.migrate_shot(0, data.data(), image.data(), illum.data(), [](const std::string&, long long) {});
  const auto mem = gpu.device_memory();
  const MigrationFootprint fp = migration_footprint(p, o);
  const double extra = double(mem.peak) - double(fp.store + fp.data);
  INFO("peak " << mem.peak << " bytes, store " << fp.store << ", data " << fp.data << ": " << extra / mem.volume
               << " volumes besides store and data");
  CHECK(extra / mem.volume >= 7.0);  // the measurement sees what was allocated
  CHECK(extra / mem.volume <= 7.5);  // 7 volumes, + small arrays (fixed ~16 MiB at 30 MiB a volume)
}

TEST_CASE("a migration that fits neither as a store nor as checkpoints is refused with what would fit", "[gpu]") {
  // 4 GB a volume, 200000 steps: the store (about 30 TB) fits neither the device nor the host,
  // and the checkpoints at the longest interval the device holds do not fit the host either, in
  // one level or in two (about 2 sqrt(200000 / 500) = 40 states of 8 GB; a host of 120 GiB holds
  // 4 beside its own 14 volumes, one of 250 GiB 18).
  Problem p = migration_problem({"grid.shape=[1000,1000,1000]", "time.steps=200000"});
  CHECK_THROWS_WITH(CudaMigrator(p, CudaOptions{}), Contains("checkpointed migration needs") &&
                                                        Contains("checkpoints in two levels") &&
                                                        Contains("steps at this interval"));
  // One level asked for (a coarse interval below two segments): refused too, naming two levels.
  p.config.migration->coarse_checkpoint_interval = 1;
  CHECK_THROWS_WITH(CudaMigrator(p, CudaOptions{}), Contains("checkpointed migration needs") &&
                                                        Contains("checkpoints every") &&
                                                        Contains("with two levels of checkpoints"));
  p.config.migration->coarse_checkpoint_interval = 0;
  // The store alone (migration.reconstruction: store): the steps that would fit, and checkpoints.
  p.config.migration->reconstruction = Reconstruction::store;
  CHECK_THROWS_WITH(CudaMigrator(p, CudaOptions{}), Contains("needs") && Contains("steps") && Contains("GiB free") &&
                                                        Contains("migration.reconstruction: checkpoint"));
}

TEST_CASE("GPU adjoint (dot-product) test in float: <F f, r> = <f, F^T r> with the migrator's kernels", "[gpu]") {
  // The receiver field of GPU migration is F^T: the forward kernels driven by the data through
  // R^T (docs/ADJOINT.md). Float rounding: ~6e-8 per operation, a random walk over the steps
  // and the stencil's terms (~4e-6 at worst); the bar is 1e-5. Variable model,
  // damping zone, free surface, off-grid points, every variant (one generated case each).
  const kernels::Variant variant =
      GENERATE(values({kernels::Variant::tma, kernels::Variant::smem, kernels::Variant::naive}));
  INFO(variant_name(variant));
  const Problem p = migration_problem({"time.steps=160"});
  PointSet src = p.shots[0];
  src.add(p.grid, {207.0, 377.0, 451.5}, Interpolation::trilinear);
  std::mt19937 gen(11);
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> f(static_cast<size_t>(src.size() * p.steps)), r(static_cast<size_t>(p.receivers.size() * p.steps));
  for (auto& x : f) x = nd(gen);
  for (auto& x : r) x = nd(gen);
  CudaOptions o;
  o.variant = variant;
  o.z_block = variant == kernels::Variant::naive ? 0 : 16;
  CudaMigrator gpu(p, o);
  const auto Ff = gpu.model_traces(src, f);
  const auto Ftr = gpu.adjoint_traces(src, r);
  double a = 0, b = 0;
  for (size_t i = 0; i < r.size(); ++i) a += double(Ff[i]) * r[i];
  for (size_t i = 0; i < f.size(); ++i) b += double(f[i]) * Ftr[i];
  const double mismatch = std::abs(a - b) / std::abs(a);
  INFO(gpu.name() << ": <F f, r> = " << a << ", <f, F^T r> = " << b << ", relative mismatch " << mismatch);
  CHECK(std::abs(a) > 0);
  CHECK(mismatch <= 1e-5);
  // The test can fail: G r = F^T applied to the data one sample late (an off-by-one in the
  // injection index) is no adjoint of F, and <f, G r> then misses <F f, r> by far more.
  std::vector<float> late(r.size(), 0.0f);
  for (long long rr = 0; rr < p.receivers.size(); ++rr)
    for (long long n = 1; n < p.steps; ++n) late[rr * p.steps + n] = r[rr * p.steps + n - 1];
  const auto Glate = gpu.adjoint_traces(src, late);
  double wrong = 0;
  for (size_t i = 0; i < f.size(); ++i) wrong += double(f[i]) * Glate[i];
  INFO("a wrong adjoint (data one sample late): <f, G r> = " << wrong << " against <F f, r> = " << a);
  CHECK(std::abs(wrong - a) / std::abs(a) > 1e-3);
  // And F on the GPU is the CPU reference's F (same weights, same steps).
  const auto cpu = validation::model_traces<float>(p, src, f);
  CHECK(validation::relative_l2(Ff.data(), cpu.data(), cpu.size()) <=
        2 * (6.0 * p.radius + 4) * FLT_EPSILON * std::sqrt(double(p.steps)));
}

TEST_CASE("migration as CUDA graphs gives the step-by-step result bit for bit", "[gpu]") {
  // The graphs replay a period of lcm(2, image_interval) steps with the time index read from a
  // device counter; the step-by-step launches use the same kernels in the same order, so any
  // slip in parity, imaging levels, counter or remainder shows as a difference. Odd and even
  // intervals, a step count that leaves a remainder, fused and separate backward passes.
  // One generated case per backward pass, interval and step count.
  const bool fused = GENERATE(true, false);
  const long long every = GENERATE(1LL, 2LL, 3LL, 5LL);
  const long long steps = GENERATE(300LL, 301LL);
  INFO((fused ? "fused" : "separate") << ", image_interval " << every << ", " << steps << " steps");
  Problem p = migration_problem({"time.steps=" + std::to_string(steps)}, fused);
  p.config.migration->image_interval = every;
  const auto data = noise_data(p);
  Result r[2];
  for (int graphs = 0; graphs < 2; ++graphs) {
    CudaOptions o;
    o.graphs = graphs == 1;
    CudaMigrator gpu(p, o);
    r[graphs] = Result{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
    gpu.migrate_shot(0, data.data(), r[graphs].image.data(), r[graphs].illumination.data(),
                     [](const std::string&, long long) {});
  }
  REQUIRE(validation::max_abs(r[0].image.data(), r[0].image.size()) > 0);
  CHECK(std::memcmp(r[0].image.data(), r[1].image.data(), r[0].image.size() * 4) == 0);
  CHECK(std::memcmp(r[0].illumination.data(), r[1].illumination.data(), r[0].image.size() * 4) == 0);
}

TEST_CASE("GPU image gathers: fused and separate passes, graphs on and off, agree with the CPU's", "[gpu]") {
  // migration.gathers (offsets -7..7, every 5th x and 4th y cell) beside the image: the GPU's
  // gathers within validate's tolerance of the CPU migrator's (a pairing one level off, or an
  // offset read from the wrong side, is far outside it: the fields change by about w dt a step);
  // the graphs' bits the step-by-step launches'; the zero-offset trace within the tolerance of
  // the image's column (the same sum of products; the image kernels round with fused multiply-adds).
  const bool fused = GENERATE(true, false);
  INFO((fused ? "fused" : "separate"));
  Problem p = migration_problem({}, fused);
  p.config.migration->gathers = GathersConfig{7, 5, 4, 60, 2};
  const GatherLayout l = gather_layout(p);
  REQUIRE(l.values() > 0);
  const auto data = noise_data(p);
  auto run = [&](Migrator& m, Result& r, std::vector<float>& g) {
    r = Result{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
    g.assign(static_cast<size_t>(l.values()), 0.0f);
    m.gathers_into(g.data());
    m.migrate_shot(0, data.data(), r.image.data(), r.illumination.data(), [](const std::string&, long long) {});
  };
  validation::CpuMigrator cpu(p);
  Result rc, rg[2];
  std::vector<float> gc, gg[2];
  run(cpu, rc, gc);
  for (int graphs = 0; graphs < 2; ++graphs) {
    CudaOptions o;
    o.graphs = graphs == 1;
    CudaMigrator gpu(p, o);
    REQUIRE(gpu.fused() == fused);
    run(gpu, rg[graphs], gg[graphs]);
  }
  const double tol = validation::migration_tolerance(p);
  const double e = validation::relative_l2(gg[1].data(), gc.data(), gc.size());
  INFO("gathers relative L2 against the CPU's " << e << " (tolerance " << tol << ")");
  REQUIRE(validation::max_abs(gc.data(), gc.size()) > 0);
  CHECK(e <= tol);
  CHECK(std::memcmp(gg[0].data(), gg[1].data(), gc.size() * 4) == 0);
  std::vector<float> zero, column;
  for (size_t jy = 0; jy < l.y.size(); ++jy)
    for (size_t jx = 0; jx < l.x.size(); ++jx)
      for (long long z = 0; z < l.nz; ++z) {
        zero.push_back(gg[1][static_cast<size_t>(l.at(jy, jx, 0, z))]);
        column.push_back(rg[1].image[static_cast<size_t>(p.grid.index(l.x[jx], l.y[jy], z))]);
      }
  const double ez = validation::relative_l2(zero.data(), column.data(), column.size());
  INFO("zero offset against the image's columns: relative L2 " << ez);
  CHECK(ez <= tol);
}

TEST_CASE("the GPU's exact stack of two shots equals the CPU's within validate's tolerance", "[gpu]") {
  // Two shots through stack_shots (what migrate uses): each shot's image comes back from the
  // device and is added to the exact stack on the host, as the CPU's are. Tolerance as validate's.
  MigrationInput in;
  in.problem = migration_problem({"sources.shots=[[383.0, 261.0, 32.0], [251.0, 240.0, 45.0]]"});
  const Problem& p = in.problem;
  std::mt19937 gen(5);
  std::normal_distribution<float> nd(0, 1);
  in.traces.resize(static_cast<size_t>(p.shot_count() * p.receivers.size() * p.steps));
  for (auto& x : in.traces) x = nd(gen);
  validation::CpuMigrator cpu(p);
  CudaMigrator gpu(p, CudaOptions{});
  std::vector<float> ci, cl, gi, gl;
  stack_shots(in, cpu, true, ci, cl);
  stack_shots(in, gpu, true, gi, gl);
  const double tol = validation::migration_tolerance(p);
  const double ei = validation::relative_l2(gi.data(), ci.data(), ci.size());
  const double el = validation::relative_l2(gl.data(), cl.data(), cl.size());
  INFO("stack of 2 shots: image rel L2 " << ei << ", illumination " << el << " (tolerance " << tol << ")");
  CHECK(validation::max_abs(ci.data(), ci.size()) > 0);
  CHECK(ei <= tol);
  CHECK(el <= tol);
}

TEST_CASE("a boundary store in pinned host memory gives the device store's image, bit for bit", "[gpu]") {
  // The levels pass through a ring of 8 device slots with copies on their own stream; 300
  // steps cycle the ring many times, forwards and backwards. Same arithmetic: same bits.
  const bool fused = GENERATE(true, false);  // one generated case per backward pass
  INFO((fused ? "fused" : "separate"));
  const Problem dev = migration_problem({}, fused, "device"), host = migration_problem({}, fused, "host");
  const auto data = noise_data(dev);
  CudaMigrator a(dev, CudaOptions{}), b(host, CudaOptions{});
  REQUIRE(a.name().find("on the device") != std::string::npos);
  REQUIRE(b.name().find("pinned host memory") != std::string::npos);
  const Result ra = migrate(a, dev, data), rb = migrate(b, host, data);
  INFO(b.name());
  CHECK(validation::max_abs(ra.image.data(), ra.image.size()) > 0);
  CHECK(std::memcmp(ra.image.data(), rb.image.data(), ra.image.size() * 4) == 0);
  CHECK(std::memcmp(ra.illumination.data(), rb.illumination.data(), ra.image.size() * 4) == 0);
}

namespace {

// A tilted survey on a 45 x 37 x 41 grid (no multiple of the 32 x 8 block), damping zone of 8
// cells and a free surface; 220 steps. theta grows with depth (15 to 55 degrees) and phi is 30
// degrees, so the xy mixed derivative carries weight; epsilon and delta step up at 120 m. The
// top layer is isotropic where the source and receivers sit: a point injected into p and q
// where epsilon or delta is not zero excites the pseudo-acoustic system's spurious mode
// (tests/test_migration.cpp, the vti reflector). The qP wave (up to 2400 sqrt(1.4) m/s) crosses
// the grid to every face within the 220 steps, so the damping zone, the shell and the faces all
// carry signal.
const char* kTtiGrid = R"(grid: {shape: [45, 37, 41], spacing: 10}
time: {steps: 220}
physics: {equation: tti}
boundary: {damping_width: 8, free_surface: true}
model:
  vp: {type: layers, layers: [{top: 0, vp: 1800}, {top: 200, vp: 2400}]}
  epsilon: {type: layers, layers: [{top: 0, epsilon: 0}, {top: 120, epsilon: 0.2}]}
  delta: {type: layers, layers: [{top: 0, delta: 0}, {top: 120, delta: 0.1}]}
  theta: {type: gradient, value: 15, gradient: 0.1}
  phi: 30
sources: {wavelet: {peak_frequency: 15}, shots: [[223.0, 181.0, 32.0]]}
receivers: {line: {start: [90.5, 180.0, 21.0], end: [350.5, 182.0, 21.0], count: 15}}
)";

// The tti or vti migration problem (vti: the same model without the angles, which are no vti
// keys); image_interval 2, migration.fused true, which vti/tti ignore.
Problem anisotropic_problem(const std::string& equation, const std::vector<std::string>& sets = {},
                            const std::string& store = "auto") {
  std::string text = kTtiGrid;
  if (equation == "vti") text = text.substr(0, text.find("  theta:")) + text.substr(text.find("sources:"));
  std::vector<std::string> all = {"physics.equation=" + equation};
  all.insert(all.end(), sets.begin(), sets.end());
  Config c = parse_config(text, all);
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 2;
  mc.fused = FusedStep::on;
  mc.store = *from_text<StoreLocation>(store);
  c.migration = mc;
  return build_problem(c);
}

}  // namespace

TEST_CASE("GPU vti and tti migration: tma (z_block 0, 7) and naive agree with the CPU migrator", "[gpu]") {
  // One generated case per equation, variant and z_block; the CPU migrator runs once per
  // equation (cpu_reference).
  const std::string equation = GENERATE(as<std::string>{}, "tti", "vti");
  const auto variant_zb = GENERATE(table<kernels::Variant, int>(
      {{kernels::Variant::tma, 0}, {kernels::Variant::tma, 7}, {kernels::Variant::naive, 0}}));
  const kernels::Variant variant = std::get<0>(variant_zb);
  const int zb = std::get<1>(variant_zb);
  INFO(equation << ", " << variant_name(variant) << ", z_block " << zb);
  const Problem p = anisotropic_problem(equation);
  REQUIRE(to_text(p.equation) == equation);
  const auto data = noise_data(p);
  const double tol = validation::migration_tolerance(p);
  const Result& ref = cpu_reference(equation + ", tilted survey", p, data);
  REQUIRE(validation::max_abs(ref.image.data(), ref.image.size()) > 0);
  REQUIRE(validation::max_abs(ref.illumination.data(), ref.illumination.size()) > 0);
  REQUIRE(ref.level.size() > 0);
  CudaOptions o;
  o.variant = variant;
  o.z_block = zb;
  CudaMigrator gpu(p, o);
  // The name says what ran: the equation, and the separate kernels whatever migration.fused says.
  CHECK_THAT(gpu.name(), Contains("cuda " + equation + " ") && Contains("separate backward kernels") &&
                             Contains("migration.fused is ignored"));
  const Result r = migrate(gpu, p, data);
  const double ei = validation::relative_l2(r.image.data(), ref.image.data(), ref.image.size());
  const double el = validation::relative_l2(r.illumination.data(), ref.illumination.data(), ref.image.size());
  // The rebuilt source field p at level kLevel over the interior box: wrong q on the shell
  // (store) or a wrong source term in q would show here first.
  const double es = r.level.size() == ref.level.size()
                        ? validation::relative_l2(r.level.data(), ref.level.data(), ref.level.size())
                        : 1.0;
  INFO(gpu.name() << ": image rel L2 " << ei << ", illumination " << el << ", source level " << kLevel << " " << es
                  << " (tolerance 2 T eps sqrt(2 steps) = " << tol << ", T = " << validation::step_rounding_terms(p)
                  << ")");
  CHECK(ei <= tol);
  CHECK(el <= tol);
  CHECK(es <= tol);
}

TEST_CASE("GPU tti migration: graphs off and a host store give the same bits as graphs and a device store", "[gpu]") {
  // The host store keeps a level's p and q shells side by side in one slot, the device store
  // in two halves: the same values in the same order either way. Graphs replay the same kernels.
  const Problem dev = anisotropic_problem("tti", {}, "device"), host = anisotropic_problem("tti", {}, "host");
  const auto data = noise_data(dev);
  CudaOptions o;
  CudaMigrator a(dev, o), b(host, o);
  o.graphs = false;
  CudaMigrator c(dev, o);
  REQUIRE(a.name().find("on the device") != std::string::npos);
  REQUIRE(b.name().find("pinned host memory") != std::string::npos);
  const Result ra = migrate(a, dev, data), rb = migrate(b, host, data), rc = migrate(c, dev, data);
  REQUIRE(validation::max_abs(ra.image.data(), ra.image.size()) > 0);
  INFO(b.name());
  CHECK(std::memcmp(ra.image.data(), rb.image.data(), ra.image.size() * 4) == 0);
  CHECK(std::memcmp(ra.illumination.data(), rb.illumination.data(), ra.image.size() * 4) == 0);
  INFO("graphs off: " << c.name());
  CHECK(std::memcmp(ra.image.data(), rc.image.data(), ra.image.size() * 4) == 0);
  CHECK(std::memcmp(ra.illumination.data(), rc.illumination.data(), ra.image.size() * 4) == 0);
}

TEST_CASE("GPU tti migration takes at most its 15 planned volumes + the store of p and q + the data + 10%", "[gpu]") {
  const Problem p = anisotropic_problem("tti", {"grid.shape=[256,192,160]", "time.steps=60"});
  const auto data = noise_data(p);
  CudaOptions o;
  const MigrationFootprint fp = migration_footprint(p, o);
  REQUIRE(fp.volume_count == 15);
  // The store keeps the shell of p and q: twice the acoustic store of the same grid.
  Problem acoustic = p;
  acoustic.equation = Equation::acoustic;
  REQUIRE(fp.store == 2 * migration_footprint(acoustic, o).store);
  CudaMigrator gpu(p, o);
  std::vector<float> image(p.grid.cells(), 0.0f), illum(image.size(), 0.0f);
  gpu.migrate_shot(0, data.data(), image.data(), illum.data(), [](const std::string&, long long) {});
  CHECK(validation::max_abs(image.data(), image.size()) > 0);
  const auto mem = gpu.device_memory();
  const double planned = double(fp.volumes + fp.store + fp.data);
  INFO("peak " << mem.peak << " bytes; planned: " << fp.volume_count << " volumes " << fp.volumes << ", store "
               << fp.store << ", data " << fp.data << " (total with small arrays " << fp.total << ")");
  CHECK(double(mem.peak) >= double(fp.volumes + fp.store));  // the measurement sees what was allocated
  CHECK(double(mem.peak) <= 1.1 * planned);                  // + small arrays, tensor maps, module loading
}

TEST_CASE("the fused backward step's launch order and L2 hints leave its image bit for bit", "[gpu]") {
  // Each block computes the same cells with the same arithmetic whichever tile and z block it is
  // given and whatever L2 keeps, so the chunked launch order (the policy's chunk, and 1 and 3
  // tile rows) and the hinted kernel give the layer order's unhinted image, bit for bit. z blocks
  // of 7 and 16 planes on 61 (a short last block), and the whole column. One generated case per
  // z_block and tuning; the layer order's unhinted image is made once per z_block.
  const int z_block = GENERATE(7, 16, 0);
  using Tuned = std::pair<std::optional<int>, std::optional<int>>;  // chunk rows, L2 hint; unset: the policy's
  const Tuned tuned = GENERATE(
      values<Tuned>({{std::nullopt, 0}, {1, 0}, {3, 0}, {std::nullopt, 2}, {0, 1}, {std::nullopt, std::nullopt}}));
  const auto& [rows, hint] = tuned;
  INFO("z_block " << z_block << ", chunk rows " << (rows ? std::to_string(*rows) : "policy") << ", L2 hint "
                  << (hint ? std::to_string(*hint) : "policy"));
  Problem p = migration_problem({}, true);
  const auto data = noise_data(p);
  auto image_with = [&](std::optional<int> chunk_rows, std::optional<int> l2_hint) {
    CudaOptions o;
    o.variant = kernels::Variant::tma;
    o.z_block = z_block;
    o.tuning.chunk_rows = chunk_rows;
    o.tuning.l2_hint = l2_hint;
    CudaMigrator gpu(p, o);
    INFO(gpu.name());
    CHECK_THAT(gpu.name(), Contains("fused"));
    Result r{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
    gpu.migrate_shot(0, data.data(), r.image.data(), r.illumination.data(), [](const std::string&, long long) {});
    return r;
  };
  static std::map<int, Result> layer_order;
  if (!layer_order.count(z_block)) layer_order[z_block] = image_with(0, 0);
  const Result& layers = layer_order.at(z_block);
  REQUIRE(validation::max_abs(layers.image.data(), layers.image.size()) > 0);
  const Result r = image_with(rows, hint);
  CHECK(std::memcmp(layers.image.data(), r.image.data(), r.image.size() * 4) == 0);
  CHECK(std::memcmp(layers.illumination.data(), r.illumination.data(), r.image.size() * 4) == 0);
}

TEST_CASE(
    "a spread a shot on the GPU: each shot's traces and the migration of spreads of 3 and 5 receivers are the "
    "CPU's within the fp32 tolerance",
    "[gpu]") {
  // Two shots, spreads of their own (3 receivers, then 5 at other places and depths): the GPU
  // records each shot's own receivers and injects each shot's own data rows, rows beyond a
  // spread being padding.
  Config c = parse_config(
      test::fixture("gpu_migration.yaml",
                    {{"sources", "{wavelet: {peak_frequency: 15}, shots: [[300, 261, 32], [450, 261, 32]]}"},
                     {"receivers",
                      "{per_shot: [[[150, 260, 21], [250, 262, 40], [350, 261, 21]], [[300, 260, 21], [380, 262, 30], "
                      "[460, 261, 21], [540, 255, 50], [600, 262, 21]]]}"}}));
  const Problem fwd = build_problem(c);
  REQUIRE(fwd.varying_spread());
  REQUIRE(fwd.max_receivers() == 5);
  validation::CpuPropagator cpu(fwd);
  CudaPropagator gpu(fwd, cuda_options(fwd.config));
  std::vector<float> a(static_cast<size_t>(5 * fwd.steps)), b(a.size());
  const double tol = validation::forward_tolerance(fwd, fwd.steps);
  std::vector<float> data(static_cast<size_t>(2 * 5 * fwd.steps), 0.0f);  // [shot][5][step]
  for (long long s = 0; s < 2; ++s) {
    INFO("shot " << s);
    cpu.begin_shot(s);
    gpu.begin_shot(s);
    cpu.advance(0, fwd.steps);
    gpu.advance(0, fwd.steps);
    cpu.traces(b.data());
    gpu.traces(a.data());
    const size_t n = static_cast<size_t>(fwd.receivers_of(s).size() * fwd.steps);
    const double e = validation::relative_l2(a.data(), b.data(), n);
    INFO("traces relative L2 " << e << " (tolerance " << tol << ")");
    CHECK(e <= tol);
    CHECK(validation::max_abs(b.data(), n) > 0);
    std::copy(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n), data.begin() + s * 5 * fwd.steps);
  }
  // The migration of those traces (the CPU's, as data): GPU against CPU.
  MigrationConfig mc;
  mc.data = "unused.h5";
  mc.image_interval = 2;
  c.migration = mc;
  const Problem mig = build_problem(c);
  validation::CpuMigrator cm(mig);
  CudaMigrator gm(mig, cuda_options(mig.config));
  const size_t cells = static_cast<size_t>(mig.grid.cells());
  std::vector<float> ci(cells, 0.0f), cl(cells, 0.0f), gi(cells, 0.0f), gl(cells, 0.0f);
  for (long long s = 0; s < 2; ++s) {
    const float* d = data.data() + s * 5 * mig.steps;
    cm.migrate_shot(s, d, ci.data(), cl.data(), [](const std::string&, long long) {});
    gm.migrate_shot(s, d, gi.data(), gl.data(), [](const std::string&, long long) {});
  }
  const double mt = validation::migration_tolerance(mig);
  const double ei = validation::relative_l2(gi.data(), ci.data(), cells);
  INFO("image relative L2 " << ei << " (tolerance " << mt << ")");
  CHECK(ei <= mt);
  CHECK(validation::relative_l2(gl.data(), cl.data(), cells) <= mt);
}

TEST_CASE("the isic kernel adds the reference's isic level bit for bit, the box's faces included", "[gpu]") {
  // Random fields on a grid whose rows are padded (33 cells in rows of 64), a box with a cell of
  // the grid around it on some faces and none on others: the kernel's terms (dR kept by
  // launch_difference, the time term, the gradient components present only where both
  // neighbours lie in the box) and its sums onto images already holding values, against
  // isic_image_level: the same bits (each product and sum rounded alike, no fused multiply-add).
  // The gradients' neighbours: the box itself, or cells beyond it (a z slab's: its box is its own
  // planes, its neighbours' planes are valid).
  const Grid g{{33, 21, 17}, {10, 12.5, 8}};
  const long long nxp = 64, nx = g.n[0], ny = g.n[1], nz = g.n[2];
  const CellBox box{{1, 0, 2}, {nx - 1, ny, nz - 3}};
  const bool wider = GENERATE(false, true);
  INFO((wider ? "valid beyond the box" : "valid: the box"));
  const CellBox valid = wider ? CellBox{{0, 0, 1}, {nx, ny, nz - 1}} : box;
  const double dt = 0.0011;
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0, 1);
  std::uniform_real_distribution<float> speed(1500, 4500);
  auto random = [&](bool velocity) {
    std::vector<float> v(static_cast<size_t>(g.cells()));
    for (auto& x : v) x = velocity ? speed(gen) : nd(gen);
    return v;
  };
  const std::vector<float> s = random(false), s1 = random(false), r = random(false), r1 = random(false),
                           vp = random(true), image0 = random(false), illum0 = random(false);
  auto padded = [&](const std::vector<float>& v) {
    std::vector<float> h(static_cast<size_t>(nxp * ny * nz), 0.0f);
    for (long long iz = 0; iz < nz; ++iz)
      for (long long iy = 0; iy < ny; ++iy) std::copy_n(&v[g.index(0, iy, iz)], nx, &h[(iz * ny + iy) * nxp]);
    DeviceBuffer b(h.size() * 4, MemoryKind::plain);
    REQUIRE(cudaMemcpy(b.as<void>(), h.data(), h.size() * 4, cudaMemcpyHostToDevice) == cudaSuccess);
    return b;
  };
  std::vector<float> w(vp.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(1.0 / (double(vp[i]) * vp[i] * dt * dt));
  DeviceBuffer ds = padded(s), ds1 = padded(s1), dr = padded(r), dr1 = padded(r1), dw = padded(w),
               dimage = padded(image0), dillum = padded(illum0), dchange = padded(std::vector<float>(w.size(), 0));
  kernels::IsicArgs a;
  for (int k = 0; k < 3; ++k) {
    a.box.lo[k] = static_cast<int>(box.lo[k]), a.box.hi[k] = static_cast<int>(box.hi[k]);
    a.valid_lo[k] = static_cast<int>(valid.lo[k]), a.valid_hi[k] = static_cast<int>(valid.hi[k]);
  }
  a.box.sy = nxp, a.box.sz = nxp * ny;
  a.cx = static_cast<float>(0.25 / (g.h[0] * g.h[0])), a.cy = static_cast<float>(0.25 / (g.h[1] * g.h[1]));
  a.cz = static_cast<float>(0.25 / (g.h[2] * g.h[2]));
  kernels::launch_difference(dr1.as<float>(), dr.as<float>(), dchange.as<float>(), a.box, nullptr);
  kernels::launch_isic(ds.as<float>(), ds1.as<float>(), dr.as<float>(), dchange.as<float>(), dw.as<float>(),
                       dimage.as<float>(), dillum.as<float>(), a, nullptr);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float> image = image0, illum = illum0;
  validation::isic_image_level(g, box, valid, s.data(), s1.data(), r.data(), r1.data(), vp.data(), dt, image.data(),
                               illum.data());
  auto device = [&](const DeviceBuffer& b) {
    std::vector<float> h(static_cast<size_t>(nxp * ny * nz)), v(static_cast<size_t>(g.cells()));
    REQUIRE(cudaMemcpy(h.data(), b.as<void>(), h.size() * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (long long iz = 0; iz < nz; ++iz)
      for (long long iy = 0; iy < ny; ++iy) std::copy_n(&h[(iz * ny + iy) * nxp], nx, &v[g.index(0, iy, iz)]);
    return v;
  };
  const std::vector<float> gi = device(dimage), gl = device(dillum);
  long long differ = 0, changed = 0;
  for (size_t i = 0; i < gi.size(); ++i) {
    differ += std::memcmp(&gi[i], &image[i], 4) != 0 || std::memcmp(&gl[i], &illum[i], 4) != 0;
    changed += gi[i] != image0[i];
  }
  CHECK(changed == box.cells());  // every cell of the box and none outside it
  CHECK(differ == 0);
}

TEST_CASE("GPU isic: fused and separate passes, graphs on and off, agree with the CPU's", "[gpu]") {
  // migration.imaging_condition isic: the device's image (the isic kernel on imaging levels, dR
  // kept before the receiver step that overwrites chi^{k+2}) within validate's tolerance of the
  // CPU migrator's; a receiver change one level off changes the image by about w dt a level,
  // far outside it. Imaging every level and every 3rd (the fused step images level n + 1 and
  // keeps dR of level n in one step, or in different steps; odd intervals flip the parity).
  // Also the source field rebuilt from checkpoints every 23 levels (its replays leave the two
  // levels isic reads in place).
  const bool fused = GENERATE(true, false);
  const long long every = GENERATE(1LL, 3LL);
  const bool checkpoints = GENERATE(false, true);
  INFO((fused ? "fused" : "separate") << ", image_interval " << every << (checkpoints ? ", checkpoints" : ""));
  Problem p = migration_problem({}, fused);
  p.config.migration->image_interval = every;
  p.config.migration->imaging_condition = ImagingCondition::isic;
  if (checkpoints) {
    p.config.migration->reconstruction = Reconstruction::checkpoint;
    p.config.migration->checkpoint_interval = 23;
  }
  const auto data = noise_data(p);
  validation::CpuMigrator cpu(p);
  const Result rc = migrate(cpu, p, data);
  Result rg[2];
  for (int graphs = 0; graphs < 2; ++graphs) {
    CudaOptions o;
    o.graphs = graphs == 1;
    CudaMigrator gpu(p, o);
    REQUIRE(gpu.fused() == fused);
    // Without a source-level hook (migrate() sets one, and a hook turns the graphs off).
    Result& g = rg[graphs];
    g = Result{std::vector<float>(p.grid.cells(), 0.0f), std::vector<float>(p.grid.cells(), 0.0f), {}};
    gpu.migrate_shot(0, data.data(), g.image.data(), g.illumination.data(), [](const std::string&, long long) {});
  }
  const double tol = validation::migration_tolerance(p);
  const size_t cells = rc.image.size();
  const double ei = validation::relative_l2(rg[1].image.data(), rc.image.data(), cells);
  const double el = validation::relative_l2(rg[1].illumination.data(), rc.illumination.data(), cells);
  INFO("isic image relative L2 against the CPU's " << ei << ", illumination " << el << " (tolerance " << tol << ")");
  REQUIRE(validation::max_abs(rc.image.data(), cells) > 0);
  CHECK(ei <= tol);
  CHECK(el <= tol);
  CHECK(std::memcmp(rg[0].image.data(), rg[1].image.data(), cells * 4) == 0);
  // Not the correlation image under another name.
  Problem pc = p;
  pc.config.migration->imaging_condition = ImagingCondition::correlation;
  CudaMigrator gc(pc, CudaOptions{});
  const Result corr = migrate(gc, pc, data);
  CHECK(validation::relative_l2(corr.image.data(), rc.image.data(), cells) > 0.1);
}

TEST_CASE("the boundary store's gathers and scatters move every cell of the list, the last grid stride's included",
          "[gpu]") {
  // A field of random values and a sorted random list of its cells (as a shell's); the gathers
  // take several cells a thread a grid stride apart (kernels/rtm.cu), so the counts cover one
  // cell, a partial first stride, one cell past a whole block's share, and a list longer than one
  // pass of the largest grid (65535 blocks x 256 threads x 4 cells = 67,107,840) by a partial one.
  // Each gather (fp32 and fp16 fields copied, bf16 and scaled fp16 stores rounded as the host
  // rounds; at the level counter's slot, or slot 0 without a counter) must write exactly its
  // slot's entries, each its cell's value, and leave the others' NaN fill; the fp32 scatter must
  // write the slot back to exactly the listed cells.
  // The longest list with 32-bit cells only (as an 800^3 run's shell; the index width changes no
  // stride), and each store in one pass: the test takes seconds, not a minute.
  const auto count_wide = GENERATE(table<long long, bool>(
      {{1, false}, {1, true}, {3, false}, {1025, true}, {262145, false}, {262145, true}, {67107840 + 1001, false}}));
  const long long count = std::get<0>(count_wide);
  const bool wide = std::get<1>(count_wide);
  INFO("count " << count << (wide ? ", 64-bit cells" : ", 32-bit cells"));
  // Ascending cells, each a random 1 to 3 cells after the one before it.
  std::mt19937_64 gen(11);
  std::uniform_int_distribution<int> skip(1, 3);
  std::vector<long long> cells(static_cast<size_t>(count));
  for (long long k = 0, c = -1; k < count; ++k) cells[static_cast<size_t>(k)] = c += skip(gen);
  const long long n = cells.back() + 1;
  std::vector<float> field(static_cast<size_t>(n));
  std::normal_distribution<float> nd(0, 1);
  for (auto& v : field) v = nd(gen);
  auto upload = [](const void* h, std::size_t bytes) {
    DeviceBuffer b(std::max<std::size_t>(bytes, 4), MemoryKind::plain);
    REQUIRE(cudaMemcpy(b.as<void>(), h, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    return b;
  };
  const std::vector<unsigned> narrow(cells.begin(), cells.end());
  const DeviceBuffer dcells = wide ? upload(cells.data(), cells.size() * 8) : upload(narrow.data(), narrow.size() * 4);
  const DeviceBuffer dfield = upload(field.data(), field.size() * 4);
  const long long level_value = 5, slot_offset = -3;  // slot 2 of 3
  const DeviceBuffer dlevel = upload(&level_value, 8);
  auto gather = [&](auto* store, auto&&... rest) {
    if (wide)
      kernels::launch_gather_at(dfield.as<float>(), dcells.as<long long>(), count, store, dlevel.as<long long>(),
                                slot_offset, rest..., nullptr);
    else
      kernels::launch_gather_at(dfield.as<float>(), dcells.as<unsigned>(), count, store, dlevel.as<long long>(),
                                slot_offset, rest..., nullptr);
  };
  // The plain gather: no level counter, slot 0.
  auto plain_gather = [&](auto* store) {
    if (wide)
      kernels::launch_gather(dfield.as<float>(), dcells.as<long long>(), count, store, nullptr);
    else
      kernels::launch_gather(dfield.as<float>(), dcells.as<unsigned>(), count, store, nullptr);
  };
  auto scatter = [&](float* into, const auto* store, auto&&... rest) {
    if (wide)
      kernels::launch_scatter_at(into, dcells.as<long long>(), count, store, dlevel.as<long long>(), slot_offset,
                                 rest..., nullptr);
    else
      kernels::launch_scatter_at(into, dcells.as<unsigned>(), count, store, dlevel.as<long long>(), slot_offset,
                                 rest..., nullptr);
  };
  // NaNs a conversion of a finite value never gives: a slot still holding one was not written.
  const float nan32 = std::bit_cast<float>(0x7FC5A5A5u);
  __nv_bfloat16_raw bf_bits;
  bf_bits.x = 0x7FC5;
  __half_raw half_bits;
  half_bits.x = 0x7E5A;
  const __nv_bfloat16 nan_bf16(bf_bits);
  const __half nan_f16(half_bits);
  // A 3-slot store of E, every entry the fill.
  auto filled = [&](auto fill) {
    using E = decltype(fill);
    const std::vector<E> h(static_cast<size_t>(3 * count), fill);
    return upload(h.data(), h.size() * sizeof(E));
  };
  // After a gather into slot `at`: its entries unlike the host's values, and entries of the other
  // slots changed, both none.
  auto compare = [&](const DeviceBuffer& store, int at, auto fill, auto expect) {
    using E = decltype(fill);
    std::vector<E> h(static_cast<size_t>(3 * count));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(h.data(), store.as<void>(), h.size() * sizeof(E), cudaMemcpyDeviceToHost) == cudaSuccess);
    long long wrong = 0, touched = 0;
    for (long long k = 0; k < count; ++k) {
      const E e = expect(k);
      for (int slot = 0; slot < 3; ++slot) {
        const E& v = h[static_cast<size_t>(slot * count + k)];
        if (slot == at)
          wrong += std::memcmp(&v, &e, sizeof e) != 0;
        else
          touched += std::memcmp(&v, &fill, sizeof fill) != 0;
      }
    }
    CHECK(wrong == 0);
    CHECK(touched == 0);
  };
  auto value = [&](long long k) { return field[static_cast<size_t>(cells[static_cast<size_t>(k)])]; };
  {  // fp32 at the level counter's slot, then back into a zeroed field
    const float fill = nan32;
    DeviceBuffer store = filled(fill);
    gather(store.as<float>());
    compare(store, 2, fill, value);
    // The listed cells get their values, the others stay 0.
    DeviceBuffer back = upload(std::vector<float>(field.size(), 0.0f).data(), field.size() * 4);
    scatter(back.as<float>(), store.as<float>());
    std::vector<float> h(field.size());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(h.data(), back.as<void>(), h.size() * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    std::vector<char> listed(field.size(), 0);
    for (long long c : cells) listed[static_cast<size_t>(c)] = 1;
    long long wrong = 0;
    for (size_t i = 0; i < h.size(); ++i) wrong += h[i] != (listed[i] ? field[i] : 0.0f);
    CHECK(wrong == 0);
  }
  {  // fp32, the plain gather (no level counter): slot 0
    const float fill = nan32;
    DeviceBuffer store = filled(fill);
    plain_gather(store.as<float>());
    compare(store, 0, fill, value);
  }
  {  // bf16, rounded to nearest even: at the counter's slot, and without a counter (slot 0)
    const __nv_bfloat16 fill = nan_bf16;
    auto rounded = [&](long long k) { return __float2bfloat16_rn(value(k)); };
    DeviceBuffer store = filled(fill);
    gather(store.as<__nv_bfloat16>());
    compare(store, 2, fill, rounded);
    DeviceBuffer plain = filled(fill);
    plain_gather(plain.as<__nv_bfloat16>());
    compare(plain, 0, fill, rounded);
  }
  {  // fp16 over a power-of-two scale
    const float scale = 0.25f;
    const __half fill = nan_f16;
    DeviceBuffer store = filled(fill);
    gather(store.as<__half>(), scale);
    compare(store, 2, fill, [&](long long k) { return __float2half_rn(value(k) * (1.0f / scale)); });
  }
  {  // fp16 storage: a field of halves copied into a store of halves at the counter's slot
    std::vector<__half> halves(field.size());
    for (size_t i = 0; i < field.size(); ++i) halves[i] = __float2half_rn(field[i]);
    const DeviceBuffer dhalves = upload(halves.data(), halves.size() * sizeof(__half));
    const __half fill = nan_f16;
    DeviceBuffer store = filled(fill);
    if (wide)
      kernels::launch_gather_at(dhalves.as<__half>(), dcells.as<long long>(), count, store.as<__half>(),
                                dlevel.as<long long>(), slot_offset, nullptr);
    else
      kernels::launch_gather_at(dhalves.as<__half>(), dcells.as<unsigned>(), count, store.as<__half>(),
                                dlevel.as<long long>(), slot_offset, nullptr);
    compare(store, 2, fill, [&](long long k) { return halves[static_cast<size_t>(cells[static_cast<size_t>(k)])]; });
  }
}
