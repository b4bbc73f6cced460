// [unit] The CPU reference step (validation/cpu_stencil) against a per-cell transcription of its
// formula: every radius, with and without a free surface, damping on some cells, boxes that
// cover the grid, sit inside it, touch one edge or are empty, on small odd grids.
#include <omp.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/error.hpp"
#include "solver/numerics.hpp"
#include "tests/catch.hpp"
#include "validation/cpu_stencil.hpp"

using namespace seisrtm;
using namespace seisrtm::validation;

namespace {

// A problem with random fields: p and pn in [-1, 1], m = v^2 dt^2 scaled so that m L p is of
// the order of p, damping s > 0 on the first 3 and last 2 cells of every axis (s_x + s_y + s_z
// up to 0.3 in a corner), 0 elsewhere.
struct Case {
  Stencil st;
  std::array<std::vector<float>, 3> damping;
  std::vector<double> m, p, pn;

  Case(std::array<long long, 3> n, int radius, bool free_surface, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const double h[3] = {10.0, 12.5, 8.0};  // m, a different spacing per axis
    const auto c = second_derivative_weights(radius);
    st.n = n;
    st.radius = radius;
    st.free_surface = free_surface;
    for (int a = 0; a < 3; ++a) {
      st.d2[a].resize(radius + 1);
      for (int k = 0; k <= radius; ++k) st.d2[a][k] = c[k] / (h[a] * h[a]);
      damping[a].assign(n[a], 0.0f);
      for (long long i = 0; i < n[a]; ++i) {
        if (i < 3) damping[a][i] = 0.1f * float(3 - i) / 3;
        if (i >= n[a] - 2) damping[a][i] = 0.05f * float(i - (n[a] - 3));
      }
      st.damping[a] = damping[a].data();
    }
    const long long cells = n[0] * n[1] * n[2];
    m.resize(cells);
    p.resize(cells);
    pn.resize(cells);
    for (long long i = 0; i < cells; ++i) {
      m[i] = 10.0 * (1.5 + 0.5 * unit(rng));  // m^2: h^2 / 10 or so
      p[i] = unit(rng);
      pn[i] = unit(rng);
    }
  }
};

// The step exactly as documented, one cell at a time in double, with p at() the boundary
// conditions. Returns the new pn and, in `magnitude`, the sum of the absolute values of every
// term of the formula (the scale of the rounding error of a kernel summing them in Real).
struct Reference {
  double value, magnitude;
};

Reference reference_cell(const Case& cs, long long ix, long long iy, long long iz) {
  const Stencil& st = cs.st;
  const long long nx = st.n[0], ny = st.n[1], nz = st.n[2];
  auto at = [&](long long x, long long y, long long z) -> double {
    if (x < 0 || x >= nx || y < 0 || y >= ny || z >= nz) return 0.0;
    if (z < 0) {  // above z = 0: the odd image of the cell at -z, or 0 without a free surface
      if (!st.free_surface || -z >= nz) return 0.0;
      return -cs.p[(-z * ny + y) * nx + x];
    }
    return cs.p[(z * ny + y) * nx + x];
  };
  double lap = 0, lap_magnitude = 0;
  auto add = [&](double w, double v) {
    lap += w * v;
    lap_magnitude += std::abs(w * v);
  };
  for (int a = 0; a < 3; ++a) add(st.d2[a][0], at(ix, iy, iz));
  for (int k = 1; k <= st.radius; ++k) {
    add(st.d2[0][k], at(ix - k, iy, iz));
    add(st.d2[0][k], at(ix + k, iy, iz));
    add(st.d2[1][k], at(ix, iy - k, iz));
    add(st.d2[1][k], at(ix, iy + k, iz));
    add(st.d2[2][k], at(ix, iy, iz - k));
    add(st.d2[2][k], at(ix, iy, iz + k));
  }
  const long long i = (iz * ny + iy) * nx + ix;
  const double s = double(st.damping[0][ix]) + st.damping[1][iy] + st.damping[2][iz];
  const double value = (2 * cs.p[i] - (1 - s) * cs.pn[i] + cs.m[i] * lap) / (1 + s);
  const double magnitude =
      (2 * std::abs(cs.p[i]) + std::abs((1 - s) * cs.pn[i]) + std::abs(cs.m[i]) * lap_magnitude) / (1 + s);
  return {value, magnitude};
}

// Runs acoustic_step<Real> over `box` and compares every cell of the grid: inside the box with
// the reference, outside bitwise with the input. Returns the kernel's pn.
template <class Real>
std::vector<Real> check_box(const Case& cs, const Box& box) {
  const long long cells = cs.st.n[0] * cs.st.n[1] * cs.st.n[2];
  const std::vector<Real> m(cs.m.begin(), cs.m.end()), p(cs.p.begin(), cs.p.end());
  const std::vector<Real> before(cs.pn.begin(), cs.pn.end());
  std::vector<Real> pn = before;
  // The reference reads the fields at the kernel's precision.
  Case rounded = cs;
  for (long long i = 0; i < cells; ++i) {
    rounded.m[i] = m[i];
    rounded.p[i] = p[i];
    rounded.pn[i] = before[i];
  }
  acoustic_step<Real>(cs.st, m.data(), p.data(), pn.data(), box);

  // Tolerance: the kernel sums the n = 6R + 1 products of L p in Real, with weights rounded to
  // Real: each product carries at most (n + 1) eps of its own size, so the Laplacian is off by
  // at most (n + 1) eps times the sum of |terms|. The update adds about 8 roundings (s, 1 - s,
  // 1 + s, three products, two sums, the division), each at most eps of the terms' magnitude.
  const double eps = std::numeric_limits<Real>::epsilon();
  const double roundings = (6 * cs.st.radius + 1) + 1 + 8;
  long long wrong_inside = 0, changed_outside = 0;
  double worst = 0;
  for (long long iz = 0; iz < cs.st.n[2]; ++iz) {
    for (long long iy = 0; iy < cs.st.n[1]; ++iy) {
      for (long long ix = 0; ix < cs.st.n[0]; ++ix) {
        const long long i = (iz * cs.st.n[1] + iy) * cs.st.n[0] + ix;
        const bool inside =
            ix >= box.lo[0] && ix < box.hi[0] && iy >= box.lo[1] && iy < box.hi[1] && iz >= box.lo[2] && iz < box.hi[2];
        if (!inside) {
          if (std::memcmp(&pn[i], &before[i], sizeof(Real)) != 0) ++changed_outside;
          continue;
        }
        const Reference ref = reference_cell(rounded, ix, iy, iz);
        const double error = std::abs(double(pn[i]) - ref.value) / (roundings * eps * ref.magnitude);
        worst = std::max(worst, error);
        if (!(error <= 1.0)) ++wrong_inside;  // NaN included
      }
    }
  }
  INFO("worst error " << worst << " of the tolerance");
  CHECK(wrong_inside == 0);
  CHECK(changed_outside == 0);
  return pn;
}

template <class Real>
bool bitwise_equal(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

// Boxes: the whole grid, an inner box R + 1 cells in from every face (where it fits), a box
// touching the low x and both z faces (the free surface) but no y face, a single partial row,
// and an empty one.
std::vector<Box> boxes_of(const Stencil& st) {
  const auto& n = st.n;
  const long long r = st.radius + 1;
  std::vector<Box> boxes{st.whole()};
  Box inner{{0, 0, 0}, n};
  for (int a = 0; a < 3; ++a) {
    inner.lo[a] = std::min(r, n[a] / 3);
    inner.hi[a] = n[a] - std::min(r, n[a] / 3);
  }
  boxes.push_back(inner);
  boxes.push_back(Box{{0, 1, 0}, {n[0] / 2 + 1, n[1] - 2, n[2]}});
  boxes.push_back(Box{{2, n[1] / 2, 1}, {n[0] - 1, n[1] / 2 + 1, 2}});
  boxes.push_back(Box{{3, 3, 3}, {3, n[1], n[2]}});
  return boxes;
}

template <class Real>
void check_grid(std::array<long long, 3> n) {
  unsigned seed = 1;
  for (int radius : {1, 2, 4, 8}) {
    for (bool free_surface : {false, true}) {
      const Case cs(n, radius, free_surface, seed++);
      for (const Box& box : boxes_of(cs.st)) {
        INFO("grid " << n[0] << "x" << n[1] << "x" << n[2] << ", radius " << radius
                     << (free_surface ? ", free surface" : "") << ", box [" << box.lo[0] << "," << box.lo[1] << ","
                     << box.lo[2] << ") to [" << box.hi[0] << "," << box.hi[1] << "," << box.hi[2] << ")");
        check_box<Real>(cs, box);
      }
    }
  }
}

}  // namespace

TEST_CASE("CPU step in float matches the per-cell formula on odd grids", "[unit]") {
  check_grid<float>({13, 11, 17});
  check_grid<float>({23, 9, 14});
}

TEST_CASE("CPU step in double matches the per-cell formula to double rounding", "[unit]") {
  check_grid<double>({13, 11, 17});
  check_grid<double>({23, 9, 14});
}

TEST_CASE("CPU step is independent of the thread count and of the tiling", "[unit]") {
  // 700 cells in x at radius 8 in double: 17 planes of a row take 95 KB, so the box is cut
  // into many y blocks; 3 threads cut its z range unevenly. Each cell's arithmetic is the same
  // whichever thread and tile it falls in, so the results must agree bit for bit.
  const int threads = omp_get_max_threads();
  const Case cs({700, 12, 9}, 8, true, 99);
  std::vector<double> whole[2];
  std::vector<float> inner[2];
  for (int run = 0; run < 2; ++run) {
    const int t = run == 0 ? 1 : 3;
    omp_set_num_threads(t);
    INFO(t << " threads");
    whole[run] = check_box<double>(cs, cs.st.whole());
    inner[run] = check_box<float>(cs, Box{{5, 1, 0}, {690, 11, 9}});
  }
  omp_set_num_threads(threads);
  CHECK(bitwise_equal(whole[0], whole[1]));
  CHECK(bitwise_equal(inner[0], inner[1]));
}

TEST_CASE("CPU step rejects an unsupported radius", "[unit]") {
  Case cs({5, 5, 5}, 1, false, 3);
  cs.st.radius = 3;
  std::vector<float> m(125, 1.0f), p(125, 0.0f), pn(125, 0.0f);
  CHECK_THROWS_AS(acoustic_step<float>(cs.st, m.data(), p.data(), pn.data(), cs.st.whole()), seisrtm::Error);
  CHECK_THROWS_WITH(acoustic_step<float>(cs.st, m.data(), p.data(), pn.data(), cs.st.whole()),
                    Catch::Matchers::Contains("radius 3") && Catch::Matchers::Contains("valid: radius 1, 2, 4 or 8"));
}
