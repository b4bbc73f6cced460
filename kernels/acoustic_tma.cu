// tma: the 2.5D march fed by the Tensor Memory Accelerator. One thread issues 3D box loads of
// the plane tile (halos and corners included; out-of-bounds boxes arrive zero-filled) into a
// ring of S = R + 1 + lookahead shared-memory stages, each completing on its own mbarrier (the
// ring's pieces: kernels/tma_ring.cuh).
// Plane z's tile gives the x-y terms; planes z+1..z+R are still in the ring and give the z terms
// in front; the R planes behind come from a register queue (fp16 at order 8: all 2R + 1 planes of
// the thread's columns in registers, each read from the ring once, as its plane arrives; the
// forms in tma_kernel). Loads run `lookahead` planes ahead
// so bytes stay in flight while the current plane is computed. Each thread owns RY x CX columns
// (RY stacked in y, CX adjacent in x: the shapes of TmaShape, kernels/acoustic.hpp, all over the
// same kBlockX x kTileY tile). p_prev and m come through the copy engine as well, as boxes of the block's own
// columns in a second ring (lookahead + 1 planes deep, its own mbarriers): read by the threads
// one plane ahead, they left too few bytes in flight (docs/BENCHMARKS.md, "Tried and lost").
// p_next is written in place over p_prev; a plane's p_prev box is always loaded before that
// plane is written. The element type T is the storage (float, or __half with the arithmetic in
// float: kernels/acoustic.hpp, Storage): the same march over half the bytes, each value widened
// as it leaves shared memory.
#include <cuda.h>

#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/tma_ring.cuh"

// The sm_80/89 pass compiles the kernel to a trap, leaving the shape constants unused there.
#pragma nv_diag_suppress 177

namespace seisrtm::kernels {

namespace {

// Planes of p in flight beyond the R + 1 in use (the ring's depth): TmaPolicy::kLookahead, but
// two for the order-8 fp32 kernel with L2 hints (plain memory by the policy), the one kernel
// that a shallower ring speeds up at every z_block; the others keep three, and four slows every
// kernel (docs/BENCHMARKS.md, "Forward acoustic").
constexpr int tma_lookahead(int radius, bool hinted) {
  return hinted && radius == 4 ? 2 : TmaPolicy::kLookahead;
}

template <int Radius, int RY, int CX, class T = float, int Lookahead = TmaPolicy::kLookahead>
struct TmaGeometry {
  // Every shape covers the same kBlockX x kTileY columns (the tensor maps' boxes): TX x TY
  // threads, each marching RY x CX columns (RY stacked in y, CX adjacent in x).
  static constexpr int BX = TmaPolicy::kBlockX, TX = BX / CX, TY = TmaPolicy::kTileY / RY;
  static_assert(TX * CX == BX && TY * RY == TmaPolicy::kTileY, "a shape covers the tile");
  static_assert(CX == 1 || CX == 2, "one or two adjacent columns a thread");
  static constexpr int TW = tma_tile_width(Radius, sizeof(T));
  static constexpr int TH = tma_tile_height(Radius);
  static constexpr int HX = tma_halo_x(Radius, sizeof(T));
  static_assert(HX % 2 == 0 && TW % 2 == 0, "paired loads of column pairs: even tile offsets");
  static constexpr int kStages = Radius + 1 + Lookahead;
  static constexpr int kStageFloats = detail::stage_elements<T>(TW * TH);  // stages 128-byte aligned
  static constexpr unsigned kBoxBytes = TW * TH * sizeof(T);
  // p_prev and m of the block's own columns, one plane per stage, kFieldStages deep.
  static constexpr int kFieldStages = Lookahead + 1;
  static constexpr int kFieldFloats = BX * TmaPolicy::kTileY;  // one array's plane in elements (128-byte multiple)
  static_assert(kFieldFloats * sizeof(T) % 128 == 0, "field stages 128-byte aligned");
  static constexpr unsigned kFieldBytes = 2 * kFieldFloats * sizeof(T);
  static constexpr size_t kSharedBytes =
      size_t(kStages) * kStageFloats * sizeof(T) + size_t(kFieldStages) * kFieldBytes + 128;
  static constexpr int kThreads = TX * TY;
  // Blocks an SM must hold: two below order 16, one at order 16 (its stages take 142 KB); three
  // for the Dense form (kDenseBlocks, below).
  static constexpr int kMinBlocks = Radius >= 8 ? 1 : 2;
  static_assert(kSharedBytes <= kSharedPerBlockCc90, "a block's shared memory beyond compute capability 9.0's 227 KB");
  static_assert(kMinBlocks * (kSharedBytes + kSharedReservedPerBlock) <= kSharedPerSmCc90,
                "the blocks an SM must hold do not fit its 228 KB");
  // The Dense form (tma_kernel): three blocks an SM, for the order-8 fp16 kernel of 2 x 2 columns a thread.
  static constexpr bool kDenseForm = Radius == 4 && sizeof(T) == 2 && RY == 2 && CX == 2;
  static constexpr int kDenseBlocks = 3;
  static_assert(!kDenseForm || kDenseBlocks * (kSharedBytes + kSharedReservedPerBlock) <= kSharedPerSmCc90,
                "three blocks do not fit an SM");
};

// CX adjacent values from shared memory, as floats (one 8-byte load for a pair of floats, one
// 4-byte load for a pair of halves: the first column's tile index is even).
template <int CX>
__device__ __forceinline__ void load_cx(const float* p, float (&v)[CX]) {
  if constexpr (CX == 2) {
    const float2 w = *reinterpret_cast<const float2*>(p);
    v[0] = w.x;
    v[1] = w.y;
  } else {
    v[0] = p[0];
  }
}
template <int CX>
__device__ __forceinline__ void load_cx(const __half* p, float (&v)[CX]) {
  if constexpr (CX == 2) {
    const float2 w = __half22float2(*reinterpret_cast<const __half2*>(p));
    v[0] = w.x;
    v[1] = w.y;
  } else {
    v[0] = __half2float(p[0]);
  }
}

// Whole: the block marches the whole column (z_block none, or a z_block of at least the planes;
// fp16 storage, where it pays: fp32 runs slower with it). At order 8 it then sums the Laplacian
// per k instead of in the single FMA chain, and marches two planes an iteration instead of four:
// over the whole column the chain and four planes run slower, most in compressible memory, while
// in z blocks they run faster (docs/BENCHMARKS.md, "Forward acoustic").
// Hinted: the loads carry L2 hints (AcousticArgsT::l2_hint > 0; fp32 storage). A template flag,
// so that the kernels without hints carry no hint code: hint branches inside one kernel lengthen
// its loop and slow the runs without hints in compressible memory.
// Dense: three blocks an SM instead of two (the order-8 fp16 quads kernel, 80 registers a thread
// instead of 96, 24 warps an SM), for z blocks of at most TmaPolicy::kDenseMaxPlanes planes in
// the chunked launch order (not with whole layers forced by bench --chunk-rows 0): short z
// blocks gain from the third block, while the longer z blocks of more resident blocks thrash L2
// and run slower than with two (docs/BENCHMARKS.md, "Forward acoustic").
template <int Radius, int RY, int CX, class T, bool Whole, bool Hinted, bool Dense = false>
__global__ void __launch_bounds__(TmaGeometry<Radius, RY, CX, T>::kThreads,
                                  Dense ? TmaGeometry<Radius, RY, CX, T>::kDenseBlocks
                                        : TmaGeometry<Radius, RY, CX, T>::kMinBlocks)
    tma_kernel(const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap tmap_prev,
               const __grid_constant__ CUtensorMap tmap_m, const AcousticArgsT<T> a, int z_block, int chunk,
               int z_blocks) {
  static_assert(!Whole || (Radius == 4 && sizeof(T) == 2), "the whole-column form: the order-8 fp16 kernel's");
  static_assert(!Hinted || sizeof(T) == 4, "L2 hints: fp32 storage only");
  static_assert(!Dense || TmaGeometry<Radius, RY, CX, T>::kDenseForm,
                "three blocks an SM: the order-8 fp16 quads kernel's");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  // Built for older GPUs too (naive and smem run there); the host never launches this kernel
  // below compute capability 9.0 (no bulk tensor copies).
  __trap();
#else
  using Shape = TmaGeometry<Radius, RY, CX, T, tma_lookahead(Radius, Hinted)>;
  constexpr int BX = Shape::BX, TX = Shape::TX, TW = Shape::TW, HX = Shape::HX, R = Radius;
  constexpr int S = Shape::kStages, SF = Shape::kStageFloats;
  constexpr int FS = Shape::kFieldStages, FF = Shape::kFieldFloats;
  extern __shared__ __align__(128) float shared_raw[];
  __shared__ alignas(8) uint64_t bar[S];
  __shared__ alignas(8) uint64_t field_bar[FS];
  T* ring = reinterpret_cast<T*>(shared_raw) + detail::ring_offset<T>(shared_raw);
  T* fields = ring + S * SF;  // stage f: p_prev at fields + 2 f FF, m right after

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
  // The block's tile and z block (launch_tma_shape's chunked order).
  const int tiles_x = (a.nx + BX - 1) / BX, tiles = tiles_x * ((a.ny + TmaPolicy::kTileY - 1) / TmaPolicy::kTileY);
  const BlockPlace place = block_place(blockIdx.x, tiles, chunk, z_blocks);  // z_blocks: gridDim.x / tiles
  const int x0 = place.tile % tiles_x * BX, y0 = place.tile / tiles_x * TmaPolicy::kTileY;
  const int bx = CX * tx;                       // this thread's first column in the block
  const int ix0 = x0 + bx, iy0 = y0 + ty * RY;  // its columns: ix0 .. ix0 + CX - 1, rows iy0 .. iy0 + RY - 1
  const int z0 = a.z_lo + place.z_block * z_block, z1 = min(a.z_end(), z0 + z_block);
  const int planes = z1 - z0, total = planes + R;    // loads: planes z0 .. z1 + R - 1
  const int center0 = (ty * RY + R) * TW + bx + HX;  // tile index of the first cell

  if (tid == 0) {
    detail::init_ring(bar, S, 1);
    detail::init_ring(field_bar, FS, 1);
    detail::fence_ring_init();
  }
  __syncthreads();
  // The loads' L2 hints (AcousticArgsT::l2_hint; fp32 storage only: fp16 lost with every hint).
  const int hint = Hinted ? a.l2_hint : 0;
  const uint64_t policy_p = Hinted ? detail::l2_policy(false) : 0, policy_f = Hinted ? detail::l2_policy(true) : 0;
  auto issue = [&](int j, int s) {  // plane z0 + j of p into stage s
    detail::expect_bytes(&bar[s], Shape::kBoxBytes);
    const int32_t coords[3] = {x0 - HX, y0 - R, z0 + j};
    if (hint == 2)
      detail::load_box(ring + s * SF, &tmap, coords, &bar[s], policy_p);
    else
      detail::load_box(ring + s * SF, &tmap, coords, &bar[s]);
  };
  auto issue_fields = [&](int j, int f) {  // plane z0 + j of p_prev and m into field stage f
    detail::expect_bytes(&field_bar[f], Shape::kFieldBytes);
    const int32_t coords[3] = {x0, y0, z0 + j};
    if (hint >= 1) {
      detail::load_box(fields + 2 * f * FF, &tmap_prev, coords, &field_bar[f], policy_f);
      detail::load_box(fields + (2 * f + 1) * FF, &tmap_m, coords, &field_bar[f], policy_f);
      return;
    }
    detail::load_box(fields + 2 * f * FF, &tmap_prev, coords, &field_bar[f]);
    detail::load_box(fields + (2 * f + 1) * FF, &tmap_m, coords, &field_bar[f]);
  };
  if (tid == 0) {
    for (int j = 0; j < min(S, total); ++j) issue(j, j);
    for (int j = 0; j < min(FS, planes); ++j) issue_fields(j, j);
  }

  // The forms of the march, each where it runs faster (docs/BENCHMARKS.md, "Forward acoustic").
  // Plane test (fp16 at orders 8 and 16, not the Whole form): the damping is tested once a thread
  // and a plane instead of in every cell, whose branches the compiler wraps around each cell's
  // whole update (fp32, and orders 2 and 4 in fp16, run slower with it and the queue). Queue
  // (fp16 at order 8 besides): the 2R + 1 planes of this thread's columns in registers, each value
  // widened once, as it enters, instead of the R front planes read from the ring and widened again
  // at every plane. Otherwise: the R planes behind in registers, the R in front from the ring, a
  // test in each cell.
  constexpr bool kPlaneTest = sizeof(T) == 2 && !Whole && R >= 4;
  constexpr bool kQueue = kPlaneTest && R == 4;

  // Per cell: validity, x-y damping and the planes behind; per row the output pointer of the
  // first column (clamped: idle threads point at valid memory), advanced a plane stride each
  // plane, so the loop does no 64-bit multiplications.
  bool active[RY][CX];
  T* out[RY];  // p_next at the current plane, written through the p_prev column
  float damp_xy[RY][CX];
  float behind[RY][CX][kQueue ? 1 : R];      // planes j - 1 .. j - R (the forms without the queue)
  float zq[RY][CX][kQueue ? 2 * R + 1 : 1];  // planes j - R .. j + R (queue form)
  const int cx_ = min(ix0, a.nx - 1);
  // Plane z0 - 1 - k of a cell into the queue or the planes behind.
  auto put_behind = [&](int r, int c, int k, float v) {
    if constexpr (kQueue)
      zq[r][c][R - 1 - k] = v;
    else
      behind[r][c][k] = v;
  };
  // Every z block but the top ones has its R planes behind inside the volume: there they are
  // plain loads a plane stride apart, without column_value's tests of each plane against the top
  // and the free surface and its index arithmetic, a cost each z block pays once (in short z
  // blocks a visible share of the kernel's instructions).
  const bool inside = z0 >= R;  // the same for the whole block
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int iy = iy0 + r, cy_ = min(iy, a.ny - 1);
    out[r] = a.pn + (long long)cy_ * a.sy + cx_ + (long long)z0 * a.sz;
#pragma unroll
    for (int c = 0; c < CX; ++c) {
      const int ixc = min(ix0 + c, a.nx - 1);
      active[r][c] = ix0 + c < a.nx && iy < a.ny;
      damp_xy[r][c] = a.damp_x[ixc] + a.damp_y[cy_];
    }
    if (inside) {
#pragma unroll
      for (int c = 0; c < CX; ++c) {
        const T* v = a.p + (long long)cy_ * a.sy + min(ix0 + c, a.nx - 1) + (long long)(z0 - 1) * a.sz;
#pragma unroll
        for (int k = 0; k < R; ++k, v -= a.sz) put_behind(r, c, k, detail::to_float(*v));  // plane z0 - 1 - k
      }
    } else {
#pragma unroll
      for (int c = 0; c < CX; ++c)
#pragma unroll
        for (int k = 0; k < R; ++k)
          put_behind(r, c, k, detail::column_value(a, min(ix0 + c, a.nx - 1), cy_, z0 - 1 - k));
    }
  }
  // Pair stores (fp16, two columns a thread, the plane test's undamped form): one 4-byte store of
  // a row's two cells where both are inside and 4-byte aligned on every plane (an even plane
  // stride), instead of two 2-byte stores and conversions.
  constexpr bool kPairStores = kPlaneTest && CX == 2;
  bool paired = kPairStores && (a.sz & 1) == 0 && (a.sy & 1) == 0 && (cx_ & 1) == 0 &&
                (static_cast<uint32_t>(__cvta_generic_to_global(a.pn)) & 3) == 0;
#pragma unroll
  for (int r = 0; r < RY; ++r) paired = paired && active[r][0] && active[r][CX - 1];
  bool undamped_xy = true;  // no cell of this thread in the x-y damping zone
#pragma unroll
  for (int r = 0; r < RY; ++r)
#pragma unroll
    for (int c = 0; c < CX; ++c) undamped_xy = undamped_xy && damp_xy[r][c] == 0.0f;
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  const int field0 = (ty * RY) * BX + bx;  // field stage index of the first cell

  // Stage bookkeeping without divisions: plane j + k sits at ring offset stage[k] (k = 0..R,
  // shifted down a slot each plane); plane j + R, the one waited for, in stage `s_wait` with
  // phase parity `parity`; plane j's fields in `f_cur` with `f_parity`.
  int stage[R + 1];
#pragma unroll
  for (int k = 0; k <= R; ++k) stage[k] = (k % S) * SF + center0;
  int s_cur = 0, s_wait = R % S, f_cur = 0, s_next = (R + 1) % S;
  uint32_t parity = 0, f_parity = 0;
  for (int j = 0; j < R; ++j) detail::wait_stage(&bar[j], 0);
  // This thread's RY x CX values at ring offset `offset`, widened, into queue slot `slot`: planes
  // z0 .. z0 + R - 1 (loaded) into slots R .. 2R - 1 here, plane j + R into slot 2R each plane.
  auto enqueue = [&](int offset, int slot) {
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      float v[CX];
      load_cx<CX>(ring + offset + r * TW, v);
#pragma unroll
      for (int c = 0; c < CX; ++c) zq[r][c][slot] = v[c];
    }
  };
  if constexpr (kQueue) {
#pragma unroll
    for (int k = 0; k < R; ++k) enqueue(stage[k], R + k);
  }

  // Two planes an iteration (the loop overhead shared; 601 SASS instructions for two planes of
  // the order-8 rows2 loop against 2 x 308 for one), R at order 8 (but two in the Whole form):
  // the R planes behind then shift by register renaming instead of moves (the queue form's 2R + 1
  // slots by renaming and R + 1 moves a cell every four planes). (At order 16, 8 copies of the
  // body would not stay in the instruction cache.)
#pragma unroll(R == 4 && !Whole ? 4 : 2)
  for (int j = 0; j < planes; ++j) {
    const int iz = z0 + j;
    float prev[RY][CX], mj[RY][CX];
    detail::wait_stage(&field_bar[f_cur], f_parity);
    const T* fp = fields + 2 * f_cur * FF + field0;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      load_cx<CX>(fp + r * BX, prev[r]);
      load_cx<CX>(fp + FF + r * BX, mj[r]);
    }
    detail::wait_stage(&bar[s_wait], parity);
    if constexpr (kQueue) enqueue(stage[R], 2 * R);  // plane j + R
    const T* tile = ring + stage[0];
    // The columns of the tile through this thread's rows, for the y terms and the centres (in
    // the queue form the centres from the queue).
    float col[RY + 2 * R][CX];
#pragma unroll
    for (int t = 0; t < RY + 2 * R; ++t) {
      if (kQueue && t >= R && t < R + RY) {
#pragma unroll
        for (int c = 0; c < CX; ++c) col[t][c] = zq[t - R][c][kQueue ? R : 0];
      } else {
        load_cx<CX>(tile + (t - R) * TW, col[t]);
      }
    }
    const float dz = a.damp_z[iz];
    // The plane test: this thread's cells of plane j take leapfrog's undamped form when none of
    // them is damped and the plane is not a free surface, one test a thread and a plane instead
    // of the branches of every cell (the damping test, the division's slow path, the write's
    // guard), which the compiler otherwise wraps around each cell's whole update.
    const bool free_plane = undamped_xy && dz == 0.0f && !(a.free_surface && iz == 0);
    float cur[RY][CX], lap[RY][CX];
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      // The row through this thread's cells, offsets -R .. CX - 1 + R (pairs from an even start;
      // the queue form takes this thread's own cells from the queue).
      constexpr int W0 = CX == 2 ? (R % 2 == 0 ? -R : -R - 1) : -R;
      constexpr int WN = CX == 2 ? (CX - 1 + R - W0 + 2) / 2 * 2 : 2 * R + 1;
      float win[WN];
      const T* row = tile + r * TW;
#pragma unroll
      for (int i = 0; i < WN / CX; ++i) {
        float v[CX];
        if (kQueue && W0 + CX * i == 0) {
#pragma unroll
          for (int c = 0; c < CX; ++c) v[c] = col[r + R][c];
        } else {
          load_cx<CX>(row + W0 + CX * i, v);
        }
#pragma unroll
        for (int c = 0; c < CX; ++c) win[CX * i + c] = v[c];
      }
      float front[kQueue ? 1 : R][CX];  // planes j + 1 .. j + R at this row (the forms without the queue)
      if constexpr (!kQueue) {
#pragma unroll
        for (int k = 1; k <= R; ++k) load_cx<CX>(ring + stage[k] + r * TW, front[k - 1]);
      }
      // The sum of cell (r, c)'s z neighbours k planes away: from the queue, or behind and in front.
      auto z_pair = [&](int c, int k) {
        if constexpr (kQueue)
          return zq[r][c][R - k] + zq[r][c][R + k];
        else
          return behind[r][c][k - 1] + front[k - 1][c];
      };
#pragma unroll
      for (int c = 0; c < CX; ++c) {
        cur[r][c] = col[r + R][c];
        // One chain of fused multiply-adds, a pair sum and an FMA a neighbour pair (3R FADD + 3R
        // FFMA): summing each k's three axes apart and adding them to lap costs an FMUL and an
        // FADD more a k, which the Whole form (fp16, the whole column) takes all the same: there
        // it runs faster (above the kernel).
        float l = c0 * cur[r][c];
#pragma unroll
        for (int k = 1; k <= R; ++k) {
          if constexpr (Whole) {
            l += a.cx[k] * (win[c - k - W0] + win[c + k - W0]) + a.cy[k] * (col[r + R - k][c] + col[r + R + k][c]) +
                 a.cz[k] * z_pair(c, k);
          } else {
            l = fmaf(a.cx[k], win[c - k - W0] + win[c + k - W0], l);
            l = fmaf(a.cy[k], col[r + R - k][c] + col[r + R + k][c], l);
            l = fmaf(a.cz[k], z_pair(c, k), l);
          }
        }
        lap[r][c] = l;
        if constexpr (!kPlaneTest) {
          if (active[r][c]) {
            const float v = detail::leapfrog(cur[r][c], prev[r][c], mj[r][c], l, damp_xy[r][c] + dz);
            out[r][c] = detail::from_float<T>((a.free_surface && iz == 0) ? 0.0f : v);  // p = 0 on a free surface
          }
        }
        if constexpr (kQueue) {
#pragma unroll
          for (int k = 0; k < 2 * R; ++k) zq[r][c][k] = zq[r][c][k + 1];
        } else {
#pragma unroll
          for (int k = R - 1; k > 0; --k) behind[r][c][k] = behind[r][c][k - 1];
          behind[r][c][0] = cur[r][c];
        }
      }
      if constexpr (!kPlaneTest) out[r] += a.sz;
    }
    if constexpr (kPlaneTest) {
      if (kPairStores && free_plane && paired) {  // both cells of each row in one 4-byte store
#pragma unroll
        for (int r = 0; r < RY; ++r)
          *reinterpret_cast<__half2*>(out[r]) =
              __floats2half2_rn(detail::leapfrog_undamped(cur[r][0], prev[r][0], mj[r][0], lap[r][0]),
                                detail::leapfrog_undamped(cur[r][CX - 1], prev[r][CX - 1], mj[r][CX - 1],
                                                          lap[r][CX - 1]));  // CX - 1: 1 where it runs (CX == 2)
      } else if (free_plane) {
#pragma unroll
        for (int r = 0; r < RY; ++r)
#pragma unroll
          for (int c = 0; c < CX; ++c)
            if (active[r][c])
              out[r][c] = detail::from_float<T>(detail::leapfrog_undamped(cur[r][c], prev[r][c], mj[r][c], lap[r][c]));
      } else {
#pragma unroll
        for (int r = 0; r < RY; ++r)
#pragma unroll
          for (int c = 0; c < CX; ++c) {
            const float v = detail::leapfrog(cur[r][c], prev[r][c], mj[r][c], lap[r][c], damp_xy[r][c] + dz);
            if (active[r][c]) out[r][c] = detail::from_float<T>((a.free_surface && iz == 0) ? 0.0f : v);
          }
      }
#pragma unroll
      for (int r = 0; r < RY; ++r) out[r] += a.sz;
    }
    __syncthreads();  // every thread is done with plane j's stage and field stage f_cur
    if (tid == 0) {
      if (j + S < total) issue(j + S, s_cur);
      if (j + FS < planes) issue_fields(j + FS, f_cur);
    }
#pragma unroll
    for (int k = 0; k < R; ++k) stage[k] = stage[k + 1];
    stage[R] = s_next * SF + center0;
    if (++s_next == S) s_next = 0;
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

template <int Radius, int RY, int CX, class T>
void launch_tma_shape(const AcousticArgsT<T>& a, int z_block, const TmaMaps& maps, cudaStream_t stream) {
  using Shape = TmaGeometry<Radius, RY, CX, T>;
  constexpr bool kHalf = sizeof(T) == 2;
  constexpr bool kWholeForm = Radius == 4 && kHalf;  // the kernels that exist
  const bool whole = kWholeForm && (z_block <= 0 || z_block >= a.z_end() - a.z_lo);
  const int zb = z_block > 0 ? z_block : a.z_end() - a.z_lo;
  auto* kernel = &tma_kernel<Radius, RY, CX, T, false, false>;
  int smem = static_cast<int>(Shape::kSharedBytes);  // each kernel's own, set where it is picked
  if (whole) {
    kernel = &tma_kernel<Radius, RY, CX, T, kWholeForm, false>;
  } else if (Shape::kDenseForm && zb <= TmaPolicy::kDenseMaxPlanes && a.chunk_rows != 0) {  // pays in chunks only
    kernel = &tma_kernel<Radius, RY, CX, T, false, false, Shape::kDenseForm>;
  } else if (a.l2_hint > 0) {
    // The kernel with L2 hints (fp32; plain memory by the policy, any memory when forced by
    // bench --l2-hint): its ring may be shallower (tma_lookahead).
    kernel = &tma_kernel<Radius, RY, CX, T, false, !kHalf>;
    smem = static_cast<int>(TmaGeometry<Radius, RY, CX, T, tma_lookahead(Radius, !kHalf)>::kSharedBytes);
  }
  set_shared_limit_once(reinterpret_cast<const void*>(kernel), smem, {"acoustic", Radius, sizeof(T)});
  const int tiles_x = (a.nx + Shape::BX - 1) / Shape::BX;
  const int tile_rows = (a.ny + TmaPolicy::kTileY - 1) / TmaPolicy::kTileY,
            z_blocks = (a.z_end() - a.z_lo + zb - 1) / zb;
  // The launch order (AcousticArgsT::chunk_rows). In layer order z block k + 1 of a tile starts
  // a whole layer of tiles after z block k, and the 2R planes of p they share have left L2 by
  // then: DRAM delivers them twice (docs/BENCHMARKS.md, "Forward acoustic"). With chunks of about
  // the resident blocks it starts about as z block k ends.
  const int rows = a.chunk_rows < 0 && zb > TmaPolicy::kChunkMaxPlanes ? 0 : a.chunk_rows;
  const LaunchOrder order =
      launch_order(reinterpret_cast<const void*>(kernel), Shape::kThreads, smem, tiles_x, tile_rows, z_blocks, rows);
  const dim3 block(Shape::TX, Shape::TY, 1);
  const CUtensorMap& map_p = *static_cast<const CUtensorMap*>(maps.p);
  const CUtensorMap& map_prev = *static_cast<const CUtensorMap*>(maps.p_prev);
  const CUtensorMap& map_m = *static_cast<const CUtensorMap*>(maps.m);
  kernel<<<order.grid, block, smem, stream>>>(map_p, map_prev, map_m, a, zb, order.chunk, z_blocks);
  SEISRTM_CUDA_LAUNCHED();
}

template <int Radius, class T>
void launch_tma(const AcousticArgsT<T>& a, int z_block, const TmaMaps& maps, TmaShape shape, cudaStream_t stream) {
  switch (shape) {
    case TmaShape::rows2:
      return launch_tma_shape<Radius, 2, 1>(a, z_block, maps, stream);
    case TmaShape::rows4:
      return launch_tma_shape<Radius, 4, 1>(a, z_block, maps, stream);
    case TmaShape::pairs:
      return launch_tma_shape<Radius, 1, 2>(a, z_block, maps, stream);
    case TmaShape::quads:
      return launch_tma_shape<Radius, 2, 2>(a, z_block, maps, stream);
  }
}

std::array<int, 3> tma_box(int radius, int element_bytes) {
  return {tma_tile_width(radius, element_bytes), tma_tile_height(radius), 1};
}
std::array<int, 3> tma_center_box() {
  return {TmaPolicy::kBlockX, TmaPolicy::kTileY, 1};
}

#define SEISRTM_TMA(R)                                                                                  \
  template void launch_tma<R, float>(const AcousticArgs&, int, const TmaMaps&, TmaShape, cudaStream_t); \
  template void launch_tma<R, __half>(const AcousticArgsHalf&, int, const TmaMaps&, TmaShape, cudaStream_t);
SEISRTM_TMA(1)
SEISRTM_TMA(2)
SEISRTM_TMA(4)
SEISRTM_TMA(8)
#undef SEISRTM_TMA

}  // namespace seisrtm::kernels
