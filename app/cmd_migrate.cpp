#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "app/backend.hpp"
#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "io/output_file.hpp"
#include "solver/cluster.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/decomposition.hpp"
#include "solver/device_info.hpp"
#include "solver/migration.hpp"
#include "solver/stack_parts.hpp"

namespace seisrtm::app {

namespace {

// The config, the data and the migrator; throws Error on what is wrong with them.
void setup_migration(const std::string& config_path, const CommonOptions& o, std::optional<Config>& config,
                     std::optional<MigrationInput>& input, MigratorBackend& backend, std::string& chosen) {
  const Config& c = config.emplace(load_with_overrides(config_path, o));
  if (!c.migration)
    throw Error("config file '" + config_path +
                "' has no 'migration' section: seisrtm migrate needs "
                "migration.data (the HDF5 file of seisrtm run) and a model; see docs/guide/migrate.md");
  // Before the data are read or a shot migrated: the image must not take an input's place.
  io::check_output_set(c.output.directory, c.output.name, io::input_files(c));
  // A kernel the device cannot run is refused before the data are read (CudaMigrator refuses
  // it too); auto resolves to a kernel this device runs (cuda_options).
  const BackendChoice choice = choose_backend(c, c.physics.equation, true);
  chosen = choice.name;
  const bool cuda = choice.backend == SolverBackend::cuda;
  const GpuInfo& gpu = choice.gpu;
  const bool slabs = c.solver.decomposition == Decomposition::z;
  const CudaOptions co = gpu_options(c);
  // The plan, before the traces are read: refuse what does not fit with the numbers.
  auto check_memory = [&](const Problem& p, const DataShape& data) {
    if (cuda) {
      // A slab's share (solver.decomposition z; make_slab refuses slabs thinner than the halo).
      std::optional<Slab> slab;
      if (slabs) slab = make_slab(p.grid.n[2], slab_halo(p.radius), cluster::rank(), cluster::size());
      check_cuda_migration(p, co);
      const MigrationFootprint fp = migration_footprint(p, co, slab ? &*slab : nullptr);
      try {  // the host's share of this rank (the ranks of a node share it)
        check_migration_host_memory(p, fp, available_host_memory() / std::max(1, cluster::local_size()));
      } catch (const Error& e) {
        throw Error(data.describe() + ": " + e.what());
      }
      // The store on the device, in pinned host memory where it does not fit, or checkpoints;
      // refused here, before the traces are read, when nothing fits.
      ReconstructionChoice how;
      try {
        how = choose_reconstruction(p, p, co, slab ? &*slab : nullptr, fp, gpu.free_memory, gpu.total_memory);
      } catch (const Error& e) {  // the refusal, with the data it is about
        throw Error(data.describe() + ": " + e.what());
      }
      if (!o.quiet)
        std::fprintf(
            stderr,
            "seisrtm: migration plan: GPU%s, %s, %d volumes %.3f GiB, data %.3f GiB: %.3f GiB of %.3f GiB free\n",
            slab && slab->ranks > 1 ? " (rank 0's z slab)" : "", how.describe(fp).c_str(), fp.volume_count,
            fp.volumes / 1073741824.0, fp.data / 1073741824.0, how.device / 1073741824.0,
            gpu.free_memory / 1073741824.0);
    } else {
      const MigrationPlan plan = plan_migration(p, data, available_host_memory());
      if (!o.quiet) std::fprintf(stderr, "seisrtm: %s\n", plan.describe().c_str());
    }
  };
  input.emplace(prepare_migration(c, check_memory));
  const Problem& p = input->problem;
  if (cluster::rank() == 0)  // (warnings show with --quiet too)
    for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());
  backend = make_migrator(p, c, choice);
  if (cluster::rank() == 0)
    for (const auto& n : backend.notes) std::fprintf(stderr, "seisrtm: warning: %s\n", n.c_str());
}

// Each GPU slab's peak device memory and halo time, one line a rank, said by rank 0
// (collective: every rank calls it).
void print_slab_memory(const MigratorBackend& backend) {
  const auto mem = backend.device_memory();
  double halo = 0;
  for (const auto& [phase, sec] : backend.breakdown())
    if (phase.rfind("halo", 0) == 0) halo = sec;
  char line[256];
  std::snprintf(line, sizeof line, "seisrtm: %s: device memory at its peak %.3f GiB, halo exchanges %.3f s",
                backend.migrator->name().c_str(), mem.peak / 1073741824.0, halo);
  const auto lines = cluster::gather_strings(line);
  if (cluster::rank() == 0)
    for (const auto& l : lines) std::fprintf(stderr, "%s\n", l.c_str());
}

// Rank 0's closing lines: the files written, the device's memory and time by phase (a GPU
// migrator), the time.
void print_migration_summary(long long shots, const MigrationSummary& s, const MigratorBackend* gpu, bool quiet) {
  std::fprintf(stderr, "seisrtm: wrote %s", s.h5_path.c_str());
  if (!quiet) {
    std::fprintf(stderr, ", %s", s.xdmf_path.c_str());
    if (!s.segy_path.empty()) std::fprintf(stderr, ", %s", s.segy_path.c_str());
    for (const auto& pic : s.pictures) std::fprintf(stderr, ", %s", pic.c_str());
  }
  if (!quiet && gpu) {  // (a decomposed run's: rank 0's slab)
    const auto mem = gpu->device_memory();
    std::fprintf(stderr, "\nseisrtm: device memory at its peak %.3f GiB = %.2f volumes of %.3f GiB",
                 mem.peak / 1073741824.0, double(mem.peak) / mem.volume, mem.volume / 1073741824.0);
    std::fprintf(stderr, "\nseisrtm: GPU time by phase (CUDA events):");
    for (const auto& [phase, sec] : gpu->breakdown()) std::fprintf(stderr, " %s %.3f s;", phase.c_str(), sec);
  }
  std::fprintf(stderr,
               "\nseisrtm: migration %.2f s (%lld shot(s), forward and backward passes), depth slice at %.1f m\n",
               s.seconds, shots, s.depth_slice);
  if (!quiet)
    std::fprintf(stderr,
                 "seisrtm: %lld shot(s) migrated and stacked in %.2f s of wall time (%.3f shots/s) on %d rank(s)\n",
                 shots, s.wall_seconds, s.wall_seconds > 0 ? shots / s.wall_seconds : 0.0, cluster::size());
}

}  // namespace

int cmd_migrate(const std::string& config_path, const CommonOptions& given) {
  // Under mpirun only rank 0 talks (and writes); the others migrate the shots it hands out.
  CommonOptions o = given;
  if (cluster::rank() > 0) o.quiet = true;
  // The setup of every rank, then one verdict (cluster::agree), as for run.
  std::optional<Config> config;
  std::optional<MigrationInput> input;
  MigratorBackend backend;
  std::string chosen;
  cluster::setup_on_every_rank([&] { setup_migration(config_path, o, config, input, backend, chosen); });
  check_slab_placement(*config, chosen);
  Migrator* migrator = backend.migrator.get();
  const bool slabs = backend.slabs, gpu_migrator = backend.gpu;
  // The slabs' backward steps exchange their fields in the same order only if all take the
  // fused step or none does (solver.kernel auto resolves per GPU): agreed, said once.
  if (slabs && cluster::size() > 1) {
    const bool fused = gpu_migrator && backend.fused();
    const bool mixed = any_rank(fused) && any_rank(!fused);
    cluster::agree(mixed ? "solver.decomposition z: the ranks' backward steps differ (the fused step on some GPUs, "
                           "separate kernels on others; solver.kernel auto picks tma on Hopper GPUs only): set "
                           "solver.kernel and migration.fused explicitly"
                         : "");
  }
  // A decomposed GPU migration's NCCL communicator: collective, once every rank's setup succeeded.
  if (slabs && gpu_migrator) backend.connect();
  if (slabs) release_whole_model(input->problem);
  const Config& c = *config;
  const MigrationInput& in = *input;
  const Problem& p = in.problem;
  if (!o.quiet) {
    std::fprintf(stderr,
                 "seisrtm: %s: grid %lld x %lld x %lld, %lld steps of %.4g s (data: %lld samples of %.4g s), "
                 "%lld shot(s), %lld receivers, backend %s\n",
                 config_path.c_str(), p.grid.n[0], p.grid.n[1], p.grid.n[2], p.steps, p.dt, in.data_samples, in.data_dt,
                 p.shot_count(), p.receivers.size(), migrator->name().c_str());
    std::fprintf(stderr,
                 "seisrtm: data filter before back-propagation: %s; imaging every %lld steps (%s, f_max %.1f Hz)\n",
                 to_text(in.data_filter).c_str(), p.config.migration->image_interval,
                 c.migration->image_interval == 0 ? "auto" : "migration.image_interval", in.f_max);
    if (c.migration->mute.enabled)
      std::fprintf(stderr, "seisrtm: direct-arrival mute zeroed %lld of %lld samples\n", in.muted_samples,
                   in.live_samples);
  }
  RunOptions ro;
  ro.quiet = o.quiet;
  ro.producer = std::string("seisrtm ") + SEISRTM_VERSION;
  if (!o.shots.empty()) {  // a part of the survey (every rank parses the same list: one verdict)
    std::string error;
    try {
      ro.shots = parse_shot_list(o.shots, p.shot_count());
    } catch (const Error& e) {
      error = e.what();
    }
    cluster::agree(error);
    if (static_cast<long long>(ro.shots.size()) == p.shot_count()) ro.shots.clear();  // the whole survey
    if (!o.quiet && !ro.shots.empty())
      std::fprintf(stderr,
                   "seisrtm: a part of the survey: %zu of its %lld shots (--shots %s); its file keeps their "
                   "exact stack for seisrtm stack\n",
                   ro.shots.size(), p.shot_count(), o.shots.c_str());
  }
  const MigrationSummary s = migrate_survey(in, *migrator, ro);
  // Each GPU slab's peak device memory and halo time (collective: decided by the command line,
  // which every rank shares, not by o.quiet, which only rank 0 keeps).
  if (slabs && gpu_migrator && !given.quiet && cluster::size() > 1) print_slab_memory(backend);
  if (cluster::rank() > 0) return 0;  // rank 0 wrote the image
  print_migration_summary(ro.shots.empty() ? p.shot_count() : static_cast<long long>(ro.shots.size()), s,
                          backend.gpu ? &backend : nullptr, o.quiet);
  return 0;
}

}  // namespace seisrtm::app
