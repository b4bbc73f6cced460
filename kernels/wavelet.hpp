#pragma once
// Source wavelet evaluated on the device.
#include <cuda_runtime.h>

namespace seisrtm::kernels {

// out[n] = Ricker(n dt; peak_frequency, delay) for n = 0..count-1.
void launch_ricker(float* d_out, long long count, double dt, double peak_frequency, double delay, cudaStream_t stream);

}  // namespace seisrtm::kernels
