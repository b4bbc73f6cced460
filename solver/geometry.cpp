#include "solver/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "solver/numerics.hpp"

namespace seisrtm {

void axis_weights(double x, long long n, Interpolation method, std::vector<long long>& idx, std::vector<double>& w) {
  idx.clear();
  w.clear();
  auto push = [&](long long i, double wi) {
    if (i >= 0 && i < n && wi != 0.0) {
      idx.push_back(i);
      w.push_back(wi);
    }
  };
  if (method == Interpolation::nearest) {
    push(std::llround(x), 1.0);
  } else if (method == Interpolation::trilinear) {
    const double f = std::floor(x);
    const double t = x - f;
    push(static_cast<long long>(f), 1 - t);
    push(static_cast<long long>(f) + 1, t);
  } else {  // hicks: Kaiser-windowed sinc, exact (a single node) for on-grid points
    const long long f = static_cast<long long>(std::floor(x));
    if (x == static_cast<double>(f)) {
      push(f, 1.0);
      return;
    }
    const int r = kHicksRadius;
    for (long long i = f - r + 1; i <= f + r; ++i) {
      const double d = static_cast<double>(i) - x;
      const double sinc = std::sin(std::numbers::pi * d) / (std::numbers::pi * d);
      const double q = d / r;
      const double win =
          std::abs(q) <= 1 ? bessel_i0(kHicksKaiserB * std::sqrt(1 - q * q)) / bessel_i0(kHicksKaiserB) : 0.0;
      push(i, sinc * win);
    }
  }
}

bool only_on_top_plane(const Grid& g, const std::array<double, 3>& pos, Interpolation method) {
  std::vector<long long> idx;
  std::vector<double> w;
  axis_weights(pos[2] / g.h[2], g.n[2], method, idx, w);
  return std::all_of(idx.begin(), idx.end(), [](long long i) { return i == 0; });
}

void PointSet::add(const Grid& g, const std::array<double, 3>& pos, Interpolation method) {
  std::array<std::vector<long long>, 3> idx;
  std::array<std::vector<double>, 3> w;
  for (int a = 0; a < 3; ++a) axis_weights(pos[a] / g.h[a], g.n[a], method, idx[a], w[a]);
  for (size_t k = 0; k < idx[2].size(); ++k)
    for (size_t j = 0; j < idx[1].size(); ++j)
      for (size_t i = 0; i < idx[0].size(); ++i) {
        cell.push_back(g.index(idx[0][i], idx[1][j], idx[2][k]));
        weight.push_back(static_cast<float>(w[0][i] * w[1][j] * w[2][k]));
      }
  offset.push_back(static_cast<long long>(cell.size()));
  position.push_back(pos);
}

}  // namespace seisrtm
