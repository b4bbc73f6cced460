#pragma once
// One leapfrog step of the isotropic acoustic wave equation on the CPU, restricted to a box of
// cells. This is the whole arithmetic of the CPU reference; forward modelling, the adjoint
// (receiver) field and the backward reconstruction of the source field all call it:
//
//   pn <- [2 p - (1 - s) pn + m L p] / (1 + s)       for every cell of the box
//
// with pn holding p^{n-1} on entry and p^{n+1} on exit, m = v^2 dt^2, s the damping of the cell
// (s_x[ix] + s_y[iy] + s_z[iz]), L the 2R-th order Laplacian with p = 0 outside the grid and,
// with a free surface, the odd image p(-z) = -p(z) above z = 0. Cells outside the box are left
// untouched. Where s = 0 the same formula read backwards, p^{n-1} = 2 p^n - p^{n+1} + m L p^n,
// rebuilds the previous time level, which is how migration reverses the source field.
// Sources, receivers and the free-surface zeroing of plane z = 0 are the caller's.
//
// Memory movement: reads p (with its 2R neighbours per axis, reused from cache), pn and m,
// writes pn: 4 values per cell, 16 bytes in float, 32 in double.
#include <array>
#include <vector>

#include "solver/grid.hpp"

namespace seisrtm::validation {

using Box = CellBox;  // half-open cell ranges per axis (solver/grid.hpp)

struct Stencil {
  std::array<long long, 3> n{0, 0, 0};                             // grid cells [nx, ny, nz]
  int radius = 4;                                                  // R = space_order / 2: 1, 2, 4 or 8
  std::array<std::vector<double>, 3> d2;                           // per axis c_k / h^2, k = 0..R (1/m^2)
  std::array<const float*, 3> damping{nullptr, nullptr, nullptr};  // per axis s(i), n[a] values
  bool free_surface = false;

  Box whole() const { return Box{{0, 0, 0}, n}; }
};

// Advances pn over `box` as above. Real is float (the reference and the CPU backend) or double
// (the adjoint test's exact path). Threads: OpenMP over the box. Throws seisrtm::Error
// (base/error.hpp) for a radius other than 1, 2, 4 or 8.
template <class Real>
void acoustic_step(const Stencil& st, const Real* m, const Real* p, Real* pn, const Box& box);

extern template void acoustic_step<float>(const Stencil&, const float*, const float*, float*, const Box&);
extern template void acoustic_step<double>(const Stencil&, const double*, const double*, double*, const Box&);

}  // namespace seisrtm::validation
