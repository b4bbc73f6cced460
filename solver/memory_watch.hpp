#pragma once
// The peak device memory of a run, for the GPU propagator and migrator: free memory (from
// cudaMemGetInfo) at the start minus the lowest seen since.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels/cuda_check.hpp"

namespace seisrtm {

struct MemoryWatch {
  std::size_t free_at_start = 0, lowest_free = 0, volume_bytes = 0;
  void sample() {
    std::size_t free_b = 0, total_b = 0;
    SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
    lowest_free = std::min(lowest_free, free_b);
  }
};

}  // namespace seisrtm
