#include "solver/numerics.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
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

double bessel_i0(double x) {
  // Power series; converges quickly for the arguments a Kaiser window uses (< 10).
  double sum = 1, term = 1;
  for (int k = 1; k < 50; ++k) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
  }
  return sum;
}

std::vector<float> resample(const float* x, long long n_in, double dt_in, double t0_in, long long n_out, double dt_out,
                            double t0_out) {
  const double T = std::max(dt_in, dt_out);  // the coarser sampling sets the pass band
  const double half = 8 * T;                 // window half-width, s
  const double beta = 6.0;                   // Kaiser: sidelobes near -60 dB
  const double i0b = bessel_i0(beta);
  std::vector<float> y(static_cast<size_t>(n_out), 0.0f);
  for (long long k = 0; k < n_out; ++k) {
    const double t = t0_out + k * dt_out;
    const long long j0 = std::max(0LL, static_cast<long long>(std::ceil((t - half - t0_in) / dt_in)));
    const long long j1 = std::min(n_in - 1, static_cast<long long>(std::floor((t + half - t0_in) / dt_in)));
    double sum = 0;
    for (long long j = j0; j <= j1; ++j) {
      const double u = (t - (t0_in + j * dt_in)) / T;  // in periods of the coarser sampling
      const double q = u * T / half;
      if (std::abs(q) > 1) continue;
      const double sinc = u == 0 ? 1.0 : std::sin(std::numbers::pi * u) / (std::numbers::pi * u);
      sum += x[j] * (dt_in / T) * sinc * bessel_i0(beta * std::sqrt(1 - q * q)) / i0b;
    }
    y[k] = static_cast<float>(sum);
  }
  return y;
}

namespace {

// In-place radix-2 FFT (n a power of two); inverse without the 1/n scaling.
void fft(std::vector<std::complex<double>>& a, bool inverse) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const double ang = 2 * std::numbers::pi / double(len) * (inverse ? 1 : -1);
    const std::complex<double> wl(std::cos(ang), std::sin(ang));
    for (size_t i = 0; i < n; i += len) {
      std::complex<double> w(1);
      for (size_t k = 0; k < len / 2; ++k) {
        const auto u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
        w *= wl;
      }
    }
  }
}

}  // namespace

double highest_useful_frequency(const std::vector<float>& w, double dt, double fraction) {
  // Amplitude spectrum by FFT, zero-padded to m >= max(1024, 2 n) points: bins 1 / (m dt) apart,
  // at least as fine as the 512 frequencies over [0, Nyquist] a plain DFT once used, and work
  // m log m instead of n times the number of frequencies (a long wavelet took minutes).
  size_t m = 1024;
  while (m < 2 * w.size()) m <<= 1;
  std::vector<std::complex<double>> a(m);
  for (size_t k = 0; k < w.size(); ++k) a[k] = w[k];
  fft(a, false);
  double peak = 0;
  size_t ipeak = 0;
  for (size_t i = 0; i <= m / 2; ++i)
    if (std::abs(a[i]) > peak) {
      peak = std::abs(a[i]);
      ipeak = i;
    }
  for (size_t i = ipeak; i <= m / 2; ++i)
    if (std::abs(a[i]) < fraction * peak) return double(i) / (double(m) * dt);
  return 0.5 / dt;
}

std::vector<float> minus_i_omega_power(const float* x, long long n, double dt, double alpha) {
  size_t m = 1;
  while (m < 2 * static_cast<size_t>(n)) m <<= 1;
  std::vector<std::complex<double>> a(m);
  for (long long i = 0; i < n; ++i) a[i] = x[i];
  fft(a, false);
  for (size_t k = 0; k < m; ++k) {
    // Angular frequency of bin k (negative above Nyquist). The forward transform uses e^{-i w t},
    // in which d/dt is i w; (-i w)^alpha = |w|^alpha e^{-i sgn(w) alpha pi/2}.
    const double w = 2 * std::numbers::pi * (k <= m / 2 ? double(k) : double(k) - double(m)) / (m * dt);
    const double phase = -(w > 0 ? 1 : w < 0 ? -1 : 0) * alpha * std::numbers::pi / 2;
    a[k] *= std::pow(std::abs(w), alpha) * std::complex<double>(std::cos(phase), std::sin(phase));
  }
  if (m % 2 == 0) a[m / 2] = a[m / 2].real();  // keep the Nyquist bin real: a real result
  fft(a, true);
  std::vector<float> y(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) y[i] = static_cast<float>(a[i].real() / double(m));
  return y;
}

double required_points_per_wavelength(int space_order) {
  // Rules of thumb for a few percent of phase error over tens of wavelengths.
  switch (space_order) {
    case 2:
      return 10;
    case 4:
      return 7;
    case 8:
      return 5;
    default:
      return 4;
  }
}

}  // namespace seisrtm
