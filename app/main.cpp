// seisrtm: 3D acoustic modelling and RTM on Hopper GPUs, with a CPU reference backend.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "app/commands.hpp"
#include "solver/error.hpp"

int main(int argc, char** argv) {
  using namespace seisrtm;
  CLI::App cli{"seisrtm: 3D seismic modelling and reverse time migration on NVIDIA Hopper GPUs"};
  cli.footer(
      "Example:\n"
      "  seisrtm run configs/quickstart.yaml --set time.steps=200 --output out/\n"
      "  seisrtm migrate configs/rtm/migrate.yaml\n"
      "  seisrtm validate configs/quickstart.yaml --set time.steps=100\n"
      "  seisrtm info");
  cli.require_subcommand(1);
  app::CommonOptions opt;
  std::string config;

  auto* run = cli.add_subcommand("run", "Forward modelling of the survey a YAML config describes");
  run->add_option("config", config, "YAML config file")->required();
  run->add_option("--set", opt.overrides, "Override a config key, e.g. --set time.steps=200 (repeatable)");
  run->add_option("--backend", opt.backend, "auto | cpu | cuda (default: the config's solver.backend)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  run->add_option("--output", opt.output, "Output directory (default: the config's output.directory)");
  run->add_flag("--quiet,-q", opt.quiet, "Only the final summary line on stderr");
  auto* migrate = cli.add_subcommand("migrate", "Reverse-time migration of recorded data (migration.data) into a depth image");
  migrate->add_option("config", config, "YAML migration config file")->required();
  migrate->add_option("--set", opt.overrides, "Override a config key, e.g. --set migration.mode=snapshots (repeatable)");
  migrate->add_option("--backend", opt.backend, "auto | cpu | cuda (default: the config's solver.backend)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  migrate->add_option("--output", opt.output, "Output directory (default: the config's output.directory)");
  migrate->add_flag("--quiet,-q", opt.quiet, "Only the final summary line on stderr");
  auto* validate = cli.add_subcommand("validate", "Run the CUDA and CPU backends on a config and compare every output");
  double cpu_limit = 300;
  validate->add_option("config", config, "YAML config file")->required();
  validate->add_option("--set", opt.overrides, "Override a config key (repeatable)");
  validate->add_option("--cpu-limit", cpu_limit, "Refuse problems whose CPU run would take longer (s)")->capture_default_str();
  auto* bench = cli.add_subcommand(
      "bench", "The compression versus z-blocking study: kernel variants x z_block x memory kind x step counts");
  app::BenchOptions bo;
  bench->add_option("--config", bo.config, "Model and survey from this YAML file (default: a built-in cube)");
  bench->add_option("--set", bo.overrides, "Override a key of that config (repeatable)");
  bench->add_option("--size", bo.size, "Cells per axis of the cube (default 800; --quick 512)");
  bench->add_option("--space-order", bo.space_order, "2, 4, 8 or 16 (default 8)");
  bench->add_option("--damping-width", bo.damping_width, "Damping zone in cells (default 20)");
  bench->add_option("--equation", bo.equation, "acoustic (TTI when it exists)")->capture_default_str();
  bench->add_option("--variants", bo.variants, "Comma-separated: naive,smem,tma (default tma; smem without TMA)");
  bench->add_option("--z-block", bo.z_blocks, "Comma-separated planes per block, none = whole column "
                                              "(default none,128,64,48,32; --quick none,128,64,32)");
  bench->add_option("--memory", bo.memories, "Comma-separated: plain,compressible (default both)");
  bench->add_option("--steps", bo.steps, "Comma-separated step counts, each a run from zero wavefields "
                                         "(default 100,1000,2000,5000; --quick 100,500,1000)");
  bench->add_option("--repeat", bo.repeat, "Timed runs per cell (default 3)");
  bench->add_flag("--quick", bo.quick, "A 512^3 study that finishes in about a minute");
  bench->add_flag("--rtm", bo.rtm, "One RTM shot against one forward run (tma, z_block 32, --memory kinds, "
                                   "fused and separate backward steps, --steps one count, default 1000)");
  bench->add_option("--csv", bo.csv, "Write every figure to this CSV file");
  bench->add_option("--json", bo.json, "Write every figure, the device and the configuration to this JSON file");
  bench->add_option("--plot", bo.plot, "Draw GCells/s against z_block to this PNG file");
  bench->add_option("--compare", bo.compare, "Compare two --json files instead of measuring")->expected(2);
  bench->footer("Examples:\n  seisrtm bench --quick --json quick.json\n"
                "  seisrtm bench --json study.json --csv study.csv --plot study.png\n"
                "  seisrtm bench --variants naive,smem,tma --z-block none,32 --memory plain --steps 1000\n"
                "  seisrtm bench --compare quick1.json quick2.json\n"
                "  seisrtm bench --rtm --size 800 --steps 1000 --memory plain,compressible");
  cli.add_subcommand("info", "Print the build and the GPU (or say there is none)");

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);
  }
  try {
    if (run->parsed()) return app::cmd_run(config, opt);
    if (migrate->parsed()) return app::cmd_migrate(config, opt);
    if (bench->parsed()) {
      for (int i = 0; i < argc; ++i) bo.command_line += (i ? " " : "") + std::string(i ? argv[i] : "seisrtm");
      return app::cmd_bench(bo);
    }
    if (validate->parsed()) return app::cmd_validate(config, opt, cpu_limit);
    return app::cmd_info();
  } catch (const Error& e) {
    std::fprintf(stderr, "seisrtm: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seisrtm: internal error: %s\n", e.what());
    return 3;
  }
}
