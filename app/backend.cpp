#include "app/backend.hpp"

#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "solver/capabilities.hpp"
#include "solver/cluster.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/decomposition.hpp"
#include "solver/storage.hpp"
#include "validation/cpu_migration.hpp"
#include "validation/cpu_propagator.hpp"

namespace seisrtm::app {

BackendChoice choose_backend(const Config& c, Equation equation, bool migration) {
  set_cpu_threads(c);
  BackendChoice b;
  b.backend = resolve_backend(c, &b.gpu);
  b.name = to_text(b.backend);
  if (b.backend == SolverBackend::cuda && !b.gpu.present)
    throw Error("solver.backend is cuda but there is no usable GPU (" + b.gpu.reason + "); use cpu or auto");
  if (b.backend == SolverBackend::cuda) {  // the kernel as cuda_options resolves it (auto: one this device runs)
    const CudaOptions o = gpu_options(c);
    const std::string why = cannot_implement(
        {o.variant, equation, o.storage, migration, c.solver.decomposition == Decomposition::z}, &b.gpu);
    if (!why.empty()) throw Error("config key 'solver.kernel' is " + to_text(c.solver.kernel) + ": " + why);
  }
  return b;
}

PropagatorBackend make_propagator(const Problem& p, const BackendChoice& b) {
  PropagatorBackend out;
  out.slabs = p.config.solver.decomposition == Decomposition::z;
  if (out.slabs) {                  // this rank's slab of the grid (solver/decomposition.hpp)
    CudaPropagator* gpu = nullptr;  // owned by the slab propagator
    out.propagator = std::make_unique<SlabPropagator>(
        p, cluster::size(), cluster::rank(), [&](const Problem& slab_pb, const Slab& s) -> std::unique_ptr<Propagator> {
          if (b.backend == SolverBackend::cpu) return std::make_unique<validation::CpuPropagator>(slab_pb, s);
          auto g = std::make_unique<CudaPropagator>(slab_pb, gpu_options(slab_pb.config), s);
          gpu = g.get();
          return g;
        });
    if (gpu) {
      out.connect = [gpu] { gpu->connect(); };
      out.slab_seconds = [gpu] { return std::array<double, 2>{gpu->stepping_seconds(), gpu->halo_seconds()}; };
    }
    return out;
  }
  if (b.backend == SolverBackend::cpu) {
    auto cpu = std::make_unique<validation::CpuPropagator>(p);
    // fp16 storage emulated: the values the GPU would store (validation/half.hpp).
    if (p.config.solver.storage == SolverStorage::fp16) cpu->store_as_half(kHalfPeakExponent);
    out.propagator = std::move(cpu);
    return out;
  }
  out.propagator = std::make_unique<CudaPropagator>(p, gpu_options(p.config));
  return out;
}

namespace {

// The extras of a GPU migrator (owned by the caller's migrator, which outlives them).
void describe_gpu(MigratorBackend& out, CudaMigrator* m, bool slab) {
  out.gpu = true;
  out.notes = m->notes();
  if (slab) out.connect = [m] { m->connect(); };
  out.fused = [m] { return m->fused(); };
  out.device_memory = [m] { return m->device_memory(); };
  out.breakdown = [m] { return m->breakdown(); };
}

}  // namespace

MigratorBackend make_migrator(const Problem& p, const Config& c, const BackendChoice& b) {
  MigratorBackend out;
  out.slabs = c.solver.decomposition == Decomposition::z;
  const CudaOptions co = gpu_options(c);
  if (out.slabs) {                // this rank's slab of the grid (solver/decomposition.hpp)
    CudaMigrator* gpu = nullptr;  // owned by the slab migrator
    out.migrator = std::make_unique<SlabMigrator>(
        p, cluster::size(), cluster::rank(), [&](const Problem& slab_pb, const Slab& s) -> std::unique_ptr<Migrator> {
          if (b.backend == SolverBackend::cpu) return std::make_unique<validation::CpuMigrator>(slab_pb, s, p);
          auto m = std::make_unique<CudaMigrator>(slab_pb, co, s, p);
          gpu = m.get();
          return m;
        });
    if (gpu) describe_gpu(out, gpu, true);
    return out;
  }
  if (b.backend == SolverBackend::cuda) {
    auto m = std::make_unique<CudaMigrator>(p, co);
    describe_gpu(out, m.get(), false);
    out.migrator = std::move(m);
    return out;
  }
  auto m = std::make_unique<validation::CpuMigrator>(p);
  // fp16 storage emulated: the values the GPU would store (validation/half.hpp).
  if (c.solver.storage == SolverStorage::fp16) m->store_as_half(kHalfPeakExponent);
  out.migrator = std::move(m);
  return out;
}

}  // namespace seisrtm::app
