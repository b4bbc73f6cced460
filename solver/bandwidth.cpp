#include "solver/bandwidth.hpp"

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/cuda_check.hpp"

namespace seisrtm {

CopyBandwidth measure_copy_bandwidth(std::size_t bytes, MemoryKind kind, bool random, int repeats) {
  DeviceBuffer src(bytes, kind), dst(bytes, kind);
  if (random) {
    std::vector<float> h(std::min<std::size_t>(bytes / 4, 1 << 24));
    std::mt19937 gen(12345);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : h) v = u(gen);
    for (std::size_t off = 0; off < bytes; off += h.size() * 4)
      SEISRTM_CUDA(
          cudaMemcpy(src.as<char>() + off, h.data(), std::min(h.size() * 4, bytes - off), cudaMemcpyHostToDevice));
  } else {
    SEISRTM_CUDA(cudaMemset(src.as<void>(), 0, bytes));
  }
  SEISRTM_CUDA(cudaMemset(dst.as<void>(), 0, bytes));
  CudaEvent a, b;
  std::vector<float> ms;
  for (int r = 0; r < repeats + 1; ++r) {  // the first is a warm-up
    SEISRTM_CUDA(cudaEventRecord(a.get()));
    SEISRTM_CUDA(cudaMemcpyAsync(dst.as<void>(), src.as<void>(), bytes, cudaMemcpyDeviceToDevice));
    SEISRTM_CUDA(cudaEventRecord(b.get()));
    SEISRTM_CUDA(cudaEventSynchronize(b.get()));
    float t = 0;
    SEISRTM_CUDA(cudaEventElapsedTime(&t, a.get(), b.get()));
    if (r > 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return {2.0 * bytes / (ms[ms.size() / 2] * 1e-3), src.compressible()};
}

}  // namespace seisrtm
