// tma: the 2.5D march fed by the Tensor Memory Accelerator. One thread issues 3D box loads of
// the plane tile (halos and corners included; out-of-bounds boxes arrive zero-filled) into a
// ring of S = R + 1 + lookahead shared-memory stages, each completing on its own mbarrier.
// Plane z's tile gives the x-y terms; planes z+1..z+R are still in the ring and give the z terms
// in front; the R planes behind come from a register queue. Loads run `lookahead` planes ahead
// so bytes stay in flight while the current plane is computed. Each thread owns kRows columns
// stacked in y. p_prev and m come through the copy engine as well, as boxes of the block's own
// columns in a second ring (lookahead + 1 planes deep, its own mbarriers): read by the threads
// one plane ahead, they left too few bytes in flight (an A/B on an H100 at 800^3, z_block 32,
// 2026-11-22: 143 against 157 GCells/s). p_next is written in place over p_prev; a plane's
// p_prev box is always loaded before that plane is written.
#include <cuda.h>

#include <cuda/ptx>

#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"

// The sm_80/89 pass compiles the kernel to a trap, leaving the shape constants unused there.
#pragma nv_diag_suppress 177

namespace seisrtm::kernels {

namespace {

constexpr int round_up(int v, int m) {
  return (v + m - 1) / m * m;
}

template <int Radius>
struct TmaShape {
  static constexpr int BX = TmaPolicy::kBlockX, BY = TmaPolicy::kBlockY, RY = TmaPolicy::kRows;
  static constexpr int TW = tma_tile_width(Radius);
  static constexpr int TH = tma_tile_height(Radius);
  static constexpr int HX = tma_halo_x(Radius);
  static constexpr int kStages = Radius + 1 + TmaPolicy::kLookahead;
  static constexpr int kStageFloats = round_up(TW * TH, 32);  // stages 128-byte aligned
  static constexpr unsigned kBoxBytes = TW * TH * sizeof(float);
  // p_prev and m of the block's own columns, one plane per stage, kFieldStages deep.
  static constexpr int kFieldStages = TmaPolicy::kLookahead + 1;
  static constexpr int kFieldFloats = BX * BY * RY;  // one array's plane (a multiple of 32)
  static constexpr unsigned kFieldBytes = 2 * kFieldFloats * sizeof(float);
  static constexpr size_t kSharedBytes =
      size_t(kStages) * kStageFloats * sizeof(float) + size_t(kFieldStages) * kFieldBytes + 128;
  static constexpr int kThreads = BX * BY;
};

template <int Radius>
__global__ void __launch_bounds__(TmaShape<Radius>::kThreads, Radius >= 8 ? 1 : 2)
    tma_kernel(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap tmap_prev,
               const __grid_constant__ CUtensorMap tmap_m, const AcousticArgs a, int z_block) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  // Built for older GPUs too (naive and smem run there); the host never launches this kernel
  // below compute capability 9.0 (no bulk tensor copies).
  __trap();
#else
  using Shape = TmaShape<Radius>;
  constexpr int BX = Shape::BX, BY = Shape::BY, RY = Shape::RY, TW = Shape::TW, HX = Shape::HX;
  constexpr int S = Shape::kStages, SF = Shape::kStageFloats;
  constexpr int FS = Shape::kFieldStages, FF = Shape::kFieldFloats;
  extern __shared__ __align__(128) float shared_raw[];
  __shared__ alignas(8) uint64_t bar[S];
  __shared__ alignas(8) uint64_t field_bar[FS];
  // Stages start on 128-byte boundaries. The offset is taken in floats from the shared array
  // itself (not through an integer cast of its address), so the compiler keeps shared-space
  // loads (LDS) instead of generic ones with 64-bit address arithmetic.
  const uint32_t misalign = static_cast<uint32_t>(__cvta_generic_to_shared(shared_raw)) & 127u;
  float* ring = shared_raw + ((128u - misalign) & 127u) / sizeof(float);
  float* fields = ring + S * SF;  // stage f: p_prev at fields + 2 f FF, m right after

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * (BY * RY);
  const int ix = x0 + tx, iy0 = y0 + ty * RY;  // this thread's rows: iy0 .. iy0 + RY - 1
  const int z0 = a.z_lo + blockIdx.z * z_block, z1 = min(a.z_end(), z0 + z_block);
  const int planes = z1 - z0, total = planes + Radius;    // loads: planes z0 .. z1 + R - 1
  const int center0 = (ty * RY + Radius) * TW + tx + HX;  // tile index of row 0's cell

  if (tid == 0) {
    for (int s = 0; s < S; ++s) cuda::ptx::mbarrier_init(&bar[s], 1);
    for (int f = 0; f < FS; ++f) cuda::ptx::mbarrier_init(&field_bar[f], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  auto issue = [&](int j, int s) {            // plane z0 + j of p into stage s
    const uint32_t bytes = Shape::kBoxBytes;  // a local: the PTX wrapper takes a reference
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, &bar[s],
                                         bytes);
    const int32_t coords[3] = {x0 - HX, y0 - Radius, z0 + j};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, ring + s * SF, &tmap, coords,
                                    &bar[s]);
  };
  auto issue_fields = [&](int j, int f) {  // plane z0 + j of p_prev and m into field stage f
    const uint32_t bytes = Shape::kFieldBytes;
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         &field_bar[f], bytes);
    const int32_t coords[3] = {x0, y0, z0 + j};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, fields + 2 * f * FF, &tmap_prev,
                                    coords, &field_bar[f]);
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, fields + (2 * f + 1) * FF,
                                    &tmap_m, coords, &field_bar[f]);
  };
  auto wait = [](uint64_t* b, uint32_t parity) {
    while (!cuda::ptx::mbarrier_try_wait_parity(b, parity)) {
    }
  };
  if (tid == 0) {
    for (int j = 0; j < min(S, total); ++j) issue(j, j);
    for (int j = 0; j < min(FS, planes); ++j) issue_fields(j, j);
  }

  // Per row: validity, the clamped column (idle threads read valid memory), x-y damping, and
  // base pointers; plane offsets are added as the march goes, so the loop does no 64-bit
  // multiplications.
  bool active[RY];
  float* prev_base[RY];  // p_next is written through the p_prev column
  float behind[RY][Radius], damp_xy[RY];
  const int cx_ = min(ix, a.nx - 1);
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int iy = iy0 + r, cy_ = min(iy, a.ny - 1);
    active[r] = ix < a.nx && iy < a.ny;
    const long long column = (long long)cy_ * a.sy + cx_;
    prev_base[r] = a.pn + column;
    damp_xy[r] = a.damp_x[cx_] + a.damp_y[cy_];
#pragma unroll
    for (int k = 0; k < Radius; ++k) behind[r][k] = detail::column_value(a, cx_, cy_, z0 - 1 - k);
  }
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  const int field0 = (ty * RY) * BX + tx;  // field stage index of row 0's cell

  // Stage bookkeeping without divisions: plane j sits in stage `s_cur`; plane j + R, the one
  // waited for, in `s_wait` with phase parity `parity`; its fields in `f_cur` with `f_parity`.
  int s_cur = 0, s_wait = Radius % S, f_cur = 0;
  uint32_t parity = 0, f_parity = 0;
  for (int j = 0; j < Radius; ++j) wait(&bar[j], 0);

  long long offset = (long long)z0 * a.sz;  // plane j's offset in the volume
  for (int j = 0; j < planes; ++j) {
    const int iz = z0 + j;
    float prev[RY], mj[RY];
    wait(&field_bar[f_cur], f_parity);
    const float* fp = fields + 2 * f_cur * FF + field0;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      prev[r] = fp[r * BX];
      mj[r] = fp[FF + r * BX];
    }
    wait(&bar[s_wait], parity);
    const float* tile = ring + s_cur * SF + center0;
    const float* front[Radius];  // planes j + 1 .. j + R, at this thread's row 0
#pragma unroll
    for (int k = 1; k <= Radius; ++k) {
      int sk = s_cur + k;
      if (sk >= S) sk -= S;
      front[k - 1] = ring + sk * SF + center0;
    }
    // The column of the tile through this thread's rows, for the y terms and the centres.
    float col[RY + 2 * Radius];
#pragma unroll
    for (int t = 0; t < RY + 2 * Radius; ++t) col[t] = tile[(t - Radius) * TW];
    const float dz = a.damp_z[iz];
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const float* row = tile + r * TW;
      const float cur = col[r + Radius];
      float lap = c0 * cur;
#pragma unroll
      for (int k = 1; k <= Radius; ++k)
        lap += a.cx[k] * (row[-k] + row[k]) + a.cy[k] * (col[r + Radius - k] + col[r + Radius + k]) +
               a.cz[k] * (behind[r][k - 1] + front[k - 1][r * TW]);
      if (active[r]) {
        const float v = detail::leapfrog(cur, prev[r], mj[r], lap, damp_xy[r] + dz);
        prev_base[r][offset] = (a.free_surface && iz == 0) ? 0.0f : v;  // p = 0 on a free surface
      }
#pragma unroll
      for (int k = Radius - 1; k > 0; --k) behind[r][k] = behind[r][k - 1];
      behind[r][0] = cur;
    }
    offset += a.sz;
    __syncthreads();  // every thread is done with stage s_cur and field stage f_cur
    if (tid == 0) {
      if (j + S < total) issue(j + S, s_cur);
      if (j + FS < planes) issue_fields(j + FS, f_cur);
    }
    if (++s_cur == S) s_cur = 0;
    if (++s_wait == S) {
      s_wait = 0;
      parity ^= 1;
    }
    if (++f_cur == FS) {
      f_cur = 0;
      f_parity ^= 1;
    }
  }
#endif
}

}  // namespace

template <int Radius>
void launch_tma(const AcousticArgs& a, int z_block, const TmaMaps& maps, cudaStream_t stream) {
  using Shape = TmaShape<Radius>;
  set_shared_limit_once(reinterpret_cast<const void*>(tma_kernel<Radius>), static_cast<int>(Shape::kSharedBytes));
  const int zb = z_block > 0 ? z_block : a.z_end() - a.z_lo;
  const dim3 block(Shape::BX, Shape::BY, 1);
  const dim3 grid((a.nx + Shape::BX - 1) / Shape::BX, (a.ny + TmaPolicy::kTileY - 1) / TmaPolicy::kTileY,
                  (a.z_end() - a.z_lo + zb - 1) / zb);
  tma_kernel<Radius><<<grid, block, Shape::kSharedBytes, stream>>>(*static_cast<const CUtensorMap*>(maps.p),
                                                                   *static_cast<const CUtensorMap*>(maps.p_prev),
                                                                   *static_cast<const CUtensorMap*>(maps.m), a, zb);
  SEISRTM_CUDA_LAUNCHED();
}

std::array<int, 3> tma_box(int radius) {
  return {tma_tile_width(radius), tma_tile_height(radius), 1};
}
std::array<int, 3> tma_center_box() {
  return {TmaPolicy::kBlockX, TmaPolicy::kTileY, 1};
}

template void launch_tma<1>(const AcousticArgs&, int, const TmaMaps&, cudaStream_t);
template void launch_tma<2>(const AcousticArgs&, int, const TmaMaps&, cudaStream_t);
template void launch_tma<4>(const AcousticArgs&, int, const TmaMaps&, cudaStream_t);
template void launch_tma<8>(const AcousticArgs&, int, const TmaMaps&, cudaStream_t);

}  // namespace seisrtm::kernels
