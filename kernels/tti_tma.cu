// tma TTI: the whole step of p and q in one pass (DESIGN.md sections 3 and 5). Each thread owns
// one column of a BX x BY block and marches down z. Per plane the Tensor Memory Accelerator
// brings p and q of level n as tiles with R halo cells on every side (corners included) into a
// ring of S = R + 1 + lookahead stages, and the block's own columns of p_prev, q_prev and the
// model volumes (m, a, b, theta, phi) into a second ring; without z-blocking nothing is read twice
// from DRAM.
//
// When a plane enters (plane c + R while plane c is computed), each thread takes from its tile
// the column's p and q and their first derivatives D_x and D_y, and pushes them into register
// queues of 2R + 1 planes. Plane c then has
//   d_zz from the p/q queues, d_xz = D_z (D_x f) and d_yz = D_z (D_y f) from the derivative
//   queues, d_xx and d_yy from the tile, and d_xy = D_y (D_x f) from D_x f of the tile's rows:
//   written to shared memory the plane before (each thread's own row from its queue, the 2R halo
//   rows computed), in one of two buffers, so one barrier a plane serves both.
// The march starts R planes above its first plane (z_block edges: the planes above belong to the
// block above; at z = 0: zero, or with a free surface plane k loaded and negated as the odd image
// of plane -k), so the block's first plane has its 2R + 1 queue entries.
//
// Bytes from DRAM per cell per step: 9 reads and 2 writes of 4 bytes = 44 (vti: 36); p and q
// tiles re-read their halo from L2, and a z_block re-reads 2R planes of p and q.
#include <cuda.h>

#include <cuda/ptx>

#include "kernels/cuda_check.hpp"
#include "kernels/tti_common.cuh"
#include "kernels/tti_variants.cuh"

// The sm_80/89 pass compiles the kernel to a trap, leaving the shape constants unused there.
#pragma nv_diag_suppress 177

namespace seisrtm::kernels {

namespace {

constexpr int round_up(int v, int m) {
  return (v + m - 1) / m * m;
}

template <int Radius, bool Tilted>
struct TtiShape {
  static constexpr int BX = TtiTmaPolicy::kBlockX, BY = TtiTmaPolicy::kBlockY;
  static constexpr int TW = tti_tile_width(Radius), TH = tti_tile_height(Radius), HX = tti_halo_x(Radius);
  static constexpr int kStages = Radius + 1 + TtiTmaPolicy::kLookahead;
  static constexpr int kStageFloats = round_up(TW * TH, 32);  // one field's tile, 128-byte aligned
  static constexpr unsigned kBoxBytes = TW * TH * sizeof(float);
  static constexpr int kFieldStages = TtiTmaPolicy::kFieldStages;
  static constexpr int kVolumes = Tilted ? 7 : 5;  // p_prev, q_prev, m, a, b (, theta, phi)
  static constexpr int kFieldFloats = BX * BY;     // one volume's plane of the block
  static constexpr unsigned kFieldBytes = kVolumes * kFieldFloats * sizeof(float);
  static constexpr int kGxRows = BY + 2 * Radius;  // D_x p and D_x q of the tile's rows
  // Shared memory: the p/q ring, the per-cell volumes' ring and two gx buffers (D_x p and D_x q of
  // a plane's tile rows, [buffer][p, q][kGxRows][BX]), plus 128 bytes for the alignment.
  static constexpr size_t kSharedBytes = size_t(kStages) * 2 * kStageFloats * sizeof(float) +
                                         size_t(kFieldStages) * kFieldBytes +
                                         size_t(2) * 2 * kGxRows * BX * sizeof(float) + 128;
  static constexpr int kThreads = BX * BY;
};

template <int Radius, bool Tilted>
__global__ void __launch_bounds__(TtiShape<Radius, Tilted>::kThreads, Radius >= 8 ? 1 : 2)
    tti_tma_kernel(const __grid_constant__ CUtensorMap map_p, const __grid_constant__ CUtensorMap map_q,
                   const __grid_constant__ CUtensorMap map_pp, const __grid_constant__ CUtensorMap map_qp,
                   const __grid_constant__ CUtensorMap map_m, const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_theta,
                   const __grid_constant__ CUtensorMap map_phi, const TtiArgs a, int z_block) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // never launched below compute capability 9.0 (no bulk tensor copies)
#else
  using Shape = TtiShape<Radius, Tilted>;
  constexpr int BX = Shape::BX, BY = Shape::BY, TW = Shape::TW, HX = Shape::HX, R = Radius;
  constexpr int S = Shape::kStages, SF = Shape::kStageFloats;
  constexpr int FS = Shape::kFieldStages, FF = Shape::kFieldFloats, NV = Shape::kVolumes;
  constexpr int Q = 2 * R + 1;  // queue length: planes c - R .. c + R
  extern __shared__ __align__(128) float shared_raw[];
  __shared__ alignas(8) uint64_t bar[S];
  __shared__ alignas(8) uint64_t field_bar[FS];
  const uint32_t misalign = static_cast<uint32_t>(__cvta_generic_to_shared(shared_raw)) & 127u;
  float* ring = shared_raw + ((128u - misalign) & 127u) / sizeof(float);  // stage s: p, then q
  float* fields = ring + S * 2 * SF;                                      // stage f: NV planes
  float* gx = fields + FS * NV * FF;  // [buffer][p, q][kGxRows][BX]: D_x of a plane's tile rows

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
  const int ix = x0 + tx, iy = y0 + ty;
  const int z0 = blockIdx.z * z_block, z1 = min(a.nz, z0 + z_block);
  const int planes = z1 - z0, total = planes + 2 * R;  // loads: planes z0 - R .. z1 + R - 1
  const int centre = (ty + R) * TW + tx + HX;          // tile index of this thread's cell

  if (tid == 0) {
    for (int s = 0; s < S; ++s) cuda::ptx::mbarrier_init(&bar[s], 1);
    for (int f = 0; f < FS; ++f) cuda::ptx::mbarrier_init(&field_bar[f], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  // Load t: plane e = z0 - R + t of p and q into stage t % S. Above z = 0 the plane is zero, or
  // with a free surface plane -e, negated when it is used.
  auto issue = [&](int t, int s) {
    const uint32_t bytes = 2 * Shape::kBoxBytes;
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, &bar[s],
                                         bytes);
    const int e = z0 - R + t;
    const int32_t coords[3] = {x0 - HX, y0 - R, (e < 0 && a.free_surface) ? -e : e};
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, ring + 2 * s * SF, &map_p,
                                    coords, &bar[s]);
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, ring + (2 * s + 1) * SF, &map_q,
                                    coords, &bar[s]);
  };
  // Field load f: plane z0 + f of the per-cell volumes into field stage f % FS.
  auto issue_fields = [&](int f, int fs) {
    const uint32_t bytes = Shape::kFieldBytes;
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         &field_bar[fs], bytes);
    const int32_t coords[3] = {x0, y0, z0 + f};
    float* dst = fields + fs * NV * FF;
    const CUtensorMap* maps[7] = {&map_pp, &map_qp, &map_m, &map_a, &map_b, &map_theta, &map_phi};
#pragma unroll
    for (int v = 0; v < NV; ++v)
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst + v * FF, maps[v], coords,
                                      &field_bar[fs]);
  };
  auto wait = [](uint64_t* b, uint32_t parity) {
    while (!cuda::ptx::mbarrier_try_wait_parity(b, parity)) {
    }
  };
  if (tid == 0) {
    for (int t = 0; t < min(S, total); ++t) issue(t, t);
    for (int f = 0; f < min(FS, planes); ++f) issue_fields(f, f);
  }

  const bool active = ix < a.nx && iy < a.ny;
  const int cx_ = min(ix, a.nx - 1), cy_ = min(iy, a.ny - 1);
  const float damp_x = a.damp_x[cx_], damp_y = a.damp_y[cy_];
  float* out_p = a.pn + (long long)cy_ * a.sy + cx_;
  float* out_q = a.qn + (long long)cy_ * a.sy + cx_;
  // Queues of planes c - R .. c + R of this column: p, q, D_x p, D_y p, D_x q, D_y q, shifted by
  // one each plane. (Unrolling the march by 2R + 1 to rotate them instead executed 17% fewer
  // instructions but ran slower, 35.7 against 38.8 GCells/s: the 9 copies of the body missed the
  // instruction cache, 2.4 cycles of stall per issue; H100, 800^3, 2026-11-23.)
  float qp[Q], qq[Q], gxp[Q], gyp[Q], gxq[Q], gyq[Q];
#pragma unroll
  for (int k = 0; k < Q; ++k) qp[k] = qq[k] = gxp[k] = gyp[k] = gxq[k] = gyq[k] = 0.0f;

  int s_in = 0, s_c = 0, f_c = 0;  // stages of load t, of load t - R (plane c), and of plane c's fields
  uint32_t parity = 0, f_parity = 0;
  long long offset = (long long)z0 * a.sz;
  constexpr int kGx = Shape::kGxRows * BX;  // one field's D_x rows in a gx buffer

  // One plane of the march: load t enters (plane e = z0 - R + t), plane c = e - R is computed,
  // and D_x of plane c + 1's tile rows is prepared for the next plane's d_xy. One barrier per
  // plane.
  for (int t = 0; t < total; ++t) {
    // The queue slot of plane c + k, k = -R..R, after load t entered.
    auto slot = [](int k) constexpr {
      return R + k;
    };
    wait(&bar[s_in], parity);
    {                                                      // Plane e enters the queues.
      const float sign = (z0 - R + t < 0) ? -1.0f : 1.0f;  // odd image (a zero plane without a free surface)
      const float* tp = ring + 2 * s_in * SF + centre;
      const float* tq = tp + SF;
      float dxp = 0.0f, dyp = 0.0f, dxq = 0.0f, dyq = 0.0f;
#pragma unroll
      for (int k = 1; k <= R; ++k) {
        dxp += a.dx[k] * (tp[k] - tp[-k]);
        dyp += a.dy[k] * (tp[k * TW] - tp[-k * TW]);
        dxq += a.dx[k] * (tq[k] - tq[-k]);
        dyq += a.dy[k] * (tq[k * TW] - tq[-k * TW]);
      }
#pragma unroll
      for (int k = 0; k < Q - 1; ++k) {
        qp[k] = qp[k + 1];
        qq[k] = qq[k + 1];
        gxp[k] = gxp[k + 1];
        gyp[k] = gyp[k + 1];
        gxq[k] = gxq[k + 1];
        gyq[k] = gyq[k + 1];
      }
      constexpr int in = slot(R);
      qp[in] = sign * tp[0];
      qq[in] = sign * tq[0];
      gxp[in] = sign * dxp;
      gyp[in] = sign * dyp;
      gxq[in] = sign * dxq;
      gyq[in] = sign * dyq;
    }
    if (t >= 2 * R) {  // plane c = z0 + t - 2R
      const int iz = z0 + t - 2 * R;
      const float* tp = ring + 2 * s_c * SF;
      const float* tq = tp + SF;
      detail::Hessian hp, hq;
      const float* cp = tp + centre;
      const float* cq = tq + centre;
      constexpr int c0 = slot(0);
      hp.xx = a.cx[0] * qp[c0];
      hp.yy = a.cy[0] * qp[c0];
      hp.zz = a.cz[0] * qp[c0];
      hq.xx = a.cx[0] * qq[c0];
      hq.yy = a.cy[0] * qq[c0];
      hq.zz = a.cz[0] * qq[c0];
      // Plane c's D_x rows, written the plane before: gx buffer (c - z0) % 2.
      const float* g = gx + ((t - 2 * R) & 1) * 2 * kGx + (ty + R) * BX + tx;
#pragma unroll
      for (int k = 1; k <= R; ++k) {
        const int up = slot(k), down = slot(-k);
        hp.xx += a.cx[k] * (cp[-k] + cp[k]);
        hp.yy += a.cy[k] * (cp[-k * TW] + cp[k * TW]);
        hp.zz += a.cz[k] * (qp[down] + qp[up]);
        hq.xx += a.cx[k] * (cq[-k] + cq[k]);
        hq.yy += a.cy[k] * (cq[-k * TW] + cq[k * TW]);
        hq.zz += a.cz[k] * (qq[down] + qq[up]);
        if constexpr (Tilted) {
          hp.xy += a.dy[k] * (g[k * BX] - g[-k * BX]);
          hq.xy += a.dy[k] * (g[kGx + k * BX] - g[kGx - k * BX]);
          hp.xz += a.dz[k] * (gxp[up] - gxp[down]);
          hp.yz += a.dz[k] * (gyp[up] - gyp[down]);
          hq.xz += a.dz[k] * (gxq[up] - gxq[down]);
          hq.yz += a.dz[k] * (gyq[up] - gyq[down]);
        }
      }
      wait(&field_bar[f_c], f_parity);
      const float* fv = fields + f_c * NV * FF + ty * BX + tx;
      detail::Axis n;
      if constexpr (Tilted) n = detail::symmetry_axis<true>(fv[5 * FF], fv[6 * FF]);
      const detail::TtiCell cell{
          qp[c0],     fv[0],      qq[c0],     fv[FF],
          fv[2 * FF], fv[3 * FF], fv[4 * FF], damp_x + (damp_y + a.damp_z[iz])};  // the CPU's order
      float np, nq;
      detail::tti_update(cell, detail::h0<Tilted>(hp, n), detail::hz<Tilted>(hq, n), iz, a.free_surface, &np, &nq);
      if (active) {
        out_p[offset] = np;
        out_q[offset] = nq;
      }
      offset += a.sz;
    }
    if (Tilted && t + 1 >= 2 * R && t + 1 < total) {
      // D_x p and D_x q of plane c + 1 (load t - R + 1, in stage s_c + 1) on the tile's rows for
      // the next plane's d_xy: this thread's own row from its queue, the 2R halo rows computed.
      const int s1 = s_c + 1 == S ? 0 : s_c + 1;        // t >= 2R - 1 >= R here, so s_c is load t - R's stage
      float* w = gx + ((t + 1 - 2 * R) & 1) * 2 * kGx;  // plane c + 1's buffer
      constexpr int next = slot(1);
      w[(ty + R) * BX + tx] = gxp[next];
      w[kGx + (ty + R) * BX + tx] = gxq[next];
      const float* tp = ring + 2 * s1 * SF;
      const float* tq = tp + SF;
      for (int h = ty; h < 2 * R; h += BY) {
        const int r = h < R ? h : BY + h;  // rows 0..R-1 above the block, BY+R.. below
        const float* rp = tp + r * TW + tx + HX;
        const float* rq = tq + r * TW + tx + HX;
        float dxp = 0.0f, dxq = 0.0f;
#pragma unroll
        for (int k = 1; k <= R; ++k) {
          dxp += a.dx[k] * (rp[k] - rp[-k]);
          dxq += a.dx[k] * (rq[k] - rq[-k]);
        }
        w[r * BX + tx] = dxp;
        w[kGx + r * BX + tx] = dxq;
      }
    }
    __syncthreads();  // plane c's stage and fields are free; plane c + 1's D_x rows are visible
    if (tid == 0) {
      if (t >= R && t - R + S < total) issue(t - R + S, s_c);
      if (t >= 2 * R && t - 2 * R + FS < planes) issue_fields(t - 2 * R + FS, f_c);
    }
    if (++s_in == S) {
      s_in = 0;
      parity ^= 1;
    }
    if (t >= R && ++s_c == S) s_c = 0;
    if (t >= 2 * R && ++f_c == FS) {
      f_c = 0;
      f_parity ^= 1;
    }
  }
#endif
}

}  // namespace

template <int Radius, bool Tilted>
void launch_tti_tma(const TtiArgs& a, int z_block, const TtiMaps& maps, cudaStream_t stream) {
  using Shape = TtiShape<Radius, Tilted>;
  set_shared_limit_once(reinterpret_cast<const void*>(tti_tma_kernel<Radius, Tilted>),
                        static_cast<int>(Shape::kSharedBytes));
  const int zb = z_block > 0 ? z_block : a.nz;
  const dim3 block(Shape::BX, Shape::BY, 1);
  const dim3 grid((a.nx + Shape::BX - 1) / Shape::BX, (a.ny + Shape::BY - 1) / Shape::BY, (a.nz + zb - 1) / zb);
  auto map = [](const void* m) { return *static_cast<const CUtensorMap*>(m); };
  // vti has no angle maps; the m map stands in for them (never read: NV = 5).
  const void* theta = Tilted ? maps.theta : maps.m;
  const void* phi = Tilted ? maps.phi : maps.m;
  tti_tma_kernel<Radius, Tilted><<<grid, block, Shape::kSharedBytes, stream>>>(
      map(maps.p), map(maps.q), map(maps.p_prev), map(maps.q_prev), map(maps.m), map(maps.a), map(maps.b), map(theta),
      map(phi), a, zb);
  SEISRTM_CUDA_LAUNCHED();
}

std::array<int, 3> tti_halo_box(int radius) {
  return {tti_tile_width(radius), tti_tile_height(radius), 1};
}
std::array<int, 3> tti_center_box() {
  return {TtiTmaPolicy::kBlockX, TtiTmaPolicy::kBlockY, 1};
}

#define SEISRTM_TTI_TMA(R)                                                                  \
  template void launch_tti_tma<R, true>(const TtiArgs&, int, const TtiMaps&, cudaStream_t); \
  template void launch_tti_tma<R, false>(const TtiArgs&, int, const TtiMaps&, cudaStream_t);
SEISRTM_TTI_TMA(1)
SEISRTM_TTI_TMA(2)
SEISRTM_TTI_TMA(4)
SEISRTM_TTI_TMA(8)

void launch_tti_step(const TtiArgs& a, bool tilted, Variant variant, int radius, int z_block, const TtiMaps& maps,
                     cudaStream_t stream) {
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

}  // namespace seisrtm::kernels
