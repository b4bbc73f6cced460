// seisrtm bench --plot: GCells/s against z_block, one panel per variant with z-blocking, a line
// per memory kind (compressible dashed) and step count, the roofline as the reference.
#include "io/plot.hpp"

#include <cmath>
#include <cstdio>

#include "app/bench/bench.hpp"

namespace seisrtm::app::bench {

void write_plot(const Setup& s, const Results& r) {
  const Axes& a = s.axes;
  std::vector<io::LinePlot> panels;
  for (const auto& v : a.variants)
    for (const auto& sto : a.storages) {
      if (v == "naive") continue;  // one point: the tables say it
      io::LinePlot lp;
      char title[256];
      std::snprintf(title, sizeof title, "%s, %lld^3, order %d: GCells/s (median of %d) on %s",
                    series_name(v, sto).c_str(), s.problem.grid.n[0], s.config.physics.space_order, a.repeat,
                    s.gpu.name.c_str());
      lp.title = title;
      lp.x_label = "z_block (planes per block)";
      lp.y_label = "GCells/s";
      for (int z : a.z_blocks) lp.x_ticks.push_back(z_name(z));
      lp.reference = r.roof_for(s.problem, sto);
      char rl[64];
      std::snprintf(rl, sizeof rl, "roofline %.0f (%.0f B/cell, plain copy)", lp.reference,
                    bytes_per_cell(s.problem, sto));
      lp.reference_label = rl;
      for (size_t mi = 0; mi < a.memories.size(); ++mi)
        for (size_t si = 0; si < a.steps.size(); ++si) {
          io::Series line;
          line.label = a.memories[mi] + " " + std::to_string(a.steps[si]) + " steps";
          io::palette(static_cast<int>(si), line.rgb);
          line.dashed = a.memories[mi] == "compressible";
          for (int z : a.z_blocks) {
            const Cell* c = find_cell(r.cells, v, a.memories[mi], z, a.steps[si], sto);
            line.y.push_back(c ? c->median : NAN);
          }
          lp.series.push_back(line);
        }
      panels.push_back(lp);
    }
  if (!panels.empty()) io::write_line_plots(s.options.plot, panels);
}

}  // namespace seisrtm::app::bench
