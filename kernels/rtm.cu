// Migration kernels: series injection, boundary store gather/scatter, imaging.
// Memory movement of imaging: read s, r, image, illumination; write image, illumination: 24 B/cell.
#include <algorithm>

#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"

namespace seisrtm::kernels {

namespace {

__global__ void inject_series_kernel(float* pn, SeriesInjection inj, const float* series, long long stride,
                                     long long sample) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= inj.count) return;
  float v = 0.0f;
  for (int e = inj.offset[c]; e < inj.offset[c + 1]; ++e) v += inj.coef[e] * series[inj.row[e] * stride + sample];
  pn[inj.cells[c]] += v;
}

// The same with the sample taken from the device's level counter: sample = *level + offset.
__global__ void inject_series_at_kernel(float* pn, SeriesInjection inj, const float* series, long long stride,
                                        const long long* level, long long offset) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= inj.count) return;
  const long long sample = *level + offset;
  float v = 0.0f;
  for (int e = inj.offset[c]; e < inj.offset[c + 1]; ++e) v += inj.coef[e] * series[inj.row[e] * stride + sample];
  pn[inj.cells[c]] += v;
}

// Boundary store slots chosen by the level counter: slot = store + (*level + slot_offset) * count.
template <class Index>
__global__ void gather_at_kernel(const float* p, const Index* cells, long long count, float* store,
                                 const long long* level, long long slot_offset) {
  float* slot = store + (*level + slot_offset) * count;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    slot[k] = p[cells[k]];
}

template <class Index>
__global__ void scatter_at_kernel(float* p, const Index* cells, long long count, const float* store,
                                  const long long* level, long long slot_offset) {
  const float* slot = store + (*level + slot_offset) * count;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    p[cells[k]] = slot[k];
}

__global__ void add_level_kernel(long long* level, long long delta) {
  *level += delta;
}

template <class Index>
__global__ void gather_kernel(const float* p, const Index* cells, long long count, float* store) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    store[k] = p[cells[k]];
}

template <class Index>
__global__ void scatter_kernel(float* p, const Index* cells, long long count, const float* store) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x)
    p[cells[k]] = store[k];
}

// One thread per cell of the box (x fastest across a warp, one plane per blockIdx.z): all
// loads of a warp are independent and coalesced.
__global__ void image_kernel(const float* s, const float* r, float* image, float* illum, ImageBox b) {
  const int ix = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
  const int iz = b.lo[2] + blockIdx.z;
  if (ix >= b.hi[0] || iy >= b.hi[1]) return;
  const long long i = iz * b.sz + iy * b.sy + ix;
  const float sv = s[i];
  image[i] += sv * r[i];
  illum[i] += sv * sv;
}

int blocks_for(long long n) {
  return static_cast<int>(std::min<long long>((n + 255) / 256, 65535));
}

}  // namespace

void launch_inject_series(float* pn, const SeriesInjection& inj, const float* series, long long stride,
                          long long sample, cudaStream_t stream) {
  if (inj.count == 0) return;
  inject_series_kernel<<<(inj.count + 127) / 128, 128, 0, stream>>>(pn, inj, series, stride, sample);
  SEISRTM_CUDA_LAUNCHED();
}

template <class Index>
void gather(const float* p, const Index* cells, long long count, float* store, cudaStream_t stream) {
  if (count == 0) return;
  gather_kernel<Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store);
  SEISRTM_CUDA_LAUNCHED();
}

template <class Index>
void scatter(float* p, const Index* cells, long long count, const float* store, cudaStream_t stream) {
  if (count == 0) return;
  scatter_kernel<Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store);
  SEISRTM_CUDA_LAUNCHED();
}

void launch_gather(const float* p, const long long* cells, long long count, float* store, cudaStream_t stream) {
  gather(p, cells, count, store, stream);
}
void launch_scatter(float* p, const long long* cells, long long count, const float* store, cudaStream_t stream) {
  scatter(p, cells, count, store, stream);
}
void launch_gather(const float* p, const unsigned* cells, long long count, float* store, cudaStream_t stream) {
  gather(p, cells, count, store, stream);
}
void launch_scatter(float* p, const unsigned* cells, long long count, const float* store, cudaStream_t stream) {
  scatter(p, cells, count, store, stream);
}

void launch_inject_series_at(float* pn, const SeriesInjection& inj, const float* series, long long stride,
                             const long long* level, long long offset, cudaStream_t stream) {
  if (inj.count == 0) return;
  inject_series_at_kernel<<<(inj.count + 127) / 128, 128, 0, stream>>>(pn, inj, series, stride, level, offset);
  SEISRTM_CUDA_LAUNCHED();
}

template <class Index>
void store_at(bool to_store, float* p, const Index* cells, long long count, float* store, const long long* level,
              long long slot_offset, cudaStream_t stream) {
  if (count == 0) return;
  if (to_store)
    gather_at_kernel<Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset);
  else
    scatter_at_kernel<Index><<<blocks_for(count), 256, 0, stream>>>(p, cells, count, store, level, slot_offset);
  SEISRTM_CUDA_LAUNCHED();
}

void launch_gather_at(const float* p, const unsigned* cells, long long count, float* store, const long long* level,
                      long long slot_offset, cudaStream_t stream) {
  store_at(true, const_cast<float*>(p), cells, count, store, level, slot_offset, stream);
}
void launch_gather_at(const float* p, const long long* cells, long long count, float* store, const long long* level,
                      long long slot_offset, cudaStream_t stream) {
  store_at(true, const_cast<float*>(p), cells, count, store, level, slot_offset, stream);
}
void launch_scatter_at(float* p, const unsigned* cells, long long count, const float* store, const long long* level,
                       long long slot_offset, cudaStream_t stream) {
  store_at(false, p, cells, count, const_cast<float*>(store), level, slot_offset, stream);
}
void launch_scatter_at(float* p, const long long* cells, long long count, const float* store, const long long* level,
                       long long slot_offset, cudaStream_t stream) {
  store_at(false, p, cells, count, const_cast<float*>(store), level, slot_offset, stream);
}

void launch_add_level(long long* level, long long delta, cudaStream_t stream) {
  add_level_kernel<<<1, 1, 0, stream>>>(level, delta);
  SEISRTM_CUDA_LAUNCHED();
}

void launch_image(const float* s, const float* r, float* image, float* illumination, const ImageBox& b,
                  cudaStream_t stream) {
  const int nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1];
  if (nx <= 0 || ny <= 0 || b.hi[2] <= b.lo[2]) return;
  const dim3 block(32, 8, 1), grid((nx + 31) / 32, (ny + 7) / 8, b.hi[2] - b.lo[2]);
  image_kernel<<<grid, block, 0, stream>>>(s, r, image, illumination, b);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace seisrtm::kernels
