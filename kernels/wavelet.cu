#include "kernels/cuda_check.hpp"
#include "kernels/wavelet.hpp"

namespace seisrtm::kernels {

namespace {
__global__ void ricker_kernel(float* out, long long count, double dt, double f, double delay) {
  const long long n = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (n >= count) return;
  const double a = 3.14159265358979323846 * f * (n * dt - delay);
  out[n] = static_cast<float>((1 - 2 * a * a) * exp(-a * a));
}
}  // namespace

void launch_ricker(float* d_out, long long count, double dt, double peak_frequency, double delay, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  ricker_kernel<<<blocks, kThreads, 0, stream>>>(d_out, count, dt, peak_frequency, delay);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace seisrtm::kernels
