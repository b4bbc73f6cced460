#pragma once
// What the machine offers: the GPU (if any) and its Hopper features. Driver calls go through
// the runtime's entry-point lookup, so the program never links libcuda and starts without it.
#include <cstddef>
#include <string>

namespace seisrtm {

struct GpuInfo {
  bool present = false;
  std::string reason;  // why there is no usable GPU
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t total_memory = 0, free_memory = 0;  // bytes
  std::size_t l2_bytes = 0;
  double dram_bytes_per_second = 0;        // peak: 2 x memory clock x bus width (0: not reported)
  std::size_t shared_per_block_optin = 0;  // bytes
  int driver_version = 0, runtime_version = 0;
  bool tma = false;          // bulk tensor copies (compute capability >= 9.0)
  bool vmm = false;          // virtual memory management
  bool compression = false;  // generic compressible memory
};

GpuInfo query_gpu(int device = 0);
bool gpu_available();
int gpu_count();  // 0 without a usable driver
// Looks up a driver API function by name (nullptr where no driver exists).
void* driver_entry_point(const char* symbol);

}  // namespace seisrtm
