// smem: the classic 2.5D march. Each thread owns one (x, y) column and walks z; the x-y plane
// tile (halos included) sits in shared memory, the z neighbours in a register queue
// (behind[R], current, infront[R]). Loads are synchronous.
#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

namespace {

template <int Radius>
__global__ void __launch_bounds__(MarchPolicy::kBlockX* MarchPolicy::kBlockY)
    smem_kernel(const AcousticArgs a, int z_block) {
  constexpr int BX = MarchPolicy::kBlockX, BY = MarchPolicy::kBlockY;
  constexpr int TW = BX + 2 * Radius, TH = BY + 2 * Radius;
  __shared__ float tile[TH][TW];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
  const int ix = x0 + tx, iy = y0 + ty;
  const int z0 = a.z_lo + blockIdx.z * z_block, z1 = min(a.z_end(), z0 + z_block);
  const bool active = ix < a.nx && iy < a.ny;
  const int cx_ = min(ix, a.nx - 1), cy_ = min(iy, a.ny - 1);  // clamped: idle threads read valid memory

  float behind[Radius], infront[Radius];
#pragma unroll
  for (int k = 0; k < Radius; ++k) {
    behind[k] = detail::column_value(a, cx_, cy_, z0 - 1 - k);
    infront[k] = detail::column_value(a, cx_, cy_, z0 + 1 + k);
  }
  float cur = detail::column_value(a, cx_, cy_, z0);
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];

  for (int iz = z0; iz < z1; ++iz) {
    __syncthreads();  // the previous plane's tile is no longer read
    const float* plane = a.p + (long long)iz * a.sz;
    for (int e = tid; e < TW * TH; e += BX * BY) {
      const int gx = x0 - Radius + e % TW, gy = y0 - Radius + e / TW;
      tile[e / TW][e % TW] = (gx >= 0 && gx < a.nx && gy >= 0 && gy < a.ny) ? plane[(long long)gy * a.sy + gx] : 0.0f;
    }
    __syncthreads();
    if (active) {
      float lap = c0 * cur;
#pragma unroll
      for (int k = 1; k <= Radius; ++k)
        lap += a.cx[k] * (tile[ty + Radius][tx + Radius - k] + tile[ty + Radius][tx + Radius + k]) +
               a.cy[k] * (tile[ty + Radius - k][tx + Radius] + tile[ty + Radius + k][tx + Radius]) +
               a.cz[k] * (behind[k - 1] + infront[k - 1]);
      const long long i = (long long)iz * a.sz + (long long)iy * a.sy + ix;
      detail::store(a, i, iz, detail::leapfrog(cur, a.pn[i], a.m[i], lap, detail::damping(a, ix, iy, iz)));
    }
#pragma unroll
    for (int k = Radius - 1; k > 0; --k) behind[k] = behind[k - 1];
    behind[0] = cur;
    cur = infront[0];
#pragma unroll
    for (int k = 0; k < Radius - 1; ++k) infront[k] = infront[k + 1];
    infront[Radius - 1] = detail::column_value(a, cx_, cy_, iz + Radius + 1);
  }
}

}  // namespace

template <int Radius>
void launch_smem(const AcousticArgs& a, int z_block, cudaStream_t stream) {
  constexpr int BX = MarchPolicy::kBlockX, BY = MarchPolicy::kBlockY;
  const int zb = z_block > 0 ? z_block : a.z_end() - a.z_lo;
  const dim3 block(BX, BY, 1);
  const dim3 grid((a.nx + BX - 1) / BX, (a.ny + BY - 1) / BY, (a.z_end() - a.z_lo + zb - 1) / zb);
  smem_kernel<Radius><<<grid, block, 0, stream>>>(a, zb);
  SEISRTM_CUDA_LAUNCHED();
}

template void launch_smem<1>(const AcousticArgs&, int, cudaStream_t);
template void launch_smem<2>(const AcousticArgs&, int, cudaStream_t);
template void launch_smem<4>(const AcousticArgs&, int, cudaStream_t);
template void launch_smem<8>(const AcousticArgs&, int, cudaStream_t);

}  // namespace seisrtm::kernels
