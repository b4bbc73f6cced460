#pragma once
// Finite-difference weights, stability limit and source wavelets.
#include <array>
#include <vector>

namespace seisrtm {

// Fornberg (1988): weights of the derivative of order `derivative` at x0 on the given points,
// exact for polynomials of degree points.size() - 1.
std::vector<double> fornberg_weights(int derivative, const std::vector<double>& points, double x0);

// Centred second-derivative weights c_0..c_R for unit spacing on -R..R (c_{-k} = c_k).
std::vector<double> second_derivative_weights(int radius);

// S = |c0| + 2 sum |ck|: the largest eigenvalue of -d2/dx2 times h^2 (at the Nyquist wavenumber).
double stencil_abs_sum(int radius);

// Largest stable leapfrog dt: 2 / (v_max sqrt(sum over axes of S / h_axis^2)), s.
double max_stable_dt(const std::array<double, 3>& h, int radius, double v_max);

// Ricker wavelet (1 - 2 (pi f (t - t0))^2) exp(-(pi f (t - t0))^2).
double ricker(double t, double peak_frequency, double delay);

// The most samples a wavelet file may declare when `used` of its samples cover the record
// (sources.wavelet.file of run, migration.wavelet of a SEG-Y migration). The file is read in
// full and its spectrum taken, so a length far beyond what is used is a mis-declared dataset:
// up to 4 times the samples used, and any length up to 2^20 samples (4 MiB; its spectrum, an
// FFT of 2^21 points, takes well under a second), so a long wavelet file still serves short runs.
inline double wavelet_file_limit(double used) {
  return used * 4 > double(1 << 20) ? used * 4 : double(1 << 20);
}
// The finest sample interval a wavelet file may declare, against the dt it is resampled to: the
// limit above scales with dt / file_dt, so a mis-declared dt (1e-15 s) would admit any length.
// 1/1024 of the step keeps frequencies 512 times beyond the step's Nyquist: no real wavelet
// needs more, and the limit stays under 4 x 1024 x the record.
inline double wavelet_finest_dt(double dt) {
  return dt / 1024;
}

// The frequency (Hz) above the spectrum's peak where the amplitude spectrum of `w`
// (sampled at dt) first falls under `fraction` of its maximum.
double highest_useful_frequency(const std::vector<float>& w, double dt, double fraction);

// Modified Bessel function of the first kind, order 0 (for Kaiser windows).
double bessel_i0(double x);

// Band-limited resampling of a uniformly sampled signal: x[j] at t = t0_in + j dt_in to
// n_out samples at t = t0_out + k dt_out. A Kaiser-windowed sinc (8 periods of the coarser
// sampling on each side) low-passed at the coarser Nyquist frequency, so downsampling does
// not alias; upsampling reproduces the input at coinciding times. Zero outside the input.
std::vector<float> resample(const float* x, long long n_in, double dt_in, double t0_in, long long n_out, double dt_out,
                            double t0_out);

// The filter (-i w)^alpha on a trace sampled at dt, with w from the forward transform
// X(w) = sum x(t) e^{-i w t} (in which d/dt is i w): alpha = 1 is -d/dt, alpha = 0.5 its square
// root (phase -45 degrees, amplitude sqrt(w)); applied in the frequency domain with zero
// padding to twice the length (no wrap-around).
std::vector<float> minus_i_omega_power(const float* x, long long n, double dt, double alpha);

// Points per wavelength a given space order needs at the highest useful frequency.
double required_points_per_wavelength(int space_order);

}  // namespace seisrtm
