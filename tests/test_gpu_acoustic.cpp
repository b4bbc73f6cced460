// [gpu] Every CUDA variant against the CPU reference, on a grid that is no multiple of the block.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "base/error.hpp"
#include "io/config.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_info.hpp"
#include "solver/problem.hpp"
#include "solver/storage.hpp"
#include "tests/catch.hpp"
#include "validation/cpu_propagator.hpp"
#include "validation/norms.hpp"
#include "validation/tolerance.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;

namespace {

// The tuning that runs the tma kernel in the shape named `shape` (tma_shape_name); "" the policy's.
TmaTuning shape_tuning(const std::string& shape) {
  TmaTuning t;
  for (kernels::TmaShape k : kernels::kTmaShapes)
    if (shape == kernels::tma_shape_name(k)) t.shape = k;
  REQUIRE((shape.empty() || t.shape));
  return t;
}

// 97 x 83 x 71 cells (no multiple of 32 x 16), off-grid source, damping zone. 220 steps
// (0.30 s at order 16, 0.41 s at order 2): the direct wave crosses the receivers (200 m up) by
// 0.1 s and reaches every face, the damping zone and the free surface (350-480 m) by 0.25 s,
// so errors there show in the wavefield and in the traces (the test checks that they got there).
const char* kGrid = R"(grid: {shape: [97, 83, 71], spacing: 10}
time: {steps: 220}
boundary: {damping_width: 10}
model: {vp: {type: layers, layers: [{top: 0, vp: 1800}, {top: 300, vp: 2500}]}}
sources: {wavelet: {peak_frequency: 15}, shots: [[483.0, 411.0, 352.0]]}
receivers: {line: {start: [120.5, 400.0, 150.0], end: [860.5, 400.0, 150.0], count: 23}}
)";

struct Output {
  std::vector<float> field, traces;
};

Output run(Propagator& prop, const Problem& p) {
  Output o{std::vector<float>(p.grid.cells()), std::vector<float>(p.receivers.size() * p.steps)};
  prop.begin_shot(0);
  prop.advance(0, 25);  // two calls: the second starts mid-way (odd step, other buffer)
  prop.advance(25, p.steps - 25);
  prop.wavefield(o.field.data());
  prop.traces(o.traces.data());
  return o;
}

// A snapshot requested at step 20 and received after 20 more steps (the copy overlaps them)
// holds the wavefield of step 20, bit for bit.
void check_async_snapshot(const Problem& p, const CudaOptions& o) {
  CudaPropagator gpu(p, o);
  std::vector<float> direct(p.grid.cells()), async(p.grid.cells());
  gpu.begin_shot(0);
  gpu.advance(0, 20);
  gpu.wavefield(direct.data());
  gpu.request_wavefield(p.grid.cells());
  gpu.advance(20, 20);
  gpu.receive_wavefield(async.data());
  CHECK(std::memcmp(direct.data(), async.data(), direct.size() * 4) == 0);
  CHECK(validation::max_abs(direct.data(), direct.size()) > 0);
}

// The output of `make()`, made once per `key` in this process: the runs that every generated
// combination of one problem compares with (CPU references and emulations, the tma runs at
// z_block 0 and 16), so that a sweep runs each of them once, as the loops it replaces did, not
// once per combination.
const Output& once(const std::string& key, const std::function<Output()>& make) {
  static std::map<std::string, Output> made;
  auto at = made.find(key);
  if (at == made.end()) at = made.emplace(key, make()).first;
  return at->second;
}

// A kernel of the sweeps: naive, smem, or tma in one of its shapes (TmaTuning::shape); `shape`
// is "" where the variant has none.
struct Kind {
  std::string vname;
  kernels::Variant variant;
  std::string shape;
};

// The tma variant in each of its shapes, every shape the policy can choose; one shape for each
// group of runs compared bit for bit.
std::vector<Kind> kinds_of(const std::vector<std::pair<std::string, kernels::Variant>>& variants) {
  std::vector<Kind> kinds;
  for (const auto& [vname, variant] : variants) {
    if (variant != kernels::Variant::tma) kinds.push_back({vname, variant, ""});
    if (variant == kernels::Variant::tma)
      for (auto shape : kernels::kTmaShapes) kinds.push_back({vname, variant, kernels::tma_shape_name(shape)});
  }
  return kinds;
}

}  // namespace

// Each combination of order, free surface, kernel and z_block is one generated case (its INFO
// names it); the memory kinds, graphs, launch orders and L2 hints compared bit for bit with each
// other run inside it.
TEST_CASE("variants x space orders x z_block x memory x graphs agree with the CPU reference", "[gpu]") {
  // Orders 2, 4, 8 and 16; the free surface once, at the workhorse order.
  const auto order_surface = GENERATE(table<int, bool>({{2, false}, {4, false}, {8, false}, {8, true}, {16, false}}));
  const int order = std::get<0>(order_surface);
  const bool free_surface = std::get<1>(order_surface);
  const Kind kind = GENERATE(from_range(kinds_of(
      {{"naive", kernels::Variant::naive}, {"smem", kernels::Variant::smem}, {"tma", kernels::Variant::tma}})));
  const int zb = GENERATE_COPY(
      filter([=](int z) { return kind.variant != kernels::Variant::naive || z == 0; }, values({0, 16, 7})));
  const std::string& vname = kind.vname;
  const kernels::Variant variant = kind.variant;
  const std::string& shape = kind.shape;
  INFO("order " << order << (free_surface ? ", free surface" : "") << ", " << vname
                << (shape.empty() ? "" : " (" + shape + ")") << ", z_block " << zb);
  const Problem p =
      build_problem(parse_config(kGrid, {"physics.space_order=" + std::to_string(order),
                                         std::string("boundary.free_surface=") + (free_surface ? "true" : "false")}));
  const Output& ref = once("order " + std::to_string(order) + (free_surface ? ", free surface" : ""), [&] {
    validation::CpuPropagator cpu(p);
    return run(cpu, p);
  });
  REQUIRE(validation::max_abs(ref.field.data(), ref.field.size()) > 0);
  // validate's tolerance: each step rounds (6R + 4) operations in float, growing as the
  // square root of the step count (validation/tolerance.hpp).
  const double tol = validation::forward_tolerance(p, p.steps);
  // The cells within the damping width of a face (the free surface's plane included): the
  // wave must have reached them, else the test would not see errors there.
  const long long w = p.config.boundary.damping_width;
  std::vector<float> edge_ref;
  auto edge = [&](const std::vector<float>& f) {
    std::vector<float> e;
    for (long long iz = 0; iz < p.grid.n[2]; ++iz)
      for (long long iy = 0; iy < p.grid.n[1]; ++iy)
        for (long long ix = 0; ix < p.grid.n[0]; ++ix)
          if (ix < w || iy < w || iz < w || ix >= p.grid.n[0] - w || iy >= p.grid.n[1] - w || iz >= p.grid.n[2] - w)
            e.push_back(f[(iz * p.grid.n[1] + iy) * p.grid.n[0] + ix]);
    return e;
  };
  edge_ref = edge(ref.field);
  const double edge_share =
      validation::max_abs(edge_ref.data(), edge_ref.size()) / validation::max_abs(ref.field.data(), ref.field.size());
  INFO("largest |p| in the damping zone / largest |p|: " << edge_share);
  REQUIRE(edge_share > 1e-2);
  const TmaTuning shaped = shape_tuning(shape);
  std::map<std::string, Output> results;
  for (MemoryKind mem : {MemoryKind::plain, MemoryKind::compressible}) {
    for (bool graphs : {true, false}) {
      CudaOptions o;
      o.variant = variant;
      o.z_block = zb;
      o.memory = mem;
      o.graphs = graphs;
      o.tuning = shaped;
      CudaPropagator gpu(p, o);
      // No silent fallback: where the device offers compressible memory, it was granted.
      if (mem == MemoryKind::compressible && query_gpu().compression)
        REQUIRE_THAT(gpu.name(), Contains("compressible memory"));
      if (!shape.empty()) REQUIRE_THAT(gpu.name(), Contains("tma (" + shape + ")"));
      const Output out = run(gpu, p);
      const double e_field = validation::relative_l2(out.field.data(), ref.field.data(), ref.field.size());
      const double e_traces = validation::relative_l2(out.traces.data(), ref.traces.data(), ref.traces.size());
      const std::vector<float> edge_out = edge(out.field);
      const double e_edge = validation::relative_l2(edge_out.data(), edge_ref.data(), edge_ref.size());
      INFO(gpu.name() << ", order " << order << (free_surface ? ", free surface" : "") << ": wavefield rel L2 "
                      << e_field << ", damping zone " << e_edge << ", traces rel L2 " << e_traces << " (tolerance "
                      << tol << ")");
      CHECK(e_field <= tol);
      CHECK(e_edge <= tol);
      CHECK(e_traces <= tol);
      results[(mem == MemoryKind::plain ? "plain" : "compressible") + std::string(graphs ? "+graphs" : "")] = out;
    }
  }
  // The tma launch order in chunks of 1 and 2 tile rows (TmaTuning::chunk_rows; the grid
  // has 4 x 3 tiles, so 2 rows leave a shorter last chunk) besides the policy's, which
  // on this small grid is whole layers: the same cells, the same bits.
  if (variant == kernels::Variant::tma && zb != 0)
    for (const char* rows : {"1", "2"}) {
      CudaOptions o;
      o.variant = variant;
      o.z_block = zb;
      o.tuning = shaped;
      o.tuning.chunk_rows = std::atoi(rows);
      CudaPropagator gpu(p, o);
      REQUIRE_THAT(gpu.name(), Contains(std::string("launch order: chunks of ") + rows + " tile rows"));
      results[std::string("plain+graphs, chunks of ") + rows + " tile rows"] = run(gpu, p);
    }
  // The loads' L2 hints (TmaTuning::l2_hint) move no arithmetic: the same bits.
  if (variant == kernels::Variant::tma)
    for (const char* hint : {"0", "1", "2"}) {
      CudaOptions o;
      o.variant = variant;
      o.z_block = zb;
      o.tuning = shaped;
      o.tuning.l2_hint = std::atoi(hint);
      CudaPropagator gpu(p, o);
      // The name (and so bench's JSON) says which hints ran.
      if (std::string(hint) == "2")
        REQUIRE_THAT(gpu.name(), Contains("L2 hints: p_prev and m evict-first, p evict-last"));
      if (std::string(hint) == "0") REQUIRE_THAT(gpu.name(), !Contains("L2 hints"));
      results[std::string("plain+graphs, L2 hint ") + hint] = run(gpu, p);
    }
  // Same kernel, same arithmetic: graphs on/off, plain/compressible, the launch orders and
  // the L2 hints are bitwise equal.
  const Output& first = results.begin()->second;
  for (const auto& [k, r] : results) {
    INFO(vname << " " << shape << " z_block " << zb << " order " << order << ": " << k << " vs "
               << results.begin()->first);
    CHECK(std::memcmp(r.field.data(), first.field.data(), first.field.size() * 4) == 0);
    CHECK(std::memcmp(r.traces.data(), first.traces.data(), first.traces.size() * 4) == 0);
  }
}

TEST_CASE("fp16 storage: naive and tma in each shape x orders x z_block x memory agree with the CPU emulation",
          "[gpu]") {
  // The GPU's storage error (against the fp32 CPU reference) within a factor 2 of the CPU
  // emulation's (validation/half.hpp, validation::half_storage_band: the same rounding, another
  // draw of it); the emulation's error bounded below too, so these are half-precision runs.
  // One generated case per order, free surface, kernel and z_block, as in the test above.
  // Orders 2, 4, 8 and 16; the free surface at 8 alone.
  const auto order_surface = GENERATE(table<int, bool>({{2, false}, {4, false}, {8, false}, {8, true}, {16, false}}));
  const int order = std::get<0>(order_surface);
  const bool free_surface = std::get<1>(order_surface);
  const Kind kind = GENERATE(from_range(kinds_of(
      query_gpu().tma ? std::vector<std::pair<std::string, kernels::Variant>>{{"naive", kernels::Variant::naive},
                                                                              {"tma", kernels::Variant::tma}}
                      : std::vector<std::pair<std::string, kernels::Variant>>{{"naive", kernels::Variant::naive}})));
  // 3: z blocks thinner than the radius at orders 8 and 16.
  const int zb = GENERATE_COPY(
      filter([=](int z) { return kind.variant != kernels::Variant::naive || z == 0; }, values({0, 16, 7, 3})));
  const kernels::Variant variant = kind.variant;
  const std::string shape = kind.shape.empty() ? kind.vname : kind.shape;  // "naive" or the tma shape
  INFO("order " << order << (free_surface ? ", free surface" : "") << ", " << kind.vname
                << (kind.shape.empty() ? "" : " (" + kind.shape + ")") << ", z_block " << zb);
  const Problem p =
      build_problem(parse_config(kGrid, {"physics.space_order=" + std::to_string(order), "solver.storage=fp16",
                                         std::string("boundary.free_surface=") + (free_surface ? "true" : "false")}));
  const std::string key = "fp16, order " + std::to_string(order) + (free_surface ? ", free surface" : "");
  const Output& ref = once(key, [&] {
    validation::CpuPropagator cpu(p);
    return run(cpu, p);
  });
  const Output& em = once(key + ", emulated", [&] {
    validation::CpuPropagator emu(p);
    emu.store_as_half(kHalfPeakExponent);
    return run(emu, p);
  });
  const double s_field = validation::relative_l2(em.field.data(), ref.field.data(), ref.field.size());
  const double s_traces = validation::relative_l2(em.traces.data(), ref.traces.data(), ref.traces.size());
  INFO("order " << order << ": fp16 storage error (emulated) wavefield " << s_field << ", traces " << s_traces);
  const validation::HalfStorageBand band_field = validation::half_storage_band(p, p.steps, s_field);
  const validation::HalfStorageBand band_traces = validation::half_storage_ceiling(p, p.steps, s_traces);
  // The bands' lower ends well above the float arithmetic's tolerance: a GPU that did not
  // round to halves would fall below them.
  const double tol32 = validation::forward_tolerance(p, p.steps);
  REQUIRE(band_field.lo > 2 * tol32);
  const TmaTuning shaped = shape_tuning(kind.shape);
  std::map<std::string, Output> results;
  for (MemoryKind mem : {MemoryKind::plain, MemoryKind::compressible}) {
    CudaOptions o = cuda_options(p.config);
    o.variant = variant;
    o.z_block = zb;
    o.memory = mem;
    o.graphs = mem == MemoryKind::plain;
    o.tuning = shaped;
    CudaPropagator gpu(p, o);
    REQUIRE_THAT(gpu.name(), Contains("fp16 storage"));
    // Half the bytes of a float volume (rows padded to 32 elements).
    REQUIRE(gpu.device_memory().volume ==
            static_cast<std::size_t>((p.grid.n[0] + 31) / 32 * 32) * p.grid.n[1] * p.grid.n[2] * 2);
    const Output out = run(gpu, p);
    const double e_field = validation::relative_l2(out.field.data(), ref.field.data(), ref.field.size());
    const double e_traces = validation::relative_l2(out.traces.data(), ref.traces.data(), ref.traces.size());
    INFO(gpu.name() << ", order " << order << (free_surface ? ", free surface" : "") << ": storage error wavefield "
                    << e_field << " (band " << band_field.lo << " .. " << band_field.hi << "), traces " << e_traces
                    << " (band " << band_traces.lo << " .. " << band_traces.hi << "); against the emulation "
                    << validation::relative_l2(out.field.data(), em.field.data(), em.field.size()));
    CHECK(band_field.holds(e_field));
    CHECK(band_traces.holds(e_traces));
    results[mem == MemoryKind::plain ? "plain+graphs" : "compressible"] = out;
  }
  // The launch order in chunks of 1 and 2 tile rows (TmaTuning::chunk_rows; the policy's
  // is whole layers on this 4 x 3-tile grid): the same bits.
  if (variant == kernels::Variant::tma && zb == 7)
    for (const char* rows : {"1", "2"}) {
      CudaOptions o = cuda_options(p.config);
      o.variant = variant;
      o.z_block = zb;
      o.tuning = shaped;
      o.tuning.chunk_rows = std::atoi(rows);
      CudaPropagator gpu(p, o);
      results[std::string("plain+graphs, chunks of ") + rows + " tile rows"] = run(gpu, p);
    }
  if (variant == kernels::Variant::tma)
    for (const char* hint : {"0", "1", "2"}) {  // the L2 hints: the same bits
      CudaOptions o = cuda_options(p.config);
      o.variant = variant;
      o.z_block = zb;
      o.tuning = shaped;
      o.tuning.l2_hint = std::atoi(hint);
      CudaPropagator gpu(p, o);
      REQUIRE_THAT(gpu.name(), !Contains("L2 hints"));  // fp16 storage takes none
      results[std::string("plain+graphs, L2 hint ") + hint] = run(gpu, p);
    }
  const Output& a = results.at("plain+graphs");
  for (const auto& [k, b] : results) {
    INFO(shape << " z_block " << zb << " order " << order << ": plain+graphs vs " << k);
    CHECK(std::memcmp(a.field.data(), b.field.data(), a.field.size() * 4) == 0);
    CHECK(std::memcmp(a.traces.data(), b.traces.data(), a.traces.size() * 4) == 0);
  }
}

TEST_CASE("fp16 storage: the forms z_block picks give the bits of z_block 0 and 16 in each tma shape", "[gpu]") {
  // The forms z_block picks (kernels/acoustic_tma.cu): a z_block of at least the planes (71,
  // 100) marches the whole column as z_block 0 does (at order 8 the Whole form: the same bits
  // as z_block 0); z blocks of more than 32 planes (40) run two blocks an SM, those of at most
  // 32 (16) three at order 8 (Dense): the same arithmetic, the same bits. One generated case per
  // order, free surface, tma shape and z_block; the runs at z_block 0 and 16 it is compared with
  // are made once per order, free surface and shape.
  const auto order_surface = GENERATE(table<int, bool>({{2, false}, {4, false}, {8, false}, {8, true}, {16, false}}));
  const int order = std::get<0>(order_surface);
  const bool free_surface = std::get<1>(order_surface);
  const std::string shape = GENERATE(from_range(kinds_of({{"tma", kernels::Variant::tma}}))).shape;
  const auto zb_against = GENERATE(table<int, int>({{71, 0}, {100, 0}, {40, 16}}));
  const int zb = std::get<0>(zb_against);
  const int against = std::get<1>(zb_against);
  INFO("order " << order << (free_surface ? ", free surface" : "") << ", tma (" << shape << "), z_block " << zb
                << " vs " << against);
  if (!query_gpu().tma) {
    WARN("no tma on this GPU");
    return;
  }
  const Problem p =
      build_problem(parse_config(kGrid, {"physics.space_order=" + std::to_string(order), "solver.storage=fp16",
                                         std::string("boundary.free_surface=") + (free_surface ? "true" : "false")}));
  REQUIRE(p.grid.n[2] == 71);  // z_block 71: the grid's planes
  auto run_z_block = [&](int z_block) {
    CudaOptions o = cuda_options(p.config);
    o.variant = kernels::Variant::tma;
    o.z_block = z_block;
    o.tuning = shape_tuning(shape);
    CudaPropagator gpu(p, o);
    return run(gpu, p);
  };
  const Output& a = once("fp16, order " + std::to_string(order) + (free_surface ? ", free surface" : "") + ", tma (" +
                             shape + "), z_block " + std::to_string(against),
                         [&] { return run_z_block(against); });
  const Output b = run_z_block(zb);
  CHECK(std::memcmp(a.field.data(), b.field.data(), a.field.size() * 4) == 0);
  CHECK(std::memcmp(a.traces.data(), b.traces.data(), a.traces.size() * 4) == 0);
}

TEST_CASE("fp16 storage: snapshots, and an unstable run stops with a message naming the storage", "[gpu]") {
  const Problem p = build_problem(parse_config(kGrid, {"output.snapshot_interval=20", "solver.storage=fp16"}));
  CudaOptions o = cuda_options(p.config);
  REQUIRE(o.storage == kernels::Storage::fp16);
  check_async_snapshot(p, o);
  // An unstable dt: the halves overflow to Inf; the message names fp16 storage and the way out.
  Problem q = build_problem(parse_config(kGrid, {"time.steps=1024", "solver.storage=fp16"}));
  q.dt = 1.6 * q.dt_max;
  CudaPropagator gpu(q, cuda_options(q.config));
  gpu.begin_shot(0);
  CHECK_THROWS_WITH(gpu.advance(0, 1024), Contains("NaN or Inf by step") && Contains("solver.storage fp16") &&
                                              Contains("solver.storage: fp32"));
}

TEST_CASE("asynchronous snapshots deliver the wavefield of the step they were requested at", "[gpu]") {
  const Problem p = build_problem(parse_config(kGrid, {"output.snapshot_interval=20"}));
  CudaOptions o = cuda_options(p.config);
  REQUIRE(o.snapshots);
  check_async_snapshot(p, o);
}

TEST_CASE("a problem larger than the GPU is refused before any allocation", "[gpu]") {
  Problem p = build_problem(parse_config(kGrid));
  p.grid.n = {4000, 4000, 2000};  // 128 GB per volume; the check comes before anything reads vp
  CHECK_THROWS_WITH(CudaPropagator(p, CudaOptions{}), Contains("needs") && Contains("GiB free"));
}

TEST_CASE("an unstable run stops with the step and a hint", "[gpu]") {
  Problem p = build_problem(parse_config(kGrid, {"time.steps=1024"}));
  p.dt = 1.6 * p.dt_max;  // bypasses the config check on purpose
  CudaPropagator gpu(p, CudaOptions{});
  gpu.begin_shot(0);
  CHECK_THROWS_WITH(gpu.advance(0, 1024), Contains("NaN or Inf by step") && Contains("time.dt"));
}

TEST_CASE("a forward run takes at most 3 volumes + 10% of device memory, one volume more with snapshots", "[gpu]") {
  // 512 x 256 x 256 cells: 128 MiB per volume, so the fixed buffers (traces, graphs) count.
  // One generated case per memory kind and snapshot interval.
  const std::string memory = GENERATE(as<std::string>{}, "plain", "compressible");
  const int interval = GENERATE(0, 10);
  INFO(memory << " memory, snapshots every " << interval << " steps");
  const Problem p = build_problem(
      parse_config(kGrid, {"grid.shape=[512,256,256]", "time.steps=40",
                           "output.snapshot_interval=" + std::to_string(interval), "solver.memory=" + memory}));
  CudaOptions o = cuda_options(p.config);
  CudaPropagator gpu(p, o);
  std::vector<float> snap(p.grid.cells());
  gpu.begin_shot(0);
  gpu.advance(0, 20);
  if (interval > 0) gpu.request_wavefield(p.grid.cells());
  gpu.advance(20, 20);
  if (interval > 0) gpu.receive_wavefield(snap.data());
  const auto mem = gpu.device_memory();
  const double volumes = double(mem.peak) / mem.volume;
  INFO(memory << " snapshots every " << interval << ": " << mem.peak << " bytes = " << volumes << " volumes");
  CHECK(mem.volume == 512ull * 256 * 256 * 4);
  CHECK(volumes >= (interval > 0 ? 4.0 : 3.0));        // the measurement sees what was allocated
  CHECK(volumes <= 3.3 + (interval > 0 ? 1.0 : 0.0));  // 3 volumes + 10%, one more with snapshots
}

TEST_CASE("stepping time comes from CUDA events, within the wall time, and restarts with each shot", "[gpu]") {
  const Problem p = build_problem(parse_config(kGrid, {"time.steps=600"}));
  CudaPropagator gpu(p, cuda_options(p.config));
  gpu.begin_shot(0);
  CHECK(gpu.stepping_seconds() == 0);
  const auto t0 = std::chrono::steady_clock::now();
  gpu.advance(0, 300);  // two trace blocks and a part
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double first = gpu.stepping_seconds();
  CHECK(first > 0);
  CHECK(first <= wall);
  gpu.advance(300, 300);
  CHECK(gpu.stepping_seconds() > first);
  gpu.begin_shot(0);
  CHECK(gpu.stepping_seconds() == 0);
}

TEST_CASE("a device that does not exist is refused by name; asking about one changes nothing", "[gpu]") {
  int before = -1, after = -2, count = 0;
  REQUIRE(cudaGetDevice(&before) == cudaSuccess);
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  const GpuInfo missing = query_gpu(count);
  CHECK_FALSE(missing.present);
  CHECK_FALSE(missing.reason.empty());
  for (int d = 0; d < count; ++d) CHECK(query_gpu(d).present);
  REQUIRE(cudaGetDevice(&after) == cudaSuccess);
  CHECK(after == before);
  const Problem p = build_problem(parse_config(kGrid, {"time.steps=4"}));
  CudaOptions o;
  o.device = count;
  REQUIRE_THROWS_WITH(CudaPropagator(p, o), Contains("CUDA device " + std::to_string(count) + " is not usable"));
}
