// naive TTI: one thread per cell, every value straight from global memory (the mixed
// derivatives re-read their (2R)^2 neighbours per term). The baseline the tma variant is
// checked against, and the variant for GPUs without TMA.
#include "kernels/cuda_check.hpp"
#include "kernels/tti_common.cuh"
#include "kernels/tti_variants.cuh"

namespace seisrtm::kernels {

namespace {

// The field at (x, y, z): zero outside the grid, the odd image above a free surface.
template <class T>
__device__ __forceinline__ float value(const TtiArgsT<T>& a, const T* f, int x, int y, int z) {
  using detail::to_float;
  if (x < 0 || x >= a.nx || y < 0 || y >= a.ny || z >= a.nz) return 0.0f;
  if (z < 0) return a.free_surface ? -to_float(f[(long long)(-z) * a.sz + (long long)y * a.sy + x]) : 0.0f;
  return to_float(f[(long long)z * a.sz + (long long)y * a.sy + x]);
}

// D_x f and D_y f at a cell (centred first derivatives, k = 1..R).
template <int Radius, class T>
__device__ __forceinline__ float dx1(const TtiArgsT<T>& a, const T* f, int x, int y, int z) {
  float g = 0.0f;
#pragma unroll
  for (int k = 1; k <= Radius; ++k) g += a.dx[k] * (value(a, f, x + k, y, z) - value(a, f, x - k, y, z));
  return g;
}
template <int Radius, class T>
__device__ __forceinline__ float dy1(const TtiArgsT<T>& a, const T* f, int x, int y, int z) {
  float g = 0.0f;
#pragma unroll
  for (int k = 1; k <= Radius; ++k) g += a.dy[k] * (value(a, f, x, y + k, z) - value(a, f, x, y - k, z));
  return g;
}

template <int Radius, bool Tilted, class T>
__device__ detail::Hessian hessian(const TtiArgsT<T>& a, const T* f, int x, int y, int z) {
  detail::Hessian d;
  const float c = value(a, f, x, y, z);
  d.xx = a.cx[0] * c;
  d.yy = a.cy[0] * c;
  d.zz = a.cz[0] * c;
  // Not unrolled: unrolling the mixed terms' (2R)^2 loads spilled registers at R = 4 and 8.
#pragma unroll 1
  for (int k = 1; k <= Radius; ++k) {
    d.xx += a.cx[k] * (value(a, f, x - k, y, z) + value(a, f, x + k, y, z));
    d.yy += a.cy[k] * (value(a, f, x, y - k, z) + value(a, f, x, y + k, z));
    d.zz += a.cz[k] * (value(a, f, x, y, z - k) + value(a, f, x, y, z + k));
    if constexpr (Tilted) {
      // d_xy = D_y (D_x f), d_xz = D_z (D_x f), d_yz = D_z (D_y f): the CPU reference's order.
      d.xy += a.dy[k] * (dx1<Radius>(a, f, x, y + k, z) - dx1<Radius>(a, f, x, y - k, z));
      d.xz += a.dz[k] * (dx1<Radius>(a, f, x, y, z + k) - dx1<Radius>(a, f, x, y, z - k));
      d.yz += a.dz[k] * (dy1<Radius>(a, f, x, y, z + k) - dy1<Radius>(a, f, x, y, z - k));
    }
  }
  return d;
}

// 32 x 4 threads a block: with 32 x 8 ptxas (nvcc 13.0) spilled 12 bytes of registers in the
// order-16 tilted kernel of the sm_80/89 builds; with 128 threads a block it spills none.
constexpr int kNaiveBlockX = 32, kNaiveBlockY = 4;

template <int Radius, bool Tilted, class T>
__global__ void __launch_bounds__(kNaiveBlockX* kNaiveBlockY) tti_naive_kernel(const TtiArgsT<T> a) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = blockIdx.y * blockDim.y + threadIdx.y;
  const int iz = a.z_lo + blockIdx.z;
  if (ix >= a.nx || iy >= a.ny) return;
  const long long i = (long long)iz * a.sz + (long long)iy * a.sy + ix;
  const detail::Axis n = detail::symmetry_axis<Tilted>(a, i);
  const float h0p = detail::h0<Tilted>(hessian<Radius, Tilted>(a, a.p, ix, iy, iz), n);
  const float hzq = detail::hz<Tilted>(hessian<Radius, Tilted>(a, a.q, ix, iy, iz), n);
  using detail::model_value;
  using detail::to_float;
  const detail::TtiCell c{to_float(a.p[i]),
                          to_float(a.pn[i]),
                          to_float(a.q[i]),
                          to_float(a.qn[i]),
                          model_value(a.m, i, a.m_scale),
                          model_value(a.a, i, a.a_scale),
                          model_value(a.b, i, a.b_scale),
                          a.damp_x[ix] + (a.damp_y[iy] + a.damp_z[iz])};
  float np, nq;
  detail::tti_update(c, h0p, hzq, iz, a.free_surface, &np, &nq);
  a.pn[i] = detail::from_float<T>(np);
  a.qn[i] = detail::from_float<T>(nq);
}

}  // namespace

template <int Radius, bool Tilted, class T>
void launch_tti_naive(const TtiArgsT<T>& a, cudaStream_t stream) {
  const dim3 block(kNaiveBlockX, kNaiveBlockY, 1);
  const dim3 grid((a.nx + kNaiveBlockX - 1) / kNaiveBlockX, (a.ny + kNaiveBlockY - 1) / kNaiveBlockY,
                  a.z_end() - a.z_lo);
  tti_naive_kernel<Radius, Tilted, T><<<grid, block, 0, stream>>>(a);
  SEISRTM_CUDA_LAUNCHED();
}

#define SEISRTM_TTI_NAIVE(R)                                                         \
  template void launch_tti_naive<R, true, float>(const TtiArgs&, cudaStream_t);      \
  template void launch_tti_naive<R, false, float>(const TtiArgs&, cudaStream_t);     \
  template void launch_tti_naive<R, true, __half>(const TtiArgsHalf&, cudaStream_t); \
  template void launch_tti_naive<R, false, __half>(const TtiArgsHalf&, cudaStream_t);
SEISRTM_TTI_NAIVE(1)
SEISRTM_TTI_NAIVE(2)
SEISRTM_TTI_NAIVE(4)
SEISRTM_TTI_NAIVE(8)

}  // namespace seisrtm::kernels
