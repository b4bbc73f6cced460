#include "validation/cpu_stencil.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace seisrtm::validation {

namespace {

// One row segment whose neighbours all lie inside the grid; restrict-qualified so it vectorises.
template <int Radius, class Real>
void interior_row(Real* __restrict pn, const Real* __restrict p, const Real* __restrict m,
                  const float* __restrict dx, Real syz, long long sy, long long sz, long long x0,
                  long long x1, const Real* cx, const Real* cy, const Real* cz, Real c0) {
#pragma omp simd
  for (long long ix = x0; ix < x1; ++ix) {
    const Real* q = p + ix;
    Real lap = c0 * q[0];
#pragma GCC unroll 16
    for (int k = 1; k <= Radius; ++k)
      lap += cx[k] * (q[-k] + q[k]) + cy[k] * (q[-k * sy] + q[k * sy]) + cz[k] * (q[-k * sz] + q[k * sz]);
    const Real s = Real(dx[ix]) + syz;
    pn[ix] = (Real(2) * q[0] - (Real(1) - s) * pn[ix] + m[ix] * lap) / (Real(1) + s);
  }
}

template <int Radius, class Real>
void step_radius(const Stencil& st, const Real* m, const Real* p, Real* pn, const Box& box) {
  const long long nx = st.n[0], ny = st.n[1], nz = st.n[2];
  const long long sy = nx, sz = nx * ny;
  const bool fs = st.free_surface;
  Real cx[Radius + 1], cy[Radius + 1], cz[Radius + 1];
  for (int k = 0; k <= Radius; ++k) {
    cx[k] = static_cast<Real>(st.d2[0][k]);
    cy[k] = static_cast<Real>(st.d2[1][k]);
    cz[k] = static_cast<Real>(st.d2[2][k]);
  }
  const Real c0 = cx[0] + cy[0] + cz[0];
  const float* dx = st.damping[0];
  const float* dy = st.damping[1];
  const float* dz = st.damping[2];

  // p with the boundary conditions: 0 outside the grid, odd image above a free surface.
  auto at = [&](long long ix, long long iy, long long iz) -> Real {
    if (ix < 0 || ix >= nx || iy < 0 || iy >= ny || iz >= nz) return Real(0);
    if (iz < 0) return fs ? -p[(-iz) * sz + iy * sy + ix] : Real(0);
    return p[iz * sz + iy * sy + ix];
  };
  const long long x0 = box.lo[0], x1 = box.hi[0];

#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz) {
    for (long long iy = box.lo[1]; iy < box.hi[1]; ++iy) {
      const bool row_inside = iz >= Radius && iz < nz - Radius && iy >= Radius && iy < ny - Radius;
      const long long row = iz * sz + iy * sy;
      const Real syz = Real(dy[iy]) + Real(dz[iz]);
      auto boundary_cell = [&](long long ix) {
        Real lap = c0 * at(ix, iy, iz);
        for (int k = 1; k <= Radius; ++k)
          lap += cx[k] * (at(ix - k, iy, iz) + at(ix + k, iy, iz)) +
                 cy[k] * (at(ix, iy - k, iz) + at(ix, iy + k, iz)) +
                 cz[k] * (at(ix, iy, iz - k) + at(ix, iy, iz + k));
        const long long i = row + ix;
        const Real s = Real(dx[ix]) + syz;
        pn[i] = (Real(2) * p[i] - (Real(1) - s) * pn[i] + m[i] * lap) / (Real(1) + s);
      };
      long long ix = x0;
      if (row_inside) {
        const long long a = std::max<long long>(x0, Radius), b = std::min<long long>(x1, nx - Radius);
        if (a < b) {
          for (; ix < a; ++ix) boundary_cell(ix);
          interior_row<Radius, Real>(pn + row, p + row, m + row, dx, syz, sy, sz, a, b, cx, cy, cz, c0);
          ix = b;
        }
      }
      for (; ix < x1; ++ix) boundary_cell(ix);
    }
  }
}

}  // namespace

template <class Real>
void acoustic_step(const Stencil& st, const Real* m, const Real* p, Real* pn, const Box& box) {
  switch (st.radius) {
    case 1: return step_radius<1, Real>(st, m, p, pn, box);
    case 2: return step_radius<2, Real>(st, m, p, pn, box);
    case 4: return step_radius<4, Real>(st, m, p, pn, box);
    case 8: return step_radius<8, Real>(st, m, p, pn, box);
    default: throw std::invalid_argument("acoustic_step: unsupported radius " + std::to_string(st.radius));
  }
}

template void acoustic_step<float>(const Stencil&, const float*, const float*, float*, const Box&);
template void acoustic_step<double>(const Stencil&, const double*, const double*, double*, const Box&);

}  // namespace seisrtm::validation
