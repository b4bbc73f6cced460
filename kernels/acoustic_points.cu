// Step dispatch, source injection, receiver recording, the device step counter and the
// NaN/Inf check.
#include <type_traits>

#include "kernels/acoustic_common.cuh"
#include "kernels/acoustic_variants.cuh"
#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

namespace {

template <class T>
void launch_step(const AcousticArgsT<T>& a, Variant variant, int radius, int z_block, const TmaMaps& maps,
                 TmaShape shape, cudaStream_t stream) {
  if (a.z_end() <= a.z_lo) return;  // no planes (a thin slab's interior)
  auto dispatch = [&]<int R>() {
    switch (variant) {
      case Variant::naive:
        return launch_naive<R>(a, stream);
      case Variant::smem:
        if constexpr (std::is_same_v<T, float>)
          return launch_smem<R>(a, z_block, stream);
        else
          throw Error("solver.kernel smem stores fp32 only; with solver.storage fp16 use tma (Hopper) or naive");
      case Variant::tma:
        return launch_tma<R>(a, z_block, maps, shape, stream);
    }
  };
  switch (radius) {
    case 1:
      return dispatch.template operator()<1>();
    case 2:
      return dispatch.template operator()<2>();
    case 4:
      return dispatch.template operator()<4>();
    case 8:
      return dispatch.template operator()<8>();
    default:
      throw Error("acoustic step: unsupported radius " + std::to_string(radius));
  }
}

template <class T>
__global__ void inject_kernel(T* pn, PointArgs s, const float* wavelet, const int* step) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < s.entries)
    pn[s.cells[e]] = detail::from_float<T>(detail::to_float(pn[s.cells[e]]) + s.coef[e] * wavelet[*step]);
}

template <class T>
__global__ void record_kernel(const T* pn, PointArgs r, float* traces, int block_steps, const int* step) {
  const int rec = blockIdx.x * blockDim.x + threadIdx.x;
  if (rec >= r.receivers) return;
  float v = 0.0f;
  for (int e = r.offset[rec]; e < r.offset[rec + 1]; ++e) v += r.coef[e] * detail::to_float(pn[r.cells[e]]);
  traces[(long long)(*step % block_steps) * r.receivers + rec] = v;
}

__global__ void advance_step_kernel(int* step) {
  ++*step;
}

template <class T>
__global__ void check_finite_kernel(const T* v, long long n, int* flag) {
  bool bad = false;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    bad |= !isfinite(detail::to_float(v[i]));
  if (__syncthreads_or(bad) && threadIdx.x == 0) *flag = 1;
}

template <class T>
void inject(T* pn, const PointArgs& src, const float* d_wavelet, const int* d_step, cudaStream_t stream) {
  if (src.entries == 0) return;
  inject_kernel<<<(src.entries + 127) / 128, 128, 0, stream>>>(pn, src, d_wavelet, d_step);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T>
void record(const T* pn, const PointArgs& rec, float* d_traces, int block_steps, const int* d_step,
            cudaStream_t stream) {
  if (rec.receivers == 0) return;
  record_kernel<<<(rec.receivers + 127) / 128, 128, 0, stream>>>(pn, rec, d_traces, block_steps, d_step);
  SEISRTM_CUDA_LAUNCHED();
}

template <class T>
void check_finite(const T* v, long long n, int* d_flag, cudaStream_t stream) {
  check_finite_kernel<<<1024, 256, 0, stream>>>(v, n, d_flag);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace

void launch_acoustic_step(const AcousticArgs& a, Variant variant, int radius, int z_block, const TmaMaps& maps,
                          TmaShape shape, cudaStream_t stream) {
  launch_step(a, variant, radius, z_block, maps, shape, stream);
}
void launch_acoustic_step(const AcousticArgsHalf& a, Variant variant, int radius, int z_block, const TmaMaps& maps,
                          TmaShape shape, cudaStream_t stream) {
  launch_step(a, variant, radius, z_block, maps, shape, stream);
}

void launch_inject(float* pn, const PointArgs& src, const float* d_wavelet, const int* d_step, cudaStream_t stream) {
  inject(pn, src, d_wavelet, d_step, stream);
}
void launch_inject(__half* pn, const PointArgs& src, const float* d_wavelet, const int* d_step, cudaStream_t stream) {
  inject(pn, src, d_wavelet, d_step, stream);
}

void launch_record(const float* pn, const PointArgs& rec, float* d_traces, int block_steps, const int* d_step,
                   cudaStream_t stream) {
  record(pn, rec, d_traces, block_steps, d_step, stream);
}
void launch_record(const __half* pn, const PointArgs& rec, float* d_traces, int block_steps, const int* d_step,
                   cudaStream_t stream) {
  record(pn, rec, d_traces, block_steps, d_step, stream);
}

void launch_advance_step(int* d_step, cudaStream_t stream) {
  advance_step_kernel<<<1, 1, 0, stream>>>(d_step);
  SEISRTM_CUDA_LAUNCHED();
}

void launch_check_finite(const float* v, long long n, int* d_flag, cudaStream_t stream) {
  check_finite(v, n, d_flag, stream);
}
void launch_check_finite(const __half* v, long long n, int* d_flag, cudaStream_t stream) {
  check_finite(v, n, d_flag, stream);
}

}  // namespace seisrtm::kernels
