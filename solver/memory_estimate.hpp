#pragma once
// The host memory of a run, estimated from the config before anything large is allocated, so
// that a run that cannot fit is refused with the numbers and the key to change instead of being
// killed by the kernel or ending in std::bad_alloc. The device side has its own check
// (cuda_propagator, cuda_migration); the host of a migration is planned by plan_migration.
#include <string>

#include "io/config.hpp"

namespace seisrtm {

// Bytes, for the backend named (cpu | cuda); what each part counts is in memory_estimate.cpp.
struct HostMemoryEstimate {
  std::string backend;
  double cells = 0, receivers = 0, steps = 0;
  double model = 0;       // vp
  double anisotropy = 0;  // vti, tti: epsilon, delta (+ theta, phi: tti), held from building to the end
  double smoothing = 0;   // model.vp.smoothing: the slowness in double while it is smoothed
  // cpu: acoustic m, p^n, p^{n-1}; vti, tti: the TTI solver's 15 volumes. cuda: one padded volume
  // staged for the upload.
  double wavefields = 0;
  double volumes = 0;     // the copy of the wavefield for pictures and snapshots (+ a pinned one: cuda)
  double traces = 0;      // one shot's gather: the backend's, the survey's and the picture's copy
  double geometry = 0;    // receivers' interpolation cells and weights, the wavelet, the time axis
  double slab_model = 0;  // solver.decomposition z: the slab's copy of the model volumes
  int ranks_on_node = 1;  // decomposition z: ranks of this node, each holding what is counted here
  double total = 0;       // the peak of all of them: building the model, or running
  std::string describe() const;
};

// A forward run of `c` (a migration config: only what building its problem holds).
HostMemoryEstimate estimate_host_memory(const Config& c, const std::string& backend);
// Fraction of the available memory a run may plan to use; the rest is left to the system, the
// HDF5 library and what the estimate does not count (a few MiB of buffers).
inline constexpr double kHostMemoryMargin = 0.9;
// Throws Error naming the figures, the available memory and the key to change when
// e.total > kHostMemoryMargin * available_bytes; available_bytes <= 0 (unknown) checks nothing.
void check_host_memory(const HostMemoryEstimate& e, const Config& c, double available_bytes);
// MemAvailable of /proc/meminfo in bytes; where there is none, the free physical pages
// (sysconf); 0 when neither is known.
double available_host_memory();

}  // namespace seisrtm
