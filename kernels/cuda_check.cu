#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

void check_shared_limit(const KernelShape& shape, std::size_t bytes, std::size_t limit) {
  if (bytes <= limit) return;
  throw Error(std::string("the tma kernel ") + shape.name + " (radius " + std::to_string(shape.radius) + ", " +
              std::to_string(shape.element_bytes) + "-byte storage) needs " + std::to_string(bytes) +
              " bytes of shared memory a block; this device allows " + std::to_string(limit) +
              " (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
}

namespace {

std::size_t shared_optin(int device) {
  static std::mutex mu;
  static std::map<int, std::size_t> known;
  std::lock_guard<std::mutex> lock(mu);
  const auto it = known.find(device);
  if (it != known.end()) return it->second;
  int v = 0;
  SEISRTM_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return known[device] = static_cast<std::size_t>(v);
}

}  // namespace

void set_shared_limit_once(const void* kernel, int bytes, const KernelShape& shape) {
  static std::mutex mu;
  static std::set<std::pair<int, const void*>> done;
  int device = 0;
  SEISRTM_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({device, kernel})) return;
  check_shared_limit(shape, static_cast<std::size_t>(bytes), shared_optin(device));
  SEISRTM_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  done.insert({device, kernel});
}

int resident_blocks(const void* kernel, int threads, int shared_bytes) {
  static std::mutex mu;
  static std::map<std::pair<int, const void*>, int> known;
  int device = 0;
  SEISRTM_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  const auto it = known.find({device, kernel});
  if (it != known.end()) return it->second;
  int per_sm = 0, sms = 0;
  SEISRTM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  SEISRTM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return known[{device, kernel}] = per_sm * sms;
}

int chunk_tiles(int chunk_rows, const void* kernel, int threads, int shared_bytes, int tiles_x, int tile_rows) {
  int rows = chunk_rows;
  if (rows < 0) rows = (resident_blocks(kernel, threads, shared_bytes) + tiles_x - 1) / tiles_x;
  return tiles_x * (rows == 0 ? tile_rows : std::min(rows, tile_rows));
}

LaunchOrder launch_order(const void* kernel, int threads, int shared_bytes, int tiles_x, int tile_rows, int z_blocks,
                         int chunk_rows) {
  const int chunk = chunk_tiles(chunk_rows, kernel, threads, shared_bytes, tiles_x, tile_rows);
  return {dim3(static_cast<unsigned>(tiles_x * tile_rows * z_blocks)), chunk};
}

}  // namespace seisrtm::kernels
