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
// (Until 2026-11-23 vti and tti counted every term of the nested sums, 2 (6R + 3) + 8 and
// 2 (12 R^2 + 6R + 3) + 26: the measured errors sat 30-2000x below those.)
// The GPU also evaluates sin and cos of the angles in float (the tma variant with __sincosf:
// absolute error <= 2^-21.41 ~ 3 eps on [-pi, pi]), which perturbs each coefficient by a few
// eps once, not per step: covered by the combination's share above.
#include <cfloat>
#include <cmath>

#include "solver/problem.hpp"

namespace seisrtm::validation {

inline double step_rounding_terms(const Problem& p) {
  const double r = p.radius;
  if (p.equation == "tti") return 4 * r + 10;
  if (p.equation == "vti") return 2 * r + 6;
  return 6 * r + 4;
}

// Relative L2 tolerance of a forward run of `steps` steps.
inline double forward_tolerance(const Problem& p, long long steps) {
  return step_rounding_terms(p) * FLT_EPSILON * std::sqrt(double(steps));
}

// fp16 storage (solver.storage fp16): the relative L2 tolerance of a GPU run against the CPU's
// emulation of the same storage (validation/half.hpp), given `storage_error`, the emulation's
// own relative L2 against fp32 storage for the same output. Both store the same halves from
// float values that differ by the float arithmetic's rounding, at most T eps |x| (the fp32
// tolerance's per-step bound); a half's relative spacing is at least u = 2^-11, so a stored
// value rounds to another half with probability at most f = T eps / u, and then differs by one
// spacing, where a storage rounding differs from the float value by a spacing / sqrt(12) (rms
// of a uniform error). Both kinds of error enter at the same cells and steps and travel the
// same way, so their ratio carries over: the GPU's flips give at most sqrt(12 f) times the
// storage error, beside the float arithmetic's own T eps sqrt(N).
inline double half_storage_tolerance(const Problem& p, long long steps, double storage_error) {
  const double u = std::ldexp(1.0, -11);
  const double f = step_rounding_terms(p) * FLT_EPSILON / u;
  return forward_tolerance(p, steps) + std::sqrt(12 * f) * storage_error;
}

// Relative L2 tolerance of a migration of p.steps steps (validate and the GPU tier). Each field
// carries the forward step's rounding, T eps sqrt(steps); the source field is stepped up to 2 N
// times (forward, then rebuilt), and an image is a sum of products of two fields, whose relative
// errors add: tol = 2 T eps sqrt(2 steps).
inline double migration_tolerance(const Problem& p) {
  return 2 * step_rounding_terms(p) * FLT_EPSILON * std::sqrt(2.0 * p.steps);
}

}  // namespace seisrtm::validation
