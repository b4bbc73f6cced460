#include <H5public.h>
#include <cuda_runtime_api.h>
#include <omp.h>

#include <cstdio>

#include "app/commands.hpp"
#include "solver/cluster.hpp"
#include "solver/device_info.hpp"

namespace seisrtm::app {

namespace {

// Under mpirun: which GPU each rank takes (cmd_run's choice), in rank order, from rank 0.
bool print_ranks() {
  if (cluster::size() == 1) return true;
  const int device = cluster::gpu_for_rank(0, gpu_count());
  const GpuInfo g = query_gpu(device);
  char line[400];
  char bus[32] = "?";
  if (g.present) cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  std::snprintf(line, sizeof line, "rank %d/%d on %s (node-local rank %d): %s", cluster::rank(), cluster::size(),
                cluster::host().c_str(), cluster::local_rank(),
                g.present ? ("GPU " + std::to_string(device) + ", " + g.name + ", PCI " + bus).c_str()
                          : ("no GPU (" + g.reason + "): the CPU backend").c_str());
  const auto lines = cluster::gather_strings(line);
  if (cluster::rank() != 0) return false;
  std::printf("MPI: %d ranks (shot-parallel: mpirun -np N seisrtm run|migrate CONFIG)\n", cluster::size());
  for (const auto& l : lines) std::printf("  %s\n", l.c_str());
  return true;
}

}  // namespace

int cmd_info() {
  if (!print_ranks()) return 0;
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
      "%.0f MB L2, %zu KB shared memory per block, DRAM peak %.2f TB/s\n",
      g.name.c_str(), g.cc_major, g.cc_minor, g.multiprocessors, g.total_memory / 1073741824.0,
      g.free_memory / 1073741824.0, g.l2_bytes / 1e6, g.shared_per_block_optin / 1024, g.dram_bytes_per_second / 1e12);
  std::printf("driver CUDA %d.%d; TMA (bulk tensor copies): %s; VMM: %s; compressible memory: %s\n",
              g.driver_version / 1000, g.driver_version % 1000 / 10, g.tma ? "yes" : "no", g.vmm ? "yes" : "no",
              g.compression ? "yes" : "no");
  std::printf("kernel variants on this GPU: naive, smem%s; solver.kernel auto runs %s\n",
              g.tma ? ", tma" : " (tma needs compute capability 9.0: it is built for sm_90a)",
              g.tma ? "tma" : "smem (naive with solver.storage fp16 or physics.equation vti/tti)");
  return 0;
}

}  // namespace seisrtm::app
