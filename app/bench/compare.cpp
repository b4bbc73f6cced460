// seisrtm bench --compare a.json b.json: the cells the two runs share, side by side; two runs
// agree on a cell where their medians differ by no more than the larger max - min of the two; a
// cell outside that is shown with the SM clocks both runs had, where the files hold them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "app/bench/bench.hpp"
#include "base/error.hpp"

namespace seisrtm::app::bench {

int compare(const std::vector<std::string>& files) {
  if (files.size() != 2) throw Error("bench --compare takes two JSON files written by bench --json");
  const std::vector<JsonCell> first = read_cells(files[0]);
  std::map<std::string, JsonCell> second;
  for (const auto& c : read_cells(files[1])) second[c.key] = c;
  std::printf("%-40s %10s %10s %8s %10s\n", "cell", "run 1", "run 2", "diff", "spread");
  int matched = 0, disagree = 0;
  for (const auto& c : first) {
    const auto it = second.find(c.key);
    if (it == second.end()) continue;
    ++matched;
    const double a = c.median, b = it->second.median;
    const double allowed = std::max(c.max - c.min, it->second.max - it->second.min);
    const bool ok = std::abs(a - b) <= allowed;
    disagree += !ok;
    std::printf("%-40s %10.1f %10.1f %7.2f%% %9.2f%% %s\n", c.key.c_str(), a, b, 100 * std::abs(a - b) / a,
                100 * allowed / a, ok ? "ok" : "OUTSIDE");
    // A difference beside the clocks it ran at (where both files have them): a card held by its
    // power limit runs slower with the same code.
    if (!ok && c.sm_mhz > 0 && it->second.sm_mhz > 0)
      std::printf("  SM clocks: run 1 %.0f MHz (held by power %.0f%% of the time), run 2 %.0f MHz (%.0f%%)\n", c.sm_mhz,
                  100 * c.held_by_power, it->second.sm_mhz, 100 * it->second.held_by_power);
    // Two kernels under one cell name (another launch shape, device or build): said, so that a
    // difference is read as one between kernels.
    if (!c.kernel.empty() && !it->second.kernel.empty() && c.kernel != it->second.kernel)
      std::printf("  kernels differ: run 1 '%s', run 2 '%s'\n", c.kernel.c_str(), it->second.kernel.c_str());
  }
  if (matched == 0) throw Error("bench --compare: the two files share no cell (variant, z_block, memory, steps)");
  std::printf(
      "%d cells compared: %s (criterion: the medians differ by no more than the larger max - min "
      "spread of the two runs)\n",
      matched, disagree ? (std::to_string(disagree) + " outside the spread").c_str() : "all agree");
  return disagree ? 1 : 0;
}

}  // namespace seisrtm::app::bench
