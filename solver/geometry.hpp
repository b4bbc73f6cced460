#pragma once
// Sources and receivers off the grid: each point becomes a few cells with weights.
// Injection spreads a point source over those cells with these weights; recording takes the
// weighted sum. Using one set of weights for both keeps modelling and its adjoint consistent.
#include <array>
#include <string>
#include <vector>

#include "io/config_enums.hpp"
#include "solver/grid.hpp"

namespace seisrtm {

struct PointSet {
  std::vector<long long> offset{0};             // point i owns entries [offset[i], offset[i+1])
  std::vector<long long> cell;                  // linear cell index
  std::vector<float> weight;                    // dimensionless interpolation weight
  std::vector<std::array<double, 3>> position;  // m

  long long size() const { return static_cast<long long>(offset.size()) - 1; }
  void add(const Grid& g, const std::array<double, 3>& pos, Interpolation method);
};

// Hicks (2002) windowed-sinc half-width in cells and Kaiser parameter for that half-width.
inline constexpr int kHicksRadius = 4;
inline constexpr double kHicksKaiserB = 4.14;

// 1D weights of one axis for a position x (in cells) with the given method: fills offsets
// (first cell) and weights; cells outside [0, n) are dropped.
void axis_weights(double x, long long n, Interpolation method, std::vector<long long>& idx, std::vector<double>& w);

// Whether a point at `pos` with `method` has interpolation weights on the plane z = 0 only (a
// point at z = 0, or nearest to that plane): under a free surface, where p = 0 is enforced there,
// it would record zeros and inject nothing.
bool only_on_top_plane(const Grid& g, const std::array<double, 3>& pos, Interpolation method);

}  // namespace seisrtm
