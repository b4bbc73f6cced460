#pragma once
// The one place that turns solver.backend into a propagator or a migrator: auto resolved, the
// GPU kernel checked against what it implements (solver/capabilities.hpp: cannot_implement),
// the backend built (whole grid or this rank's z slab), and the extras a command needs of it
// beyond the Propagator and Migrator interfaces, as plain members set where it is built.
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/config.hpp"
#include "solver/device_info.hpp"
#include "solver/migration.hpp"
#include "solver/problem.hpp"
#include "solver/propagator.hpp"

namespace seisrtm::app {

struct BackendChoice {
  SolverBackend backend = SolverBackend::cpu;  // auto resolved
  std::string name;                            // its text: cpu | cuda
  GpuInfo gpu;                                 // solver.device's
};
// Sets the OpenMP threads (set_cpu_threads), resolves c.solver.backend (resolve_backend) and
// refuses a GPU that is not there or a kernel it cannot run for `equation` (`migration`: the
// migrator's passes), before any model or data is read.
BackendChoice choose_backend(const Config& c, Equation equation, bool migration);

struct PropagatorBackend {
  std::unique_ptr<Propagator> propagator;
  bool slabs = false;  // this rank's slab of solver.decomposition z
  // A decomposed GPU run's, empty otherwise: the NCCL communicator (collective, once every rank's
  // setup succeeded), and the last shot's stepping and halo-exchange seconds.
  std::function<void()> connect;
  std::function<std::array<double, 2>()> slab_seconds;
};
PropagatorBackend make_propagator(const Problem& p, const BackendChoice& b);

struct MigratorBackend {
  std::unique_ptr<Migrator> migrator;
  bool slabs = false;  // this rank's slab of solver.decomposition z
  // The GPU migrator's (a decomposed run's: this rank's slab's), empty on the CPU backend: its
  // warnings, the NCCL communicator (decomposed only), whether its backward step is the fused
  // one, its peak device memory and its time by phase.
  bool gpu = false;
  std::vector<std::string> notes;
  std::function<void()> connect;
  std::function<bool()> fused;
  std::function<Propagator::DeviceMemory()> device_memory;
  std::function<std::vector<std::pair<std::string, double>>()> breakdown;
};
// `c`: the config as loaded (the GPU options are its), `p` the migration's problem.
MigratorBackend make_migrator(const Problem& p, const Config& c, const BackendChoice& b);

}  // namespace seisrtm::app
