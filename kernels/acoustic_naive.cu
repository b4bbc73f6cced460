// naive: one thread per cell, every neighbour straight from global memory. The baseline.
#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

namespace {

template <int Radius>
__global__ void __launch_bounds__(256) naive_kernel(const AcousticArgs a) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = blockIdx.y * blockDim.y + threadIdx.y;
  const int iz = a.z_lo + blockIdx.z;
  if (ix >= a.nx || iy >= a.ny) return;
  const long long i = (long long)iz * a.sz + (long long)iy * a.sy + ix;
  auto at_x = [&](int x) { return (x >= 0 && x < a.nx) ? a.p[i - ix + x] : 0.0f; };
  auto at_y = [&](int y) { return (y >= 0 && y < a.ny) ? a.p[i + (long long)(y - iy) * a.sy] : 0.0f; };
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  float lap = c0 * a.p[i];
#pragma unroll
  for (int k = 1; k <= Radius; ++k)
    lap += a.cx[k] * (at_x(ix - k) + at_x(ix + k)) + a.cy[k] * (at_y(iy - k) + at_y(iy + k)) +
           a.cz[k] * (detail::column_value(a, ix, iy, iz - k) + detail::column_value(a, ix, iy, iz + k));
  detail::store(a, i, iz, detail::leapfrog(a.p[i], a.pn[i], a.m[i], lap, detail::damping(a, ix, iy, iz)));
}

}  // namespace

template <int Radius>
void launch_naive(const AcousticArgs& a, cudaStream_t stream) {
  const dim3 block(32, 8, 1);
  const dim3 grid((a.nx + 31) / 32, (a.ny + 7) / 8, a.z_end() - a.z_lo);
  naive_kernel<Radius><<<grid, block, 0, stream>>>(a);
  SEISRTM_CUDA_LAUNCHED();
}

template void launch_naive<1>(const AcousticArgs&, cudaStream_t);
template void launch_naive<2>(const AcousticArgs&, cudaStream_t);
template void launch_naive<4>(const AcousticArgs&, cudaStream_t);
template void launch_naive<8>(const AcousticArgs&, cudaStream_t);

}  // namespace seisrtm::kernels
