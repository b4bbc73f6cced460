// The whole program behind main (app/main.cpp): MPI start, the command line, the commands, and
// exceptions turned into messages and exit codes.
#include "app/entry.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "io/interrupt.hpp"
#include "solver/cluster.hpp"

namespace {

// Async-signal-safe: records the signal, which the time loops see (io::check_interrupt), and
// unlinks the output set's temporaries at once, in case the process is killed before that.
extern "C" void record_signal(int s) {
  seisrtm::io::interrupt_signal = s;
  seisrtm::io::remove_temporaries_now();
}

extern "C" void record_continue(int) {
  seisrtm::io::continued = 1;
}

// Installs `sa` for `signal` unless the caller set the signal to ignored: nohup ignores SIGHUP,
// a shell ignores SIGINT and SIGQUIT in the jobs a script starts with '&', and such a job must
// outlive the terminal or the Ctrl-C meant for the foreground as it would without the handler.
void install_unless_ignored(int signal, const struct sigaction& sa) {
  struct sigaction old {};
  if (sigaction(signal, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) return;
  sigaction(signal, &sa, nullptr);
}

// SIGINT, SIGTERM and SIGHUP (the terminal closed, the ssh connection dropped) stop run and
// migrate at the next check, cleanly; one ignored at startup stays ignored. SA_RESETHAND: a second
// signal ends the process at once. SA_RESTART: a write under way is not cut short (EINTR), so a
// signal can never look like a failed write.
void stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = record_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  install_unless_ignored(SIGINT, sa);
  install_unless_ignored(SIGTERM, sa);
  install_unless_ignored(SIGHUP, sa);
  // SIGPIPE: the reader of stderr is gone (mpirun ended after a SIGINT): the next progress line
  // killed rank 0 before it removed its temporaries. Stop at the next check instead, and keep
  // the handler: later writes just fail (as they do where the caller ignores SIGPIPE).
  sa.sa_flags = SA_RESTART;
  install_unless_ignored(SIGPIPE, sa);
  // Under mpirun, SIGCONT heralds the SIGTERM that ends the job (io::continued); its default
  // action, continuing a stopped process, is kept.
  if (seisrtm::cluster::size() > 1) {
    sa.sa_handler = record_continue;
    sigaction(SIGCONT, &sa, nullptr);
  }
}

// Usage errors exit with this code (README), whatever CLI11's own code for the kind of error.
constexpr int kUsageError = 2;

}  // namespace

int main_of_rank(int argc, char** argv);

int seisrtm::app::run_main(int argc, char** argv) {
  // One rank of one unless mpirun started this process (solver/cluster.hpp).
  try {
    seisrtm::cluster::init(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seisrtm: error: %s\n", e.what());
    return 1;
  }
  const int code = main_of_rank(argc, argv);
  // A failed rank of a job of several ends them all: rank 0 has removed the temporaries of the
  // output set on the way here, and no rank waits forever on one that has stopped.
  if (code != 0 && seisrtm::cluster::size() > 1 && !seisrtm::cluster::failure_agreed())
    seisrtm::cluster::abort_job(code);
  seisrtm::cluster::finalize();
  return code;
}

namespace {

using namespace seisrtm;

// The subcommands and what their options fill in: the options hold references into it.
struct Commands {
  app::CommonOptions opt;
  std::string config;
  double cpu_limit = 300;
  app::BenchOptions bo;
  TmaTuning tuning;  // bench's tuning flags
  app::PlotOptions po;
  CLI::App *run = nullptr, *migrate = nullptr, *validate = nullptr, *bench = nullptr, *plot = nullptr;
  CLI::App* stack = nullptr;
  std::vector<std::string> parts;  // stack's part files
};

// An empty --output (an unset shell variable) would silently write to the config's directory.
const auto named_directory = [](const std::string& v) {
  return v.empty() ? std::string("must name a directory, not ''") : "";
};

// The options run and migrate share, after their --set: --backend (solver.backend's values),
// --output, --device and --quiet.
void add_backend_options(CLI::App& sub, app::CommonOptions& opt) {
  sub.add_option("--backend", opt.backend, "auto | cpu | cuda (default: the config's solver.backend)")
      ->check(CLI::IsMember(enum_texts<SolverBackend>()));
  sub.add_option("--output", opt.output, "Output directory (default: the config's output.directory)")
      ->check(named_directory);
  sub.add_option("--device", opt.device, "CUDA device index (default: the config's solver.device, 0)")
      ->check(CLI::Range(0, 1023));
  sub.add_flag("--quiet,-q", opt.quiet, "Only the final summary line on stderr");
}

// --shots of run and migrate: a part of the survey.
void add_shots_option(CLI::App& sub, app::CommonOptions& opt, const std::string& what) {
  sub.add_option("--shots", opt.shots, what + ": indices and ranges A:B (A to B-1), A:, :B, comma-separated, 0-based")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("must name shots (indices and ranges A:B, 0-based), not ''") : "";
      });
}

CLI::App* add_run(CLI::App& cli, app::CommonOptions& opt, std::string& config) {
  auto* run = cli.add_subcommand("run", "Forward modelling of the survey a YAML config describes");
  run->add_option("config", config, "YAML config file")->required();
  run->add_option("--set", opt.overrides, "Override a config key, e.g. --set time.steps=200 (repeatable)");
  add_shots_option(*run, opt,
                   "Compute these shots only, a part of the survey (its file holds them, named and numbered as in "
                   "the whole survey)");
  add_backend_options(*run, opt);
  return run;
}

CLI::App* add_migrate(CLI::App& cli, app::CommonOptions& opt, std::string& config) {
  auto* migrate =
      cli.add_subcommand("migrate", "Reverse-time migration of recorded data (migration.data) into a depth image");
  migrate->add_option("config", config, "YAML migration config file")->required();
  migrate->add_option("--set", opt.overrides,
                      "Override a config key, e.g. --set migration.mode=snapshots (repeatable)");
  add_shots_option(*migrate, opt,
                   "Migrate these shots only, a part of the survey whose file keeps its exact stack for "
                   "'seisrtm stack'");
  add_backend_options(*migrate, opt);
  return migrate;
}

CLI::App* add_stack(CLI::App& cli, app::CommonOptions& opt, std::string& config, std::vector<std::string>& parts) {
  auto* stack = cli.add_subcommand(
      "stack", "Add parts of a survey (seisrtm migrate --shots) into one image, the same bits as one migration");
  stack->add_option("config", config, "The YAML migration config the parts were migrated with")->required();
  stack->add_option("parts", parts, "HDF5 files of migrate --shots (or of earlier stacks of parts)")->required();
  stack->add_option("--set", opt.overrides, "Override a config key, as for the parts (repeatable)")
      ->allow_extra_args(false);  // (the parts follow)
  stack->add_option("--output", opt.output, "Output directory (default: the config's output.directory)")
      ->check(named_directory);
  stack->add_flag("--quiet,-q", opt.quiet, "Only the final summary line on stderr");
  return stack;
}

CLI::App* add_validate(CLI::App& cli, app::CommonOptions& opt, std::string& config, double& cpu_limit) {
  auto* validate = cli.add_subcommand("validate", "Run the CUDA and CPU backends on a config and compare every output");
  validate->add_option("config", config, "YAML config file")->required();
  validate->add_option("--set", opt.overrides, "Override a config key (repeatable)");
  validate->add_option("--device", opt.device, "CUDA device index (default: the config's solver.device, 0)")
      ->check(CLI::Range(0, 1023));
  validate->add_option("--cpu-limit", cpu_limit, "Refuse problems whose CPU run would take longer (s)")
      ->capture_default_str()
      ->check([](const std::string& v) {
        // -1 once meant the default silently, and nan switched the guard off.
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        return std::isfinite(x) && x > 0 && end && *end == 0 ? std::string()
                                                             : "must be a number of seconds > 0, got '" + v + "'";
      });
  return validate;
}

CLI::App* add_bench(CLI::App& cli, app::BenchOptions& bo, TmaTuning& tuning) {
  auto* bench = cli.add_subcommand(
      "bench", "The compression versus z-blocking study: kernel variants x z_block x memory kind x step counts");
  bench->add_option("--config", bo.config, "Model and survey from this YAML file (default: a built-in cube)");
  bench->add_option("--set", bo.overrides, "Override a key of that config (repeatable)");
  bench->add_option("--size", bo.size, "Cells per axis of the cube (default 800; --quick 512)");
  bench->add_option("--space-order", bo.space_order, "2, 4, 8 or 16 (default 8)");
  bench->add_option("--damping-width", bo.damping_width, "Damping zone in cells (default 20)");
  bench->add_option("--equation", bo.equation, "acoustic, vti or tti (tma and naive variants; 36 and 44 B/cell)")
      ->capture_default_str();
  bench->add_option("--variants", bo.variants, "Comma-separated: naive,smem,tma (default tma; smem without TMA)");
  bench->add_option("--z-block", bo.z_blocks,
                    "Comma-separated planes per block, none = whole column "
                    "(default none,128,64,48,32; --quick none,128,64,32)");
  bench->add_option("--memory", bo.memories, "Comma-separated: plain,compressible (default both)");
  bench->add_option("--storage", bo.storages,
                    "Comma-separated solver.storage: fp32,fp16 (default fp32; fp16: naive and tma, half the "
                    "bytes a cell; --rtm: each against its own forward run)");
  bench->add_option("--steps", bo.steps,
                    "Comma-separated step counts, each a run from zero wavefields "
                    "(default 100,1000,2000,5000; --quick 100,500,1000)");
  bench->add_option("--repeat", bo.repeat,
                    "Timed runs per cell (default 3; --rtm: runs of the forward run and of each migration, default 1)");
  bench->add_flag("--quick", bo.quick, "A 512^3 study that finishes in about a minute");
  bench->add_option("--reconstruction", bo.reconstructions,
                    "--rtm: comma-separated migration.reconstruction values (auto, store, checkpoint), a row each "
                    "(default auto)");
  bench->add_option(
      "--store-precision", bo.store_precisions,
      "--rtm: comma-separated migration.store_precision values (fp32, bf16, fp16), a row each (default fp32)");
  bench
      ->add_option("--checkpoint-interval", bo.checkpoint_interval,
                   "--rtm: migration.checkpoint_interval of the checkpoint rows (default auto)")
      ->check(CLI::PositiveNumber);
  bench
      ->add_option("--coarse-checkpoint-interval", bo.coarse_checkpoint_interval,
                   "--rtm: migration.coarse_checkpoint_interval of the checkpoint rows: two levels of checkpoints "
                   "(default auto: two levels only where one level's do not fit the host)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--checkpoint-directory", bo.checkpoint_directory,
                    "--rtm: the checkpoint rows keep every checkpoint in files in this directory "
                    "(migration.checkpoint_location disk)");
  bench->add_option("--backward", bo.backwards,
                    "--rtm: comma-separated backward paths, fused and separate (default both; vti/tti: separate)");
  bench
      ->add_option("--gathers", bo.gathers,
                   "--rtm: each row again with image gathers: offsets -H..H cells along x at every 10th x and every y "
                   "cell (migration.gathers), copied to the host as a survey's shot")
      ->check(CLI::PositiveNumber);
  bench->add_flag("--isic", bo.isic, "--rtm: each row again with migration.imaging_condition isic");
  bench->add_flag("--longest", bo.longest,
                  "--rtm: the longest record each reconstruction plan admits on this GPU and host for the config's "
                  "grid (the migration's memory plan; nothing is run)");
  bench->add_flag("--rtm", bo.rtm,
                  "One RTM shot against one forward run (tma, z_block 32, --memory kinds, "
                  "fused and separate backward steps, --steps one count, default 1000)");
  bench->add_option("--csv", bo.csv, "Write every figure to this CSV file");
  bench->add_option("--json", bo.json, "Write every figure, the device and the configuration to this JSON file");
  bench->add_option("--plot", bo.plot, "Draw GCells/s against z_block to this PNG file");
  bench->add_option("--compare", bo.compare, "Compare two --json files instead of measuring")->expected(2);
  app::add_tuning_options(*bench, tuning);
  bench->footer(
      "Examples:\n  seisrtm bench --quick --json quick.json\n"
      "  seisrtm bench --json study.json --csv study.csv --plot study.png\n"
      "  seisrtm bench --variants naive,smem,tma --z-block none,32 --memory plain --steps 1000\n"
      "  seisrtm bench --compare quick1.json quick2.json\n"
      "  seisrtm bench --variants tma --z-block 32 --memory plain --steps 1000 --tma-shape rows4 --json rows4.json\n"
      "  seisrtm bench --rtm --size 800 --steps 1000 --memory plain,compressible");
  return bench;
}

CLI::App* add_plot(CLI::App& cli, app::PlotOptions& po) {
  auto* plot =
      cli.add_subcommand("plot", "Draw a picture of a result file: a gather, a wavefield, model or image slice");
  plot->add_option("file", po.file, "HDF5 result file of run or migrate")->required();
  plot->add_option("what", po.what,
                   "gather | wavefield | model | image | normalized | correlation | illumination | "
                   "offset_gathers | angle_gathers (omitted: list what the file holds)");
  plot->add_option("--shot", po.shot, "Shot index for gather and wavefield (default 0)");
  plot->add_option("--snapshot", po.snapshot, "Snapshot index for wavefield (default: the last)");
  plot->add_option("--slice", po.slice, "Plane of a volume: x (y-z), y (x-z, default) or z (depth slice)")
      ->check(CLI::IsMember({"x", "y", "z"}));
  plot->add_option("--at", po.at,
                   "Position of the slice in m (default: x and y through the source(s); z: a migration's depth_slice, "
                   "else mid-depth); gathers: the y of their row (default: the middle one)");
  plot->add_option("--clip", po.clip,
                   "Percentile P where the colour scale ends: +/- the Pth percentile of |value| for "
                   "signed data (default 99; wavefield 99.5); the (100 - P)th to Pth percentiles for "
                   "the model (default 100: min..max) and illumination (default 99)");
  plot->add_option("--cmap", po.cmap,
                   "seismic | grey | viridis (default: seismic for gathers and wavefields, grey "
                   "for images, viridis for the model and illumination)")
      ->check(CLI::IsMember({"seismic", "grey", "gray", "viridis"}));
  plot->add_option("--output", po.output, "PNG file to write (default: <file>_plot_<what>_....png beside the file)");
  plot->footer(
      "Examples:\n  seisrtm plot out/quickstart.h5\n"
      "  seisrtm plot out/quickstart.h5 gather --shot 0 --clip 98 --cmap grey\n"
      "  seisrtm plot out/quickstart.h5 wavefield --snapshot 1 --slice z --at 300\n"
      "  seisrtm plot out/rtm/migrate.h5 image --slice z --at 480 --output depth480.png\n"
      "  seisrtm plot out/rtm/migrate.h5 angle_gathers --at 345");
  return plot;
}

// A command line CLI11 refused: said by rank 0, with the valid subcommands for an unknown one.
int parse_failed(CLI::App& cli, const CLI::ParseError& e, int argc, char** argv) {
  if (cluster::size() > 1) {  // every rank parsed the same words: rank 0 says it, none aborts
    cluster::mark_agreed();
    if (cluster::rank() > 0) return e.get_exit_code() == 0 ? 0 : kUsageError;
  }
  // The first word that is not an option names the subcommand (the top level has no option
  // that takes a value): say so when it is not one, rather than "a subcommand is required".
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    bool known = false;
    std::string names;
    for (const auto* sub : cli.get_subcommands({})) {
      known = known || sub->get_name() == argv[i];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (known) break;
    std::fprintf(stderr, "seisrtm: error: unknown subcommand '%s'; valid subcommands: %s (seisrtm --help)\n", argv[i],
                 names.c_str());
    return kUsageError;
  }
  if (e.get_exit_code() == 0) return cli.exit(e);  // --help and --version
  std::fprintf(stderr, "seisrtm: error: %s (seisrtm --help)\n", e.what());
  return kUsageError;
}

// The parsed subcommand, run; its failure turned into a message and an exit code.
int run_command(CLI::App& cli, Commands& k, int argc, char** argv) {
  const app::CommonOptions& opt = k.opt;
  const std::string& config = k.config;
  app::BenchOptions& bo = k.bo;
  CLI::App *run = k.run, *migrate = k.migrate, *validate = k.validate, *bench = k.bench, *plot = k.plot;
  // HDF5's own error stack would print beside our one-line messages; every call is checked.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    if (cluster::size() > 1 && !run->parsed() && !migrate->parsed() && !cli.got_subcommand("info"))
      throw Error("this command runs as one process; under mpirun with " + std::to_string(cluster::size()) +
                  " ranks seisrtm runs 'run' and 'migrate' (shot-parallel) and 'info' (valid: mpirun -np N "
                  "seisrtm run|migrate CONFIG)");
    if (run->parsed() || migrate->parsed() || k.stack->parsed()) stop_on_signals();
    if (run->parsed()) return app::cmd_run(config, opt);
    if (migrate->parsed()) return app::cmd_migrate(config, opt);
    if (k.stack->parsed()) return app::cmd_stack(config, k.parts, opt);
    if (bench->parsed()) {
      for (int i = 0; i < argc; ++i) bo.command_line += (i ? " " : "") + std::string(i ? argv[i] : "seisrtm");
      return app::cmd_bench(bo, k.tuning);
    }
    if (validate->parsed()) return app::cmd_validate(config, opt, k.cpu_limit);
    if (plot->parsed()) return app::cmd_plot(k.po);
    return app::cmd_info();
  } catch (const io::Interrupted& e) {
    // Every temporary of the run was removed on the way here (RAII); nothing was committed.
    std::fprintf(stderr,
                 "%sseisrtm: interrupted by %s during %s of %s at %s; earlier results in %s are unchanged, "
                 "temporaries removed%s\n",
                 isatty(fileno(stderr)) ? "\n" : "",  // after the progress line a terminal shows
                 io::signal_name(e.signal()),
                 run->parsed()       ? "run"
                 : migrate->parsed() ? "migrate"
                                     : "stack",
                 config.c_str(), e.where().c_str(), e.directory().c_str(),
                 run->parsed() || migrate->parsed()
                     ? "; the same command again resumes after the shots in its journal (<name>.resume)"
                     : "");
    return 128 + e.signal();  // the shell's convention: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP
  } catch (const cluster::QuietExit& e) {
    return e.code;  // rank 0 says what failed
  } catch (const Error& e) {
    if (cluster::size() > 1 && std::string(e.what()).rfind("this command", 0) == 0) {
      cluster::mark_agreed();  // every rank refuses it alike: rank 0 says it once, none aborts
      if (cluster::rank() > 0) return 1;
    }
    std::fprintf(stderr, "seisrtm: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seisrtm: internal error: %s\n", e.what());
    return 3;
  }
}

}  // namespace

int main_of_rank(int argc, char** argv) {
  using namespace seisrtm;
  // Before any other HDF5 call. HDF5 (1.10) would close at exit a file whose H5Fclose failed
  // (a full disk) a second time and crash there; every file we open is closed by its owner,
  // and the temporary of a failed one is removed, so there is nothing left for it to do.
  H5dont_atexit();
  CLI::App cli{"seisrtm: 3D seismic modelling and reverse time migration on NVIDIA Hopper GPUs"};
  cli.footer(
      "Example:\n"
      "  seisrtm run configs/quickstart.yaml --set time.steps=200 --output out/\n"
      "  seisrtm migrate configs/rtm/migrate.yaml\n"
      "  seisrtm stack configs/rtm/migrate.yaml part1.h5 part2.h5\n"
      "  seisrtm validate configs/quickstart.yaml --set time.steps=100\n"
      "  seisrtm info");
  cli.require_subcommand(1);
  cli.set_version_flag("--version", std::string("seisrtm ") + SEISRTM_VERSION, "Print the version and exit");
  Commands k;
  k.run = add_run(cli, k.opt, k.config);
  k.migrate = add_migrate(cli, k.opt, k.config);
  k.stack = add_stack(cli, k.opt, k.config, k.parts);
  k.validate = add_validate(cli, k.opt, k.config, k.cpu_limit);
  k.bench = add_bench(cli, k.bo, k.tuning);
  cli.add_subcommand("info", "Print the build and the GPU (or say there is none)");
  k.plot = add_plot(cli, k.po);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failed(cli, e, argc, argv);
  }
  return run_command(cli, k, argc, argv);
}
