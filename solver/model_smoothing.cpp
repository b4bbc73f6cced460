#include "solver/model_smoothing.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace seisrtm {

void smooth_slowness(const Grid& g, double length, std::vector<float>& vp) {
  if (!(length > 0)) return;
  std::vector<double> s(vp.size());
  for (size_t i = 0; i < vp.size(); ++i) s[i] = 1.0 / vp[i];
  const long long stride[3] = {1, g.n[0], g.n[0] * g.n[1]};
  for (int a = 0; a < 3; ++a) {
    const double sigma = length / g.h[a];  // cells
    const int half = static_cast<int>(std::ceil(3 * sigma));
    if (half == 0) continue;
    std::vector<double> w(2 * half + 1);
    double sum = 0;
    for (int k = -half; k <= half; ++k) sum += w[k + half] = std::exp(-0.5 * k * k / (sigma * sigma));
    for (double& v : w) v /= sum;
    const long long n = g.n[a], lines = g.cells() / n;
    // Per thread a copy of the line and its smoothed values (2 n doubles), allocated before the
    // parallel loop: nothing may throw inside it (an exception leaving it ends the program).
    std::vector<double> scratch(static_cast<size_t>(omp_get_max_threads() * 2 * n));
    // Each line along axis a starts at a cell whose coordinate on a is 0.
#pragma omp parallel for schedule(static)
    for (long long l = 0; l < lines; ++l) {
      long long start;
      if (a == 0)
        start = l * n;
      else if (a == 1)
        start = (l / g.n[0]) * g.n[0] * g.n[1] + l % g.n[0];
      else
        start = l;
      double* line = scratch.data() + omp_get_thread_num() * 2 * n;
      double* out = line + n;
      for (long long i = 0; i < n; ++i) line[i] = s[start + i * stride[a]];
      for (long long i = 0; i < n; ++i) {
        double acc = 0;
        for (int k = -half; k <= half; ++k) acc += w[k + half] * line[std::clamp(i + k, 0LL, n - 1)];
        out[i] = acc;
      }
      for (long long i = 0; i < n; ++i) s[start + i * stride[a]] = out[i];
    }
  }
  for (size_t i = 0; i < vp.size(); ++i) vp[i] = static_cast<float>(1.0 / s[i]);
}

}  // namespace seisrtm
