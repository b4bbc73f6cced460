#include "solver/numerics.hpp"

#include <cmath>
#include <numbers>

namespace seisrtm {

std::vector<double> fornberg_weights(int derivative, const std::vector<double>& x, double x0) {
  // Fornberg, "Generation of finite difference formulas on arbitrarily spaced grids",
  // Math. Comp. 51 (1988), the recursion of his Table 3, keeping all orders up to `derivative`.
  const int n = static_cast<int>(x.size()) - 1;
  const int m = derivative;
  std::vector<std::vector<double>> c(n + 1, std::vector<double>(m + 1, 0.0));
  double c1 = 1.0, c4 = x[0] - x0;
  c[0][0] = 1.0;
  for (int i = 1; i <= n; ++i) {
    const int mn = std::min(i, m);
    double c2 = 1.0;
    const double c5 = c4;
    c4 = x[i] - x0;
    for (int j = 0; j < i; ++j) {
      const double c3 = x[i] - x[j];
      c2 *= c3;
      if (j == i - 1) {
        for (int k = mn; k >= 1; --k) c[i][k] = c1 * (k * c[i - 1][k - 1] - c5 * c[i - 1][k]) / c2;
        c[i][0] = -c1 * c5 * c[i - 1][0] / c2;
      }
      for (int k = mn; k >= 1; --k) c[j][k] = (c4 * c[j][k] - k * c[j][k - 1]) / c3;
      c[j][0] = c4 * c[j][0] / c3;
    }
    c1 = c2;
  }
  std::vector<double> w(n + 1);
  for (int i = 0; i <= n; ++i) w[i] = c[i][m];
  return w;
}

std::vector<double> second_derivative_weights(int radius) {
  std::vector<double> pts;
  for (int k = -radius; k <= radius; ++k) pts.push_back(k);
  const auto w = fornberg_weights(2, pts, 0.0);
  std::vector<double> c(radius + 1);
  for (int k = 0; k <= radius; ++k) c[k] = w[radius + k];
  return c;
}

double stencil_abs_sum(int radius) {
  const auto c = second_derivative_weights(radius);
  double s = std::abs(c[0]);
  for (int k = 1; k <= radius; ++k) s += 2 * std::abs(c[k]);
  return s;
}

double max_stable_dt(const std::array<double, 3>& h, int radius, double v_max) {
  const double s = stencil_abs_sum(radius);
  double sum = 0;
  for (double ha : h) sum += s / (ha * ha);
  return 2.0 / (v_max * std::sqrt(sum));
}

double ricker(double t, double f, double delay) {
  const double a = std::numbers::pi * f * (t - delay);
  return (1 - 2 * a * a) * std::exp(-a * a);
}

double highest_useful_frequency(const std::vector<float>& w, double dt, double fraction) {
  // A plain DFT on a frequency grid fine enough for wavelets of a few hundred samples.
  const int nf = 512;
  const double fnyq = 0.5 / dt;
  std::vector<double> amp(nf);
  double peak = 0;
  int ipeak = 0;
  for (int i = 0; i < nf; ++i) {
    const double f = fnyq * i / (nf - 1);
    double re = 0, im = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      const double ph = 2 * std::numbers::pi * f * k * dt;
      re += w[k] * std::cos(ph);
      im -= w[k] * std::sin(ph);
    }
    amp[i] = std::hypot(re, im);
    if (amp[i] > peak) {
      peak = amp[i];
      ipeak = i;
    }
  }
  for (int i = ipeak; i < nf; ++i)
    if (amp[i] < fraction * peak) return fnyq * i / (nf - 1);
  return fnyq;
}

double required_points_per_wavelength(int space_order) {
  // Rules of thumb for a few percent of phase error over tens of wavelengths.
  switch (space_order) {
    case 2: return 10;
    case 4: return 7;
    case 8: return 5;
    default: return 4;
  }
}

}  // namespace seisrtm
