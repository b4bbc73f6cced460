#pragma once
// The tolerance of the GPU-against-CPU comparisons (validate and the GPU test tier), derived
// from the arithmetic of one time step. A cell's update is a sum of T float terms; each addition
// rounds with relative error <= eps (FLT_EPSILON), so one step's result carries up to ~T eps of
// relative error, and independent roundings over N steps grow like sqrt(N): tol = T eps sqrt(N).
//   acoustic: the Laplacian's 6R neighbour terms plus the centre and the leapfrog's 3: T = 6R + 4;
//   vti: per field three second derivatives (2R + 1 terms each) and the update of p takes both
//        H0 p and Hz q: T = 2 (6R + 3) + 8;
//   tti: each mixed derivative D_b (D_a f) sums 2R first derivatives of 2R terms (4R^2), three
//        per field, beside the second derivatives; the axis products and the combination add
//        ~11 per operator: T = 2 (12 R^2 + 6R + 3) + 26.
// For vti and tti T counts every term of the nested sums, an upper bound of the longest chain of
// additions a term passes through (the classical bound of a sum; 4R + 10 for tti, 2R + 6 for
// vti), so these two are loose: the measured errors sit 30-500x below them (H100, 2026-11-23).
// Tightening to the chain length waits for a GPU run that confirms it.
// The GPU also evaluates sin and cos of the angles in float (the tma variant with __sincosf:
// absolute error <= 2^-21.41 ~ 3 eps on [-pi, pi]), which perturbs each coefficient by a few
// eps once, not per step: covered by the combination's share above.
#include <cfloat>
#include <cmath>

#include "solver/problem.hpp"

namespace seisrtm::validation {

inline double step_rounding_terms(const Problem& p) {
  const double r = p.radius;
  if (p.equation == "tti") return 2 * (12 * r * r + 6 * r + 3) + 26;
  if (p.equation == "vti") return 2 * (6 * r + 3) + 8;
  return 6 * r + 4;
}

// Relative L2 tolerance of a forward run of `steps` steps.
inline double forward_tolerance(const Problem& p, long long steps) {
  return step_rounding_terms(p) * FLT_EPSILON * std::sqrt(double(steps));
}

// Relative L2 tolerance of a migration of p.steps steps (validate and the GPU tier). Each field
// carries the forward step's rounding, T eps sqrt(steps); the source field is stepped up to 2 N
// times (forward, then rebuilt), and an image is a sum of products of two fields, whose relative
// errors add: tol = 2 T eps sqrt(2 steps).
inline double migration_tolerance(const Problem& p) {
  return 2 * step_rounding_terms(p) * FLT_EPSILON * std::sqrt(2.0 * p.steps);
}

}  // namespace seisrtm::validation
