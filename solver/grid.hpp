#pragma once
// The computational grid: x fastest in memory, then y, then z (depth, slowest).
// Cell (ix, iy, iz) sits at (ix hx, iy hy, iz hz) m; the damping zone is inside the grid.
#include <array>
#include <cstddef>
#include <vector>

namespace seisrtm {

struct Grid {
  std::array<long long, 3> n{0, 0, 0};  // cells [nx, ny, nz]
  std::array<double, 3> h{0, 0, 0};     // m [hx, hy, hz]
  // m: the survey coordinates of cell (0, 0, 0) (grid.origin). Positions in the solver are
  // relative to cell 0; messages and outputs add the origin back.
  std::array<double, 3> origin{0, 0, 0};

  long long cells() const { return n[0] * n[1] * n[2]; }
  // A position relative to cell 0 in survey coordinates, and back.
  std::array<double, 3> survey(const std::array<double, 3>& local) const {
    return {local[0] + origin[0], local[1] + origin[1], local[2] + origin[2]};
  }
  std::array<double, 3> local(const std::array<double, 3>& survey) const {
    return {survey[0] - origin[0], survey[1] - origin[1], survey[2] - origin[2]};
  }
  std::vector<std::array<double, 3>> survey(const std::vector<std::array<double, 3>>& local) const {
    std::vector<std::array<double, 3>> s;
    s.reserve(local.size());
    for (const auto& p : local) s.push_back(survey(p));
    return s;
  }
  long long index(long long ix, long long iy, long long iz) const { return (iz * n[1] + iy) * n[0] + ix; }
  double extent(int axis) const { return static_cast<double>(n[axis] - 1) * h[axis]; }
};

// Half-open cell ranges [lo[a], hi[a]) per axis a = x, y, z.
struct CellBox {
  std::array<long long, 3> lo{0, 0, 0}, hi{0, 0, 0};
  long long cells() const {
    long long c = 1;
    for (int a = 0; a < 3; ++a) c *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
    return c;
  }
};

}  // namespace seisrtm
