// naive: one thread per cell, every neighbour straight from global memory. The baseline.
#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

namespace {

template <int Radius, class T>
__global__ void __launch_bounds__(256) naive_kernel(const AcousticArgsT<T> a) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = blockIdx.y * blockDim.y + threadIdx.y;
  const int iz = a.z_lo + blockIdx.z;
  if (ix >= a.nx || iy >= a.ny) return;
  const long long i = (long long)iz * a.sz + (long long)iy * a.sy + ix;
  using detail::to_float;
  auto at_x = [&](int x) { return (x >= 0 && x < a.nx) ? to_float(a.p[i - ix + x]) : 0.0f; };
  auto at_y = [&](int y) { return (y >= 0 && y < a.ny) ? to_float(a.p[i + (long long)(y - iy) * a.sy]) : 0.0f; };
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  float lap = c0 * to_float(a.p[i]);
#pragma unroll
  for (int k = 1; k <= Radius; ++k)
    lap += a.cx[k] * (at_x(ix - k) + at_x(ix + k)) + a.cy[k] * (at_y(iy - k) + at_y(iy + k)) +
           a.cz[k] * (detail::column_value(a, ix, iy, iz - k) + detail::column_value(a, ix, iy, iz + k));
  detail::store(
      a, i, iz,
      detail::leapfrog(to_float(a.p[i]), to_float(a.pn[i]), to_float(a.m[i]), lap, detail::damping(a, ix, iy, iz)));
}

}  // namespace

template <int Radius, class T>
void launch_naive(const AcousticArgsT<T>& a, cudaStream_t stream) {
  const dim3 block(32, 8, 1);
  const dim3 grid((a.nx + 31) / 32, (a.ny + 7) / 8, a.z_end() - a.z_lo);
  naive_kernel<Radius, T><<<grid, block, 0, stream>>>(a);
  SEISRTM_CUDA_LAUNCHED();
}

#define SEISRTM_NAIVE(R)                                                   \
  template void launch_naive<R, float>(const AcousticArgs&, cudaStream_t); \
  template void launch_naive<R, __half>(const AcousticArgsHalf&, cudaStream_t);
SEISRTM_NAIVE(1)
SEISRTM_NAIVE(2)
SEISRTM_NAIVE(4)
SEISRTM_NAIVE(8)
#undef SEISRTM_NAIVE

}  // namespace seisrtm::kernels
