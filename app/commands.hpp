#pragma once
// One function per subcommand; main wires them to CLI11 and turns exceptions into exit codes.
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/device_info.hpp"
#include "solver/propagator.hpp"

namespace seisrtm::app {

struct CommonOptions {
  std::vector<std::string> overrides;  // --set key.path=value
  std::string backend;                 // --backend (empty: the config's solver.backend)
  std::string output;                  // --output (empty: the config's output.directory)
  bool quiet = false;
  int device = -1;    // --device (-1: the config's solver.device)
  std::string shots;  // run and migrate --shots: a part of the survey (empty: every shot)
};

// Loads the config with every command-line override applied.
Config load_with_overrides(const std::string& path, const CommonOptions& o);
// solver.backend resolved (auto: cuda where solver.device is usable, else cpu; a device other
// than 0 that is not there is an error, not a silent CPU run); `g` receives that device's info.
SolverBackend resolve_backend(const Config& c, GpuInfo* g);
// OpenMP threads: solver.threads, or the node's cores shared among its ranks under mpirun
// (unless OMP_NUM_THREADS says otherwise).
void set_cpu_threads(const Config& c);
// Collective under mpirun with solver.decomposition z: the slabs run on one backend (`chosen`,
// this rank's), each on a GPU of its own; the ranks' collective calls differ otherwise (a
// hang), or two slabs share a GPU. Said once by rank 0 (cluster::agree), every rank exits.
void check_slab_placement(const Config& c, const std::string& chosen);
// A decomposed run's ranks other than 0 keep their slab's model only (rank 0 writes the whole).
void release_whole_model(Problem& p);

struct BenchOptions {
  std::string config;                  // optional: model and survey from this YAML file
  std::vector<std::string> overrides;  // --set, for that config
  long long size = 0;                  // cells per axis of the built-in cube (0: 800, --quick 512)
  int space_order = 0;                 // 0: 8, or the config's
  int damping_width = -1;              // cells; -1: 20, or the config's
  std::string equation = "acoustic";
  std::string variants, z_blocks, memories, steps;  // comma-separated axes; empty: the defaults
  std::string storages;                             // comma-separated: fp32,fp16; empty: fp32
  int repeat = 0;                                   // timed runs per cell (0: 3)
  bool quick = false;                               // a smaller study that finishes in about a minute
  std::string csv, json, plot;                      // output files
  std::vector<std::string> compare;                 // two JSON files from earlier runs: compare, measure nothing
  std::string command_line;                         // as typed, printed beside the results
  bool rtm = false;                                 // one RTM shot against one forward run instead of the study
  // --rtm: comma-separated migration.reconstruction and migration.store_precision values, a row
  // (fused and separate) for each pair; empty: auto and fp32.
  std::string reconstructions, store_precisions;
  // --rtm: migration.checkpoint_interval and coarse_checkpoint_interval of the checkpoint rows
  // (0: auto).
  long long checkpoint_interval = 0, coarse_checkpoint_interval = 0;
  std::string backwards;             // --rtm: comma-separated fused,separate (empty: both)
  std::string checkpoint_directory;  // --rtm: the checkpoint rows keep their checkpoints in files there
  bool longest = false;              // --rtm --longest: the longest record each plan admits here, measuring nothing
  // --rtm --gathers H: each row again with offset gathers of -H..H cells at every 10th x and every
  // y cell (migration.gathers), copied back to the host as migrate does a shot.
  long long gathers = 0;
  // --rtm --isic: each row again with migration.imaging_condition isic.
  bool isic = false;
};
// cmd_bench and bench_rtm take the tuning flags beside these options: app/tuning.hpp.

// seisrtm plot FILE.h5 [what]: one picture of a result file (what: gather, wavefield, model,
// image, normalized, correlation, illumination; empty: list what the file holds).
struct PlotOptions {
  std::string file, what;
  long long shot = 0;
  std::optional<long long> snapshot;  // none: the last
  std::string slice;                  // x | y | z; empty: y (an x-z section)
  // m, the slice's position; none: through the (mean) source, or depth_slice. Optional rather
  // than a NaN marker, so that a `--at nan` given on the command line can be refused.
  std::optional<double> at;
  std::optional<double> clip;  // percentile of |value| (sequential maps: of value); none: the item's default
  std::string cmap;            // seismic | grey | viridis; empty: the item's default
  std::string output;          // empty: <file stem>_plot_<what>_....png beside the file
};
int cmd_plot(const PlotOptions& o);

int cmd_run(const std::string& config_path, const CommonOptions& o);
int cmd_migrate(const std::string& config_path, const CommonOptions& o);
// Adds parts of a survey (migrate --shots) into the image of their shots, written as migrate
// writes its own (cmd_stack.cpp).
int cmd_stack(const std::string& config_path, const std::vector<std::string>& parts, const CommonOptions& o);
int cmd_info();
// cpu_limit_s: refuse sizes whose CPU reference run would take longer (0 = 300 s).
int cmd_validate(const std::string& config_path, const CommonOptions& o, double cpu_limit_s);

}  // namespace seisrtm::app
