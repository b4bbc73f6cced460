#include <omp.h>

#include <cstdio>

#include "app/commands.hpp"
#include "solver/device_info.hpp"
#include "solver/error.hpp"
#include "solver/migration.hpp"
#include "validation/cpu_migration.hpp"

namespace seisrtm::app {

int cmd_migrate(const std::string& config_path, const CommonOptions& o) {
  const Config c = load_with_overrides(config_path, o);
  if (!c.migration)
    throw Error("config file '" + config_path + "' has no 'migration' section: seisrtm migrate needs "
                "migration.data (the HDF5 file of seisrtm run) and a model; see README, Migration");
  if (c.solver.threads > 0) omp_set_num_threads(c.solver.threads);
  const MigrationInput in = prepare_migration(c);
  const Problem& p = in.problem;
  for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());
  std::string backend = c.solver.backend;
  if (backend == "cuda")
    throw Error("solver.backend cuda: migration runs on the CPU backend only for now; use cpu or auto");
  const MigrationPlan plan = plan_migration(p, available_host_memory());
  validation::CpuMigrator migrator(p);
  if (!o.quiet) {
    std::fprintf(stderr,
                 "seisrtm: %s: grid %lld x %lld x %lld, %lld steps of %.4g s (data: %lld samples of %.4g s), "
                 "%lld shot(s), %lld receivers, backend %s\n",
                 config_path.c_str(), p.grid.n[0], p.grid.n[1], p.grid.n[2], p.steps, p.dt, in.data_samples,
                 in.data_dt, p.shot_count(), p.receivers.size(), migrator.name().c_str());
    std::fprintf(stderr, "seisrtm: %s\n", plan.describe().c_str());
    std::fprintf(stderr, "seisrtm: data filter before back-propagation: %s\n", in.data_filter.c_str());
    if (c.migration->mute.enabled)
      std::fprintf(stderr, "seisrtm: direct-arrival mute zeroed %lld of %lld samples\n", in.muted_samples,
                   static_cast<long long>(in.traces.size()));
  }
  RunOptions ro;
  ro.quiet = o.quiet;
  ro.producer = std::string("seisrtm ") + SEISRTM_VERSION;
  const MigrationSummary s = migrate_survey(in, migrator, ro);
  std::fprintf(stderr, "seisrtm: wrote %s", s.h5_path.c_str());
  if (!o.quiet) {
    std::fprintf(stderr, ", %s", s.xdmf_path.c_str());
    for (const auto& pic : s.pictures) std::fprintf(stderr, ", %s", pic.c_str());
  }
  std::fprintf(stderr, "\nseisrtm: migration %.2f s (%lld shot(s), forward and backward passes), depth slice at %.1f m\n",
               s.seconds, p.shot_count(), s.depth_slice);
  return 0;
}

}  // namespace seisrtm::app
