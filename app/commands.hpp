#pragma once
// One function per subcommand; main wires them to CLI11 and turns exceptions into exit codes.
#include <memory>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/propagator.hpp"

namespace seisrtm::app {

struct CommonOptions {
  std::vector<std::string> overrides;  // --set key.path=value
  std::string backend;                 // --backend (empty: the config's solver.backend)
  std::string output;                  // --output (empty: the config's output.directory)
  bool quiet = false;
};

// Loads the config with every command-line override applied.
Config load_with_overrides(const std::string& path, const CommonOptions& o);
// The propagator for a backend name (auto | cpu | cuda); `chosen` receives the resolved name.
std::unique_ptr<Propagator> make_propagator(const Problem& p, const std::string& backend,
                                            std::string* chosen);

struct BenchOptions {
  long long size = 800;  // cells per axis
  int space_order = 8;
  int damping_width = 20;
  std::string variants = "naive,smem,tma";
  std::string z_blocks = "0";
  std::string memories = "plain";
  std::string steps = "1000";
  std::string csv;
};
int cmd_bench(const BenchOptions& b);

int cmd_run(const std::string& config_path, const CommonOptions& o);
int cmd_info();
// cpu_limit_s: refuse sizes whose CPU reference run would take longer (0 = 300 s).
int cmd_validate(const std::string& config_path, const CommonOptions& o, double cpu_limit_s);

}  // namespace seisrtm::app
