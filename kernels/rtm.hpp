#pragma once
// Launch interface of the migration's extra kernels (docs/ADJOINT.md): injection of time
// series at points (receiver data into the adjoint field, the wavelet into the reversed source
// field), the boundary store's gather and scatter, and imaging. The time steps themselves are
// launch_acoustic_step: the adjoint field and the reversed source field use the forward kernels.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/acoustic.hpp"

namespace seisrtm::kernels {

// Points injected cell by cell: cell c (padded index cells[c]) receives
// sum over its entries e in [offset[c], offset[c+1]) of coef[e] * series[row[e] * stride + sample].
// One thread per distinct cell, so overlapping stencils of nearby points add up without races
// and in a fixed order.
struct SeriesInjection {
  const long long* cells = nullptr;
  const int* offset = nullptr;
  const int* row = nullptr;     // which series (receiver) an entry takes its value from
  const float* coef = nullptr;  // m w / (1 + s), with 1 / (hx hy hz) for a source
  int count = 0;                // distinct cells
};
// One declaration per element type of the fields: float, and __half (fp16 storage: the
// injection formed in float and rounded once; the store keeps the field's halves).
#define SEISRTM_RTM_DECLARE(T)                                                                                  \
  void launch_inject_series(T* pn, const SeriesInjection& inj, const float* series, long long stride,           \
                            long long sample, cudaStream_t stream);                                             \
  /* store[k] = p[cells[k]] and p[cells[k]] = store[k], k < count. 32-bit indices (volumes under                \
     2^32 cells) move 12 bytes a shell cell instead of 16. */                                                   \
  void launch_gather(const T* p, const long long* cells, long long count, T* store, cudaStream_t stream);       \
  void launch_scatter(T* p, const long long* cells, long long count, const T* store, cudaStream_t stream);      \
  void launch_gather(const T* p, const unsigned* cells, long long count, T* store, cudaStream_t stream);        \
  void launch_scatter(T* p, const unsigned* cells, long long count, const T* store, cudaStream_t stream);       \
  /* Variants whose time index comes from a level counter in device memory, so that a CUDA graph                \
     captured once replays for every later step: the sample is *level + offset, the store slot                  \
     store + (*level + slot_offset) * count; launch_add_level moves the counter. */                             \
  void launch_inject_series_at(T* pn, const SeriesInjection& inj, const float* series, long long stride,        \
                               const long long* level, long long offset, cudaStream_t stream);                  \
  void launch_gather_at(const T* p, const unsigned* cells, long long count, T* store, const long long* level,   \
                        long long slot_offset, cudaStream_t stream);                                            \
  void launch_gather_at(const T* p, const long long* cells, long long count, T* store, const long long* level,  \
                        long long slot_offset, cudaStream_t stream);                                            \
  void launch_scatter_at(T* p, const unsigned* cells, long long count, const T* store, const long long* level,  \
                         long long slot_offset, cudaStream_t stream);                                           \
  void launch_scatter_at(T* p, const long long* cells, long long count, const T* store, const long long* level, \
                         long long slot_offset, cudaStream_t stream);
SEISRTM_RTM_DECLARE(float)
SEISRTM_RTM_DECLARE(__half)
#undef SEISRTM_RTM_DECLARE
void launch_add_level(long long* level, long long delta, cudaStream_t stream);
// fp32 fields with a bfloat16 store (migration.store_precision: bf16): the gather rounds each
// value to nearest even (__float2bfloat16_rn), the scatter widens it exactly; 2 bytes a shell
// cell instead of 4. level null: slot 0 (the plain gather and scatter).
#define SEISRTM_RTM_DECLARE_BF16(Index)                                                                                \
  void launch_gather(const float* p, const Index* cells, long long count, __nv_bfloat16* store, cudaStream_t stream);  \
  void launch_scatter(float* p, const Index* cells, long long count, const __nv_bfloat16* store, cudaStream_t stream); \
  void launch_gather_at(const float* p, const Index* cells, long long count, __nv_bfloat16* store,                     \
                        const long long* level, long long slot_offset, cudaStream_t stream);                           \
  void launch_scatter_at(float* p, const Index* cells, long long count, const __nv_bfloat16* store,                    \
                         const long long* level, long long slot_offset, cudaStream_t stream);
SEISRTM_RTM_DECLARE_BF16(unsigned)
SEISRTM_RTM_DECLARE_BF16(long long)
#undef SEISRTM_RTM_DECLARE_BF16
// fp32 fields with an fp16 store of value / scale (migration.store_precision: fp16; scale a power
// of two, the shot's field scale): rounded to nearest even, widened times scale exactly. level
// null: slot 0.
#define SEISRTM_RTM_DECLARE_F16(Index)                                                                               \
  void launch_gather_at(const float* p, const Index* cells, long long count, __half* store, const long long* level,  \
                        long long slot_offset, float scale, cudaStream_t stream);                                    \
  void launch_scatter_at(float* p, const Index* cells, long long count, const __half* store, const long long* level, \
                         long long slot_offset, float scale, cudaStream_t stream);
SEISRTM_RTM_DECLARE_F16(unsigned)
SEISRTM_RTM_DECLARE_F16(long long)
#undef SEISRTM_RTM_DECLARE_F16

// image += s r, illumination += s^2 over the box [lo, hi) of a padded volume (row stride sy,
// plane stride sz in elements); the stored values times s_scale and r_scale (fp16 storage's
// field scales, powers of two; 1 in fp32).
struct ImageBox {
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  long long sy = 0, sz = 0;
  float s_scale = 1, r_scale = 1;
};
void launch_image(const float* s, const float* r, float* image, float* illumination, const ImageBox& box,
                  cudaStream_t stream);
void launch_image(const __half* s, const __half* r, float* image, float* illumination, const ImageBox& box,
                  cudaStream_t stream);

// The fused backward step (kernels/rtm_fused.cu, the tma march, radius <= 4): s and r are
// the source and receiver fields' step arguments (p = level n + 1, pn = level n + 2 on entry,
// level n on exit; the same model, damping and weights); with image_level set, image
// accumulates s^{n+1} r^{n+2} and illumination (s^{n+1})^2 over the box [box_lo, box_hi). The planes
// computed are s's [z_lo, z_end()) (a z slab's own planes; r's range is not read).
// T = __half: fp16 storage; the image adds the stored values times s_scale and r_scale (the
// fields' scales, powers of two, as ImageBox's).
template <class T>
struct FusedArgsT {
  AcousticArgsT<T> s, r;
  float* image = nullptr;
  float* illumination = nullptr;
  int image_level = 0;
  int box_lo[3] = {0, 0, 0}, box_hi[3] = {0, 0, 0};
  float s_scale = 1, r_scale = 1;
};
using FusedArgs = FusedArgsT<float>;
using FusedArgsHalf = FusedArgsT<__half>;
struct FusedMaps {
  const void* s = nullptr;       // halo boxes of S^{n+1}
  const void* r = nullptr;       // halo boxes of chi^{n+1}
  const void* s_prev = nullptr;  // the block's own columns of S^{n+2}, chi^{n+2} and m
  const void* r_prev = nullptr;
  const void* m = nullptr;
};
// radius <= 4 and a padded plane of fewer than 2^31 cells (the compact shapes keep offsets in a plane as int).
bool fused_backward_supported(int radius, long long plane_cells);
// Launch shapes of the fused step (rtm_fused.cu says what each holds). The halo maps (s, r)
// are encoded with fused_box(radius, shape).
enum class FusedShape { wide, compact, compact1 };
inline constexpr FusedShape kFusedShapes[] = {FusedShape::wide, FusedShape::compact, FusedShape::compact1};
// Rows of the halo boxes in elements of element_bytes (4: fp32, 2: fp16): wide, the forward
// kernel's; compact, BX + HX + R rounded up to 16 bytes.
constexpr int fused_tile_width(int radius, FusedShape shape, int element_bytes = 4) {
  const int per16 = 16 / element_bytes;
  return shape == FusedShape::wide
             ? tma_tile_width(radius, element_bytes)
             : (TmaPolicy::kBlockX + tma_halo_x(radius, element_bytes) + radius + per16 - 1) / per16 * per16;
}
std::array<int, 3> fused_box(int radius, FusedShape shape, int element_bytes = 4);
void launch_fused_backward(const FusedArgs& f, int radius, int z_block, const FusedMaps& maps, FusedShape shape,
                           cudaStream_t stream);
// fp16 storage (no L2 hints: fp16 loads lost with every hint, docs/BENCHMARKS.md "Tried and lost").
void launch_fused_backward(const FusedArgsHalf& f, int radius, int z_block, const FusedMaps& maps, FusedShape shape,
                           cudaStream_t stream);

}  // namespace seisrtm::kernels
