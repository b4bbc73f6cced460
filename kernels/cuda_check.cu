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

}  // namespace seisrtm::kernels
