// seisrtm validate: the CUDA backend against the CPU reference on the same problem.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_info.hpp"
#include "solver/storage.hpp"
#include "validation/cpu_migration.hpp"
#include "validation/cpu_propagator.hpp"
#include "validation/norms.hpp"
#include "validation/tolerance.hpp"

namespace seisrtm::app {

namespace {

// Measures the CPU reference's rate on a few steps of `p` and refuses a validation whose CPU
// side (`passes` propagations a shot) would take longer than the limit.
void check_cpu_time(const Problem& p, double passes, double cpu_limit_s, const std::string& what) {
  validation::CpuPropagator probe(p);
  probe.begin_shot(0);
  const long long k = std::min<long long>(3, p.steps);
  const auto t0 = std::chrono::steady_clock::now();
  probe.advance(0, k);
  const double rate = k * double(p.grid.cells()) /
                      std::max(1e-6, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const double estimate = passes * double(p.grid.cells()) * p.steps * p.shot_count() / rate;
  if (estimate > cpu_limit_s)
    throw Error("validate: the CPU " + what + " would need about " + std::to_string(int(estimate)) + " s (" +
                std::to_string(p.grid.cells()) + " cells x " + std::to_string(p.steps) + " steps x " +
                std::to_string(p.shot_count()) + " shots x " + std::to_string(int(passes)) + " propagations at " +
                std::to_string(rate / 1e9) + " GCells/s); the limit is " + std::to_string(int(cpu_limit_s)) +
                " s: shrink it, e.g. --set grid.shape=[128,128,128] --set time.steps=200");
}

// One row of the migration's table per output: the CUDA result against the CPU reference's;
// `ok` turns false on the first row above the tolerance (outside the band, for fp16 storage).
struct MigrationRows {
  double tol;
  bool half;
  bool ok = true;
  // em: the emulation's (fp16 storage), else null. info: printed, not held to the tolerance.
  void report(const std::string& what, const float* x, const float* ref, std::size_t n, const float* em = nullptr,
              bool info = false) {
    const double l2 = validation::relative_l2(x, ref, n);
    if (half && em) {
      const double e16 = validation::relative_l2(em, ref, n);
      const validation::HalfStorageBand band = validation::half_storage_band(e16, tol);
      const bool pass = band.holds(l2);
      ok = ok && pass;
      std::printf("  %-34s %11.3e %11.3e %11.3e %11.3e %s\n", what.c_str(), e16, l2, band.lo, band.hi,
                  pass ? "ok" : "FAIL");
      return;
    }
    const bool pass = l2 <= tol;  // NaN fails
    if (!info) ok = ok && pass;
    std::printf("  %-34s %14.3e %14.3e %14.3e %s\n", what.c_str(), l2, validation::max_abs_difference(x, ref, n),
                validation::max_abs(ref, n),
                info   ? "info (held to the band below)"
                : pass ? "ok"
                       : "FAIL");
  }
};

void print_migration_header(const std::string& config_path, const Problem& p, const std::string& cpu,
                            const std::string& gpu, double tol, bool half) {
  // tol = 2 T eps sqrt(2 steps), derived in validation/tolerance.hpp.
  const double terms = validation::step_rounding_terms(p);
  std::printf("validate %s (migration): %lld x %lld x %lld cells, %lld steps, %lld shot(s)\n", config_path.c_str(),
              p.grid.n[0], p.grid.n[1], p.grid.n[2], p.steps, p.shot_count());
  std::printf("  cpu:  %s\n  cuda: %s\n", cpu.c_str(), gpu.c_str());
  std::printf("  tolerance on relative L2: 2 T eps_f32 sqrt(2 steps), T = %.0f terms per cell update (%s) = %.3e\n",
              terms, to_text(p.equation).c_str(), tol);
  if (half)
    std::printf(
        "  fp16 storage: e16 = the CPU emulation's relative L2 against fp32 storage; the GPU's own, gpu-fp32,\n"
        "  must lie in [e16 / 2 - tol, 2 e16 + tol] (validation/tolerance.hpp)\n  %-34s %11s %11s %11s %11s\n",
        "output", "e16", "gpu-fp32", "band from", "to");
  else
    std::printf("  %-34s %14s %14s %14s\n", "output", "relative L2", "max abs", "max |ref|");
}

// A migrator's stack over the shots: correlation image and illumination, one float a cell.
struct Stack {
  std::vector<float> image, illumination, gathers;  // gathers: migration.gathers' offset gathers
};

// The stacks, and the normalised and Laplacian images finished from them as migrate does.
void compare_stacks(const Problem& p, double eps, const Stack& gpu, const Stack& cpu, const Stack& emu,
                    MigrationRows& rows) {
  const bool half = rows.half;
  const size_t cells = static_cast<size_t>(p.grid.cells());
  const bool isic = p.config.migration->imaging_condition == ImagingCondition::isic;
  rows.report(isic ? "image (isic)" : "image (correlation)", gpu.image.data(), cpu.image.data(), cells,
              half ? emu.image.data() : nullptr);
  rows.report("illumination", gpu.illumination.data(), cpu.illumination.data(), cells,
              half ? emu.illumination.data() : nullptr);
  const Images a = finish_images(p, gpu.image, gpu.illumination, eps),
               b = finish_images(p, cpu.image, cpu.illumination, eps);
  const Images e = half ? finish_images(p, emu.image, emu.illumination, eps) : Images{};
  rows.report("image (normalized)", a.normalized.data(), b.normalized.data(), cells,
              half ? e.normalized.data() : nullptr);
  rows.report("image (laplacian)", a.laplacian.data(), b.laplacian.data(), cells, half ? e.laplacian.data() : nullptr);
  // The offset gathers: sums of products of the same two fields as the image (at other cells of
  // a row), held to the same tolerance.
  if (!cpu.gathers.empty()) rows.report("offset gathers", gpu.gathers.data(), cpu.gathers.data(), cpu.gathers.size());
}

// The accuracy asked of a 16-bit boundary store (migration.store_precision bf16, fp16): each image's
// relative L2 against the same image with the exact (fp32) store.
constexpr double kStoreImageGoal = 1e-3;

// The 16-bit boundary store against the exact one: one row per output, the CPU's and the GPU's
// relative L2 against the CPU's output with an fp32 store (e_store and gpu-exact). `ok` turns
// false on the first row whose gpu-exact lies outside the band derived from e_store;
// `above_goal` names the images whose error, the CPU's or the GPU's, is above kStoreImageGoal.
//
// The band: the GPU and the CPU round the same forward-pass values to the same element (to
// nearest even; fp16 over the same power-of-two scale), values that differ only by the fp32
// arithmetic (tol). Unlike solver.storage fp16 the rounded values never feed the forward pass
// again (the store holds a copy; the levels stepped stay fp32), so the two stores differ only
// where a value lies within that difference of a rounding midpoint, and gpu-exact is e_store up
// to the fp32 tolerance: inside validation::half_storage_band(e_store, tol) = [e_store / 2 - tol,
// 2 e_store + tol], whose factor 2 is there for draws that diverge. A GPU that stores fp32
// (gpu-exact within tol) leaves it from below once e_store > 4 tol; one that rounds to a coarser
// element (bf16's 8 significant bits for fp16's 11: about 8 times the error) leaves it from above.
struct StoreRows {
  double tol;
  bool ok = true;
  std::vector<std::string> above_goal;
  // gpu and cpu: with the 16-bit store; exact: the CPU's with the fp32 store. image: held to the goal.
  void report(const std::string& what, const float* gpu, const float* cpu, const float* exact, std::size_t n,
              bool image) {
    const double e = validation::relative_l2(cpu, exact, n), eg = validation::relative_l2(gpu, exact, n);
    const validation::HalfStorageBand band = validation::half_storage_band(e, tol);
    const bool pass = band.holds(eg);
    ok = ok && pass;
    const bool missed = image && !(e <= kStoreImageGoal && eg <= kStoreImageGoal);  // NaN misses
    if (missed) above_goal.push_back(what);
    std::printf("  %-34s %11.3e %11.3e %11.3e %11.3e %s%s\n", what.c_str(), e, eg, band.lo, band.hi,
                pass ? "ok" : "FAIL", missed ? "  above goal" : "");
  }
};

void print_store_header(StorePrecision precision) {
  const std::string s = to_text(precision);
  std::printf("  boundary store %s against the exact (fp32) store: a second CPU migration, with an fp32 store;\n",
              s.c_str());
  std::printf(
      "  e_store = the CPU's relative L2 with the %s store against it; the GPU's own, gpu-exact, must lie in\n"
      "  [e_store / 2 - tol, 2 e_store + tol]: the same rounding of the same values (validation/tolerance.hpp);\n"
      "  the goal on the images is %g (rows above it are marked, for information)\n"
      "  %-34s %11s %11s %11s %11s\n",
      s.c_str(), kStoreImageGoal, "output", "e_store", "gpu-exact", "band from", "to");
}

// The stacks with the 16-bit store (the GPU's and the CPU's) against the CPU's with the exact one,
// and the normalised and Laplacian images finished from each.
void compare_to_exact_store(const Problem& p, double eps, const Stack& gpu, const Stack& cpu, const Stack& exact,
                            StoreRows& rows) {
  const size_t cells = static_cast<size_t>(p.grid.cells());
  rows.report("image (correlation)", gpu.image.data(), cpu.image.data(), exact.image.data(), cells, true);
  rows.report("illumination", gpu.illumination.data(), cpu.illumination.data(), exact.illumination.data(), cells,
              false);
  const Images a = finish_images(p, gpu.image, gpu.illumination, eps),
               b = finish_images(p, cpu.image, cpu.illumination, eps),
               x = finish_images(p, exact.image, exact.illumination, eps);
  rows.report("image (normalized)", a.normalized.data(), b.normalized.data(), x.normalized.data(), cells, true);
  rows.report("image (laplacian)", a.laplacian.data(), b.laplacian.data(), x.laplacian.data(), cells, true);
}

std::string join(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& w : names) list += (list.empty() ? "" : ", ") + w;
  return list;
}

// Migration: the CUDA migrator against the CPU migrator on every shot: the stacked correlation
// image and illumination, and the rebuilt source field at three levels of the first shot. With a
// 16-bit boundary store, both also against a CPU migration with the exact (fp32) store.
int validate_migration(const std::string& config_path, const Config& c, double cpu_limit_s) {
  const MigrationInput in = prepare_migration(c);
  const Problem& p = in.problem;
  for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());
  const GpuInfo g = query_gpu(c.solver.device);
  if (!g.present) throw Error("validate needs a GPU to compare against the CPU reference: " + g.reason);
  // Three propagations per shot: forward, the receiver field and the rebuilt source field; fp16
  // storage runs the CPU twice, the second time emulating it (validation/half.hpp): the GPU's
  // error against the fp32 reference is held to the emulation's (validation::half_storage_band).
  // A 16-bit boundary store (fp32 storage only) runs the CPU twice as well, the second time with
  // the exact store: a copy of the problem whose config says fp32, the caller's left as it is.
  const bool half = c.solver.storage == SolverStorage::fp16;
  const StorePrecision precision = c.migration->store_precision;
  const bool compressed = !half && precision != StorePrecision::fp32;
  check_cpu_time(p, half || compressed ? 6 : 3, cpu_limit_s, "migration");
  validation::CpuMigrator cpu(p);
  std::optional<validation::CpuMigrator> emu;
  if (half) {
    emu.emplace(p);
    emu->store_as_half(kHalfPeakExponent);
  }
  std::optional<Problem> exact_p;  // outlives `exact`, which holds a reference to it
  std::optional<validation::CpuMigrator> exact;
  if (compressed) {
    exact_p.emplace(p);
    exact_p->config.migration->store_precision = StorePrecision::fp32;
    exact.emplace(*exact_p);
  }
  CudaMigrator gpu(p, gpu_options(c));
  for (const auto& n : gpu.notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", n.c_str());
  const double tol = validation::migration_tolerance(p);
  print_migration_header(config_path, p, cpu.name(), gpu.name(), tol, half);
  MigrationRows rows{tol, half};
  const size_t cells = static_cast<size_t>(p.grid.cells());
  // The interior is what the rebuilt source field is valid in.
  const CellBox box = interior_box(p);
  const long long levels[3] = {p.steps - 2, p.steps / 2, std::max(1LL, p.steps / 8)};
  std::map<long long, std::vector<float>> cpu_levels, gpu_levels, emu_levels, exact_levels;
  auto keep = [&](std::map<long long, std::vector<float>>& to) {
    return [&](long long n, const float* f) {
      if (n == levels[0] || n == levels[1] || n == levels[2]) to[n] = extract_box(p.grid, box, f);
    };
  };
  cpu.on_source_level = keep(cpu_levels);
  gpu.on_source_level = keep(gpu_levels);
  if (half) emu->on_source_level = keep(emu_levels);
  if (compressed) exact->on_source_level = keep(exact_levels);
  Stack cs{std::vector<float>(cells, 0.0f), std::vector<float>(cells, 0.0f), {}};
  Stack gs{std::vector<float>(cells, 0.0f), std::vector<float>(cells, 0.0f), {}};
  Stack es{std::vector<float>(half ? cells : 0, 0.0f), std::vector<float>(half ? cells : 0, 0.0f), {}};
  Stack xs{std::vector<float>(compressed ? cells : 0, 0.0f), std::vector<float>(compressed ? cells : 0, 0.0f), {}};
  const size_t gather_values = static_cast<size_t>(gather_layout(p).values());
  cs.gathers.assign(gather_values, 0.0f);
  gs.gathers.assign(gather_values, 0.0f);
  if (gather_values > 0) {  // (added shot after shot, as the images)
    cpu.gathers_into(cs.gathers.data());
    gpu.gathers_into(gs.gathers.data());
  }
  const long long nrec = p.max_receivers();  // the data's rows a shot
  for (long long s = 0; s < p.shot_count(); ++s) {
    const float* data = in.traces.data() + s * nrec * p.steps;
    cpu.migrate_shot(s, data, cs.image.data(), cs.illumination.data(), [](const std::string&, long long) {});
    gpu.migrate_shot(s, data, gs.image.data(), gs.illumination.data(), [](const std::string&, long long) {});
    if (half) emu->migrate_shot(s, data, es.image.data(), es.illumination.data(), [](const std::string&, long long) {});
    if (compressed)
      exact->migrate_shot(s, data, xs.image.data(), xs.illumination.data(), [](const std::string&, long long) {});
    if (s == 0) {
      cpu.on_source_level = nullptr;
      gpu.on_source_level = nullptr;
      if (half) emu->on_source_level = nullptr;
      if (compressed) exact->on_source_level = nullptr;
      // A 16-bit store: where a shell value lies within the fp32 arithmetic's difference of a
      // rounding midpoint, the GPU and the CPU store neighbouring 16-bit values, half an element's
      // ulp apart (2^-9 of the value in bf16, 2^-12 of the scale in fp16), far above the fp32
      // tolerance, and each such flip stays in the rebuilt levels below it. So the rebuilt levels
      // are held to the band of the store's own error against the exact store (the table below);
      // the images, sums over every level, stay within the fp32 tolerance.
      for (long long n : levels)
        if (cpu_levels.count(n) && gpu_levels.count(n))
          rows.report("shot 0 source field level " + std::to_string(n), gpu_levels[n].data(), cpu_levels[n].data(),
                      cpu_levels[n].size(), half && emu_levels.count(n) ? emu_levels[n].data() : nullptr, compressed);
    }
  }
  compare_stacks(p, c.migration->illumination_epsilon, gs, cs, es, rows);
  StoreRows store_rows{tol, true, {}};
  if (compressed) {
    print_store_header(precision);
    for (long long n : levels)
      if (cpu_levels.count(n) && gpu_levels.count(n) && exact_levels.count(n))
        store_rows.report("shot 0 source field level " + std::to_string(n), gpu_levels[n].data(), cpu_levels[n].data(),
                          exact_levels[n].data(), exact_levels[n].size(), false);
    compare_to_exact_store(p, c.migration->illumination_epsilon, gs, cs, xs, store_rows);
  }
  const auto mem = gpu.device_memory();
  std::printf("  device memory at its peak %.3f GiB = %.2f volumes of %.3f GiB\n", mem.peak / 1073741824.0,
              double(mem.peak) / mem.volume, mem.volume / 1073741824.0);
  if (!store_rows.above_goal.empty())
    std::printf(
        "validate: warning: the %s boundary store misses its %g goal against the exact store on: %s; "
        "migration.store_precision: fp32 stores exactly\n",
        to_text(precision).c_str(), kStoreImageGoal, join(store_rows.above_goal).c_str());
  const bool ok = rows.ok && store_rows.ok;
  std::printf("validate: %s\n", ok ? "PASS" : "FAIL (relative L2 above the tolerance)");
  return ok ? 0 : 1;
}

void print_forward_header(const std::string& config_path, const Problem& p, const std::string& cpu,
                          const std::string& gpu, const std::string& emu, double tol, bool half) {
  std::printf("validate %s: %lld x %lld x %lld cells, %lld steps, %lld shot(s)\n", config_path.c_str(), p.grid.n[0],
              p.grid.n[1], p.grid.n[2], p.steps, p.shot_count());
  std::printf("  cpu:  %s\n  cuda: %s\n", cpu.c_str(), gpu.c_str());
  if (half) std::printf("  cpu fp16: %s\n", emu.c_str());
  std::printf("  tolerance on relative L2: T eps_f32 sqrt(steps), T = %.0f terms per cell update (%s) = %.3e\n",
              validation::step_rounding_terms(p), to_text(p.equation).c_str(), tol);
  if (half)
    std::printf(
        "  fp16 storage: e16 = the CPU emulation's relative L2 against fp32 storage, per output; the GPU's own,\n"
        "  gpu-fp32, must lie in [e16 / 2 - tol, 2 e16 + tol]: the same rounding, another draw of it\n"
        "  (traces: at most 2 e16 + tol; validation/tolerance.hpp); gpu-emu for information; fp16's\n"
        "  accuracy goal is e16 <= 1%%\n");
  if (half)
    std::printf("  %-28s %11s %11s %11s %11s %11s\n", "output", "e16", "gpu-fp32", "band from", "to", "gpu-emu");
  else
    std::printf("  %-28s %14s %14s %14s\n", "output", "relative L2", "max abs", "max |ref|");
}

// One row of the forward run's table per output; `ok` turns false on the first row that fails,
// `above_goal` names the outputs whose fp16 emulation misses the 1% goal.
struct ForwardRows {
  const Problem& p;
  double tol;
  bool ok = true;
  std::vector<std::string> above_goal;
  // fp16: x the GPU's, ref the fp32 reference's, em the emulation's.
  // traces: the band's upper end only (validation::half_storage_ceiling).
  void report_half(const std::string& what, const float* x, const float* ref, const float* em, std::size_t n,
                   bool traces) {
    const double e16 = validation::relative_l2(em, ref, n);
    const double to_emu = validation::relative_l2(x, em, n), to_ref = validation::relative_l2(x, ref, n);
    const validation::HalfStorageBand band =
        traces ? validation::half_storage_ceiling(p, p.steps, e16) : validation::half_storage_band(p, p.steps, e16);
    const bool pass = band.holds(to_ref);
    ok = ok && pass;
    if (!(e16 <= 0.01)) above_goal.push_back(what);
    std::printf("  %-28s %11.3e %11.3e %11.3e %11.3e %11.3e %s\n", what.c_str(), e16, to_ref, band.lo, band.hi, to_emu,
                pass ? "ok" : "FAIL");
  }
  void report(const std::string& what, const float* x, const float* ref, std::size_t n) {
    const double l2 = validation::relative_l2(x, ref, n);
    const double mx = validation::max_abs_difference(x, ref, n);
    const bool pass = l2 <= tol;  // NaN fails
    ok = ok && pass;
    std::printf("  %-28s %14.3e %14.3e %14.3e %s\n", what.c_str(), l2, mx, validation::max_abs(ref, n),
                pass ? "ok" : "FAIL");
  }
};

void print_goal_warning(const std::vector<std::string>& above_goal) {
  if (above_goal.empty()) return;
  std::printf(
      "validate: warning: fp16 storage misses its 1%% accuracy goal (e16 above 0.01) on: %s; use solver.storage: "
      "fp32 where that matters\n",
      join(above_goal).c_str());
}
}  // namespace

int cmd_validate(const std::string& config_path, const CommonOptions& o, double cpu_limit_s) {
  Config c = load_with_overrides(config_path, o);
  if (c.migration) return validate_migration(config_path, c, cpu_limit_s);
  const Problem p = build_problem(c);
  for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());
  const GpuInfo g = query_gpu(c.solver.device);
  if (!g.present) throw Error("validate needs a GPU to compare against the CPU reference: " + g.reason);
  // fp16 storage: a second CPU run emulates it (validation/half.hpp); the GPU is held to the
  // emulation, and to the fp32 reference with the emulation's own error added.
  const bool half = c.solver.storage == SolverStorage::fp16;
  check_cpu_time(p, half ? 2 : 1, cpu_limit_s, "reference");
  validation::CpuPropagator cpu(p);
  std::optional<validation::CpuPropagator> emu;
  if (half) {
    emu.emplace(p);
    emu->store_as_half(kHalfPeakExponent);
  }
  CudaPropagator gpu(p, gpu_options(c));
  for (const auto& n : gpu.notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", n.c_str());
  // Tolerance: each step rounds ~T float terms per cell (T = 6R + 4 for acoustic; vti and tti in
  // validation/tolerance.hpp); independent roundings grow like the square root of the step
  // count: tol = T FLT_EPSILON sqrt(steps).
  const double tol = validation::forward_tolerance(p, p.steps);
  print_forward_header(config_path, p, cpu.name(), gpu.name(), half ? emu->name() : std::string(), tol, half);

  const long long interval = c.output.snapshot_interval > 0 ? c.output.snapshot_interval : p.steps;
  std::vector<float> a(static_cast<size_t>(p.grid.cells())), b(a.size());
  std::vector<float> ta(static_cast<size_t>(p.max_receivers() * p.steps)), tb(ta.size());
  ForwardRows rows{p, tol, true, {}};
  std::vector<float> e(half ? a.size() : 0);
  for (long long s = 0; s < p.shot_count(); ++s) {
    cpu.begin_shot(s);
    gpu.begin_shot(s);
    if (half) emu->begin_shot(s);
    for (long long n = 0; n < p.steps;) {
      const long long k = std::min(interval, p.steps - n);
      cpu.advance(n, k);
      gpu.advance(n, k);
      if (half) emu->advance(n, k);
      n += k;
      cpu.wavefield(b.data());
      gpu.wavefield(a.data());
      const std::string what = "shot " + std::to_string(s) + " wavefield step " + std::to_string(n);
      if (half) {
        emu->wavefield(e.data());
        rows.report_half(what, a.data(), b.data(), e.data(), a.size(), false);
      } else {
        rows.report(what, a.data(), b.data(), a.size());
      }
    }
    if (!ta.empty() && p.receivers_of(s).size() > 0) {
      cpu.traces(tb.data());
      gpu.traces(ta.data());
      const std::string what = "shot " + std::to_string(s) + " traces";
      const size_t count = static_cast<size_t>(p.receivers_of(s).size() * p.steps);  // the shot's spread
      if (half) {
        std::vector<float> te(ta.size());
        emu->traces(te.data());
        rows.report_half(what, ta.data(), tb.data(), te.data(), count, true);
      } else {
        rows.report(what, ta.data(), tb.data(), count);
      }
    }
  }
  print_goal_warning(rows.above_goal);
  std::printf("validate: %s\n", rows.ok ? "PASS" : "FAIL (relative L2 above the tolerance)");
  return rows.ok ? 0 : 1;
}

}  // namespace seisrtm::app
