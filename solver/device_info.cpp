#include "solver/device_info.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

namespace seisrtm {

void* driver_entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return fn;
}

GpuInfo query_gpu(int device) {
  GpuInfo g;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= device) {
    g.reason = e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice
                   ? std::string("no CUDA driver or device on this machine (") + cudaGetErrorName(e) + ")"
               : e != cudaSuccess ? std::string(cudaGetErrorString(e))
               : count == 0       ? "no CUDA device found"
                                  : "device " + std::to_string(device) + " does not exist: this process sees " +
                                  std::to_string(count) + " CUDA device(s), 0 to " + std::to_string(count - 1) +
                                  " (solver.device, --device)";
    cudaGetLastError();
    return g;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    g.reason = "cudaGetDeviceProperties failed";
    return g;
  }
  g.present = true;
  g.name = p.name;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.multiprocessors = p.multiProcessorCount;
  g.l2_bytes = p.l2CacheSize;
  g.shared_per_block_optin = p.sharedMemPerBlockOptin;
  cudaDriverGetVersion(&g.driver_version);
  cudaRuntimeGetVersion(&g.runtime_version);
  // Free memory is a property of the device's context: make it current for the query only,
  // and go back (where that device already has a context, below).
  // Going back to the previous device only where it already has its context: cudaSetDevice
  // creates one (CUDA 12 and later), and a context on a device this process never runs on takes
  // memory there from another rank of an mpirun job (solver/cluster.hpp).
  int previous = 0;
  cudaGetDevice(&previous);
  if (cudaSetDevice(device) == cudaSuccess) cudaMemGetInfo(&g.free_memory, &g.total_memory);
  using PrimaryState = CUresult (*)(CUdevice, unsigned*, int*);
  using DeviceGet = CUresult (*)(CUdevice*, int);
  auto state = reinterpret_cast<PrimaryState>(driver_entry_point("cuDevicePrimaryCtxGetState"));
  auto get_device = reinterpret_cast<DeviceGet>(driver_entry_point("cuDeviceGet"));
  CUdevice prev_handle{};
  unsigned flags = 0;
  int active = 1;  // without the entry points: go back, as before
  if (state && get_device && get_device(&prev_handle, previous) == CUDA_SUCCESS) state(prev_handle, &flags, &active);
  if (previous != device && active) cudaSetDevice(previous);
  cudaGetLastError();
  // The tma kernels are built for sm_90a only (architecture-specific code runs on 9.0 alone);
  // elsewhere the naive and smem variants run.
  g.tma = p.major == 9 && p.minor == 0;
  using GetAttr = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  if (auto get = reinterpret_cast<GetAttr>(driver_entry_point("cuDeviceGetAttribute"))) {
    int v = 0;
    if (get(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) == CUDA_SUCCESS) g.vmm = v != 0;
    v = 0;
    if (get(&v, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, device) == CUDA_SUCCESS) g.compression = v != 0;
    int khz = 0, bits = 0;
    if (get(&khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, device) == CUDA_SUCCESS &&
        get(&bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device) == CUDA_SUCCESS)
      g.dram_bytes_per_second = 2.0 * khz * 1e3 * bits / 8.0;  // double data rate
  }
  return g;
}

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaGetLastError();
  return count;
}

bool gpu_available() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

}  // namespace seisrtm
