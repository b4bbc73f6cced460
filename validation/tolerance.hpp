#pragma once
// The tolerance of the GPU-against-CPU comparisons (validate and the GPU test tier), derived
// from the arithmetic of one time step. A cell's update is a sum of T float terms; each addition
// rounds with relative error <= eps (FLT_EPSILON), so one step's result carries up to ~T eps of
// relative error, and independent roundings over N steps grow like sqrt(N): tol = T eps sqrt(N).
//   acoustic: the Laplacian's 6R neighbour terms plus the centre and the leapfrog's 3: T = 6R + 4;
//   vti and tti: their sums are nested (a second derivative of each field, combined with the
//        other field's; for tti a mixed derivative D_b (D_a f) sums 2R first derivatives of 2R
//        terms each). The classical bound of a sum counts the roundings a term passes through on
//        its way to the result, not the terms: for a nested sum the longest chain. vti: a second
//        derivative's chain of 2R + 1 additions, the combination of the two fields' operators
//        and the leapfrog's ~5: T = 2R + 6. tti: the two nested chains of a mixed derivative
//        (2R each), the axis products and the combination of the three of each operator and the
//        leapfrog, ~10: T = 4R + 10.
// (Counting every term of the nested sums instead, 2 (6R + 3) + 8 and 2 (12 R^2 + 6R + 3) + 26,
// would give a bound far looser than the rounding a nested sum can reach.)
// The GPU also evaluates sin and cos of the angles in float (the tma variant with __sincosf:
// absolute error <= 2^-21.41 ~ 3 eps on [-pi, pi]), which perturbs each coefficient by a few
// eps once, not per step: covered by the combination's share above.
#include <cfloat>
#include <cmath>

#include "solver/problem.hpp"

namespace seisrtm::validation {

inline double step_rounding_terms(const Problem& p) {
  const double r = p.radius;
  if (p.equation == Equation::tti) return 4 * r + 10;
  if (p.equation == Equation::vti) return 2 * r + 6;
  return 6 * r + 4;
}

// Relative L2 tolerance of a forward run of `steps` steps.
inline double forward_tolerance(const Problem& p, long long steps) {
  return step_rounding_terms(p) * FLT_EPSILON * std::sqrt(double(steps));
}

// fp16 storage (solver.storage fp16). The GPU and the CPU's emulation (validation/half.hpp)
// store the same values in the same way, but from float results that differ in their last
// bits (the fp32 tolerance above); where such a difference moves a value across a rounding
// boundary of the halves, the two runs store different halves, and their neighbours then differ
// by far more than the float rounding, so the divergence spreads: GPU and emulation agree to
// rounding over the first steps and then drift apart until their difference tends to sqrt(2)
// times the storage error: two independent draws of the same rounding process, each as far from
// fp32 storage as the other (docs/BENCHMARKS.md, "Forward acoustic"). So the GPU is held
// to the fp32 reference, its own storage error against the emulation's, e16 (the emulation's
// relative L2 against fp32 storage for the same output), within a factor of 2 either way: the
// relative spread of the norm of an error made of n independent parts is about 1 / sqrt(2 n),
// so a factor 2 is reached only by an error of about one part, while a GPU that rounds another
// way or not at all leaves the band (a round-toward-zero build by more than a factor 10).
// The fp32 tolerance is added for the arithmetic itself.
struct HalfStorageBand {
  double lo = 0, hi = 0;
  bool holds(double gpu_error) const { return gpu_error >= lo && gpu_error <= hi; }  // NaN fails
};
inline HalfStorageBand half_storage_band(double storage_error, double tol) {
  return {storage_error / 2 - tol, 2 * storage_error + tol};
}
inline HalfStorageBand half_storage_band(const Problem& p, long long steps, double storage_error) {
  return half_storage_band(storage_error, forward_tolerance(p, steps));
}
// Traces are held to the band's upper end only. Its lower end rests on an error made of many
// independent parts, as a wavefield's or an image's is; a trace's error is a few wavelets at a few
// receivers, correlated along time, close to one part, and two draws of it may differ by more
// than a factor 2: in the GPU tier's vti order-2 case the tma kernel's trace error falls below
// the band while its wavefield and the naive kernel's traces lie in it. That the GPU stores
// halves rounded to nearest is shown by the wavefields'
// bands; the traces' upper end keeps their accuracy within the emulation's.
inline HalfStorageBand half_storage_ceiling(const Problem& p, long long steps, double storage_error) {
  return {0, 2 * storage_error + forward_tolerance(p, steps)};
}

// Relative L2 tolerance of a migration of p.steps steps (validate and the GPU tier). Each field
// carries the forward step's rounding, T eps sqrt(steps); the source field is stepped up to 2 N
// times (forward, then rebuilt), and an image is a sum of products of two fields, whose relative
// errors add: tol = 2 T eps sqrt(2 steps).
inline double migration_tolerance(const Problem& p) {
  return 2 * step_rounding_terms(p) * FLT_EPSILON * std::sqrt(2.0 * p.steps);
}

}  // namespace seisrtm::validation
