#include "validation/cpu_propagator.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "solver/error.hpp"

namespace seisrtm::validation {

CpuPropagator::CpuPropagator(const Problem& problem) : problem_(problem) {
  const size_t n = static_cast<size_t>(problem.grid.cells());
  m_.resize(n);
  const double dt2 = problem.dt * problem.dt;
  for (size_t i = 0; i < n; ++i) m_[i] = static_cast<float>(double(problem.vp[i]) * problem.vp[i] * dt2);
  p_.assign(n, 0.0f);
  pp_.assign(n, 0.0f);
  traces_.assign(static_cast<size_t>(problem.receivers.size() * problem.steps), 0.0f);
}

std::string CpuPropagator::name() const {
  return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
}

void CpuPropagator::begin_shot(long long shot) {
  shot_ = shot;
  std::fill(p_.begin(), p_.end(), 0.0f);
  std::fill(pp_.begin(), pp_.end(), 0.0f);
  std::fill(traces_.begin(), traces_.end(), 0.0f);
}

namespace {

// One row segment whose neighbours all lie inside the grid; restrict-qualified so it vectorises.
template <int Radius>
void interior_row(float* __restrict pn, const float* __restrict p, const float* __restrict m,
                  const float* __restrict dx, float syz, long long sy, long long sz, long long x0,
                  long long x1, const float* cx, const float* cy, const float* cz, float c0) {
#pragma omp simd
  for (long long ix = x0; ix < x1; ++ix) {
    const float* q = p + ix;
    float lap = c0 * q[0];
#pragma GCC unroll 16
    for (int k = 1; k <= Radius; ++k)
      lap += cx[k] * (q[-k] + q[k]) + cy[k] * (q[-k * sy] + q[k * sy]) + cz[k] * (q[-k * sz] + q[k * sz]);
    const float s = dx[ix] + syz;
    pn[ix] = (2.0f * q[0] - (1.0f - s) * pn[ix] + m[ix] * lap) / (1.0f + s);
  }
}

}  // namespace

template <int Radius>
void CpuPropagator::step(long long n) {
  const Grid& g = problem_.grid;
  const long long nx = g.n[0], ny = g.n[1], nz = g.n[2];
  const long long sy = nx, sz = nx * ny;
  const bool fs = problem_.free_surface;
  float cx[Radius + 1], cy[Radius + 1], cz[Radius + 1];
  for (int k = 0; k <= Radius; ++k) {
    cx[k] = static_cast<float>(problem_.d2[0][k]);
    cy[k] = static_cast<float>(problem_.d2[1][k]);
    cz[k] = static_cast<float>(problem_.d2[2][k]);
  }
  const float c0 = cx[0] + cy[0] + cz[0];
  const float* dx = problem_.damping[0].data();
  const float* dy = problem_.damping[1].data();
  const float* dz = problem_.damping[2].data();
  const float* p = p_.data();
  float* pn = pp_.data();  // holds p^{n-1} on entry, p^{n+1} on exit
  const float* m = m_.data();

  // p with the boundary conditions: 0 outside the grid, odd image above a free surface.
  auto at = [&](long long ix, long long iy, long long iz) -> float {
    if (ix < 0 || ix >= nx || iy < 0 || iy >= ny || iz >= nz) return 0.0f;
    if (iz < 0) return fs ? -p[(-iz) * sz + iy * sy + ix] : 0.0f;
    return p[iz * sz + iy * sy + ix];
  };

#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = 0; iz < nz; ++iz) {
    for (long long iy = 0; iy < ny; ++iy) {
      const bool row_inside = iz >= Radius && iz < nz - Radius && iy >= Radius && iy < ny - Radius;
      const long long row = iz * sz + iy * sy;
      const float syz = dy[iy] + dz[iz];
      auto update = [&](long long ix, float lap) {
        const long long i = row + ix;
        const float s = dx[ix] + syz;
        pn[i] = (2.0f * p[i] - (1.0f - s) * pn[i] + m[i] * lap) / (1.0f + s);
      };
      long long ix = 0;
      auto boundary_cell = [&](long long ix) {
        float lap = c0 * at(ix, iy, iz);
        for (int k = 1; k <= Radius; ++k)
          lap += cx[k] * (at(ix - k, iy, iz) + at(ix + k, iy, iz)) +
                 cy[k] * (at(ix, iy - k, iz) + at(ix, iy + k, iz)) +
                 cz[k] * (at(ix, iy, iz - k) + at(ix, iy, iz + k));
        update(ix, lap);
      };
      if (row_inside && nx > 2 * Radius) {
        for (; ix < Radius; ++ix) boundary_cell(ix);
        interior_row<Radius>(pn + row, p + row, m + row, dx, syz, sy, sz, Radius, nx - Radius, cx,
                             cy, cz, c0);
        ix = nx - Radius;
      }
      for (; ix < nx; ++ix) boundary_cell(ix);
    }
  }

  // Source: m w f / (hx hy hz), divided by (1 + s) like the rest of the update.
  const PointSet& src = problem_.shots[shot_];
  const float f = problem_.wavelet[n] / static_cast<float>(problem_.cell_volume());
  for (long long e = src.offset[0]; e < src.offset[1]; ++e) {
    const long long i = src.cell[e];
    const long long ix = i % nx, iy = (i / nx) % ny, iz = i / sz;
    pn[i] += m[i] * src.weight[e] * f / (1.0f + dx[ix] + dy[iy] + dz[iz]);
  }
  if (fs) std::fill_n(pn, sz, 0.0f);

  const PointSet& rec = problem_.receivers;
  for (long long r = 0; r < rec.size(); ++r) {
    float v = 0;
    for (long long e = rec.offset[r]; e < rec.offset[r + 1]; ++e) v += rec.weight[e] * pn[rec.cell[e]];
    traces_[r * problem_.steps + n] = v;
  }
  std::swap(p_, pp_);
}

void CpuPropagator::advance(long long first, long long count) {
  for (long long n = first; n < first + count; ++n) {
    switch (problem_.radius) {
      case 1: step<1>(n); break;
      case 2: step<2>(n); break;
      case 4: step<4>(n); break;
      case 8: step<8>(n); break;
      default: throw Error("cpu backend: unsupported radius " + std::to_string(problem_.radius));
    }
  }
}

void CpuPropagator::wavefield(float* out) { std::memcpy(out, p_.data(), p_.size() * sizeof(float)); }

void CpuPropagator::traces(float* out) {
  std::memcpy(out, traces_.data(), traces_.size() * sizeof(float));
}

}  // namespace seisrtm::validation
