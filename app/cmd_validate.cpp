// seisrtm validate: the CUDA backend against the CPU reference on the same problem.
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "app/commands.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_info.hpp"
#include "solver/error.hpp"
#include "validation/cpu_propagator.hpp"
#include "validation/norms.hpp"

namespace seisrtm::app {

namespace {
constexpr double kCpuSecondsLimit = 300;
}

int cmd_validate(const std::string& config_path, const CommonOptions& o, double cpu_limit_s) {
  Config c = load_with_overrides(config_path, o);
  const Problem p = build_problem(c);
  for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());
  const GpuInfo g = query_gpu();
  if (!g.present) throw Error("validate needs a GPU to compare against the CPU reference: " + g.reason);
  if (cpu_limit_s <= 0) cpu_limit_s = kCpuSecondsLimit;

  validation::CpuPropagator cpu(p);
  // Measure the CPU's rate on a few steps, then refuse sizes that would keep it busy too long.
  cpu.begin_shot(0);
  const long long probe = std::min<long long>(3, p.steps);
  const auto t0 = std::chrono::steady_clock::now();
  cpu.advance(0, probe);
  const double rate = probe * double(p.grid.cells()) /
                      std::max(1e-6, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const double estimate = double(p.grid.cells()) * p.steps * p.shot_count() / rate;
  if (estimate > cpu_limit_s)
    throw Error("validate: the CPU reference would need about " + std::to_string(int(estimate)) + " s (" +
                std::to_string(p.grid.cells()) + " cells x " + std::to_string(p.steps) + " steps x " +
                std::to_string(p.shot_count()) + " shots at " + std::to_string(rate / 1e9) +
                " GCells/s); the limit is " + std::to_string(int(cpu_limit_s)) +
                " s: shrink it, e.g. --set grid.shape=[128,128,128] --set time.steps=200");

  CudaPropagator gpu(p, cuda_options(c));
  for (const auto& n : gpu.notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", n.c_str());
  // Tolerance: each step rounds ~ (6R + 4) float terms per cell; independent roundings grow like
  // the square root of the step count: tol = (6R + 4) FLT_EPSILON sqrt(steps).
  const double tol = (6.0 * p.radius + 4) * FLT_EPSILON * std::sqrt(double(p.steps));
  std::printf("validate %s: %lld x %lld x %lld cells, %lld steps, %lld shot(s)\n", config_path.c_str(),
              p.grid.n[0], p.grid.n[1], p.grid.n[2], p.steps, p.shot_count());
  std::printf("  cpu:  %s\n  cuda: %s\n", cpu.name().c_str(), gpu.name().c_str());
  std::printf("  tolerance on relative L2: (6R + 4) eps_f32 sqrt(steps) = %.3e\n", tol);
  std::printf("  %-28s %14s %14s %14s\n", "output", "relative L2", "max abs", "max |ref|");

  const long long interval = c.output.snapshot_interval > 0 ? c.output.snapshot_interval : p.steps;
  std::vector<float> a(static_cast<size_t>(p.grid.cells())), b(a.size());
  std::vector<float> ta(static_cast<size_t>(p.receivers.size() * p.steps)), tb(ta.size());
  bool ok = true;
  auto report = [&](const std::string& what, const float* x, const float* ref, std::size_t n) {
    const double l2 = validation::relative_l2(x, ref, n);
    const double mx = validation::max_abs_difference(x, ref, n);
    const bool pass = l2 <= tol;  // NaN fails
    ok = ok && pass;
    std::printf("  %-28s %14.3e %14.3e %14.3e %s\n", what.c_str(), l2, mx, validation::max_abs(ref, n),
                pass ? "ok" : "FAIL");
  };
  for (long long s = 0; s < p.shot_count(); ++s) {
    cpu.begin_shot(s);
    gpu.begin_shot(s);
    for (long long n = 0; n < p.steps;) {
      const long long k = std::min(interval, p.steps - n);
      cpu.advance(n, k);
      gpu.advance(n, k);
      n += k;
      cpu.wavefield(b.data());
      gpu.wavefield(a.data());
      report("shot " + std::to_string(s) + " wavefield step " + std::to_string(n), a.data(), b.data(), a.size());
    }
    if (!ta.empty()) {
      cpu.traces(tb.data());
      gpu.traces(ta.data());
      report("shot " + std::to_string(s) + " traces", ta.data(), tb.data(), ta.size());
    }
  }
  std::printf("validate: %s\n", ok ? "PASS" : "FAIL (relative L2 above the tolerance)");
  return ok ? 0 : 1;
}

}  // namespace seisrtm::app
