#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "kernels/cuda_check.hpp"

namespace seisrtm::kernels {

void set_shared_limit_once(const void* kernel, int bytes) {
  static std::mutex mu;
  static std::set<std::pair<int, const void*>> done;
  int device = 0;
  SEISRTM_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (done.count({device, kernel})) return;
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

}  // namespace seisrtm::kernels
