#include "validation/cpu_tti.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "base/error.hpp"
#include "solver/numerics.hpp"
#include "validation/half.hpp"

namespace seisrtm::validation {

void check_tti_model(const TtiModel& model) {
  const auto cells = static_cast<size_t>(model.grid.cells());
  if (model.radius < 1 || model.radius > kMaxTtiRadius)
    throw Error("TTI model: radius " + std::to_string(model.radius) + " must be in [1, " +
                std::to_string(kMaxTtiRadius) + "]");
  if (!(model.dt > 0)) throw Error("TTI model: dt must be positive");
  for (int a = 0; a < 3; ++a)
    if (model.grid.n[a] < 1 || !(model.grid.h[a] > 0))
      throw Error("TTI model: grid cells and spacing must be positive");
  const std::vector<double>* arrays[] = {&model.vp, &model.epsilon, &model.delta, &model.theta, &model.phi};
  const char* names[] = {"vp", "epsilon", "delta", "theta", "phi"};
  for (int k = 0; k < 5; ++k)
    if (arrays[k]->size() != cells)
      throw Error(std::string("TTI model: ") + names[k] + " holds " + std::to_string(arrays[k]->size()) +
                  " values, the grid has " + std::to_string(cells) + " cells");
  for (size_t i = 0; i < cells; ++i) {
    if (!(model.vp[i] > 0)) throw Error("TTI model: vp must be positive (cell " + std::to_string(i) + ")");
    if (!(1 + 2 * model.delta[i] > 0))
      throw Error("TTI model: 1 + 2 delta must be positive (cell " + std::to_string(i) + ")");
    if (!(model.delta[i] <= model.epsilon[i]))
      throw Error("TTI model: delta " + std::to_string(model.delta[i]) + " > epsilon " +
                  std::to_string(model.epsilon[i]) + " at cell " + std::to_string(i) +
                  ": the pseudo-acoustic system is unstable there; valid: delta <= epsilon");
  }
}

double tti_max_stable_dt(const TtiModel& model) {
  // The bound and its derivation: cpu_tti.hpp. v_max is the largest vp sqrt(max(1, 1 + 2 eps)).
  double v_max = 0;
  for (size_t i = 0; i < model.vp.size(); ++i)
    v_max = std::max(v_max, model.vp[i] * std::sqrt(std::max(1.0, 1 + 2 * model.epsilon[i])));
  return max_stable_dt(model.grid.h, model.radius, v_max);
}

// The per-cell model values: get(i) returns {vp, epsilon, delta, theta, phi} of grid cell i.
template <class Real>
template <class Get>
void CpuTti<Real>::setup(const Grid& grid, double dt, Get get) {
  for (int a = 0; a < 3; ++a) s_[a] = grid_.n[a] + 2 * r_;
  stride_ = {1, s_[0], s_[0] * s_[1]};

  // Second derivative: c_k / h^2 (c_{-k} = c_k). First derivative: a_k / h for k = 1..R from
  // Fornberg's weights on -R..R (the centre weight is 0, a_{-k} = -a_k).
  const auto c = second_derivative_weights(r_);
  std::vector<double> pts;
  for (int k = -r_; k <= r_; ++k) pts.push_back(k);
  const auto w1 = fornberg_weights(1, pts, 0.0);
  for (int a = 0; a < 3; ++a) {
    const double h = grid.h[a];
    d2_[a].resize(r_ + 1);
    d1_[a].assign(r_ + 1, Real(0));
    for (int k = 0; k <= r_; ++k) d2_[a][k] = static_cast<Real>(c[k] / (h * h));
    for (int k = 1; k <= r_; ++k) d1_[a][k] = static_cast<Real>(w1[r_ + k] / h);
    if (damp_[a].empty()) damp_[a].assign(static_cast<size_t>(grid.n[a]), 0.0f);
  }

  const size_t cells = static_cast<size_t>(grid.cells());
  for (auto* v : {&m_, &a_, &s2_, &nx_, &ny_, &nz_}) v->resize(cells);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < static_cast<long long>(cells); ++i) {
    const std::array<double, 5> v = get(i);              // vp, epsilon, delta, theta, phi
    m_[i] = static_cast<Real>(v[0] * v[0] * (dt * dt));  // as the acoustic m and the GPU volume
    a_[i] = static_cast<Real>(1 + 2 * v[1]);
    s2_[i] = static_cast<Real>(std::sqrt(1 + 2 * v[2]));
    nx_[i] = static_cast<Real>(std::sin(v[3]) * std::cos(v[4]));
    ny_[i] = static_cast<Real>(std::sin(v[3]) * std::sin(v[4]));
    nz_[i] = static_cast<Real>(std::cos(v[3]));
  }
  const size_t padded_cells = static_cast<size_t>(s_[0] * s_[1] * s_[2]);
  for (auto* f : {&p_, &pp_, &q_, &qp_, &gxp_, &gyp_, &gxq_, &gyq_}) f->assign(padded_cells, Real(0));
}

template <class Real>
CpuTti<Real>::CpuTti(const TtiModel& model) : grid_(model.grid), r_(model.radius) {
  check_tti_model(model);
  for (int a = 0; a < 3; ++a)
    if (!model.damping[a].empty() && model.damping[a].size() != static_cast<size_t>(model.grid.n[a]))
      throw Error("TTI model: damping of axis " + std::string(1, "xyz"[a]) + " needs one value per cell");
  damp_ = model.damping;
  free_surface_ = model.free_surface;
  setup(model.grid, model.dt, [&](long long i) {
    return std::array<double, 5>{model.vp[i], model.epsilon[i], model.delta[i], model.theta[i], model.phi[i]};
  });
}

template <class Real>
CpuTti<Real>::CpuTti(const Problem& pb) : grid_(pb.grid), r_(pb.radius) {
  const size_t cells = static_cast<size_t>(pb.grid.cells());
  if (!pb.anisotropic() || pb.epsilon.size() != cells || pb.delta.size() != cells ||
      (pb.equation == Equation::tti && (pb.theta.size() != cells || pb.phi.size() != cells)))
    throw Error("TTI solver: the problem holds no complete vti/tti model (physics.equation " + to_text(pb.equation) +
                ")");
  damp_ = pb.damping;
  free_surface_ = pb.free_surface;
  const bool tilted = !pb.theta.empty();
  setup(pb.grid, pb.dt, [&](long long i) {
    return std::array<double, 5>{pb.vp[i], pb.epsilon[i], pb.delta[i], tilted ? double(pb.theta[i]) : 0.0,
                                 tilted ? double(pb.phi[i]) : 0.0};
  });
}

template <class Real>
void CpuTti<Real>::mirror_top() {
  const long long plane = s_[0] * s_[1];
  for (auto* f : {&p_, &q_})
    for (int k = 1; k <= r_; ++k) {
      Real* dst = f->data() + (r_ - k) * plane;
      const Real* src = f->data() + (r_ + k) * plane;
      for (long long i = 0; i < plane; ++i) dst[i] = -src[i];
    }
}

template <class Real>
void CpuTti<Real>::zero() {
  for (auto* f : {&p_, &pp_, &q_, &qp_}) std::fill(f->begin(), f->end(), Real(0));
}

template <class Real>
void CpuTti<Real>::update() {
  update(CellBox{{0, 0, 0}, grid_.n});
}

template <class Real>
void CpuTti<Real>::update(const CellBox& box) {
  const long long nx = grid_.n[0], ny = grid_.n[1], nz = grid_.n[2];
  const int R = r_;
  const long long sx = stride_[0], sy = stride_[1], sz = stride_[2];
  const Real* p = p_.data();
  const Real* q = q_.data();
  // With a free surface the halo above z = 0 holds the odd image, and the first derivatives are
  // taken there too (D_a of the image is the image of D_a), so every stencil sees f(-z) = -f(z).
  if (free_surface_) mirror_top();
  const long long z_first = free_surface_ ? -R : 0;
  // Pass 2 reads Dx f at +-R in y and z and Dy f at +-R in z, in the box's own columns of x: pass
  // 1 covers the box widened by R in y and z, clipped to the grid (and its image planes above
  // z = 0). For the whole grid that is every grid cell, as before boxes existed.
  const long long x0 = box.lo[0], x1 = box.hi[0];
  const long long y0 = std::max(0LL, box.lo[1] - R), y1 = std::min(ny, box.hi[1] + R);
  const long long z0 = std::max(z_first, box.lo[2] - R), z1 = std::min(nz, box.hi[2] + R);

  // Local copies of the weights (no store through the fields can reach them, so the compiler
  // keeps them in registers and vectorises the x loops), and raw field pointers.
  Real w1[3][kMaxTtiRadius + 1] = {}, w2[3][kMaxTtiRadius + 1] = {};
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k <= R; ++k) {
      w1[a][k] = d1_[a][k];
      w2[a][k] = d2_[a][k];
    }
  Real* __restrict gxp_f = gxp_.data();
  Real* __restrict gyp_f = gyp_.data();
  Real* __restrict gxq_f = gxq_.data();
  Real* __restrict gyq_f = gyq_.data();

  // Pass 1: gx = Dx f, gy = Dy f for f = p, q on the grid cells; the halo of g stays 0, which
  // is D_a f = 0 outside the grid, so D_b (D_a f) below is the X-shaped tile with f = 0 outside.
#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = z0; iz < z1; ++iz) {
    for (long long iy = y0; iy < y1; ++iy) {
      const long long row = padded(0, iy, iz);
#pragma omp simd
      for (long long ix = x0; ix < x1; ++ix) {
        const long long i = row + ix;
        Real gxp = 0, gyp = 0, gxq = 0, gyq = 0;
        for (int k = 1; k <= R; ++k) {
          gxp += w1[0][k] * (p[i + k * sx] - p[i - k * sx]);
          gyp += w1[1][k] * (p[i + k * sy] - p[i - k * sy]);
          gxq += w1[0][k] * (q[i + k * sx] - q[i - k * sx]);
          gyq += w1[1][k] * (q[i + k * sy] - q[i - k * sy]);
        }
        gxp_f[i] = gxp;
        gyp_f[i] = gyp;
        gxq_f[i] = gxq;
        gyq_f[i] = gyq;
      }
    }
  }

  // Pass 2: the second derivatives, the mixed ones from the first-derivative fields, H0 p and
  // Hz q, and the leapfrog update of both fields into the previous levels.
  Real* __restrict pn = pp_.data();
  Real* __restrict qn = qp_.data();
  const Real* __restrict mm = m_.data();
  const Real* __restrict aa = a_.data();
  const Real* __restrict bb = s2_.data();
  const Real* __restrict nxv = nx_.data();
  const Real* __restrict nyv = ny_.data();
  const Real* __restrict nzv = nz_.data();
#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz) {
    for (long long iy = box.lo[1]; iy < box.hi[1]; ++iy) {
      const long long row = padded(0, iy, iz), grow = (iz * ny + iy) * nx;
      const Real s_yz = Real(damp_[1][iy]) + Real(damp_[2][iz]);
      const float* s_x = damp_[0].data();
#pragma omp simd
      for (long long ix = box.lo[0]; ix < box.hi[0]; ++ix) {
        const long long i = row + ix;
        const long long g = grow + ix;
        // d_aa f (1/m^2 x f) for f = p, q.
        Real pxx = w2[0][0] * p[i], pyy = w2[1][0] * p[i], pzz = w2[2][0] * p[i];
        Real qxx = w2[0][0] * q[i], qyy = w2[1][0] * q[i], qzz = w2[2][0] * q[i];
        // d_xy = D_y (D_x f), d_xz = D_z (D_x f), d_yz = D_z (D_y f).
        Real pxy = 0, pxz = 0, pyz = 0, qxy = 0, qxz = 0, qyz = 0;
        for (int k = 1; k <= R; ++k) {
          pxx += w2[0][k] * (p[i - k * sx] + p[i + k * sx]);
          pyy += w2[1][k] * (p[i - k * sy] + p[i + k * sy]);
          pzz += w2[2][k] * (p[i - k * sz] + p[i + k * sz]);
          qxx += w2[0][k] * (q[i - k * sx] + q[i + k * sx]);
          qyy += w2[1][k] * (q[i - k * sy] + q[i + k * sy]);
          qzz += w2[2][k] * (q[i - k * sz] + q[i + k * sz]);
          pxy += w1[1][k] * (gxp_f[i + k * sy] - gxp_f[i - k * sy]);
          pxz += w1[2][k] * (gxp_f[i + k * sz] - gxp_f[i - k * sz]);
          pyz += w1[2][k] * (gyp_f[i + k * sz] - gyp_f[i - k * sz]);
          qxy += w1[1][k] * (gxq_f[i + k * sy] - gxq_f[i - k * sy]);
          qxz += w1[2][k] * (gxq_f[i + k * sz] - gxq_f[i - k * sz]);
          qyz += w1[2][k] * (gyq_f[i + k * sz] - gyq_f[i - k * sz]);
        }
        const Real ax = nxv[g], ay = nyv[g], az = nzv[g];
        // H0 p = sum_a (1 - n_a^2) d_aa p - 2 (nx ny dxy + nx nz dxz + ny nz dyz) p
        const Real h0p = ((Real(1) - ax * ax) * pxx + (Real(1) - ay * ay) * pyy + (Real(1) - az * az) * pzz) -
                         Real(2) * (ax * ay * pxy + ax * az * pxz + ay * az * pyz);
        // Hz q = sum_a n_a^2 d_aa q + 2 (nx ny dxy + nx nz dxz + ny nz dyz) q
        const Real hzq =
            (ax * ax * qxx + ay * ay * qyy + az * az * qzz) + Real(2) * (ax * ay * qxy + ax * az * qxz + ay * az * qyz);
        // Branch-free: where s = 0, (1 - s) = 1 and / (1 + s) are exact, the undamped formula's
        // bits; one form lets the loop vectorise.
        const Real s = Real(s_x[ix]) + s_yz;
        pn[i] = (Real(2) * p[i] - (Real(1) - s) * pn[i] + mm[g] * (aa[g] * h0p + bb[g] * hzq)) / (Real(1) + s);
        qn[i] = (Real(2) * q[i] - (Real(1) - s) * qn[i] + mm[g] * (bb[g] * h0p + hzq)) / (Real(1) + s);
      }
    }
  }
  if (half_scale_ > 0) round_levels(box);
}

template <class Real>
void CpuTti<Real>::round_levels(const CellBox& box) {
  if constexpr (std::is_same_v<Real, float>) {
    const float s = half_scale_;
#pragma omp parallel for collapse(2) schedule(static)
    for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz)
      for (long long iy = box.lo[1]; iy < box.hi[1]; ++iy)
        for (long long ix = box.lo[0]; ix < box.hi[0]; ++ix) {
          const long long i = padded(ix, iy, iz);
          pp_[i] = store_half(pp_[i], s);
          qp_[i] = store_half(qp_[i], s);
        }
  }
}

template <class Real>
void CpuTti<Real>::store_as_half(float field_scale) {
  if constexpr (!std::is_same_v<Real, float>) {
    throw Error("half-precision storage is emulated for the float TTI fields only");
  } else {
    check_field_scale(field_scale);
    half_scale_ = field_scale;
    if (!m_source_.empty()) return;  // the model is rounded once
    m_source_ = m_;
    // Each model volume as its own power-of-two scale times halves, as a kernel reading m,
    // 1 + 2 eps, sqrt(1 + 2 delta), theta and phi in 16 bits would see them; the axis is formed
    // in double from the rounded angles (recovered from n: theta in [0, pi], phi = atan2(ny, nx);
    // n and -n give the same operator).
    const long long cells = static_cast<long long>(m_.size());
    store_volume_half(m_);
    store_volume_half(a_);
    store_volume_half(s2_);
    std::vector<float> th(static_cast<size_t>(cells)), ph(static_cast<size_t>(cells));
    for (long long i = 0; i < cells; ++i) {
      th[i] = static_cast<float>(std::acos(std::clamp(double(nz_[i]), -1.0, 1.0)));
      ph[i] = (nx_[i] == 0 && ny_[i] == 0) ? 0.0f : static_cast<float>(std::atan2(double(ny_[i]), double(nx_[i])));
    }
    store_volume_half(th);
    store_volume_half(ph);
    for (long long i = 0; i < cells; ++i) {
      nx_[i] = static_cast<float>(std::sin(double(th[i])) * std::cos(double(ph[i])));
      ny_[i] = static_cast<float>(std::sin(double(th[i])) * std::sin(double(ph[i])));
      nz_[i] = static_cast<float>(std::cos(double(th[i])));
    }
  }
}

template <class Real>
void CpuTti<Real>::inject(long long ix, long long iy, long long iz, double value) {
  const long long g = grid_.index(ix, iy, iz);
  const long long i = padded(ix, iy, iz);
  const double s = double(damp_[0][ix]) + damp_[1][iy] + damp_[2][iz];
  // The model's value before any half rounding (the source weights come from the model itself).
  const double m = double(m_source_.empty() ? m_[g] : m_source_[g]);
  const double v = m * value / (grid_.h[0] * grid_.h[1] * grid_.h[2] * (1 + s));
  pp_[i] += static_cast<Real>(v);
  qp_[i] += static_cast<Real>(v);
  if (half_scale_ > 0) {  // the injection stores the levels again
    if constexpr (std::is_same_v<Real, float>) {
      pp_[i] = store_half(pp_[i], half_scale_);
      qp_[i] = store_half(qp_[i], half_scale_);
    }
  }
}

template <class Real>
void CpuTti<Real>::inject(const PointSet& ps, long long point, double value) {
  const auto& n = grid_.n;
  for (long long e = ps.offset[point]; e < ps.offset[point + 1]; ++e) {
    const long long c = ps.cell[e];
    inject(c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1]), double(ps.weight[e]) * value);
  }
}

template <class Real>
void CpuTti<Real>::inject(const PointSet& ps, long long point, double value, const CellBox& box) {
  const auto& n = grid_.n;
  for (long long e = ps.offset[point]; e < ps.offset[point + 1]; ++e) {
    const long long c = ps.cell[e];
    const long long ix = c % n[0], iy = (c / n[0]) % n[1], iz = c / (n[0] * n[1]);
    if (ix >= box.lo[0] && ix < box.hi[0] && iy >= box.lo[1] && iy < box.hi[1] && iz >= box.lo[2] && iz < box.hi[2])
      inject(ix, iy, iz, double(ps.weight[e]) * value);
  }
}

template <class Real>
void CpuTti<Real>::swap_levels() {
  p_.swap(pp_);
  q_.swap(qp_);
}

template <class Real>
double CpuTti<Real>::sample(const PointSet& ps, long long point) const {
  const auto& n = grid_.n;
  double v = 0;
  for (long long e = ps.offset[point]; e < ps.offset[point + 1]; ++e) {
    const long long c = ps.cell[e];
    v += double(ps.weight[e]) * p_[padded(c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1]))];
  }
  return v;
}

template <class Real>
void CpuTti<Real>::finish() {
  if (free_surface_)
    for (auto* f : {&pp_, &qp_})
      for (long long iy = 0; iy < grid_.n[1]; ++iy) std::fill_n(f->begin() + padded(0, iy, 0), grid_.n[0], Real(0));
  p_.swap(pp_);
  q_.swap(qp_);
}

template <class Real>
std::vector<double> CpuTti<Real>::p_field() const {
  std::vector<double> out(static_cast<size_t>(grid_.cells()));
  for (long long iz = 0; iz < grid_.n[2]; ++iz)
    for (long long iy = 0; iy < grid_.n[1]; ++iy)
      for (long long ix = 0; ix < grid_.n[0]; ++ix) out[grid_.index(ix, iy, iz)] = p_[padded(ix, iy, iz)];
  return out;
}

template <class Real>
void CpuTti<Real>::p_field(float* out) const {
  for (long long iz = 0; iz < grid_.n[2]; ++iz)
    for (long long iy = 0; iy < grid_.n[1]; ++iy)
      for (long long ix = 0; ix < grid_.n[0]; ++ix)
        out[grid_.index(ix, iy, iz)] = static_cast<float>(p_[padded(ix, iy, iz)]);
}

template <class Real>
bool CpuTti<Real>::finite() const {
  bool ok = true;
  const long long n = static_cast<long long>(p_.size());
#pragma omp parallel for reduction(&& : ok) schedule(static)
  for (long long i = 0; i < n; ++i) ok = ok && std::isfinite(p_[i]) && std::isfinite(q_[i]);
  return ok;
}

template class CpuTti<float>;
template class CpuTti<double>;

}  // namespace seisrtm::validation
