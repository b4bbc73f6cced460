// tma TTI: the whole step of p and q in one pass (DESIGN.md sections 3 and 5). Each thread owns
// one column of a BX x BY block and marches down z. Per plane the Tensor Memory Accelerator
// brings p and q of level n as tiles with R halo cells on every side (corners included) into a
// ring of S >= R + 1 + lookahead stages (the ring's pieces: kernels/tma_ring.cuh), and the block's
// own columns of p_prev, q_prev and the model volumes (m, a, b, theta, phi) into a second ring;
// without z-blocking nothing is read twice from DRAM.
//
// When a plane enters (plane c + R while plane c is computed), each thread takes from its tile
// the column's p and q and their first derivatives D_x and D_y, and pushes them into register
// queues of 2R + 1 planes; from the same tile values (tti) it takes d_xx and d_yy of p and q into a
// shared ring of its own cells. Plane c then has
//   d_zz from the p/q queues, d_xz = D_z (D_x f) and d_yz = D_z (D_y f) from the derivative
//   queues, d_xx and d_yy from that ring (vti: from the tile), and d_xy = D_y (D_x f) from D_x f
//   of the tile's rows:
//   written to shared memory the plane before (each thread's own row from its queue, the 2R halo
//   rows computed), in one of two buffers.
// No __syncthreads in the march: split barriers (mbarriers every thread arrives on) say when
// every thread is done with a plane and has written the next plane's D_x rows; a thread waits on them
// only where it needs them, and the TMA loads into a freed stage are issued by one lane of warp 0
// (p, q) and of warps 1..NV (one per-cell volume each: 7 for tti, 5 for vti).
// The march starts R planes above its first plane (z_block edges: the planes above belong to the
// block above; at z = 0: zero, or with a free surface plane k loaded and negated as the odd image
// of plane -k), so the block's first plane has its 2R + 1 queue entries.
//
// Bytes from DRAM per cell per step: 9 reads and 2 writes of 4 bytes = 44 (vti: 36; halves of
// fp16 storage: 22 and 18); p and q
// tiles re-read their halo from L2, and a z_block re-reads 2R planes of p and q.
#include <cuda.h>

#include "kernels/cuda_check.hpp"
#include "kernels/tma_ring.cuh"
#include "kernels/tti_common.cuh"
#include "kernels/tti_variants.cuh"

// The sm_80/89 pass compiles the kernel to a trap, leaving the shape constants unused there.
#pragma nv_diag_suppress 177

namespace seisrtm::kernels {

namespace {

constexpr int pow2_at_least(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// Planes of p and q in flight beyond the R + 1 in use: TtiTmaPolicy::kLookahead, but four (16
// stages) for the order-8 vti kernel in fp32, the one kernel that the deeper ring speeds up; vti
// in fp16 and tti run slower with it, so they keep 8 (docs/BENCHMARKS.md, "TTI and VTI").
constexpr int tti_lookahead(int radius, bool tilted, int element_bytes) {
  return !tilted && radius == 4 && element_bytes == 4 ? 4 : TtiTmaPolicy::kLookahead;
}

template <int Radius, bool Tilted, class T = float>
struct TtiShape {
  static constexpr int BX = TtiTmaPolicy::kBlockX, BY = tti_block_y(Radius);
  static constexpr int TW = tti_tile_width(Radius, sizeof(T)), TH = tti_tile_height(Radius),
                       HX = tti_halo_x(Radius, sizeof(T));
  // Stage counts are powers of two: a load's stage and parity are bits of its index.
  static constexpr int kStages = pow2_at_least(Radius + 1 + tti_lookahead(Radius, Tilted, sizeof(T)));
  static constexpr int kStageFloats = detail::stage_elements<T>(TW * TH);  // one field's tile, 128-byte aligned
  static constexpr unsigned kBoxBytes = TW * TH * sizeof(T);
  // The per-cell volumes come two planes a load (one barrier and one issue for two planes).
  static constexpr int kFieldPairs = TtiTmaPolicy::kFieldPairs;
  // Without these the march waits for a load issued only after the wait: load L is issued once
  // every thread is done with plane L - R - S, field pair u once every thread is done with plane
  // 2 (u - FP) + 1.
  static_assert(kStages >= Radius + 2, "p/q stages: at least R + 2");
  static_assert(kFieldPairs >= 2, "field stages: at least 2 pairs of planes");
  static_assert(TtiTmaPolicy::kFieldDepth == 2, "the field ring holds pairs of planes");
  static constexpr int kVolumes = Tilted ? 7 : 5;  // p_prev, q_prev, m, a, b (, theta, phi)
  static constexpr int kFieldFloats = BX * BY;     // one volume's plane of the block
  static constexpr unsigned kFieldBytes = kFieldFloats * sizeof(T);
  static_assert(kFieldBytes % 128 == 0, "field stages 128-byte aligned");
  static constexpr int kGxRows = BY + 2 * Radius;  // D_x p and D_x q of the tile's rows
  static constexpr int kThreads = BX * BY, kWarps = kThreads / 32;
  static constexpr size_t kLimit = kSharedPerBlockCc90;  // shared memory of one block
  // Shared memory: the p/q ring, the per-cell volumes' ring and two gx buffers (D_x p and D_x q of
  // a plane's tile rows, [buffer][p, q][kGxRows][BX]), plus 128 bytes for the alignment.
  static constexpr size_t kBaseBytes = size_t(kStages) * 2 * kStageFloats * sizeof(T) +
                                       size_t(kFieldPairs) * kVolumes * 2 * kFieldBytes +
                                       size_t(2) * 2 * kGxRows * BX * sizeof(float) + 128;
  // tti: d_xx and d_yy of p and q, taken when a plane enters from the tile values its D_x and D_y
  // already load, wait R planes in a ring of this thread's own cells ([stage][4][kThreads], the
  // stage of their load) instead of being loaded again from the tile: 4 stores and 4 loads a cell
  // instead of 8R loads. Registers would do without the stores, but the tti kernel holds its
  // 128 (6 windows of 2R + 2 planes). Where the ring does not fit (order 16 in fp32) the tile is
  // read again.
  static constexpr size_t kHorizontalBytes = size_t(kStages) * 4 * kThreads * sizeof(float);
  static constexpr bool kHorizontal = Tilted && kBaseBytes + kHorizontalBytes <= kLimit;
  static constexpr size_t kSharedBytes = kBaseBytes + (kHorizontal ? kHorizontalBytes : 0);
  static_assert(kSharedBytes <= kLimit, "shared memory of one block beyond the 227 KB of compute capability 9.0");
  // Blocks an SM must hold: two wherever two fit in its shared memory (228 KB, 1 KB reserved a
  // block), so that the registers stay within half the file.
  static constexpr int kMinBlocks = 2 * (kSharedBytes + kSharedReservedPerBlock) <= kSharedPerSmCc90 ? 2 : 1;
  // Warp 0 issues the p/q tiles, warp 1 + v the per-cell volume v: the issue work is spread so
  // that no warp arrives late at the plane's barrier.
  static_assert(kVolumes < kWarps, "one issuing warp per per-cell volume besides warp 0");
};

constexpr int log2_of(int v) {
  int k = 0;
  while ((1 << k) < v) ++k;
  return k;
}

// A stored model value as float (fp16: times its volume's scale).
template <class T>
__device__ __forceinline__ float model_float(T v, float scale) {
  if constexpr (sizeof(T) == 2) return detail::to_float(v) * scale;
  (void)scale;
  return detail::to_float(v);
}

template <int Radius, bool Tilted, class T>
__global__ void __launch_bounds__(TtiShape<Radius, Tilted, T>::kThreads, TtiShape<Radius, Tilted, T>::kMinBlocks)
    tti_tma_kernel(const __grid_constant__ CUtensorMap map_p, const __grid_constant__ CUtensorMap map_q,
                   const __grid_constant__ CUtensorMap map_pp, const __grid_constant__ CUtensorMap map_qp,
                   const __grid_constant__ CUtensorMap map_m, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_theta,
                   const __grid_constant__ CUtensorMap map_phi, const TtiArgsT<T> a, int z_block, int chunk,
                   int z_blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // never launched below compute capability 9.0 (no bulk tensor copies)
#else
  using Shape = TtiShape<Radius, Tilted, T>;
  using detail::to_float;
  constexpr int BX = Shape::BX, BY = Shape::BY, TW = Shape::TW, HX = Shape::HX, R = Radius;
  constexpr int S = Shape::kStages, SF = Shape::kStageFloats;
  constexpr int FP = Shape::kFieldPairs, FF = Shape::kFieldFloats, NV = Shape::kVolumes;
  constexpr int Q = 2 * R + 1;  // a derivative's window: planes c - R .. c + R
  extern __shared__ __align__(128) float shared_raw[];
  __shared__ alignas(8) uint64_t bar[S];
  __shared__ alignas(8) uint64_t field_bar[FP];
  // Split barriers instead of one __syncthreads a plane: every thread arrives on consumed[j % 2]
  // when it is done with plane j's tile, fields and gx buffer and (tti) has written plane j + 1's
  // D_x rows; it waits on it only where it needs it, so a warp runs up to a plane ahead of the
  // slowest instead of idling at a barrier. (One barrier for both: a second one for the D_x rows,
  // arrived on at the same point, cost an arrival and a wait a plane.)
  __shared__ alignas(8) uint64_t consumed[2];
  T* ring = reinterpret_cast<T*>(shared_raw) + detail::ring_offset<T>(shared_raw);  // stage s: p, then q
  T* fields = ring + S * 2 * SF;  // field stage u: NV volumes x 2 planes
  // [buffer][p, q][kGxRows][BX]: D_x of a plane's tile rows (floats: computed values).
  float* gx = reinterpret_cast<float*>(fields + FP * NV * 2 * FF);
  constexpr bool kHorizontal = Shape::kHorizontal;
  constexpr int NT = Shape::kThreads;
  float* horizontal = gx + 2 * 2 * Shape::kGxRows * BX;  // [stage][xx p, yy p, xx q, yy q][NT]

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int warp = tid / 32;
  const bool lane0 = (tid & 31) == 0;
  // The block's tile and z block (launch_tti_tma's chunked order).
  const int tiles_x = (a.nx + BX - 1) / BX, tiles = tiles_x * ((a.ny + BY - 1) / BY);
  const BlockPlace place = block_place(blockIdx.x, tiles, chunk, z_blocks);
  const int x0 = place.tile % tiles_x * BX, y0 = place.tile / tiles_x * BY;
  const int ix = x0 + tx, iy = y0 + ty;
  const int z0 = a.z_lo + place.z_block * z_block, z1 = min(a.z_end(), z0 + z_block);
  const int planes = z1 - z0, total = planes + 2 * R;  // loads: planes z0 - R .. z1 + R - 1
  const int centre = (ty + R) * TW + tx + HX;          // tile index of this thread's cell

  if (tid == 0) {
    detail::init_ring(bar, S, 1);
    detail::init_ring(field_bar, FP, NV);  // one arrival per volume
    detail::init_ring(consumed, 2, Shape::kThreads);
    detail::fence_ring_init();
  }
  __syncthreads();
  // Load t: plane e = z0 - R + t of p and q into stage t % S. Above z = 0 the plane is zero, or
  // with a free surface plane -e, negated when it enters. Warp 0 issues these.
  auto issue = [&](int t) {
    const int s = t & (S - 1);
    detail::expect_bytes(&bar[s], 2 * Shape::kBoxBytes);
    const int e = z0 - R + t;
    const int32_t coords[3] = {x0 - HX, y0 - R, (e < 0 && a.free_surface) ? -e : e};
    if (sizeof(T) == 4 && a.l2_hint == 2) {
      const uint64_t policy = detail::l2_policy(false);
      detail::load_box(ring + 2 * s * SF, &map_p, coords, &bar[s], policy);
      detail::load_box(ring + (2 * s + 1) * SF, &map_q, coords, &bar[s], policy);
    } else {
      detail::load_box(ring + 2 * s * SF, &map_p, coords, &bar[s]);
      detail::load_box(ring + (2 * s + 1) * SF, &map_q, coords, &bar[s]);
    }
  };
  // Field load u, volume v: planes z0 + 2u and z0 + 2u + 1 of p_prev, q_prev, m, a, b, theta or
  // phi into field stage u % FP ([stage][volume][plane][FF]; a plane beyond the block is read and
  // not used, beyond the grid zero). Warp 1 + v issues these.
  const int volume = warp - 1;
  const CUtensorMap* volume_map = volume == 0   ? &map_pp
                                  : volume == 1 ? &map_qp
                                  : volume == 2 ? &map_m
                                  : volume == 3 ? &map_a
                                  : volume == 4 ? &map_b
                                  : volume == 5 ? &map_theta
                                                : &map_phi;
  auto issue_field = [&](int u) {
    const int fs = u % FP;
    detail::expect_bytes(&field_bar[fs], TtiTmaPolicy::kFieldDepth * Shape::kFieldBytes);
    const int32_t coords[3] = {x0, y0, z0 + 2 * u};
    if (sizeof(T) == 4 && a.l2_hint >= 1)
      detail::load_box(fields + (fs * NV + volume) * 2 * FF, volume_map, coords, &field_bar[fs],
                       detail::l2_policy(true));
    else
      detail::load_box(fields + (fs * NV + volume) * 2 * FF, volume_map, coords, &field_bar[fs]);
  };
  const bool pq_issuer = lane0 && warp == 0, field_issuer = lane0 && warp >= 1 && warp <= NV;
  if (pq_issuer)
    for (int t = 0; t < min(S, total); ++t) issue(t);
  if (field_issuer)
    for (int u = 0; u < min(FP, (planes + 1) / 2); ++u) issue_field(u);
  // The march's barriers by their 32-bit shared-memory addresses, taken once: through generic
  // pointers every wait and arrival rebuilt the address (S2UR, ULEA) in a kernel bound by issue.
  uint32_t bar_addr = detail::smem_address(bar), field_bar_addr = detail::smem_address(field_bar),
           consumed_addr = detail::smem_address(consumed);

  const bool active = ix < a.nx && iy < a.ny;
  int surface_j = a.free_surface ? -z0 : -1;  // the plane j of z = 0 with a free surface
  const int cx_ = min(ix, a.nx - 1), cy_ = min(iy, a.ny - 1);
  const float damp_x = a.damp_x[cx_], damp_y = a.damp_y[cy_];
  T* out_p = a.pn + (long long)cy_ * a.sy + cx_ + (long long)z0 * a.sz;
  T* out_q = a.qn + (long long)cy_ * a.sy + cx_ + (long long)z0 * a.sz;
  // Windows of this column's p, q, D_x p, D_y p, D_x q and D_y q over planes c - R .. c + R, one
  // slot longer than a window: the march does two planes per iteration (plane c in slots
  // 0 .. 2R, plane c + 1 in slots 1 .. 2R + 1) and then shifts by two, half the register moves of
  // a shift per plane. (Unrolling by 2R + 1 to rotate them instead executes fewer instructions
  // but runs slower: the 9 copies of the body miss the instruction cache; docs/BENCHMARKS.md,
  // "Tried and lost".)
  // Four planes an iteration where R is even (R = 1 keeps two; the march itself does not need R
  // even: each pair of planes takes its own state from advance): a shift by four, half the moves
  // a plane again, fewer instructions a plane; tti in fp16 gains, fp32 and vti run as fast
  // (docs/BENCHMARKS.md, "TTI and VTI").
  constexpr int U = R % 2 == 0 ? 4 : 2;  // planes an iteration of the march
  constexpr int W = Q + U - 1;           // window slots
  float qp[W], qq[W], gxp[W], gyp[W], gxq[W], gyq[W];
#pragma unroll
  for (int k = 0; k < W; ++k) qp[k] = qq[k] = gxp[k] = gyp[k] = gxq[k] = gyq[k] = 0.0f;
  constexpr int kGx = Shape::kGxRows * BX;  // one field's D_x rows in a gx buffer

  // Load t enters window slot `in` (plane e = z0 - R + t). Only loads above z0 + R can lie above
  // z = 0, so only the first 2R loads take the sign of the odd image.
  auto enter = [&]<int In, bool Image>(int t, int stage, uint32_t parity) {
    detail::wait_stage(bar_addr + 8 * stage, parity);
    const T* tp = ring + 2 * stage * SF + centre;
    const T* tq = tp + SF;
    float dxp = 0.0f, dyp = 0.0f, dxq = 0.0f, dyq = 0.0f;
    float vp = to_float(tp[0]), vq = to_float(tq[0]);
    // d_xx and d_yy (kHorizontal) in compute's order of terms: the same bits as from the tile.
    float xxp = a.cx[0] * vp, yyp = a.cy[0] * vp, xxq = a.cx[0] * vq, yyq = a.cy[0] * vq;
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      const float xp0 = to_float(tp[-k]), xp1 = to_float(tp[k]), yp0 = to_float(tp[-k * TW]),
                  yp1 = to_float(tp[k * TW]);
      const float xq0 = to_float(tq[-k]), xq1 = to_float(tq[k]), yq0 = to_float(tq[-k * TW]),
                  yq1 = to_float(tq[k * TW]);
      dxp += a.dx[k] * (xp1 - xp0);
      dyp += a.dy[k] * (yp1 - yp0);
      dxq += a.dx[k] * (xq1 - xq0);
      dyq += a.dy[k] * (yq1 - yq0);
      xxp += a.cx[k] * (xp0 + xp1);
      yyp += a.cy[k] * (yp0 + yp1);
      xxq += a.cx[k] * (xq0 + xq1);
      yyq += a.cy[k] * (yq0 + yq1);
    }
    if constexpr (Image) {
      if (z0 - R + t < 0) {  // odd image (a zero plane without a free surface)
        vp = -vp, vq = -vq, dxp = -dxp, dyp = -dyp, dxq = -dxq, dyq = -dyq;
        xxp = -xxp, yyp = -yyp, xxq = -xxq, yyq = -yyq;
      }
    }
    if constexpr (kHorizontal) {
      float* h = horizontal + stage * 4 * NT + tid;
      h[0] = xxp;
      h[NT] = yyp;
      h[2 * NT] = xxq;
      h[3 * NT] = yyq;
    }
    qp[In] = vp;
    qq[In] = vq;
    gxp[In] = dxp;
    gyp[In] = dyp;
    gxq[In] = dxq;
    gyq[In] = dyq;
  };
  // The 2R halo rows of both fields: 4R row-fields, row-field i to the threads of row i % BY; this
  // thread's rows' offsets in a tile stage and a gx buffer, taken once (-1: none).
  constexpr int NG = (4 * R + BY - 1) / BY;
  int gx_from[NG], gx_to[NG];
#pragma unroll
  for (int n = 0; n < NG; ++n) {
    const int i = ty + n * BY;
    const int h = i >> 1, field = i & 1;
    const int r = h < R ? h : BY + h;                  // rows 0..R-1 above the block, BY+R.. below
    const bool used = (4 * R) % BY == 0 || i < 4 * R;  // ty < BY: true where BY divides 4R
    gx_from[n] = field * SF + r * TW + tx + HX;
    gx_to[n] = used ? field * kGx + r * BX + tx : -1;
  }
  // D_x p and D_x q of plane z0 + j + 1 (load j + R + 1, in `stage`) on the tile's rows into gx buffer
  // (j + 1) % 2, for that plane's d_xy: this thread's own row from window slot `next`, the 2R halo
  // rows computed.
  auto prepare_gx = [&]<int Next, int Buffer>(int stage) {
    float* w = gx + Buffer * 2 * kGx;
    w[(ty + R) * BX + tx] = gxp[Next];
    w[kGx + (ty + R) * BX + tx] = gxq[Next];
    const T* tp = ring + 2 * stage * SF;
#pragma unroll
    for (int n = 0; n < NG; ++n) {
      if ((4 * R) % BY == 0 || gx_to[n] >= 0) {
        const T* rf = tp + gx_from[n];
        float d = 0.0f;
#pragma unroll
        for (int k = 1; k <= R; ++k) d += a.dx[k] * (to_float(rf[k]) - to_float(rf[-k]));
        w[gx_to[n]] = d;
      }
    }
  };
  // The march's position, carried from one pair of planes to the next instead of derived from j
  // at every use (the kernel is bound by instruction issue): for the pair j, j + 1 (j even),
  // stage = (j + 2R) % S, the stage of load j + 2R (loads j + 2R and j + 2R + 1 share its pass
  // of the ring: j + 2R is even, S a power of two), pass = its parity; half = (j / 2) % 2, the
  // parity of consumed[0]'s phase that plane j completes; field = (j / 2) % FP, the field stage
  // of planes j and j + 1, field_pass its parity. With the barrier addresses and the D_x rows'
  // offsets kept in registers too, the order-8 loop's hot path is shorter and faster
  // (docs/BENCHMARKS.md, "TTI and VTI").
  struct March {
    int stage;
    uint32_t pass;
    uint32_t half;
    int field;
    uint32_t field_pass;
  };
  // Plane c = z0 + j (load j + R, window slots Slot .. Slot + 2R, gx buffer j % 2 = Base); m: the
  // pair j - Base, j - Base + 1, damp_z: its damping.
  auto compute = [&]<int Slot>(int j, const March& m, const float* damp_z) {
    constexpr int Base = Slot & 1;
    const int iz = z0 + j;
    const int stage_c = (m.stage + Base - R) & (S - 1);  // load j + R
    const T* cp = ring + 2 * stage_c * SF + centre;
    const T* cq = cp + SF;
    constexpr int c0 = Slot + R;
    detail::Hessian hp, hq;
    if constexpr (kHorizontal) {
      const float* h = horizontal + stage_c * 4 * NT + tid;
      hp.xx = h[0];
      hp.yy = h[NT];
      hq.xx = h[2 * NT];
      hq.yy = h[3 * NT];
    } else {
      hp.xx = a.cx[0] * qp[c0];
      hp.yy = a.cy[0] * qp[c0];
      hq.xx = a.cx[0] * qq[c0];
      hq.yy = a.cy[0] * qq[c0];
    }
    hp.zz = a.cz[0] * qp[c0];
    hq.zz = a.cz[0] * qq[c0];
    const float* g = gx + Base * 2 * kGx + (ty + R) * BX + tx;
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      const int up = c0 + k, down = c0 - k;
      if constexpr (!kHorizontal) {
        hp.xx += a.cx[k] * (to_float(cp[-k]) + to_float(cp[k]));
        hp.yy += a.cy[k] * (to_float(cp[-k * TW]) + to_float(cp[k * TW]));
        hq.xx += a.cx[k] * (to_float(cq[-k]) + to_float(cq[k]));
        hq.yy += a.cy[k] * (to_float(cq[-k * TW]) + to_float(cq[k * TW]));
      }
      hp.zz += a.cz[k] * (qp[down] + qp[up]);
      hq.zz += a.cz[k] * (qq[down] + qq[up]);
      if constexpr (Tilted) {
        hp.xz += a.dz[k] * (gxp[up] - gxp[down]);
        hp.yz += a.dz[k] * (gyp[up] - gyp[down]);
        hq.xz += a.dz[k] * (gxq[up] - gxq[down]);
        hq.yz += a.dz[k] * (gyq[up] - gyq[down]);
      }
    }
    if constexpr (Tilted) {
      // Plane j's D_x rows (buffer j % 2 = Base): written before every thread was done with plane
      // j - 1 (plane 0's before the warm-up's last __syncthreads).
      // consumed[1 - Base]'s phase of plane j - 1: ((j - 1) / 2) % 2. Plane 0 waits for parity 1
      // of consumed[1], still in its first phase (phase 0): a wait for the phase before it
      // returns at once.
      detail::wait_stage(consumed_addr + 8 * (1 - Base), Base ? m.half : m.half ^ 1u);
#pragma unroll
      for (int k = 1; k <= R; ++k) {
        hp.xy += a.dy[k] * (g[k * BX] - g[-k * BX]);
        hq.xy += a.dy[k] * (g[kGx + k * BX] - g[kGx - k * BX]);
      }
    }
    // The field pair of planes j - Base, j - Base + 1 (j - Base even: Base 0 in the loop's first
    // half and in the tail, 1 in its second half, which the first half waited for).
    if constexpr (Base == 0) detail::wait_stage(field_bar_addr + 8 * m.field, m.field_pass);
    const T* fv = fields + (m.field * NV * 2 + Base) * FF + tid;  // volume v at fv[2 v FF]
    detail::Axis n;
    if constexpr (Tilted)
      n = detail::symmetry_axis<true>(model_float(fv[10 * FF], a.theta_scale), model_float(fv[12 * FF], a.phi_scale));
    const detail::TtiCell cell{qp[c0],
                               to_float(fv[0]),
                               qq[c0],
                               to_float(fv[2 * FF]),
                               model_float(fv[4 * FF], a.m_scale),
                               model_float(fv[6 * FF], a.a_scale),
                               model_float(fv[8 * FF], a.b_scale),
                               damp_x + (damp_y + damp_z[Base])};  // the CPU's order
    float np, nq;
    const float h0p = detail::h0<Tilted>(hp, n), hzq = detail::hz<Tilted>(hq, n);
    if (Tilted && cell.s == 0.0f && j != surface_j)  // one branch for both fields (tti)
      detail::tti_update_undamped(cell, h0p, hzq, &np, &nq);
    else
      detail::tti_update(cell, h0p, hzq, iz, a.free_surface, &np, &nq);
    if (active) {
      *out_p = detail::from_float<T>(np);
      *out_q = detail::from_float<T>(nq);
    }
    out_p += a.sz;
    out_q += a.sz;
  };
  // The end of plane j's work (j >= 0). Once every thread is done with plane j - 1 (its tile:
  // load j - 1 + R, its fields and gx buffer (j - 1) % 2; tti waited for that in compute(j)), the
  // next p/q loads go into that stage, for even j the next field pair into the stage of planes
  // j - 2 and j - 1, and this thread may write plane j + 1's D_x rows into that buffer (Next: the
  // window slot of plane j + 1, Buffer = (j + 1) % 2).
  auto finish = [&]<int Next, int Buffer>(int j, const March& m) {
    constexpr int Base = 1 - Buffer;  // j % 2
    if (Base == 1 || j >= 1) {
      if constexpr (!Tilted) detail::wait_stage(consumed_addr + 8 * (1 - Base), Base ? m.half : m.half ^ 1u);
      if (pq_issuer && j - 1 + R + S < total) issue(j - 1 + R + S);
      // Field pair j / 2 - 1 + FP into the stage of pair j / 2 - 1 (planes j - 2, j - 1).
      if (Base == 0 && field_issuer && j + 2 * FP - 2 < planes) issue_field(j / 2 - 1 + FP);
    }
    // Plane j + 1's D_x rows from load j + R + 1.
    if (Tilted && j + 1 < planes) prepare_gx.template operator()<Next, Buffer>((m.stage + Base + 1 - R) & (S - 1));
    detail::release_stage(consumed_addr + 8 * Base);
  };

  // Warm-up: loads 0 .. 2R - 1 (planes z0 - R .. z0 + R - 1) fill window slots 0 .. 2R - 1.
#pragma unroll 1
  for (int t = 0; t < 2 * R; ++t) {
    enter.template operator()<2 * R, true>(t, t & (S - 1), (t >> log2_of(S)) & 1);
#pragma unroll
    for (int k = 0; k < 2 * R; ++k) {
      qp[k] = qp[k + 1];
      qq[k] = qq[k + 1];
      gxp[k] = gxp[k + 1];
      gyp[k] = gyp[k + 1];
      gxq[k] = gxq[k + 1];
      gyq[k] = gyq[k + 1];
    }
    if (Tilted && t == 2 * R - 1)
      prepare_gx.template operator()<R, 0>(R & (S - 1));  // plane z0 (load R): window slot R, buffer 0
    // Loads below R (planes above z0) are read on entry only: their stages take the next loads
    // once every thread has entered them.
    __syncthreads();
    if (pq_issuer && t >= R && t - R + S < total) issue(t - R + S);
  }
  // Two planes per iteration: plane z0 + j from slots 0 .. 2R (gx buffer 0), plane z0 + j + 1
  // from slots 1 .. 2R + 1 (gx buffer 1).
  int j = 0;
  March m{(2 * R) & (S - 1), ((2 * R) >> log2_of(S)) & 1, 0, 0, 0};
  const float* damp_z = a.damp_z + z0;  // planes j, j + 1 at damp_z[0], damp_z[1]
  auto advance = [](March m) {          // the next pair's
    m.stage = (m.stage + 2) & (S - 1);
    m.pass ^= m.stage == 0 ? 1u : 0u;
    m.half ^= 1u;
    m.field = m.field == FP - 1 ? 0 : m.field + 1;
    m.field_pass ^= m.field == 0 ? 1u : 0u;
    return m;
  };
  if constexpr (U == 4) {
#pragma unroll 1
    for (; j + 3 < planes; j += 4) {
      if constexpr (Tilted) {
        asm volatile("" : "+r"(bar_addr), "+r"(field_bar_addr), "+r"(consumed_addr));
        asm volatile("" : "+r"(surface_j));
#pragma unroll
        for (int n = 0; n < NG; ++n) asm volatile("" : "+r"(gx_from[n]), "+r"(gx_to[n]));
      }
      enter.template operator()<2 * R, false>(j + 2 * R, m.stage, m.pass);
      compute.template operator()<0>(j, m, damp_z);
      finish.template operator()<R + 1, 1>(j, m);
      enter.template operator()<2 * R + 1, false>(j + 1 + 2 * R, m.stage + 1, m.pass);
      compute.template operator()<1>(j + 1, m, damp_z);
      finish.template operator()<R + 2, 0>(j + 1, m);
      m = advance(m);
      enter.template operator()<2 * R + 2, false>(j + 2 + 2 * R, m.stage, m.pass);
      compute.template operator()<2>(j + 2, m, damp_z + 2);
      finish.template operator()<R + 3, 1>(j + 2, m);
      enter.template operator()<2 * R + 3, false>(j + 3 + 2 * R, m.stage + 1, m.pass);
      compute.template operator()<3>(j + 3, m, damp_z + 2);
      finish.template operator()<R + 4, 0>(j + 3, m);
      m = advance(m);
      damp_z += 4;
#pragma unroll
      for (int k = 0; k < 2 * R; ++k) {
        qp[k] = qp[k + 4];
        qq[k] = qq[k + 4];
        gxp[k] = gxp[k + 4];
        gyp[k] = gyp[k + 4];
        gxq[k] = gxq[k + 4];
        gyq[k] = gyq[k + 4];
      }
    }
  }
#pragma unroll 1
  for (; j + 1 < planes; j += 2) {
    // Kept in registers (tti: vti's kernels keep their occupancy without): else ptxas rebuilds
    // each barrier address from the CTA's cluster rank (S2R SR_CgaCtaId, LEA) at every wait and
    // arrival, and the D_x rows' offsets from ty at every plane.
    if constexpr (Tilted && Radius >= 2) {
      asm volatile("" : "+r"(bar_addr), "+r"(field_bar_addr), "+r"(consumed_addr));
      asm volatile("" : "+r"(surface_j));
#pragma unroll
      for (int n = 0; n < NG; ++n) asm volatile("" : "+r"(gx_from[n]), "+r"(gx_to[n]));
    }
    enter.template operator()<2 * R, false>(j + 2 * R, m.stage, m.pass);
    compute.template operator()<0>(j, m, damp_z);
    finish.template operator()<R + 1, 1>(j, m);
    enter.template operator()<2 * R + 1, false>(j + 1 + 2 * R, m.stage + 1, m.pass);
    compute.template operator()<1>(j + 1, m, damp_z);
    damp_z += 2;
    finish.template operator()<R + 2, 0>(j + 1, m);
    m = advance(m);
#pragma unroll
    for (int k = 0; k < 2 * R; ++k) {
      qp[k] = qp[k + 2];
      qq[k] = qq[k + 2];
      gxp[k] = gxp[k + 2];
      gyp[k] = gyp[k + 2];
      gxq[k] = gxq[k + 2];
      gyq[k] = gyq[k + 2];
    }
  }
  if (j < planes) {  // an odd count: the last plane alone
    enter.template operator()<2 * R, false>(j + 2 * R, m.stage, m.pass);
    compute.template operator()<0>(j, m, damp_z);
  }
#endif
}

}  // namespace

template <int Radius, bool Tilted, class T>
void launch_tti_tma(const TtiArgsT<T>& a, int z_block, const TtiMaps& maps, cudaStream_t stream) {
  using Shape = TtiShape<Radius, Tilted, T>;
  set_shared_limit_once(reinterpret_cast<const void*>(tti_tma_kernel<Radius, Tilted, T>),
                        static_cast<int>(Shape::kSharedBytes), {Tilted ? "tti" : "vti", Radius, sizeof(T)});
  const int zb = z_block > 0 ? z_block : a.z_end() - a.z_lo;
  const int tiles_x = (a.nx + Shape::BX - 1) / Shape::BX, tile_rows = (a.ny + Shape::BY - 1) / Shape::BY,
            z_blocks = (a.z_end() - a.z_lo + zb - 1) / zb;
  // The launch order (TtiArgsT::chunk_rows). In layer order z block k + 1 of a tile starts a
  // whole layer of tiles after z block k, and the 2R planes of p and q they share have left L2
  // by then; in chunks of about the resident blocks it starts about as z block k ends, a little
  // faster at every z_block. The policy's chunk (tti_chunk_rows_policy), the most whole rows the
  // resident blocks cover, beats the fewest rows that hold them all on every kernel
  // (docs/BENCHMARKS.md, "TTI and VTI").
  const void* kernel = reinterpret_cast<const void*>(tti_tma_kernel<Radius, Tilted, T>);
  const int rows = a.chunk_rows >= 0
                       ? a.chunk_rows
                       : tti_chunk_rows_policy(
                             resident_blocks(kernel, Shape::kThreads, static_cast<int>(Shape::kSharedBytes)), tiles_x);
  const LaunchOrder order =
      launch_order(kernel, Shape::kThreads, static_cast<int>(Shape::kSharedBytes), tiles_x, tile_rows, z_blocks, rows);
  const dim3 block(Shape::BX, Shape::BY, 1);
  auto map = [](const void* m) { return *static_cast<const CUtensorMap*>(m); };
  // vti has no angle maps; the m map stands in for them (never read: NV = 5).
  const void* theta = Tilted ? maps.theta : maps.m;
  const void* phi = Tilted ? maps.phi : maps.m;
  tti_tma_kernel<Radius, Tilted, T><<<order.grid, block, Shape::kSharedBytes, stream>>>(
      map(maps.p), map(maps.q), map(maps.p_prev), map(maps.q_prev), map(maps.m), map(maps.a), map(maps.b), map(theta),
      map(phi), a, zb, order.chunk, z_blocks);
  SEISRTM_CUDA_LAUNCHED();
}

std::array<int, 3> tti_halo_box(int radius, int element_bytes) {
  return {tti_tile_width(radius, element_bytes), tti_tile_height(radius), 1};
}
std::array<int, 3> tti_center_box(int radius) {
  return {TtiTmaPolicy::kBlockX, tti_block_y(radius), TtiTmaPolicy::kFieldDepth};
}

#define SEISRTM_TTI_TMA(R)                                                                              \
  template void launch_tti_tma<R, true, float>(const TtiArgs&, int, const TtiMaps&, cudaStream_t);      \
  template void launch_tti_tma<R, false, float>(const TtiArgs&, int, const TtiMaps&, cudaStream_t);     \
  template void launch_tti_tma<R, true, __half>(const TtiArgsHalf&, int, const TtiMaps&, cudaStream_t); \
  template void launch_tti_tma<R, false, __half>(const TtiArgsHalf&, int, const TtiMaps&, cudaStream_t);
SEISRTM_TTI_TMA(1)
SEISRTM_TTI_TMA(2)
SEISRTM_TTI_TMA(4)
SEISRTM_TTI_TMA(8)

namespace {

template <class E>
void tti_step(const TtiArgsT<E>& a, bool tilted, Variant variant, int radius, int z_block, const TtiMaps& maps,
              cudaStream_t stream) {
  if (a.z_end() <= a.z_lo) return;  // no planes (a thin slab's interior)
  auto dispatch = [&]<int R, bool T>() {
    if (variant == Variant::tma) return launch_tti_tma<R, T>(a, z_block, maps, stream);
    if (variant == Variant::naive) return launch_tti_naive<R, T>(a, stream);
    throw Error("TTI step: solver.kernel smem has no TTI variant (use tma or naive)");
  };
  auto by_tilt = [&]<int R>() {
    if (tilted) return dispatch.template operator()<R, true>();
    return dispatch.template operator()<R, false>();
  };
  switch (radius) {
    case 1:
      return by_tilt.template operator()<1>();
    case 2:
      return by_tilt.template operator()<2>();
    case 4:
      return by_tilt.template operator()<4>();
    case 8:
      return by_tilt.template operator()<8>();
    default:
      throw Error("TTI step: unsupported radius " + std::to_string(radius));
  }
}

}  // namespace

void launch_tti_step(const TtiArgs& a, bool tilted, Variant variant, int radius, int z_block, const TtiMaps& maps,
                     cudaStream_t stream) {
  tti_step(a, tilted, variant, radius, z_block, maps, stream);
}
void launch_tti_step(const TtiArgsHalf& a, bool tilted, Variant variant, int radius, int z_block, const TtiMaps& maps,
                     cudaStream_t stream) {
  tti_step(a, tilted, variant, radius, z_block, maps, stream);
}

}  // namespace seisrtm::kernels
