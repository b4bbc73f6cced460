#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "app/backend.hpp"
#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "io/output_file.hpp"
#include "solver/cluster.hpp"
#include "solver/stack_parts.hpp"
#include "solver/survey.hpp"

namespace seisrtm::app {

Config load_with_overrides(const std::string& path, const CommonOptions& o) {
  std::vector<std::string> sets = o.overrides;
  if (!o.backend.empty()) sets.push_back("solver.backend=" + o.backend);
  if (o.device >= 0) sets.push_back("solver.device=" + std::to_string(o.device));
  Config c = load_config(path, sets);
  // Set on the loaded config, not pasted into YAML: a path is taken as it is, quotes and
  // backslashes included; whether it is usable is checked where the output is created.
  if (!o.output.empty()) c.output.directory = o.output;
  // Several ranks on a node: each takes its own GPU, counted from the configured one.
  if (cluster::size() > 1) c.solver.device = cluster::gpu_for_rank(c.solver.device, gpu_count());
  return c;
}

SolverBackend resolve_backend(const Config& c, GpuInfo* g) {
  *g = query_gpu(c.solver.device);
  if (c.solver.backend != SolverBackend::automatic) return c.solver.backend;
  if (!g->present && c.solver.device != 0)
    throw Error("config key 'solver.device' = " + std::to_string(c.solver.device) + ": " + g->reason);
  return g->present ? SolverBackend::cuda : SolverBackend::cpu;
}

void set_cpu_threads(const Config& c) {
  if (c.solver.threads > 0)
    omp_set_num_threads(c.solver.threads);
  else if (cluster::local_size() > 1 && !std::getenv("OMP_NUM_THREADS"))
    // Several ranks on one node share its cores (all of them each: the CPU backend's ranks slowed
    // down tenfold on 2 cores, waiting for each other's halos).
    omp_set_num_threads(std::max(1, omp_get_num_procs() / cluster::local_size()));
}

void check_slab_placement(const Config& c, const std::string& chosen) {
  if (c.solver.decomposition != Decomposition::z || cluster::size() == 1) return;
  const std::string mine = chosen + " " + cluster::host() + " " + std::to_string(c.solver.device);
  const std::vector<std::string> all = cluster::gather_strings(mine);
  std::string error;
  for (size_t r = 1; r < all.size() && error.empty(); ++r) {
    const bool same_backend = all[r].substr(0, all[r].find(' ')) == all[0].substr(0, all[0].find(' '));
    if (!same_backend)
      error = "solver.decomposition z: rank 0 runs on " + all[0].substr(0, all[0].find(' ')) + " but rank " +
              std::to_string(r) + " on " + all[r].substr(0, all[r].find(' ')) +
              " (every slab needs the same backend: set solver.backend: cuda or cpu)";
    for (size_t q = 0; q < r && error.empty() && chosen == "cuda"; ++q)
      if (all[q] == all[r])
        error = "solver.decomposition z: ranks " + std::to_string(q) + " and " + std::to_string(r) +
                " would share a GPU (" + all[r].substr(all[r].find(' ') + 1) +
                "); run at most one rank per GPU (valid: mpirun -np N with N <= GPUs per node)";
  }
  cluster::agree(error);
}

void release_whole_model(Problem& p) {
  if (p.config.solver.decomposition != Decomposition::z || cluster::rank() == 0) return;
  for (auto* v : {&p.vp, &p.epsilon, &p.delta, &p.theta, &p.phi}) std::vector<float>().swap(*v);
}

namespace {

// Each slab's last shot: stepping and the exchange beside it, one line a rank, said by rank 0
// (collective: every rank calls it).
void print_slab_seconds(const PropagatorBackend& backend, const Propagator& prop, const Problem& p) {
  const bool talk = cluster::rank() == 0;
  char line[256];
  const auto [t, h] = backend.slab_seconds();
  std::snprintf(line, sizeof line,
                "seisrtm: %s: last shot: stepping %.3f s (%.1f us a step), halo exchange %.3f s (%.1f us a step, "
                "beside the interior)",
                prop.name().c_str(), t, 1e6 * t / p.steps, h, 1e6 * h / p.steps);
  const auto lines = cluster::gather_strings(line);
  if (talk)
    for (const auto& l : lines) std::fprintf(stderr, "%s\n", l.c_str());
}

// Rank 0's closing lines: how the shots were shared, the time, the files written.
void print_run_summary(const Problem& p, const RunSummary& s, const Propagator& prop, bool quiet) {
  if (cluster::size() > 1 && p.config.solver.decomposition == Decomposition::z)
    std::fprintf(stderr, "seisrtm: %d ranks: every shot over %d z slabs\n", cluster::size(), cluster::size());
  else if (cluster::size() > 1)
    std::fprintf(stderr, "seisrtm: %d ranks: %lld of %lld shot(s) computed by ranks 1..%d\n", cluster::size(),
                 s.shots_by_other_ranks, s.shots, cluster::size() - 1);
  if (!quiet)
    std::fprintf(stderr, "seisrtm: %lld shot(s) computed in %.2f s of wall time (%.3f shots/s), writing included\n",
                 s.shots, s.wall_seconds, s.wall_seconds > 0 ? s.shots / s.wall_seconds : 0.0);
  if (quiet) {
    // --quiet drops the progress and the list of files but keeps this one line: where the
    // result is and how fast the stepping ran.
    std::fprintf(stderr, "seisrtm: wrote %s: time stepping %.2f s, %.3f GCells/s\n", s.h5_path.c_str(), s.seconds,
                 s.gcells_per_second);
  } else {
    std::fprintf(stderr, "seisrtm: wrote %s", s.h5_path.c_str());
    if (!s.xdmf_path.empty()) std::fprintf(stderr, ", %s", s.xdmf_path.c_str());
    for (const auto& pic : s.pictures) std::fprintf(stderr, ", %s", pic.c_str());
    std::fprintf(stderr, "\nseisrtm: time stepping %.2f s, %.3f GCells/s\n", s.seconds, s.gcells_per_second);
    const auto mem = prop.device_memory();
    if (mem.volume > 0)
      std::fprintf(stderr, "seisrtm: device memory at its peak %.3f GiB = %.2f volumes of %.3f GiB\n",
                   mem.peak / 1073741824.0, double(mem.peak) / mem.volume, mem.volume / 1073741824.0);
  }
}

}  // namespace

int cmd_run(const std::string& config_path, const CommonOptions& given) {
  // Under mpirun only rank 0 talks (and writes); the others compute the shots it hands out.
  CommonOptions o = given;
  if (cluster::rank() > 0) o.quiet = true;
  // The setup of every rank, then one verdict (cluster::agree): a bad config is said once, by
  // rank 0, and a rank whose own setup fails (its GPU) is named.
  std::optional<Config> config;
  std::optional<Problem> problem;
  PropagatorBackend backend;
  std::string chosen;
  std::vector<long long> shots;
  cluster::setup_on_every_rank([&] {
    config.emplace(load_with_overrides(config_path, o));
    if (config->migration)
      throw Error("config file '" + config_path +
                  "' has a 'migration' section: it is a migration config; run it "
                  "with seisrtm migrate (seisrtm run models the sources and receivers a config lists)");
    // Before the model is read or a shot stepped: the results must not take an input's place.
    io::check_output_set(config->output.directory, config->output.name, io::input_files(*config));
    problem.emplace(build_problem(*config));
    if (!o.shots.empty()) {  // a part of the survey (every rank parses the same list: one verdict)
      shots = parse_shot_list(o.shots, problem->shot_count());
      if (static_cast<long long>(shots.size()) == problem->shot_count()) shots.clear();  // the whole survey
    }
    const BackendChoice choice = choose_backend(problem->config, problem->equation, false);
    chosen = choice.name;
    backend = make_propagator(*problem, choice);
  });
  check_slab_placement(*config, chosen);
  Propagator* prop = backend.propagator.get();
  // A decomposed GPU run's NCCL communicator: collective, once every rank's setup succeeded.
  if (backend.connect) backend.connect();
  // The model of the whole grid is rank 0's to write; the others keep their slab's only.
  if (backend.slabs) release_whole_model(*problem);
  const Problem& p = *problem;
  const bool talk = cluster::rank() == 0;
  if (talk)
    for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());
  if (talk)
    for (const auto& n : prop->notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", n.c_str());
  if (!o.quiet)
    std::fprintf(stderr,
                 "seisrtm: %s: grid %lld x %lld x %lld, %lld steps of %.4g s (stable up to %.4g s), "
                 "%lld shot(s), %lld receivers%s, backend %s\n",
                 config_path.c_str(), p.grid.n[0], p.grid.n[1], p.grid.n[2], p.steps, p.dt, p.dt_max, p.shot_count(),
                 p.max_receivers(), p.varying_spread() ? " in the largest of a spread a shot" : "",
                 prop->name().c_str());
  if (!o.quiet && !shots.empty())
    std::fprintf(stderr, "seisrtm: a part of the survey: %zu of its %lld shots (--shots %s)\n", shots.size(),
                 p.shot_count(), o.shots.c_str());
  RunOptions ro;
  ro.quiet = o.quiet;
  ro.producer = std::string("seisrtm ") + SEISRTM_VERSION;
  ro.shots = shots;
  const RunSummary s = run_survey(p, *prop, ro);
  // Each slab's last shot: stepping and the exchange beside it (collective: decided by the
  // command line, which every rank shares, not by o.quiet, which only rank 0 keeps).
  if (backend.slab_seconds && !given.quiet) print_slab_seconds(backend, *prop, p);
  if (!talk) return 0;
  print_run_summary(p, s, *prop, o.quiet);
  return 0;
}

}  // namespace seisrtm::app
