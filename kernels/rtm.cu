// Migration kernels: series injection, boundary store gather/scatter, imaging.
// Memory movement of imaging: read s, r, image, illumination; write image, illumination: 24 B/cell.
#include <algorithm>

#include "kernels/acoustic_common.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"

namespace seisrtm::kernels {

namespace {

template <class T>
__global__ void inject_series_kernel(T* pn, SeriesInjection inj, const float* series, long long stride,
                                     long long sample) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= inj.count) return;
  float v = 0.0f;
  for (int e = inj.offset[c]; e < inj.offset[c + 1]; ++e) v += inj.coef[e] * series[inj.row[e] * stride + sample];
  pn[inj.cells[c]] = detail::from_float<T>(detail::to_float(pn[inj.cells[c]]) + v);
}

// The same with the sample taken from the device's level counter: sample = *level + offset.
template <class T>
__global__ void inject_series_at_kernel(T* pn, SeriesInjection inj, const float* series, long long stride,
                                        const long long* level, long long offset) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= inj.count) return;
  const long long sample = *level + offset;
  float v = 0.0f;
  for (int e = inj.offset[c]; e < inj.offset[c + 1]; ++e) v += inj.coef[e] * series[inj.row[e] * stride + sample];
  pn[inj.cells[c]] = detail::from_float<T>(detail::to_float(pn[inj.cells[c]]) + v);
}

// Boundary store slots chosen by the level counter: slot = store + (*level + slot_offset) * count.
// The store holds the field's elements (floats, or halves in fp16 storage).
//
// A gather takes kGatherCells cells a thread, a grid stride apart, and issues their index and
// value loads before any store: with one 4-byte load in flight a thread (2048 threads: 8 KB an SM)
// a gather is bound by DRAM's latency. The scatters keep one cell a thread: their partial-sector
// writes on the x faces bound them, not the loads (docs/BENCHMARKS.md, "RTM", and "Tried and
// lost").
constexpr int kGatherCells = 4;

// slot[k] = get(cells[k]) for k in [0, count).
template <class Index, class V, class Get>
__device__ __forceinline__ void gather_cells(const Index* cells, long long count, V* slot, Get get) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long k0 = blockIdx.x * (long long)blockDim.x + threadIdx.x; k0 < count; k0 += kGatherCells * stride) {
    Index c[kGatherCells];
    V v[kGatherCells];
#pragma unroll
    for (int u = 0; u < kGatherCells; ++u) c[u] = k0 + u * stride < count ? cells[k0 + u * stride] : Index(0);
#pragma unroll
    for (int u = 0; u < kGatherCells; ++u)
      if (k0 + u * stride < count) v[u] = get(c[u]);
#pragma unroll
    for (int u = 0; u < kGatherCells; ++u)
      if (k0 + u * stride < count) slot[k0 + u * stride] = v[u];
  }
}

template <class T, class Index>
__global__ void gather_at_kernel(const T* p, const Index* cells, long long count, T* store, const long long* level,
                                 long long slot_offset) {
  gather_cells(cells, count, store + (*level + slot_offset) * count, [&](Index c) { return p[c]; });
}

template <class T, class Index>
__global__ void scatter_at_kernel(T* p, const Index* cells, long long count, const T* store, const long long* level,
                                  long long slot_offset) {
  const T* slot = store + (*level + slot_offset) * count;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    p[cells[k]] = slot[k];
}

// The same between fp32 fields and a bfloat16 store (migration.store_precision: bf16): each value
// rounded to nearest even on the way in, exact on the way out; slot_offset as above, 0 and
// level null for the plain gather and scatter.
template <class Index>
__global__ void gather_bf16_kernel(const float* p, const Index* cells, long long count, __nv_bfloat16* store,
                                   const long long* level, long long slot_offset) {
  gather_cells(cells, count, store + (level ? *level + slot_offset : 0) * count,
               [&](Index c) { return __float2bfloat16_rn(p[c]); });
}

template <class Index>
__global__ void scatter_bf16_kernel(float* p, const Index* cells, long long count, const __nv_bfloat16* store,
                                    const long long* level, long long slot_offset) {
  const __nv_bfloat16* slot = store + (level ? *level + slot_offset : 0) * count;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    p[cells[k]] = __bfloat162float(slot[k]);
}

// fp32 fields and an fp16 store of the values over a power-of-two scale (migration.store_precision:
// fp16): the gather rounds v * inv_scale to nearest even, the scatter gives back h * scale (both
// products exact).
template <class Index>
__global__ void gather_f16_kernel(const float* p, const Index* cells, long long count, __half* store,
                                  const long long* level, long long slot_offset, float inv_scale) {
  gather_cells(cells, count, store + (level ? *level + slot_offset : 0) * count,
               [&](Index c) { return __float2half_rn(p[c] * inv_scale); });
}

template <class Index>
__global__ void scatter_f16_kernel(float* p, const Index* cells, long long count, const __half* store,
                                   const long long* level, long long slot_offset, float scale) {
  const __half* slot = store + (level ? *level + slot_offset : 0) * count;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    p[cells[k]] = __half2float(slot[k]) * scale;
}

__global__ void add_level_kernel(long long* level, long long delta) {
  *level += delta;
}

template <class T, class Index>
__global__ void gather_kernel(const T* p, const Index* cells, long long count, T* store) {
  gather_cells(cells, count, store, [&](Index c) { return p[c]; });
}

template <class T, class Index>
__global__ void scatter_kernel(T* p, const Index* cells, long long count, const T* store) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    p[cells[k]] = store[k];
}

// One thread per cell of the box (x fastest across a warp, one plane per blockIdx.z): all
// loads of a warp are independent and coalesced. The stored values times their scales (1 in
// fp32; powers of two: exact) are the fields' values.
template <class T>
__global__ void image_kernel(const T* s, const T* r, float* image, float* illum, ImageBox b) {
  const int ix = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
  const int iz = b.lo[2] + blockIdx.z;
  if (ix >= b.hi[0] || iy >= b.hi[1]) return;
  const long long i = iz * b.sz + iy * b.sy + ix;
  const float sv = detail::to_float(s[i]) * b.s_scale;
  image[i] += sv * (detail::to_float(r[i]) * b.r_scale);
  illum[i] += sv * sv;
}

int blocks_for(long long n) {
  return static_cast<int>(std::min<long long>((n + 255) / 256, 65535));
}
// Blocks of 256 threads for a gather of n cells (kGatherCells a thread).
int gather_blocks(long long n) {
  return blocks_for((n + kGatherCells - 1) / kGatherCells);
}

template <class T>
void inject_series(T* pn, const SeriesInjection& inj, const float* series, long long stride, long long sample,
                   cudaStream_t stream) {
  if (inj.count == 0) return;
  inject_series_kernel<<<(inj.count + 127) / 128, 128, 0, stream>>>(pn, inj, series, stride, sample);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T>
void inject_series_at(T* pn, const SeriesInjection& inj, const float* series, long long stride, const long long* level,
                      long long offset, cudaStream_t stream) {
  if (inj.count == 0) return;
  inject_series_at_kernel<<<(inj.count + 127) / 128, 128, 0, stream>>>(pn, inj, series, stride, level, offset);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T, class Index>
void gather(const T* p, const Index* cells, long long count, T* store, cudaStream_t stream) {
  if (count == 0) return;
  gather_kernel<T, Index><<<gather_blocks(count), 256, 0, stream>>>(p, cells, count, store);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T, class Index>
void scatter(T* p, const Index* cells, long long count, const T* store, cudaStream_t stream) {
  if (count == 0) return;
  scatter_kernel<T, Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T, class Index>
void store_at(bool to_store, T* p, const Index* cells, long long count, T* store, const long long* level,
              long long slot_offset, cudaStream_t stream) {
  if (count == 0) return;
  if (to_store)
    gather_at_kernel<T, Index><<<gather_blocks(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset);
  else
    scatter_at_kernel<T, Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T>
void image(const T* s, const T* r, float* image, float* illumination, const ImageBox& b, cudaStream_t stream) {
  const int nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1];
  if (nx <= 0 || ny <= 0 || b.hi[2] <= b.lo[2]) return;
  const dim3 block(32, 8, 1), grid((nx + 31) / 32, (ny + 7) / 8, b.hi[2] - b.lo[2]);
  image_kernel<<<grid, block, 0, stream>>>(s, r, image, illumination, b);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace

// The launchers of both element types (kernels/rtm.hpp).
#define SEISRTM_RTM_LAUNCHERS(T)                                                                                \
  void launch_inject_series(T* pn, const SeriesInjection& inj, const float* series, long long stride,           \
                            long long sample, cudaStream_t stream) {                                            \
    inject_series(pn, inj, series, stride, sample, stream);                                                     \
  }                                                                                                             \
  void launch_inject_series_at(T* pn, const SeriesInjection& inj, const float* series, long long stride,        \
                               const long long* level, long long offset, cudaStream_t stream) {                 \
    inject_series_at(pn, inj, series, stride, level, offset, stream);                                           \
  }                                                                                                             \
  void launch_gather(const T* p, const long long* cells, long long count, T* store, cudaStream_t stream) {      \
    gather(p, cells, count, store, stream);                                                                     \
  }                                                                                                             \
  void launch_scatter(T* p, const long long* cells, long long count, const T* store, cudaStream_t stream) {     \
    scatter(p, cells, count, store, stream);                                                                    \
  }                                                                                                             \
  void launch_gather(const T* p, const unsigned* cells, long long count, T* store, cudaStream_t stream) {       \
    gather(p, cells, count, store, stream);                                                                     \
  }                                                                                                             \
  void launch_scatter(T* p, const unsigned* cells, long long count, const T* store, cudaStream_t stream) {      \
    scatter(p, cells, count, store, stream);                                                                    \
  }                                                                                                             \
  void launch_gather_at(const T* p, const unsigned* cells, long long count, T* store, const long long* level,   \
                        long long slot_offset, cudaStream_t stream) {                                           \
    store_at(true, const_cast<T*>(p), cells, count, store, level, slot_offset, stream);                         \
  }                                                                                                             \
  void launch_gather_at(const T* p, const long long* cells, long long count, T* store, const long long* level,  \
                        long long slot_offset, cudaStream_t stream) {                                           \
    store_at(true, const_cast<T*>(p), cells, count, store, level, slot_offset, stream);                         \
  }                                                                                                             \
  void launch_scatter_at(T* p, const unsigned* cells, long long count, const T* store, const long long* level,  \
                         long long slot_offset, cudaStream_t stream) {                                          \
    store_at(false, p, cells, count, const_cast<T*>(store), level, slot_offset, stream);                        \
  }                                                                                                             \
  void launch_scatter_at(T* p, const long long* cells, long long count, const T* store, const long long* level, \
                         long long slot_offset, cudaStream_t stream) {                                          \
    store_at(false, p, cells, count, const_cast<T*>(store), level, slot_offset, stream);                        \
  }                                                                                                             \
  void launch_image(const T* s, const T* r, float* image_, float* illumination, const ImageBox& b,              \
                    cudaStream_t stream) {                                                                      \
    image(s, r, image_, illumination, b, stream);                                                               \
  }
SEISRTM_RTM_LAUNCHERS(float)
SEISRTM_RTM_LAUNCHERS(__half)
#undef SEISRTM_RTM_LAUNCHERS

#define SEISRTM_RTM_BF16(Index)                                                                                        \
  void launch_gather(const float* p, const Index* cells, long long count, __nv_bfloat16* store, cudaStream_t stream) { \
    launch_gather_at(p, cells, count, store, nullptr, 0, stream);                                                      \
  }                                                                                                                    \
  void launch_scatter(float* p, const Index* cells, long long count, const __nv_bfloat16* store,                       \
                      cudaStream_t stream) {                                                                           \
    launch_scatter_at(p, cells, count, store, nullptr, 0, stream);                                                     \
  }                                                                                                                    \
  void launch_gather_at(const float* p, const Index* cells, long long count, __nv_bfloat16* store,                     \
                        const long long* level, long long slot_offset, cudaStream_t stream) {                          \
    if (count == 0) return;                                                                                            \
    gather_bf16_kernel<Index><<<gather_blocks(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset);   \
    SEISRTM_CUDA_LAUNCHED();                                                                                           \
  }                                                                                                                    \
  void launch_scatter_at(float* p, const Index* cells, long long count, const __nv_bfloat16* store,                    \
                         const long long* level, long long slot_offset, cudaStream_t stream) {                         \
    if (count == 0) return;                                                                                            \
    scatter_bf16_kernel<Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset);     \
    SEISRTM_CUDA_LAUNCHED();                                                                                           \
  }
SEISRTM_RTM_BF16(unsigned)
SEISRTM_RTM_BF16(long long)
#undef SEISRTM_RTM_BF16

#define SEISRTM_RTM_F16(Index)                                                                                       \
  void launch_gather_at(const float* p, const Index* cells, long long count, __half* store, const long long* level,  \
                        long long slot_offset, float scale, cudaStream_t stream) {                                   \
    if (count == 0) return;                                                                                          \
    gather_f16_kernel<Index>                                                                                         \
        <<<gather_blocks(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset, 1.0f / scale);        \
    SEISRTM_CUDA_LAUNCHED();                                                                                         \
  }                                                                                                                  \
  void launch_scatter_at(float* p, const Index* cells, long long count, const __half* store, const long long* level, \
                         long long slot_offset, float scale, cudaStream_t stream) {                                  \
    if (count == 0) return;                                                                                          \
    scatter_f16_kernel<Index>                                                                                        \
        <<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset, scale);                  \
    SEISRTM_CUDA_LAUNCHED();                                                                                         \
  }
SEISRTM_RTM_F16(unsigned)
SEISRTM_RTM_F16(long long)
#undef SEISRTM_RTM_F16

void launch_add_level(long long* level, long long delta, cudaStream_t stream) {
  add_level_kernel<<<1, 1, 0, stream>>>(level, delta);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace seisrtm::kernels
