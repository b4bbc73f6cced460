#include <H5public.h>
#include <cuda_runtime_api.h>
#include <omp.h>

#include <cstdio>

#include "app/commands.hpp"
#include "solver/device_info.hpp"

namespace seisrtm::app {

int cmd_info() {
  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  std::printf("seisrtm %s\n", SEISRTM_VERSION);
  std::printf(
      "build: C++%ld, CUDA runtime %d.%d (static), CUDA architectures %s, HDF5 %u.%u.%u, "
      "OpenMP (%d) with %d threads\n",
      __cplusplus / 100 % 100, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, SEISRTM_CUDA_ARCHS, h5maj, h5min,
      h5rel, _OPENMP, omp_get_max_threads());
  const GpuInfo g = query_gpu();
  if (!g.present) {
    std::printf("GPU: none usable (%s); runs use the CPU backend\n", g.reason.c_str());
    return 0;
  }
  std::printf(
      "GPU: %s, compute capability %d.%d, %d SMs, %.1f GiB memory (%.1f GiB free), "
      "%.0f MB L2, %zu KB shared memory per block\n",
      g.name.c_str(), g.cc_major, g.cc_minor, g.multiprocessors, g.total_memory / 1073741824.0,
      g.free_memory / 1073741824.0, g.l2_bytes / 1e6, g.shared_per_block_optin / 1024);
  std::printf("driver CUDA %d.%d; TMA (bulk tensor copies): %s; VMM: %s; compressible memory: %s\n",
              g.driver_version / 1000, g.driver_version % 1000 / 10, g.tma ? "yes" : "no", g.vmm ? "yes" : "no",
              g.compression ? "yes" : "no");
  std::printf("kernel variants on this GPU: naive, smem%s; solver.kernel auto runs %s\n",
              g.tma ? ", tma" : " (tma needs compute capability 9.0: it is built for sm_90a)", g.tma ? "tma" : "smem");
  return 0;
}

}  // namespace seisrtm::app
