// The fused backward step of migration (tma, radius <= 4): one kernel advances the rebuilt
// source field and the adjoint receiver field by one step backwards in time and images the
// source level the stencils are at, reading the model once for both.
//
//   S^n   = [2 S^{n+1} - (1 - s) S^{n+2} + m L S^{n+1}] / (1 + s)   (exact where s = 0)
//   chi^n = [2 chi^{n+1} - (1 - s) chi^{n+2} + m L chi^{n+1}] / (1 + s)
//   image += S^{n+1} chi^{n+2}, illumination += (S^{n+1})^2     (imaging levels, interior box)
//
// S^{n+1} pairs with chi^{n+2}: the zero-lag correlation at equal physical times
// (docs/ADJOINT.md, "Imaging"). Both are in registers (the tile's centre of S, the block's own
// column of chi^{n+2} that the update reads), so imaging reads no field again.
// Memory movement per cell: S^{n+1}, S^{n+2}, chi^{n+1}, chi^{n+2}, m read (20 B), S^n and chi^n
// written (8 B), image and illumination read and written on imaging levels (16 B): 28 or 44 B
// against the forward step's 16.
// The march is the tma variant's (kernels/acoustic_tma.cu; its ring: kernels/tma_ring.cuh): two
// halo rings of plane tiles, one per field, and one ring of the block's own columns of S^{n+2}, chi^{n+2} and m. So are
// the launch order (block_place: z block k + 1 of a tile starts about as z block k ends, while the 2R planes of S and
// chi they share are in L2) and the L2 hints of fp32 in plain memory (tma_l2_hint_policy: S^{n+2}, chi^{n+2} and m,
// read once, evict-first; the rings' S^{n+1} and chi^{n+1}, read again by the neighbours and the next z block,
// evict-last).
#include <cuda.h>

#include <type_traits>

#include "kernels/acoustic_common.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"
#include "kernels/tma_ring.cuh"

// The sm_80/89 pass compiles the kernel to a trap, leaving the shape constants unused there.
#pragma nv_diag_suppress 177

namespace seisrtm::kernels {

namespace {

// Launch shapes (an A/B axis, kernels/rtm.hpp): `wide` is the forward kernel's tile (rows of
// BX + HX + R rounded up to 8 floats, 3 planes of lookahead, one block per SM: 172 KB at R = 4);
// `compact` trims the rows to the 16-byte multiple the copy engine needs (40 floats at R <= 4),
// keeps 2 planes of lookahead and 2 field stages, so two 512-thread blocks share an SM (112 KB
// each at R = 4, at most 64 registers a thread); `compact1` keeps 1 plane of lookahead.
// T: the fields' storage (float; __half in fp16 storage, the arithmetic in float): the same
// tiles in half the bytes (rows of halves rounded to 8 elements, 16 bytes).
template <int Radius, FusedShape Kind, class T = float>
struct FusedShapeOf {
  static constexpr int BX = TmaPolicy::kBlockX, BY = TmaPolicy::kBlockY, RY = TmaPolicy::kRows;
  static constexpr int TW = fused_tile_width(Radius, Kind, sizeof(T));
  static constexpr int TH = tma_tile_height(Radius);
  static constexpr int HX = tma_halo_x(Radius, sizeof(T));
  static constexpr int kLookahead = Kind == FusedShape::wide      ? TmaPolicy::kLookahead
                                    : Kind == FusedShape::compact ? 2
                                                                  : 1;
  static constexpr int kStages = Radius + 1 + kLookahead;
  static constexpr int kStageFloats = detail::stage_elements<T>(TW * TH);  // elements of T
  static constexpr unsigned kBoxBytes = TW * TH * sizeof(T);
  static constexpr int kFieldStages = Kind == FusedShape::wide ? kLookahead + 1 : 2;
  static constexpr int kFieldFloats = BX * BY * RY;
  static constexpr unsigned kFieldBytes = 3 * kFieldFloats * sizeof(T);  // S prev, chi prev, m
  static_assert(kFieldFloats * sizeof(T) % 128 == 0, "field stages 128-byte aligned");
  static constexpr size_t kSharedBytes =
      2 * size_t(kStages) * kStageFloats * sizeof(T) + size_t(kFieldStages) * kFieldBytes + 128;
  static constexpr int kThreads = BX * BY;
  static constexpr int kMinBlocks = Kind == FusedShape::wide ? 1 : 2;
  // A column's offset in a plane: int in the compact shapes (at 64 registers a thread their
  // imaging kernels spilled 8 bytes with 64-bit offsets), 64-bit in wide, where int was slower
  // (docs/BENCHMARKS.md, "RTM"). launch_fused_backward refuses planes of 2^31 cells.
  using Column = std::conditional_t<Kind == FusedShape::wide, long long, int>;
  // Two blocks per SM need both within the SM's 228 KB (1 KB reserved per block).
  static_assert(kMinBlocks == 1 || kMinBlocks * (kSharedBytes + 128 + kSharedReservedPerBlock) <= kSharedPerSmCc90,
                "two fused blocks do not fit an SM's shared memory");
  static_assert(kSharedBytes <= kSharedPerBlockCc90, "the fused kernel's shared memory exceeds a block's limit");
};

// Hinted: the loads carry L2 hints (FusedArgs::s.l2_hint > 0), a template flag so that the
// kernel without them is the same code as before them (as the forward kernel's).
template <int Radius, FusedShape Kind, bool Imaging, bool Hinted, class T = float>
__global__ void __launch_bounds__(FusedShapeOf<Radius, Kind, T>::kThreads, FusedShapeOf<Radius, Kind, T>::kMinBlocks)
    fused_kernel(const __grid_constant__ CUtensorMap map_s, const __grid_constant__ CUtensorMap map_r,
                 const __grid_constant__ CUtensorMap map_s_prev, const __grid_constant__ CUtensorMap map_r_prev,
                 const __grid_constant__ CUtensorMap map_m, const FusedArgsT<T> f, int z_block, int chunk,
                 int z_blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  // Built for older GPUs too (naive and smem run there); the host never launches this kernel
  // below compute capability 9.0 (no bulk tensor copies).
  __trap();
#else
  using Shape = FusedShapeOf<Radius, Kind, T>;
  using detail::to_float;
  constexpr int BX = Shape::BX, BY = Shape::BY, RY = Shape::RY, TW = Shape::TW, HX = Shape::HX;
  constexpr int S = Shape::kStages, SF = Shape::kStageFloats;
  constexpr int FS = Shape::kFieldStages, FF = Shape::kFieldFloats;
  const AcousticArgsT<T>& a = f.s;  // geometry, weights and damping are the same for both fields
  extern __shared__ __align__(128) float shared_raw[];
  __shared__ alignas(8) uint64_t bar[S];
  __shared__ alignas(8) uint64_t field_bar[FS];
  T* ring_s = reinterpret_cast<T*>(shared_raw) + detail::ring_offset<T>(shared_raw);
  T* ring_r = ring_s + S * SF;
  T* fields = ring_r + S * SF;  // stage g: S prev, chi prev, m at fields + 3 g FF

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  // The block's tile and z block (the forward kernel's chunked launch order).
  const int tiles_x = (a.nx + BX - 1) / BX, tiles = tiles_x * ((a.ny + BY * RY - 1) / (BY * RY));
  const BlockPlace place = block_place(blockIdx.x, tiles, chunk, z_blocks);
  const int x0 = place.tile % tiles_x * BX, y0 = place.tile / tiles_x * (BY * RY);
  const int ix = x0 + tx, iy0 = y0 + ty * RY;
  const int z0 = a.z_lo + place.z_block * z_block, z1 = min(a.z_hi, z0 + z_block);  // planes [z_lo, z_hi), z_hi set
  const int planes = z1 - z0, total = planes + Radius;
  const int center0 = (ty * RY + Radius) * TW + tx + HX;

  if (tid == 0) {
    detail::init_ring(bar, S, 1);
    detail::init_ring(field_bar, FS, 1);
    detail::fence_ring_init();
  }
  __syncthreads();
  const int hint = Hinted ? a.l2_hint : 0;
  const uint64_t policy_ring = Hinted ? detail::l2_policy(false) : 0,
                 policy_once = Hinted ? detail::l2_policy(true) : 0;
  auto issue = [&](int j, int s) {  // plane z0 + j of both fields into stage s of both rings
    detail::expect_bytes(&bar[s], 2 * Shape::kBoxBytes);
    const int32_t coords[3] = {x0 - HX, y0 - Radius, z0 + j};
    if (hint == 2) {
      detail::load_box(ring_s + s * SF, &map_s, coords, &bar[s], policy_ring);
      detail::load_box(ring_r + s * SF, &map_r, coords, &bar[s], policy_ring);
      return;
    }
    detail::load_box(ring_s + s * SF, &map_s, coords, &bar[s]);
    detail::load_box(ring_r + s * SF, &map_r, coords, &bar[s]);
  };
  auto issue_fields = [&](int j, int g) {
    detail::expect_bytes(&field_bar[g], Shape::kFieldBytes);
    const int32_t coords[3] = {x0, y0, z0 + j};
    T* base = fields + 3 * g * FF;
    if (hint >= 1) {
      detail::load_box(base, &map_s_prev, coords, &field_bar[g], policy_once);
      detail::load_box(base + FF, &map_r_prev, coords, &field_bar[g], policy_once);
      detail::load_box(base + 2 * FF, &map_m, coords, &field_bar[g], policy_once);
      return;
    }
    detail::load_box(base, &map_s_prev, coords, &field_bar[g]);
    detail::load_box(base + FF, &map_r_prev, coords, &field_bar[g]);
    detail::load_box(base + 2 * FF, &map_m, coords, &field_bar[g]);
  };
  if (tid == 0) {
    for (int j = 0; j < min(S, total); ++j) issue(j, j);
    for (int j = 0; j < min(FS, planes); ++j) issue_fields(j, j);
  }

  bool active[RY];
  using Column = typename Shape::Column;
  Column column[RY];
  float behind_s[RY][Radius], behind_r[RY][Radius], damp_xy[RY];
  const int cx_ = min(ix, a.nx - 1);
  const bool image_x = ix >= f.box_lo[0] && ix < f.box_hi[0];
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    const int iy = iy0 + r, cy_ = min(iy, a.ny - 1);
    active[r] = ix < a.nx && iy < a.ny;
    column[r] = static_cast<Column>(cy_) * static_cast<Column>(a.sy) + cx_;
    damp_xy[r] = a.damp_x[cx_] + a.damp_y[cy_];
#pragma unroll
    for (int k = 0; k < Radius; ++k) {
      behind_s[r][k] = detail::column_value(f.s, cx_, cy_, z0 - 1 - k);
      behind_r[r][k] = detail::column_value(f.r, cx_, cy_, z0 - 1 - k);
    }
  }
  const float c0 = a.cx[0] + a.cy[0] + a.cz[0];
  const int field0 = (ty * RY) * BX + tx;

  int s_cur = 0, s_wait = Radius % S, f_cur = 0;
  uint32_t parity = 0, f_parity = 0;
  for (int j = 0; j < Radius; ++j) detail::wait_stage(&bar[j], 0);

  // Imaging levels: image and illumination of plane j + 1 are loaded while plane j is computed,
  // so their latency is not paid in the march (loaded at the point of use, they doubled the
  // step's time on imaging levels).
  bool image_xy[RY];
#pragma unroll
  for (int r = 0; r < RY; ++r)
    image_xy[r] = Imaging && active[r] && image_x && iy0 + r >= f.box_lo[1] && iy0 + r < f.box_hi[1];
  auto images_plane = [&](int iz) { return Imaging && iz < z1 && iz >= f.box_lo[2] && iz < f.box_hi[2]; };
  float img[RY], ill[RY];
  auto load_images = [&](int iz, long long off) {
    const bool z_in = images_plane(iz);
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      img[r] = ill[r] = 0.0f;
      if (z_in && image_xy[r]) {
        img[r] = f.image[off + column[r]];
        ill[r] = f.illumination[off + column[r]];
      }
    }
  };
  long long offset = (long long)z0 * a.sz;
  load_images(z0, offset);
  for (int j = 0; j < planes; ++j) {
    const int iz = z0 + j;
    float img_j[RY], ill_j[RY];
#pragma unroll
    for (int r = 0; r < RY; ++r) img_j[r] = img[r], ill_j[r] = ill[r];
    load_images(iz + 1, offset + a.sz);
    float prev_s[RY], prev_r[RY], mj[RY];
    detail::wait_stage(&field_bar[f_cur], f_parity);
    const T* fp = fields + 3 * f_cur * FF + field0;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      prev_s[r] = to_float(fp[r * BX]);
      prev_r[r] = to_float(fp[FF + r * BX]);
      mj[r] = to_float(fp[2 * FF + r * BX]);
    }
    detail::wait_stage(&bar[s_wait], parity);
    const float dz = a.damp_z[iz];
    const bool image_z = images_plane(iz);
    // The two fields one after the other: the same stencil on each ring.
    float cur_s[RY], next_s[RY], next_r[RY];
#pragma unroll
    for (int field = 0; field < 2; ++field) {
      const T* ring = field == 0 ? ring_s : ring_r;
      const T* tile = ring + s_cur * SF + center0;
      const T* front[Radius];
#pragma unroll
      for (int k = 1; k <= Radius; ++k) {
        int sk = s_cur + k;
        if (sk >= S) sk -= S;
        front[k - 1] = ring + sk * SF + center0;
      }
      float col[RY + 2 * Radius];
#pragma unroll
      for (int t = 0; t < RY + 2 * Radius; ++t) col[t] = to_float(tile[(t - Radius) * TW]);
#pragma unroll
      for (int r = 0; r < RY; ++r) {
        const T* row = tile + r * TW;
        const float cur = col[r + Radius];
        float(&behind)[Radius] = field == 0 ? behind_s[r] : behind_r[r];
        float lap = c0 * cur;
#pragma unroll
        for (int k = 1; k <= Radius; ++k)
          lap += a.cx[k] * (to_float(row[-k]) + to_float(row[k])) +
                 a.cy[k] * (col[r + Radius - k] + col[r + Radius + k]) +
                 a.cz[k] * (behind[k - 1] + to_float(front[k - 1][r * TW]));
        const float v = detail::leapfrog(cur, field == 0 ? prev_s[r] : prev_r[r], mj[r], lap, damp_xy[r] + dz);
        (field == 0 ? next_s : next_r)[r] = (a.free_surface && iz == 0) ? 0.0f : v;
        if (field == 0) cur_s[r] = cur;
#pragma unroll
        for (int k = Radius - 1; k > 0; --k) behind[k] = behind[k - 1];
        behind[0] = cur;
      }
    }
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      if (!active[r]) continue;
      const long long i = offset + column[r];
      f.s.pn[i] = detail::from_float<T>(next_s[r]);
      f.r.pn[i] = detail::from_float<T>(next_r[r]);
      if (image_z && image_xy[r]) {
        if constexpr (sizeof(T) == 4) {
          f.image[i] = img_j[r] + cur_s[r] * prev_r[r];
          f.illumination[i] = ill_j[r] + cur_s[r] * cur_s[r];
        } else {  // the stored values times the fields' scales (powers of two), as image_kernel
          const float sv = cur_s[r] * f.s_scale;
          f.image[i] = img_j[r] + sv * (prev_r[r] * f.r_scale);
          f.illumination[i] = ill_j[r] + sv * sv;
        }
      }
    }
    offset += a.sz;
    __syncthreads();
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

bool fused_backward_supported(int radius, long long plane_cells) {
  return radius <= 4 && plane_cells < (1LL << 31);
}

std::array<int, 3> fused_box(int radius, FusedShape shape, int element_bytes) {
  return {fused_tile_width(radius, shape, element_bytes), tma_tile_height(radius), 1};
}

namespace {

template <class T>
void launch_fused(const FusedArgsT<T>& f, int radius, int z_block, const FusedMaps& maps, FusedShape shape,
                  cudaStream_t stream) {
  auto launch = [&]<int R, FusedShape K>() {
    using Shape = FusedShapeOf<R, K, T>;
    const int planes = f.s.z_end() - f.s.z_lo;
    if (planes <= 0) return;
    FusedArgsT<T> g = f;
    g.s.z_hi = f.s.z_end();  // the kernel reads z_hi as the end
    const int zb = z_block > 0 ? z_block : planes;
    const int tiles_x = (f.s.nx + Shape::BX - 1) / Shape::BX;
    const int tile_rows = (f.s.ny + TmaPolicy::kTileY - 1) / TmaPolicy::kTileY, z_blocks = (planes + zb - 1) / zb;
    // The compact shapes keep a column's offset in a plane as int (FusedShapeOf::Column).
    if (!fused_backward_supported(R, static_cast<long long>(f.s.ny) * f.s.sy))
      throw Error("fused backward step: a plane of " + std::to_string(f.s.ny) + " x " + std::to_string(f.s.sy) +
                  " cells is more than 2^31 - 1; use migration.fused: false");
    void (*kernel)(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, FusedArgsT<T>, int, int, int) =
        f.image_level ? fused_kernel<R, K, true, false, T> : fused_kernel<R, K, false, false, T>;
    if constexpr (sizeof(T) == 4)  // L2 hints: fp32 only
      if (f.s.l2_hint > 0) kernel = f.image_level ? fused_kernel<R, K, true, true> : fused_kernel<R, K, false, true>;
    set_shared_limit_once(reinterpret_cast<const void*>(kernel), static_cast<int>(Shape::kSharedBytes),
                          {"fused backward", R, static_cast<int>(sizeof(T))});
    // The launch order (AcousticArgs::chunk_rows) as the forward kernel's (launch_tma_shape).
    const int rows = f.s.chunk_rows < 0 && zb > TmaPolicy::kChunkMaxPlanes ? 0 : f.s.chunk_rows;
    const LaunchOrder order = launch_order(reinterpret_cast<const void*>(kernel), Shape::kThreads,
                                           static_cast<int>(Shape::kSharedBytes), tiles_x, tile_rows, z_blocks, rows);
    const dim3 block(Shape::BX, Shape::BY, 1);
    kernel<<<order.grid, block, Shape::kSharedBytes, stream>>>(
        *static_cast<const CUtensorMap*>(maps.s), *static_cast<const CUtensorMap*>(maps.r),
        *static_cast<const CUtensorMap*>(maps.s_prev), *static_cast<const CUtensorMap*>(maps.r_prev),
        *static_cast<const CUtensorMap*>(maps.m), g, zb, order.chunk, z_blocks);
    SEISRTM_CUDA_LAUNCHED();
  };
  auto by_shape = [&]<int R>() {
    switch (shape) {
      case FusedShape::wide:
        return launch.template operator()<R, FusedShape::wide>();
      case FusedShape::compact:
        return launch.template operator()<R, FusedShape::compact>();
      case FusedShape::compact1:
        return launch.template operator()<R, FusedShape::compact1>();
    }
  };
  switch (radius) {
    case 1:
      return by_shape.template operator()<1>();
    case 2:
      return by_shape.template operator()<2>();
    case 4:
      return by_shape.template operator()<4>();
    default:
      throw Error("fused backward step: radius " + std::to_string(radius) + " is not supported (<= 4)");
  }
}

}  // namespace

void launch_fused_backward(const FusedArgs& f, int radius, int z_block, const FusedMaps& maps, FusedShape shape,
                           cudaStream_t stream) {
  launch_fused(f, radius, z_block, maps, shape, stream);
}
void launch_fused_backward(const FusedArgsHalf& f, int radius, int z_block, const FusedMaps& maps, FusedShape shape,
                           cudaStream_t stream) {
  launch_fused(f, radius, z_block, maps, shape, stream);
}

}  // namespace seisrtm::kernels
