// [gpu] The first device kernel against the host formula.
#include <vector>

#include "kernels/cuda_check.hpp"
#include "kernels/wavelet.hpp"
#include "solver/numerics.hpp"
#include "tests/catch.hpp"

using namespace seisrtm;

TEST_CASE("device Ricker wavelet equals the host formula", "[gpu]") {
  const long long n = 1000;
  const double dt = 1e-3, f = 15, delay = 0.08;
  float* d = nullptr;
  SEISRTM_CUDA(cudaMalloc(&d, n * sizeof(float)));
  SEISRTM_CUDA(cudaMemset(d, 0xff, n * sizeof(float)));  // NaN poison: every sample must be written
  kernels::launch_ricker(d, n, dt, f, delay, nullptr);
  std::vector<float> h(n);
  SEISRTM_CUDA(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  SEISRTM_CUDA(cudaFree(d));
  for (long long i = 0; i < n; ++i) {
    // Both evaluate in double and round once to float: at most one float ulp apart.
    const float ref = static_cast<float>(ricker(i * dt, f, delay));
    REQUIRE(h[i] == Approx(ref).margin(1e-7));
  }
}
