#include "validation/cpu_propagator.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace seisrtm::validation {

CpuPropagator::CpuPropagator(const Problem& problem) : problem_(problem), wave_(problem) {
  traces_.assign(static_cast<size_t>(problem.receivers.size() * problem.steps), 0.0f);
}

std::string CpuPropagator::name() const {
  return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
}

void CpuPropagator::begin_shot(long long shot) {
  shot_ = shot;
  wave_.zero();
  std::fill(traces_.begin(), traces_.end(), 0.0f);
}

void CpuPropagator::advance(long long first, long long count) {
  const PointSet& src = problem_.shots[shot_];
  const PointSet& rec = problem_.receivers;
  for (long long n = first; n < first + count; ++n) {
    // p^{n+1} = [2 p^n - (1 - s) p^{n-1} + m (L p^n + sum w f(n dt) / (hx hy hz))] / (1 + s)
    wave_.update();
    const double f = double(problem_.wavelet[n]) / problem_.cell_volume();
    for (long long k = 0; k < src.size(); ++k) wave_.inject(src, k, f);
    wave_.finish();
    for (long long r = 0; r < rec.size(); ++r)
      traces_[r * problem_.steps + n] = static_cast<float>(wave_.sample(rec, r));
  }
}

void CpuPropagator::wavefield(float* out) {
  std::memcpy(out, wave_.current(), static_cast<size_t>(problem_.grid.cells()) * sizeof(float));
}

void CpuPropagator::traces(float* out) {
  std::memcpy(out, traces_.data(), traces_.size() * sizeof(float));
}

}  // namespace seisrtm::validation
