#include "validation/cpu_wave.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "base/error.hpp"
#include "validation/half.hpp"

namespace seisrtm::validation {

Stencil make_stencil(const Problem& pb) {
  Stencil st;
  st.n = pb.grid.n;
  st.radius = pb.radius;
  st.d2 = pb.d2;
  for (int a = 0; a < 3; ++a) st.damping[a] = pb.damping[a].data();
  st.free_surface = pb.free_surface;
  return st;
}

template <class Real>
CpuWave<Real>::CpuWave(const Problem& pb) : pb_(pb), stencil_(make_stencil(pb)) {
  const size_t n = static_cast<size_t>(pb.grid.cells());
  m_.resize(n);
  const double dt2 = pb.dt * pb.dt;
  for (size_t i = 0; i < n; ++i) m_[i] = static_cast<Real>(double(pb.vp[i]) * pb.vp[i] * dt2);
  p_.assign(n, Real(0));
  pp_.assign(n, Real(0));
}

template <class Real>
void CpuWave<Real>::update(const Box& box) {
  acoustic_step<Real>(stencil_, m_.data(), p_.data(), pp_.data(), box);
  if (half_fields_ != HalfFields::levels) return;
  const auto& n = pb_.grid.n;
  const float s = half_scale_;
#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz)
    for (long long iy = box.lo[1]; iy < box.hi[1]; ++iy) {
      Real* row = pp_.data() + (iz * n[1] + iy) * n[0];
      for (long long ix = box.lo[0]; ix < box.hi[0]; ++ix)
        row[ix] = static_cast<Real>(store_half(static_cast<float>(row[ix]), s, half_format_));
    }
}

template <class Real>
void CpuWave<Real>::store_as_half(float field_scale, bool model, HalfFields fields, HalfFormat format) {
  if constexpr (!std::is_same_v<Real, float>) {
    throw Error("half-precision storage is emulated for the float wavefield only");
  } else {
    check_field_scale(field_scale);
    if (model && !model_half_) {  // once: the model's scale follows its largest value
      store_volume_half(m_, format);
      model_half_ = true;
    }
    half_scale_ = field_scale;
    half_fields_ = fields;
    half_format_ = format;
  }
}

template <class Real>
void CpuWave<Real>::zero() {
  std::fill(p_.begin(), p_.end(), Real(0));
  std::fill(pp_.begin(), pp_.end(), Real(0));
}

template <class Real>
double CpuWave<Real>::scale(long long i) const {
  const auto& n = pb_.grid.n;
  const long long ix = i % n[0], iy = (i / n[0]) % n[1], iz = i / (n[0] * n[1]);
  const double s = double(pb_.damping[0][ix]) + pb_.damping[1][iy] + pb_.damping[2][iz];
  // m as the constructor computes it, before any half rounding of the model: the CUDA backend's
  // source weights come from the model's values too, whatever the storage.
  const double m = static_cast<Real>(double(pb_.vp[i]) * pb_.vp[i] * pb_.dt * pb_.dt);
  return m / (1.0 + s);
}

template <class Real>
void CpuWave<Real>::inject(const PointSet& ps, long long point, double value, const Box& box) {
  const auto& n = pb_.grid.n;
  for (long long e = ps.offset[point]; e < ps.offset[point + 1]; ++e) {
    const long long i = ps.cell[e];
    const long long c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
    bool inside = true;
    for (int a = 0; a < 3; ++a) inside = inside && c[a] >= box.lo[a] && c[a] < box.hi[a];
    if (!inside) continue;
    pp_[i] += static_cast<Real>(scale(i) * ps.weight[e] * value);
    if (half_fields_ == HalfFields::levels)  // the injection stores the level again
      pp_[i] = static_cast<Real>(store_half(static_cast<float>(pp_[i]), half_scale_, half_format_));
  }
}

template <class Real>
void CpuWave<Real>::finish() {
  if (pb_.free_surface) std::fill_n(pp_.begin(), pb_.grid.n[0] * pb_.grid.n[1], Real(0));
  if (half_fields_ == HalfFields::increments) {
    // The increment d = p^{n+1} - p^n stored (scale s / 4), then p^{n+1} = p^n + d stored (scale
    // s); the level that becomes the previous one is p^{n+1} - d, as the kernel forms it.
    const float s = half_scale_, sd = s / 4;
    const long long n = pb_.grid.cells();
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; ++i) {
      const float d = store_half(static_cast<float>(pp_[i]) - static_cast<float>(p_[i]), sd, half_format_);
      const float next = store_half(static_cast<float>(p_[i]) + d, s, half_format_);
      pp_[i] = static_cast<Real>(next);
      p_[i] = static_cast<Real>(next - d);
    }
  }
  p_.swap(pp_);
}

template <class Real>
double CpuWave<Real>::sample(const PointSet& ps, long long point) const {
  double v = 0;
  for (long long e = ps.offset[point]; e < ps.offset[point + 1]; ++e) v += double(ps.weight[e]) * p_[ps.cell[e]];
  return v;
}

template class CpuWave<float>;
template class CpuWave<double>;

}  // namespace seisrtm::validation
