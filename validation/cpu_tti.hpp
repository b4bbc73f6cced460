#pragma once
// CPU reference of the TTI pseudo-acoustic system (DESIGN.md section 3), and the CPU backend of
// physics.equation: vti and tti. Fields p and q, model vp (m/s), epsilon, delta, theta (tilt,
// rad), phi (azimuth, rad) per cell; symmetry axis n = (sin th cos ph, sin th sin ph, cos th):
//
//   Hz = n . grad (n . grad) = nx^2 dxx + ny^2 dyy + nz^2 dzz + 2 nx ny dxy + 2 nx nz dxz + 2 ny nz dyz
//   H0 = lap - Hz
//   p_tt = vp^2 [ (1 + 2 eps) H0 p + sqrt(1 + 2 delta) Hz q ]
//   q_tt = vp^2 [ sqrt(1 + 2 delta) H0 p + Hz q ]
//
// Leapfrog in time. dxx, dyy, dzz: the 2R-th order centred second-derivative weights (as the
// acoustic stencil). dxy, dxz, dyz: products of centred first-derivative stencils of the same order
// (Fornberg), applied as D_b (D_a p) with D_a p zero outside the grid, which is the X-shaped tile
// with p = 0 outside. H0 is formed directly, sum_a (1 - n_a^2) d_aa - 2 sum_{a<b} n_a n_b d_ab,
// not as lap - Hz, so that an axis-aligned n gives exact zero coefficients.
// Boundary: p = q = 0 outside the grid; optional damping zone (the acoustic sponge applied to both
// fields: f^{n+1} = [2 f - (1 - s) f^{n-1} + m (...)] / (1 + s)) and free surface (p = q = 0 at
// z = 0 and the odd image f(-z) = -f(z) above it, for every stencil: second, first and mixed).
//
// Memory movement (this reference, not tuned): per step it writes 4 first-derivative fields
// (Dx p, Dy p, Dx q, Dy q) and reads them back in the update with p, q, their previous levels and
// 6 per-cell coefficients. The GPU kernel of DESIGN.md reads 9 volumes and keeps angles as angles.
#include <array>
#include <vector>

#include "solver/geometry.hpp"
#include "solver/grid.hpp"
#include "solver/problem.hpp"

namespace seisrtm::validation {

// The largest radius the CPU stepper takes (space order 16).
inline constexpr int kMaxTtiRadius = 8;

// A TTI problem on a grid; the model arrays hold grid.cells() values each, x fastest.
struct TtiModel {
  Grid grid;
  int radius = 4;  // R = space_order / 2, 1..kMaxTtiRadius
  double dt = 0;   // s
  std::vector<double> vp, epsilon, delta, theta, phi;
  // Optional: per axis s(i) = sigma dt / 2 (n[a] values each; empty = no damping), free surface.
  std::array<std::vector<float>, 3> damping;
  bool free_surface = false;
};

// Throws seisrtm::Error unless every array has grid.cells() values and every cell has vp > 0,
// delta <= epsilon (the system grows exponentially where delta > epsilon) and 1 + 2 delta > 0.
void check_tti_model(const TtiModel& model);

// Largest stable leapfrog dt (s) of the TTI system:
//   dt <= 2 / (vp sqrt(max(1, 1 + 2 eps)) sqrt(S sum_a 1 / h_a^2)),  minimised over cells,
// with S = |c0| + 2 sum |ck| of the second-derivative stencil: the acoustic bound at the speed
// vp sqrt(1 + 2 eps), the horizontal P speed. Derivation (frozen coefficients, Fourier mode k):
// the discrete d_aa has symbol -K_a with 0 <= K_a <= S / h_a^2, the first derivative D_a has
// symbol i G_a (real G_a), so d_ab -> -G_a G_b. Hence Hz -> -Kz and H0 -> -K0 with
//   Kz = sum_a n_a^2 (K_a - G_a^2) + (n . G)^2,
//   K0 = sum_a (1 - n_a^2) (K_a - G_a^2) + |G|^2 - (n . G)^2,
// both >= 0 because K_a >= G_a^2 for the centred Fornberg weights (checked for R = 1..8 in
// tests/test_tti.cpp) and |n . G| <= |G|; and K0 + Kz = sum_a K_a exactly (H0 + Hz = lap).
// The system is [p, q]_tt = -vp^2 M [p, q] with M = [[(1 + 2 eps) K0, s Kz], [s K0, Kz]],
// s^2 = 1 + 2 delta: det M = 2 (eps - delta) K0 Kz >= 0 and trace M >= 0, and the discriminant
// ((1 + 2 eps) K0 - Kz)^2 + 4 s^2 K0 Kz >= 0, so both eigenvalues are real, non-negative and at
// most trace M = (1 + 2 eps) K0 + Kz <= max(1, 1 + 2 eps) sum_a K_a <= max(1, 1 + 2 eps) S sum 1/h_a^2.
// Leapfrog is stable for vp^2 dt^2 lambda_max <= 4, which gives the bound above. It is tighter
// than a bound from the absolute stencil sum of the rotated operator (which counts the mixed
// stencils' |weights| too) and holds for every tilt.
double tti_max_stable_dt(const TtiModel& model);

// Two time levels of p and q over a TtiModel. Fields are stored with a halo of R zeros on every
// side, so the stencils need no bounds checks; the halo is written only by the free surface's
// odd image above z = 0, refreshed before every update.
template <class Real>
class CpuTti {
 public:
  // Checks the model (check_tti_model) and precomputes per cell m = vp^2 dt^2, 1 + 2 eps,
  // sqrt(1 + 2 delta) and n.
  explicit CpuTti(const TtiModel& model);
  // From a vti or tti problem: its model (theta = phi = 0 for vti), damping and free surface.
  explicit CpuTti(const Problem& pb);
  // p = q = 0 at both levels.
  void zero();
  // The previous levels become the next ones:
  //   p^{n+1} = 2 p^n - p^{n-1} + m [(1 + 2 eps) H0 p^n + sqrt(1 + 2 delta) Hz q^n]
  //   q^{n+1} = 2 q^n - q^{n-1} + m [sqrt(1 + 2 delta) H0 p^n + Hz q^n]
  void update();
  // p^{n+1} and q^{n+1} at node (ix, iy, iz) += m value / (hx hy hz): a point source injected
  // equally into p and q, scaled as the acoustic code (call between update and finish).
  void inject(long long ix, long long iy, long long iz, double value);
  // The same for an interpolated point: each cell of `point` gets m w value / (hx hy hz (1 + s)).
  void inject(const PointSet& ps, long long point, double value);
  // Weighted sum of the current p at a point (a receiver records p).
  double sample(const PointSet& ps, long long point) const;
  // Free-surface zeroing of plane z = 0 of the new levels, then they become current.
  void finish();
  double p_at(long long ix, long long iy, long long iz) const { return p_[padded(ix, iy, iz)]; }
  double q_at(long long ix, long long iy, long long iz) const { return q_[padded(ix, iy, iz)]; }
  // The current p on the grid (grid.cells() values, x fastest, no halo).
  std::vector<double> p_field() const;
  // The same into a float array (the propagator's wavefield).
  void p_field(float* out) const;
  // Whether every value of p and q is finite.
  bool finite() const;
  // Half-precision storage emulated (validation/half.hpp; float only, binary16, the levels
  // scheme): the model volumes (m, 1 + 2 eps, sqrt(1 + 2 delta), theta, phi) rounded once, each
  // as its own power-of-two scale times halves; p and q stored as field_scale times halves after
  // every update and injection. The source keeps the unrounded m.
  void store_as_half(float field_scale);
  float half_scale() const { return half_scale_; }  // 0: Real storage

  // For migration (validation/cpu_migration.cpp), which runs the source field backwards over a
  // box and restores the shell around it from a store.
  // update() over the cells of `box` only: cells outside it keep both levels. The first
  // derivatives are taken where the box's mixed stencils read them (R cells beyond the box in y
  // and z), so the stencil of a box cell reads p and q up to R cells beyond the box on every axis
  // (the mixed ones' corners included) and nothing further.
  void update(const CellBox& box);
  // inject(ps, point, value) into the cells of `box` only.
  void inject(const PointSet& ps, long long point, double value, const CellBox& box);
  // Swaps the two levels of p and of q without stepping (a backward pass starts from the last
  // two levels of the forward one).
  void swap_levels();
  // The level arrays hold a halo of R cells: grid cell (ix, iy, iz) is element
  // padded_index(ix, iy, iz) = padded_index(0, 0, 0) + ix + iy padded_stride(1) + iz padded_stride(2).
  long long padded_index(long long ix, long long iy, long long iz) const { return padded(ix, iy, iz); }
  long long padded_stride(int axis) const { return stride_[axis]; }
  const Real* p_current() const { return p_.data(); }
  // For a slab's halo exchange: the current levels, whose grid plane iz begins (x and y halo
  // included) at plane_offset(iz); planes are padded_stride(2) apart.
  Real* p_data() { return p_.data(); }
  Real* q_data() { return q_.data(); }
  long long plane_offset(long long iz) const { return (iz + r_) * s_[0] * s_[1]; }
  const Real* q_current() const { return q_.data(); }
  // Between update and finish: the new levels.
  Real* p_previous() { return pp_.data(); }
  Real* q_previous() { return qp_.data(); }

 private:
  template <class Get>
  void setup(const Grid& grid, double dt, Get get);
  // The odd image above a free surface: halo plane -k of p and q = -(plane k).
  void mirror_top();
  // Half storage: the new levels of `box` rounded.
  void round_levels(const CellBox& box);

  long long padded(long long ix, long long iy, long long iz) const {
    return ((iz + r_) * s_[1] + iy + r_) * s_[0] + ix + r_;
  }

  Grid grid_;
  int r_;
  std::array<long long, 3> s_;              // padded extents per axis: n + 2R
  std::array<long long, 3> stride_;         // padded strides: 1, sx, sx sy
  std::array<std::vector<Real>, 3> d2_;     // per axis c_k / h^2, k = 0..R (1/m^2)
  std::array<std::vector<Real>, 3> d1_;     // per axis a_k / h, k = 1..R (index k; 1/m), a_{-k} = -a_k
  std::vector<Real> m_, a_, s2_;            // per grid cell: vp^2 dt^2 (m^2), 1 + 2 eps, sqrt(1 + 2 delta)
  std::vector<Real> nx_, ny_, nz_;          // per grid cell: symmetry axis
  std::array<std::vector<float>, 3> damp_;  // per axis s(i); zeros without damping
  bool free_surface_ = false;
  std::vector<Real> p_, pp_, q_, qp_;        // padded: current and previous levels
  std::vector<Real> gxp_, gyp_, gxq_, gyq_;  // padded: Dx p, Dy p, Dx q, Dy q (zero halo)
  float half_scale_ = 0;                     // store_as_half's field scale; 0: Real storage
  std::vector<Real> m_source_;               // store_as_half: m before rounding (the source's)
};

extern template class CpuTti<float>;
extern template class CpuTti<double>;

}  // namespace seisrtm::validation
