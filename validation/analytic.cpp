#include "validation/analytic.hpp"

#include <cstddef>
#include <numbers>

#include "solver/numerics.hpp"

namespace seisrtm::validation {

std::vector<double> point_source_trace(double r, double v, double f_peak, double delay, double dt, long long steps) {
  std::vector<double> out(static_cast<size_t>(steps));
  for (long long n = 0; n < steps; ++n)
    out[n] = ricker((n + 1) * dt - r / v, f_peak, delay) / (4 * std::numbers::pi * r);
  return out;
}

}  // namespace seisrtm::validation
