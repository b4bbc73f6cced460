#include <cstdio>

#include "app/commands.hpp"
#include "base/error.hpp"
#include "io/output_file.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/migration.hpp"
#include "solver/stack_parts.hpp"

namespace seisrtm::app {

int cmd_stack(const std::string& config_path, const std::vector<std::string>& parts, const CommonOptions& o) {
  const Config c = load_with_overrides(config_path, o);
  if (!c.migration)
    throw Error("config file '" + config_path +
                "' has no 'migration' section: seisrtm stack takes the migration config the parts were migrated "
                "with (docs/guide/migrate.md)");
  // The stack must not take the place of a part or an input.
  std::vector<io::InputFile> inputs = io::input_files(c);
  for (const std::string& part : parts) inputs.push_back({part, "a part"});
  io::check_output_set(c.output.directory, c.output.name, inputs);
  const MigrationInput in = prepare_migration(c);  // the data: their hash is part of what parts share
  // Before the sums are allocated: the exact stack (32 bytes a cell; the parts are added into it
  // a few planes at a time) and the four image volumes written from it (16).
  const double cells = double(in.problem.grid.cells()), need = (2.0 * 16 + 4 * 4) * cells;
  const AvailableMemory avail = available_host_memory_detail();
  if (avail.bytes > 0 && need > kHostMemoryMargin * avail.bytes) {
    char t[512];
    std::snprintf(t, sizeof t,
                  "seisrtm stack needs %.2f GiB of host memory for the sums of %.0f cells (48 bytes a cell: the "
                  "exact stack and the image volumes) but %.2f GiB are available (%s; %.0f%% of it may be planned): "
                  "run it on a host with more memory",
                  need / 1073741824.0, cells, avail.bytes / 1073741824.0, avail.source.c_str(),
                  100 * kHostMemoryMargin);
    throw Error(t);
  }
  io::OutputSet set(c.output.directory, c.output.name);
  std::vector<long long> shots;
  std::string migrator;
  const ExactStack stack = sum_parts(in, parts, shots, migrator);
  MigrationSummary sum;
  write_migration(set, in, stack, shots, std::string("seisrtm ") + SEISRTM_VERSION, migrator, sum);
  const long long n = in.problem.shot_count(), got = static_cast<long long>(shots.size());
  std::fprintf(stderr, "seisrtm: wrote %s: %zu part(s), %lld of the survey's %lld shots%s\n", sum.h5_path.c_str(),
               parts.size(), got, n, got < n ? " (itself a part: seisrtm stack adds it to the others)" : "");
  return 0;
}

}  // namespace seisrtm::app
