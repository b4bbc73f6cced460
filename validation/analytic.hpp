#pragma once
// Closed-form solutions the propagators are checked against.
#include <vector>

namespace seisrtm::validation {

// Homogeneous 3D acoustic medium, point source f at a grid node:
//   p(r, t) = f(t - r / v) / (4 pi r),  with f a Ricker wavelet (peak f_peak Hz, delay s).
// Samples at t = (n + 1) dt, n = 0..steps-1 (the times of a trace).
std::vector<double> point_source_trace(double r, double v, double f_peak, double delay, double dt, long long steps);

}  // namespace seisrtm::validation
