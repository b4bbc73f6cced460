#include "validation/cpu_stencil.hpp"

#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace seisrtm::validation {

namespace {

// Tiling of the box, for the caches only: the result does not depend on it. The z neighbours of a
// cell are whole planes apart (201^2 cells x 4 B = 160 KB at 201^3), so each thread marches down z
// through a block of rows narrow enough in y that the 2R + 1 planes it reads stay in its L2 cache:
// every p value then comes from memory once per step and is reused from cache by the 2R planes
// around it, whatever the size of the grid.
struct CpuStencilPolicy {
  // Bytes of p that the 2R + 1 planes of one block may occupy: half the 512 KiB L2 of a core of
  // the AMD EPYC build machine, leaving the rest to the streams of pn and m.
  static constexpr long long block_bytes = 256 * 1024;
};

// The weights of the Laplacian in the working precision, c_a[k] / h_a^2 (1/m^2), with the three
// centre weights summed.
template <int Radius, class Real>
struct Weights {
  Real centre;
  Real x[Radius + 1], y[Radius + 1], z[Radius + 1];
};

// The neighbour rows of one row of cells (fixed iy, iz), each indexed by ix like the row itself:
// for k = 1..R the rows at iy -+ k and at iz -+ k. A row outside the grid is a row of zeros.
// Above a free surface the row at iz - k < 0 is the row at k - iz weighted -c_z[k]: the odd image
// p(-z) = -p(z). Looking the rows up once per row keeps the y and z boundaries out of the cell
// loop.
template <int Radius, class Real>
struct RowNeighbours {
  const Real* y_minus[Radius + 1];
  const Real* y_plus[Radius + 1];
  const Real* z_minus[Radius + 1];
  const Real* z_plus[Radius + 1];
  Real w_z_minus[Radius + 1];  // c_z[k] / h_z^2, or minus that for an image row
};

// A row is done in two passes, x and y terms first, then z terms and the update, so that each
// loop's pointers fit the 16 general registers of x86-64 (R = 4: the p row, its 8 y neighbours
// and lap_xy; then 8 z neighbours, p, pn, m, s_x and lap_xy). One loop over all 4R + 1 rows
// spills its pointers and reloads them from the stack for every vector of cells, and loads are
// what bounds this kernel. The partial Laplacian in between stays in L1 (one row: 804 B at
// nx = 201 in float). The summation order differs from a single loop's only in rounding.

// lap_xy <- c_0 p + the x and y terms of L p (1/m^2 x p) over the cells [x0, x1) of one row; p
// points at the row's cell ix = 0. CheckX: cells within R of an x edge of the grid, whose x
// neighbours may fall outside it (p = 0 there).
template <int Radius, bool CheckX, class Real>
inline void laplacian_xy(Real* __restrict lap_xy, const Real* __restrict p, const RowNeighbours<Radius, Real>& nb,
                         const Weights<Radius, Real>& w, long long nx, long long x0, long long x1) {
#pragma omp simd
  for (long long ix = x0; ix < x1; ++ix) {
    Real lap = w.centre * p[ix];
#pragma GCC unroll 16
    for (int k = 1; k <= Radius; ++k) {
      const Real left = !CheckX || ix - k >= 0 ? p[ix - k] : Real(0);
      const Real right = !CheckX || ix + k < nx ? p[ix + k] : Real(0);
      lap += w.x[k] * (left + right) + w.y[k] * (nb.y_minus[k][ix] + nb.y_plus[k][ix]);
    }
    lap_xy[ix] = lap;
  }
}

// pn <- [2 p - (1 - s) pn + m L p] / (1 + s) with L p = lap_xy + the z terms, s = s_x[ix] + s_yz,
// over the cells [x0, x1) of one row. The division stays where s = 0 (it is exact there): it
// overlaps the loads, and cutting rows into damped and undamped runs to skip it is slower (more
// and shorter loops per row, each with its own remainder; docs/BENCHMARKS.md, "CPU reference").
template <int Radius, class Real>
inline void update_row(Real* __restrict pn, const Real* __restrict p, const Real* __restrict m,
                       const Real* __restrict lap_xy, const RowNeighbours<Radius, Real>& nb,
                       const Weights<Radius, Real>& w, const float* __restrict s_x, Real s_yz, long long x0,
                       long long x1) {
#pragma omp simd
  for (long long ix = x0; ix < x1; ++ix) {
    Real lap = lap_xy[ix];
#pragma GCC unroll 16
    for (int k = 1; k <= Radius; ++k) lap += nb.w_z_minus[k] * nb.z_minus[k][ix] + w.z[k] * nb.z_plus[k][ix];
    const Real s = Real(s_x[ix]) + s_yz;
    pn[ix] = (Real(2) * p[ix] - (Real(1) - s) * pn[ix] + m[ix] * lap) / (Real(1) + s);
  }
}

// Updates the cells of `tile`, a part of the box, with `lap_xy` (nx values) as the calling
// thread's scratch row. Compiled twice, for x86-64-v3 (AVX2 + FMA: 8 floats or 4 doubles per
// instruction) and for any x86-64; the loader picks one at start-up.
template <int Radius, class Real>
__attribute__((target_clones("arch=x86-64-v3", "default"))) void update_tile(const Stencil& st,
                                                                             const Weights<Radius, Real>& weights,
                                                                             const Real* m, const Real* p, Real* pn,
                                                                             const Real* zeros, Real* __restrict lap_xy,
                                                                             const Box& tile) {
  // A local copy of the weights, which no store to lap_xy can reach. With the caller's copy the
  // compiler must allow for such stores changing it, reloading the weights in the inner loop,
  // and the step runs slower (docs/BENCHMARKS.md, "CPU reference").
  const Weights<Radius, Real> w = weights;
  const long long nx = st.n[0], ny = st.n[1], nz = st.n[2];
  const long long sy = nx, sz = nx * ny;
  const float* s_x = st.damping[0];
  const float* s_y = st.damping[1];
  const float* s_z = st.damping[2];

  // x: [x0, a) and [b, x1) lie within R of a grid edge, [a, b) does not.
  const long long x0 = tile.lo[0], x1 = tile.hi[0];
  const long long a = std::clamp<long long>(Radius, x0, x1);
  const long long b = std::clamp<long long>(nx - Radius, a, x1);

  RowNeighbours<Radius, Real> nb;
  for (long long iz = tile.lo[2]; iz < tile.hi[2]; ++iz) {
    for (long long iy = tile.lo[1]; iy < tile.hi[1]; ++iy) {
      const long long row = iz * sz + iy * sy;
      for (int k = 1; k <= Radius; ++k) {
        nb.y_minus[k] = iy - k >= 0 ? p + row - k * sy : zeros;
        nb.y_plus[k] = iy + k < ny ? p + row + k * sy : zeros;
        nb.z_plus[k] = iz + k < nz ? p + row + k * sz : zeros;
        nb.w_z_minus[k] = w.z[k];
        if (iz - k >= 0) {
          nb.z_minus[k] = p + row - k * sz;
        } else if (st.free_surface && k - iz < nz) {
          nb.z_minus[k] = p + (k - iz) * sz + iy * sy;
          nb.w_z_minus[k] = -w.z[k];
        } else {
          nb.z_minus[k] = zeros;
        }
      }
      const Real* p_row = p + row;
      laplacian_xy<Radius, true, Real>(lap_xy, p_row, nb, w, nx, x0, a);
      laplacian_xy<Radius, false, Real>(lap_xy, p_row, nb, w, nx, a, b);
      laplacian_xy<Radius, true, Real>(lap_xy, p_row, nb, w, nx, b, x1);
      const Real s_yz = Real(s_y[iy]) + Real(s_z[iz]);
      update_row<Radius, Real>(pn + row, p_row, m + row, lap_xy, nb, w, s_x, s_yz, x0, x1);
    }
  }
}

template <int Radius, class Real>
void step_radius(const Stencil& st, const Real* m, const Real* p, Real* pn, const Box& box) {
  if (box.cells() == 0) return;
  Weights<Radius, Real> w;
  for (int k = 0; k <= Radius; ++k) {
    w.x[k] = static_cast<Real>(st.d2[0][k]);
    w.y[k] = static_cast<Real>(st.d2[1][k]);
    w.z[k] = static_cast<Real>(st.d2[2][k]);
  }
  w.centre = w.x[0] + w.y[0] + w.z[0];
  const std::vector<Real> zeros(static_cast<size_t>(st.n[0]), Real(0));
  // One scratch row of lap_xy per thread, allocated here, before the parallel region, because
  // nothing may throw inside it (an exception leaving it ends the program) and so that the hot
  // loop allocates nothing. Rows lie at least one 64-byte cache line apart, whatever the
  // alignment of the buffer, so that no two threads write to the same line.
  constexpr long long line_values = 64 / sizeof(Real);
  const long long scratch_stride = (st.n[0] / line_values + 2) * line_values;
  std::vector<Real> scratch(static_cast<size_t>(omp_get_max_threads() * scratch_stride));

  // Tiles: the box's z range cut into one chunk per thread, its y range into blocks whose 2R + 1
  // planes fit CpuStencilPolicy::block_bytes. The static schedule hands each thread one z chunk
  // with all its y blocks, down each of which it marches plane by plane.
  const long long row_bytes = (box.hi[0] - box.lo[0] + 2 * Radius) * sizeof(Real);
  const long long block_y = std::max<long long>(1, CpuStencilPolicy::block_bytes / ((2 * Radius + 1) * row_bytes));
  const long long extent_y = box.hi[1] - box.lo[1], extent_z = box.hi[2] - box.lo[2];
  const long long blocks_y = (extent_y + block_y - 1) / block_y;
  const long long chunks_z = std::min<long long>(omp_get_max_threads(), extent_z);

#pragma omp parallel for collapse(2) schedule(static)
  for (long long cz = 0; cz < chunks_z; ++cz) {
    for (long long by = 0; by < blocks_y; ++by) {
      Box tile = box;
      tile.lo[1] = box.lo[1] + by * block_y;
      tile.hi[1] = std::min(box.hi[1], tile.lo[1] + block_y);
      tile.lo[2] = box.lo[2] + cz * extent_z / chunks_z;
      tile.hi[2] = box.lo[2] + (cz + 1) * extent_z / chunks_z;
      update_tile<Radius, Real>(st, w, m, p, pn, zeros.data(), scratch.data() + omp_get_thread_num() * scratch_stride,
                                tile);
    }
  }
}

}  // namespace

template <class Real>
void acoustic_step(const Stencil& st, const Real* m, const Real* p, Real* pn, const Box& box) {
  switch (st.radius) {
    case 1:
      return step_radius<1, Real>(st, m, p, pn, box);
    case 2:
      return step_radius<2, Real>(st, m, p, pn, box);
    case 4:
      return step_radius<4, Real>(st, m, p, pn, box);
    case 8:
      return step_radius<8, Real>(st, m, p, pn, box);
    default:
      throw Error("acoustic_step: radius " + std::to_string(st.radius) + " (space_order " +
                  std::to_string(2 * st.radius) + ") is not supported by the CPU stencil; valid: radius 1, 2, 4 or 8");
  }
}

template void acoustic_step<float>(const Stencil&, const float*, const float*, float*, const Box&);
template void acoustic_step<double>(const Stencil&, const double*, const double*, double*, const Box&);

}  // namespace seisrtm::validation
