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
  double journal = 0;     // rank 0 of a run: the resume journal's buffers (RunJournal::kPending + 1 pieces)
  double geometry = 0;    // receivers' interpolation cells and weights, the wavelet, the time axis
  double slab_model = 0;  // solver.decomposition z: the slab's copy of the model volumes
  int ranks_on_node = 1;  // decomposition z: ranks of this node, each holding what is counted here
  double total = 0;       // the peak of all of them: building the model, or running
  std::string describe() const;
};

// A forward run of `c` (a migration config: only what building its problem holds).
HostMemoryEstimate estimate_host_memory(const Config& c, SolverBackend backend);
// Fraction of the available memory a run may plan to use; the rest is left to the system, the
// HDF5 library and what the estimate does not count (a few MiB of buffers).
inline constexpr double kHostMemoryMargin = 0.9;
// Throws Error naming the figures, the available memory (and `source`, where that figure comes
// from) and the key to change when e.total > kHostMemoryMargin * available_bytes;
// available_bytes <= 0 (unknown) checks nothing.
void check_host_memory(const HostMemoryEstimate& e, const Config& c, double available_bytes,
                       const std::string& source = "MemAvailable");

// Memory this process may still take, in bytes, and where the figure comes from.
struct AvailableMemory {
  double bytes = 0;    // 0: unknown; +inf: no limit found (cgroup_headroom only)
  std::string source;  // "MemAvailable", or the cgroup file whose limit binds, with its numbers
};
// The smallest headroom of the memory cgroups that hold this process: for its own cgroup and
// every ancestor up to the mount root, the limit less the usage that cannot be reclaimed. cgroup
// v2: memory.max and memory.current (under `root`, or `root`/unified on a hybrid mount); v1:
// memory.limit_in_bytes and memory.usage_in_bytes under `root`/memory. `proc_self_cgroup` is the
// text of /proc/self/cgroup, which names the process's cgroup per hierarchy. "max" (v2) and v1's
// "no limit" (2^63 less a page) are no limit; directories that do not exist are skipped (in a
// container the mount root is the container's own cgroup). +inf where nothing limits.
AvailableMemory cgroup_headroom(const std::string& root, const std::string& proc_self_cgroup);
// The headroom of a process limit (RLIMIT_AS, RLIMIT_DATA): `limit_bytes` less `in_use_bytes`
// (VmSize, VmData), named with both figures; +inf for no limit (negative, or from 2^62 up).
AvailableMemory rlimit_headroom(double limit_bytes, double in_use_bytes, const std::string& limit_name,
                                const std::string& usage_name);
// The smallest of MemAvailable (/proc/meminfo; where there is none, the free physical pages from
// sysconf), the cgroup headroom, cgroups under Hooks::cgroup_root (tests) or /sys/fs/cgroup, and
// the headroom of this process's RLIMIT_AS and RLIMIT_DATA.
AvailableMemory available_host_memory_detail();
// available_host_memory_detail().bytes; 0 when unknown.
double available_host_memory();

}  // namespace seisrtm
