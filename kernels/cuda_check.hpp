#pragma once
// Turns a failing CUDA runtime call into a seisrtm::CudaError with the call, file and line.
#include <cuda_runtime.h>

#include <cstddef>

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

// Shared memory of compute capability 9.0, the tma kernels' compile-time bound: 228 KB an SM,
// of which 1 KB is reserved for each resident block, and at most 227 KB a block (opt-in).
inline constexpr std::size_t kSharedPerSmCc90 = 228 * 1024;
inline constexpr std::size_t kSharedReservedPerBlock = 1024;
inline constexpr std::size_t kSharedPerBlockCc90 = kSharedPerSmCc90 - kSharedReservedPerBlock;

// The kernel a launch names in an error: its family, radius and storage bytes.
struct KernelShape {
  const char* name;
  int radius;
  int element_bytes;
};

// Throws an Error naming the kernel and both byte counts where `bytes` of dynamic shared memory
// exceed `limit`, the device's opt-in limit a block.
void check_shared_limit(const KernelShape& shape, std::size_t bytes, std::size_t limit);

// Sets a kernel's dynamic shared-memory limit once per device (the attribute belongs to the
// function in the current device's context; a process-wide flag would leave a second device
// unconfigured), after checking `bytes` against the device's opt-in limit
// (cudaDevAttrMaxSharedMemoryPerBlockOptin, queried once per device).
void set_shared_limit_once(const void* kernel, int bytes, const KernelShape& shape);

// How many blocks of `threads` threads and `shared_bytes` of dynamic shared memory the current
// device holds at once (blocks an SM by the occupancy calculator x SMs); computed once per device
// and kernel.
int resident_blocks(const void* kernel, int threads, int shared_bytes);

// The tiles of a chunk of the tma kernels' launch order (block_place in kernels/acoustic.hpp) on
// a grid of tiles_x x tile_rows tiles: chunk_rows rows; 0 whole layers; < 0 the fewest whole
// rows that hold as many tiles as blocks of `kernel` are resident (acoustic's policy; the tti
// launcher passes the rows of its own, tti_chunk_rows_policy).
int chunk_tiles(int chunk_rows, const void* kernel, int threads, int shared_bytes, int tiles_x, int tile_rows);

// The launch order of a tma kernel: a 1D grid of tiles_x x tile_rows tiles x z_blocks blocks,
// placed on the device by block_place with chunks of `chunk` tiles (chunk_tiles of chunk_rows;
// with chunk_rows >= 0 neither `kernel` nor the device is consulted).
struct LaunchOrder {
  dim3 grid;
  int chunk;
};
LaunchOrder launch_order(const void* kernel, int threads, int shared_bytes, int tiles_x, int tile_rows, int z_blocks,
                         int chunk_rows);

}  // namespace seisrtm::kernels
