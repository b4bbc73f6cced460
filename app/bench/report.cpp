// seisrtm bench, the console: the run's header and, after the study, the talk-style table per
// variant (GTC 2024 talk S62192: rows memory x steps, columns z_block), each cell the median
// GCells/s and its spread (max - min) / median, the compressible/plain ratios and the best cell.
#include <algorithm>
#include <cstdio>

#include "app/bench/bench.hpp"
#include "app/tuning.hpp"

namespace seisrtm::app::bench {

void print_talk_table();

const Cell* find_cell(const std::vector<Cell>& cells, const std::string& v, const std::string& m, int z, long long s,
                      const std::string& storage) {
  for (const auto& c : cells)
    if (c.variant == v && c.memory == m && c.z_block == (v == "naive" ? 0 : z) && c.steps == s && c.storage == storage)
      return &c;
  return nullptr;
}

void print_header(const Setup& s, const std::string& date) {
  const BenchOptions& b = s.options;
  const GpuInfo& g = s.gpu;
  const Problem& p = s.problem;
  std::printf("seisrtm bench %s\n", SEISRTM_VERSION);
  std::printf("command: %s\n", b.command_line.c_str());
  // The tuning flags on a line of their own, so the two logs of an A/B say what each ran.
  std::printf("tuning: %s\n", tuning_text(s.tuning).c_str());
  std::printf(
      "device: %s (cc %d.%d, %d SMs, %.0f MiB L2, %.1f GiB), driver %s (CUDA %d.%d), runtime "
      "%d.%d, %s\n",
      g.name.c_str(), g.cc_major, g.cc_minor, g.multiprocessors, g.l2_bytes / 1048576.0, g.total_memory / 1073741824.0,
      driver_release().c_str(), g.driver_version / 1000, g.driver_version % 1000 / 10, g.runtime_version / 1000,
      g.runtime_version % 1000 / 10, date.c_str());
  std::printf(
      "problem: %lld x %lld x %lld cells, %s order %d, damping %lld cells, dt %.4g s, %s; %.0f "
      "B/cell/step "
      "(%s)\n",
      p.grid.n[0], p.grid.n[1], p.grid.n[2], to_text(s.config.physics.equation).c_str(), s.config.physics.space_order,
      static_cast<long long>(s.config.boundary.damping_width), p.dt,
      b.config.empty()
          ? (p.equation == Equation::acoustic ? "vp 1500 m/s + 0.25/s z, source at the centre"
                                              : "vp 1500 m/s + 0.25/s z, anisotropy graded with depth, source at "
                                                "the centre")
          : b.config.c_str(),
      bytes_per_cell(s.problem),
      p.equation == Equation::acoustic ? "read p, p_prev, m; write p_next"
      : p.equation == Equation::vti    ? "read p, p_prev, q, q_prev, m, a, b; write p_next, q_next"
                                       : "read p, p_prev, q, q_prev, m, a, b, theta, phi; write p_next, q_next");
}

void print_tables(const Setup& s, const Results& r) {
  const Axes& a = s.axes;
  const std::vector<Cell>& cells = r.cells;
  std::printf(
      "\nGCells/s, median of %d runs (+- spread: (max - min) / median); roofline %.1f GCells/s; SM clock: the "
      "mean over the runs and the share of the time the power limit held it\n",
      a.repeat, r.roof);
  if (a.storages.size() > 1 || a.storages[0] != "fp32")
    for (const auto& st : a.storages)
      std::printf("roofline in %s storage (%.0f B/cell): %.1f GCells/s\n", st.c_str(), bytes_per_cell(s.problem, st),
                  r.roof_for(s.problem, st));
  for (const auto& v : a.variants)
    for (const auto& sto : a.storages) {
      const std::vector<int> zs = v == "naive" ? std::vector<int>{0} : a.z_blocks;
      std::printf("\n%-6s %-13s %6s", series_name(v, sto).c_str(), "memory", "steps");
      for (int z : zs) std::printf(" %16s", ("z_block " + z_name(z)).c_str());
      std::printf("\n");
      for (const auto& m : a.memories)
        for (long long st : a.steps) {
          std::printf("%-6s %-13s %6lld", "", m.c_str(), st);
          for (int z : zs)
            if (const Cell* c = find_cell(cells, v, m, z, st, sto))
              std::printf("   %6.1f +-%4.1f%%", c->median, 100 * c->spread());
          std::printf("\n");
          // The SM clock the runs ran at and the share of their samples held by the power limit.
          if (const Cell* c = find_cell(cells, v, m, zs.front(), st, sto); c && c->clocks.samples > 0) {
            std::printf("%-6s %-13s %6s", "", "  SM clock", "");
            for (int z : zs)
              if (const Cell* k = find_cell(cells, v, m, z, st, sto))
                std::printf("   %4.0f MHz %4.0f%%", k->clocks.mean_sm_mhz, 100 * k->clocks.power_held);
            std::printf("\n");
          }
        }
      if (a.memories.size() == 2)
        for (long long st : a.steps) {
          std::printf("%-6s %-13s %6lld", "", "compr./plain", st);
          for (int z : zs) {
            const Cell *pl = find_cell(cells, v, "plain", z, st, sto),
                       *co = find_cell(cells, v, "compressible", z, st, sto);
            if (pl && co) std::printf(" %15.2fx", co->median / pl->median);
          }
          std::printf("\n");
        }
    }
  // The kernels measured, launch shapes included (the policy's or --tma-shape's).
  std::vector<std::string> kernels;
  for (const auto& c : cells)
    if (std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) kernels.push_back(c.kernel);
  std::printf("\nkernels:\n");
  for (const auto& k : kernels) std::printf("  %s\n", k.c_str());
  const Cell* best = &cells.front();
  for (const auto& c : cells)
    if (c.median > best->median) best = &c;
  std::printf(
      "\nbest: %s z_block %s %s memory, %lld steps: %.1f GCells/s, %.0f GB/s effective, %.1f%% of "
      "the roofline\n",
      series_name(best->variant, best->storage).c_str(), z_name(best->z_block).c_str(), best->memory.c_str(),
      best->steps, best->median, best->median * bytes_per_cell(s.problem, best->storage),
      100 * best->median / r.roof_for(s.problem, best->storage));
  if (s.problem.equation == Equation::tti) print_talk_table();
  std::printf("reproduce: %s\n", s.options.command_line.c_str());
}

// The talk's own table (GTC 2024 S62192: an L40S, 8th-order TTI in one pass over 9 volumes at
// 800^3, 32 x 16 blocks), in GCells/s, for comparison with the tma table above.
void print_talk_table() {
  std::printf(
      "\nfor comparison, the talk's table (L40S, 8th-order TTI, single pass, 800^3), GCells/s:\n"
      "       %-13s %6s %16s %16s %16s %16s %16s\n"
      "       %-13s %6s %16.1f %16.1f %16.1f %16.1f %16.1f\n"
      "       %-13s %6s %16.1f %16.1f %16.1f %16.1f %16.1f\n"
      "       (compressible, z_block 32: 43.0 at 1000 steps, 31.6 at 2000, 23.4 at 5000, 21.4 at 10000)\n",
      "memory", "steps", "z_block none", "z_block 128", "z_block 64", "z_block 48", "z_block 32", "plain", "any",
      13.888, 14.145, 14.574, 14.610, 14.661, "compressible", "100", 1.594, 2.081, 4.220, 5.002, 51.497);
}

}  // namespace seisrtm::app::bench
