#pragma once
// Seams the test suite injects: fault injection for the shot farm and the decomposed loop and
// the cgroup tree of the host-memory check. The defaults are production behaviour; the shipped seisrtm binary never
// changes them. One program sets them: tests/seisrtm_hooked.cpp, from its environment, before any
// work; the integration tests run it as a process (under mpirun for the farm's faults).
#include <string>

namespace seisrtm {

struct Hooks {
  // A failure at the start of shot `fail_shot` (0-based) on whichever rank computes it, and/or
  // at the start of every shot of rank `fail_rank` (both: that shot, on that rank only); -1: none.
  long long fail_shot = -1;
  int fail_rank = -1;
  // This rank fails at the check that finds rank 0's stop, instead of answering it; -1: none.
  int fail_on_stop_rank = -1;
  // A worker, past its shot's last check, waits this long (s) before it sends the shot's last
  // result (traces or illumination), and says so on stderr; < 0: no wait.
  double delay_final_result = -1;
  // Replaces /sys/fs/cgroup in the host-memory check; empty: /sys/fs/cgroup.
  std::string cgroup_root;
};

// The hooks in force (production defaults until set_hooks).
const Hooks& hooks();
void set_hooks(const Hooks& h);

}  // namespace seisrtm
