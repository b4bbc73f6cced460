#include "validation/cpu_wave.hpp"

#include <algorithm>

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
void CpuWave<Real>::zero() {
  std::fill(p_.begin(), p_.end(), Real(0));
  std::fill(pp_.begin(), pp_.end(), Real(0));
}

template <class Real>
double CpuWave<Real>::scale(long long i) const {
  const auto& n = pb_.grid.n;
  const long long ix = i % n[0], iy = (i / n[0]) % n[1], iz = i / (n[0] * n[1]);
  const double s = double(pb_.damping[0][ix]) + pb_.damping[1][iy] + pb_.damping[2][iz];
  return double(m_[i]) / (1.0 + s);
}

template <class Real>
void CpuWave<Real>::inject(const PointSet& ps, long long point, double value, const Box& box) {
  const auto& n = pb_.grid.n;
  for (long long e = ps.offset[point]; e < ps.offset[point + 1]; ++e) {
    const long long i = ps.cell[e];
    const long long c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
    bool inside = true;
    for (int a = 0; a < 3; ++a) inside = inside && c[a] >= box.lo[a] && c[a] < box.hi[a];
    if (inside) pp_[i] += static_cast<Real>(scale(i) * ps.weight[e] * value);
  }
}

template <class Real>
void CpuWave<Real>::finish() {
  if (pb_.free_surface) std::fill_n(pp_.begin(), pb_.grid.n[0] * pb_.grid.n[1], Real(0));
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
