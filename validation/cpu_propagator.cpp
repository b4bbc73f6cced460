#include "validation/cpu_propagator.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.hpp"
#include "validation/cpu_halo.hpp"
#include "validation/half.hpp"
#include "validation/norms.hpp"

namespace seisrtm::validation {

CpuPropagator::CpuPropagator(const Problem& problem) : problem_(problem) {
  if (problem.anisotropic())
    tti_.emplace(problem);
  else
    wave_.emplace(problem);
  traces_.assign(static_cast<size_t>(problem.max_receivers() * problem.steps), 0.0f);
}

CpuPropagator::CpuPropagator(const Problem& problem, const Slab& slab) : CpuPropagator(problem) {
  slab_ = slab;
}

std::string CpuPropagator::name() const {
  return std::string("cpu") + (tti_ ? " " + to_text(problem_.equation) : "") + " (" +
         std::to_string(omp_get_max_threads()) + " OpenMP threads" +
         (half_peak_exponent_ ? ", fp16 storage emulated" : "") + ")";
}

void CpuPropagator::store_as_half(int peak_exponent, bool model, HalfFields fields, HalfFormat format) {
  if (tti_ && (!model || fields != HalfFields::levels || format != HalfFormat::binary16))
    throw Error("half-precision storage of vti/tti is emulated for the model and the levels in binary16 only");
  if (slab_) throw Error("half-precision storage is emulated for a whole grid only (not a slab)");
  half_peak_exponent_ = peak_exponent;
  half_model_ = model;
  half_fields_ = fields;
  half_format_ = format;
}

void CpuPropagator::begin_shot(long long shot) {
  shot_ = shot;
  if (tti_)
    tti_->zero();
  else
    wave_->zero();
  if (half_peak_exponent_) {
    // p and q take the same source (validation/cpu_tti.hpp): one scale for both.
    const float scale = source_field_scale(problem_, shot, *half_peak_exponent_, "the shot");
    if (tti_) {
      tti_->store_as_half(scale);
      std::fill(traces_.begin(), traces_.end(), 0.0f);
      return;
    }
    wave_->store_as_half(scale, half_model_, half_fields_, half_format_);
  }
  std::fill(traces_.begin(), traces_.end(), 0.0f);
}

namespace {

// Whether every value of a field is finite (a NaN or Inf anywhere poisons the run).
bool all_finite(const float* v, long long n) {
  bool ok = true;
#pragma omp parallel for reduction(&& : ok) schedule(static)
  for (long long i = 0; i < n; ++i) ok = ok && std::isfinite(v[i]);
  return ok;
}

}  // namespace

void CpuPropagator::advance(long long first, long long count) {
  const PointSet& src = problem_.shots[shot_];
  const PointSet& rec = problem_.receivers_of(shot_);
  // As the CUDA backend: the wavefield is checked for NaN or Inf every kCheckEvery steps and at
  // the end of each call, so a run that blew up stops with a message instead of writing NaN.
  constexpr long long kCheckEvery = 256;
  auto check = [&](long long n) {
    bool bad = tti_ ? !tti_->finite() : !all_finite(wave_->current(), problem_.grid.cells());
    if (slab_) bad = any_rank(bad);  // every slab stops at the same step
    if (bad)
      throw SharedFailure("the wavefield became NaN or Inf by step " + std::to_string(n) +
                          ": the run is unstable or an input holds NaN; check time.dt (largest stable: " +
                          std::to_string(problem_.dt_max) + " s), the model's velocities and the wavelet");
  };
  // A slab computes its own planes only, in the GPU backend's order (edge planes, then the
  // interior: solver/decomposition.hpp); its halo planes come from the neighbours.
  std::vector<Box> boxes;
  if (slab_) {
    const SlabRanges r = slab_ranges(*slab_);
    for (auto [a, b] : {std::pair{r.own0, r.top}, std::pair{r.bottom, r.own1}, std::pair{r.top, r.bottom}})
      if (b > a) boxes.push_back(Box{{0, 0, a}, {problem_.grid.n[0], problem_.grid.n[1], b}});
  }
  for (long long n = first; n < first + count; ++n) {
    if (n > first && n % kCheckEvery == 0) check(n);
    if (slab_) {
      step_slab(n, boxes);
      continue;
    }
    // p^{n+1} = [2 p^n - (1 - s) p^{n-1} + m (L p^n + sum w f(n dt) / (hx hy hz))] / (1 + s)
    const double f = double(problem_.wavelet[n]) / problem_.cell_volume();
    if (tti_) {  // the same with p and q (validation/cpu_tti.hpp); the source enters both
      tti_->update();
      for (long long k = 0; k < src.size(); ++k) tti_->inject(src, k, double(problem_.wavelet[n]));
      tti_->finish();
      for (long long r = 0; r < rec.size(); ++r)
        traces_[r * problem_.steps + n] = static_cast<float>(tti_->sample(rec, r));
      continue;
    }
    wave_->update();
    for (long long k = 0; k < src.size(); ++k) wave_->inject(src, k, f);
    wave_->finish();
    for (long long r = 0; r < rec.size(); ++r)
      traces_[r * problem_.steps + n] = static_cast<float>(wave_->sample(rec, r));
  }
  check(first + count);
}

void CpuPropagator::step_slab(long long n, const std::vector<Box>& boxes) {
  const PointSet& src = problem_.shots[shot_];
  const PointSet& rec = problem_.receivers_of(shot_);
  const double w = double(problem_.wavelet[n]);
  for (const Box& b : boxes) {
    if (tti_) {
      tti_->update(b);
      for (long long k = 0; k < src.size(); ++k) tti_->inject(src, k, w, b);
    } else {
      wave_->update(b);
      for (long long k = 0; k < src.size(); ++k) wave_->inject(src, k, w / problem_.cell_volume(), b);
    }
  }
  if (tti_) {
    tti_->finish();
    exchange_halos(*tti_, problem_, *slab_);
  } else {
    wave_->finish();
    exchange_halos(*wave_, problem_, *slab_);
  }
  for (long long r = 0; r < rec.size(); ++r)
    traces_[r * problem_.steps + n] = static_cast<float>(tti_ ? tti_->sample(rec, r) : wave_->sample(rec, r));
}

void CpuPropagator::wavefield(float* out) {
  if (tti_) return tti_->p_field(out);
  std::memcpy(out, wave_->current(), static_cast<size_t>(problem_.grid.cells()) * sizeof(float));
}

void CpuPropagator::traces(float* out) {
  std::memcpy(out, traces_.data(),
              static_cast<size_t>(problem_.receivers_of(shot_).size() * problem_.steps) * sizeof(float));
}

}  // namespace seisrtm::validation
