// tma: the 2.5D march fed by the Tensor Memory Accelerator. One thread issues 3D box loads of
// the (BX + 2R) x (BY + 2R) x 1 plane tile (halos and corners included; out-of-bounds boxes
// arrive zero-filled) into a ring of S = R + 1 + lookahead shared-memory stages, each completing
// on its own mbarrier. Plane z's tile gives the x-y terms; planes z+1..z+R are still in the ring
// and give the z terms in front; the R planes behind come from a register queue. Loads run
// `lookahead` planes ahead so bytes stay in flight while the current plane is computed.
#include <cuda.h>

#include <cuda/ptx>

#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

namespace {

constexpr int round_up(int v, int m) { return (v + m - 1) / m * m; }

template <int Radius>
struct TmaShape {
  static constexpr int BX = MarchPolicy::kBlockX, BY = MarchPolicy::kBlockY;
  static constexpr int TW = tma_tile_width(Radius);
  static constexpr int TH = tma_tile_height(Radius);
  static constexpr int HX = tma_halo_x(Radius);
  static constexpr int kStages = Radius + 1 + MarchPolicy::kLookahead;
  static constexpr int kStageFloats = round_up(TW * TH, 32);  // stages 128-byte aligned
  static constexpr unsigned kBoxBytes = TW * TH * sizeof(float);
  static constexpr size_t kSharedBytes = size_t(kStages) * kStageFloats * sizeof(float) + 128;
};

template <int Radius>
__global__ void __launch_bounds__(MarchPolicy::kBlockX * MarchPolicy::kBlockY)
    tma_kernel(const __grid_constant__ CUtensorMap tmap, const AcousticArgs a, int z_block) {
  using Shape = TmaShape<Radius>;
  constexpr int BX = Shape::BX, BY = Shape::BY, TW = Shape::TW, HX = Shape::HX, S = Shape::kStages;
  extern __shared__ unsigned char shared_raw[];
  __shared__ alignas(8) uint64_t bar[S];
  float* ring = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(shared_raw) + 127) & ~uintptr_t(127));

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
  const int ix = x0 + tx, iy = y0 + ty;
  const int z0 = blockIdx.z * z_block, z1 = min(a.nz, z0 + z_block);
  const int planes = z1 - z0, total = planes + Radius;  // loads: planes z0 .. z1 + R - 1
  const bool active = ix < a.nx && iy < a.ny;
  const int center = (ty + Radius) * TW + tx + HX;

  if (tid == 0) {
    for (int s = 0; s < S; ++s) cuda::ptx::mbarrier_init(&bar[s], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  auto issue = [&](int j) {  // plane z0 + j into stage j % S
    const int s = j % S;
    const uint32_t bytes = Shape::kBoxBytes;  // a local: the PTX wrapper takes a reference
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, &bar[s], bytes);
    const int32_t coords[3] = {x0 - HX, y0 - Radius, z0 + j};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                    ring + s * Shape::kStageFloats, &tmap, coords, &bar[s]);
  };
  auto wait = [&](int j) {
    const uint32_t parity = (j / S) & 1;
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar[j % S], parity)) {
    }
  };
  if (tid == 0)
    for (int j = 0; j < min(S, total); ++j) issue(j);

  const int cx_ = min(ix, a.nx - 1), cy_ = min(iy, a.ny - 1);
  float behind[Radius];
#pragma unroll
  for (int k = 0; k < Radius; ++k) behind[k] = detail::column_value(a, cx_, cy_, z0 - 1 - k);
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  // p_prev and m of the plane being computed are loaded one plane ahead, so their latency
  // overlaps the previous plane's work instead of stalling this one.
  const long long column = (long long)cy_ * a.sy + cx_;
  float prev_next = 0.0f, m_next = 0.0f;
  if (planes > 0) {
    prev_next = a.pn[(long long)z0 * a.sz + column];
    m_next = a.m[(long long)z0 * a.sz + column];
  }
  for (int j = 0; j < Radius; ++j) wait(j);

  for (int j = 0; j < planes; ++j) {
    const float prev = prev_next, mj = m_next;
    if (j + 1 < planes) {
      prev_next = a.pn[(long long)(z0 + j + 1) * a.sz + column];
      m_next = a.m[(long long)(z0 + j + 1) * a.sz + column];
    }
    wait(j + Radius);
    const float* tile = ring + (j % S) * Shape::kStageFloats;
    const float cur = tile[center];
    if (active) {
      float lap = c0 * cur;
#pragma unroll
      for (int k = 1; k <= Radius; ++k)
        lap += a.cx[k] * (tile[center - k] + tile[center + k]) +
               a.cy[k] * (tile[center - k * TW] + tile[center + k * TW]) +
               a.cz[k] * (behind[k - 1] + ring[((j + k) % S) * Shape::kStageFloats + center]);
      const int iz = z0 + j;
      const long long i = (long long)iz * a.sz + (long long)iy * a.sy + ix;
      detail::store(a, i, iz, detail::leapfrog(cur, prev, mj, lap, detail::damping(a, ix, iy, iz)));
    }
#pragma unroll
    for (int k = Radius - 1; k > 0; --k) behind[k] = behind[k - 1];
    behind[0] = cur;
    __syncthreads();  // every thread is done with stage j % S
    if (tid == 0 && j + S < total) issue(j + S);
  }
}

}  // namespace

template <int Radius>
void launch_tma(const AcousticArgs& a, int z_block, const void* tensor_map, cudaStream_t stream) {
  using Shape = TmaShape<Radius>;
  static bool configured = false;  // the attribute is per function: set once
  if (!configured) {
    SEISRTM_CUDA(cudaFuncSetAttribute(tma_kernel<Radius>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(Shape::kSharedBytes)));
    configured = true;
  }
  const int zb = z_block > 0 ? z_block : a.nz;
  const dim3 block(Shape::BX, Shape::BY, 1);
  const dim3 grid((a.nx + Shape::BX - 1) / Shape::BX, (a.ny + Shape::BY - 1) / Shape::BY, (a.nz + zb - 1) / zb);
  tma_kernel<Radius><<<grid, block, Shape::kSharedBytes, stream>>>(
      *static_cast<const CUtensorMap*>(tensor_map), a, zb);
  SEISRTM_CUDA_LAUNCHED();
}

std::array<int, 3> tma_box(int radius) {
  return {tma_tile_width(radius), tma_tile_height(radius), 1};
}

template void launch_tma<1>(const AcousticArgs&, int, const void*, cudaStream_t);
template void launch_tma<2>(const AcousticArgs&, int, const void*, cudaStream_t);
template void launch_tma<4>(const AcousticArgs&, int, const void*, cudaStream_t);
template void launch_tma<8>(const AcousticArgs&, int, const void*, cudaStream_t);

}  // namespace seisrtm::kernels
