#pragma once
// Turns a failing CUDA runtime call into a seisrtm::CudaError with the call, file and line.
#include <cuda_runtime.h>

#include "base/error.hpp"

#define SEISRTM_CUDA(call)                                                                     \
  do {                                                                                         \
    const cudaError_t seisrtm_err_ = (call);                                                   \
    if (seisrtm_err_ != cudaSuccess)                                                           \
      throw ::seisrtm::CudaError(#call, cudaGetErrorString(seisrtm_err_), __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports launch-configuration errors at the launch site.
#define SEISRTM_CUDA_LAUNCHED() SEISRTM_CUDA(cudaGetLastError())

namespace seisrtm::kernels {

// Sets a kernel's dynamic shared-memory limit once per device (the attribute belongs to the
// function in the current device's context; a process-wide flag would leave a second device
// unconfigured).
void set_shared_limit_once(const void* kernel, int bytes);

// How many blocks of `threads` threads and `shared_bytes` of dynamic shared memory the current
// device holds at once (blocks an SM by the occupancy calculator x SMs); computed once per device
// and kernel.
int resident_blocks(const void* kernel, int threads, int shared_bytes);

// The tiles of a chunk of the tma kernels' launch order (block_place in kernels/acoustic.hpp) on
// a grid of tiles_x x tile_rows tiles: chunk_rows rows; 0 whole layers; < 0 the fewest whole
// rows that hold as many tiles as blocks of `kernel` are resident (acoustic's policy; the tti
// launcher passes the rows of its own, tti_chunk_rows_policy).
int chunk_tiles(int chunk_rows, const void* kernel, int threads, int shared_bytes, int tiles_x, int tile_rows);

}  // namespace seisrtm::kernels
