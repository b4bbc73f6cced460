// [cpu] The CPU reference TTI pseudo-acoustic stepper (validation/cpu_tti) against mathematics:
// the isotropic limit, VTI traveltimes along and across the symmetry axis, and the rotation of
// the symmetry axis from z to x. Plus [unit] checks of the stability argument's premise and of
// the model check.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "base/error.hpp"
#include "solver/numerics.hpp"
#include "tests/catch.hpp"
#include "validation/cpu_stencil.hpp"
#include "validation/cpu_tti.hpp"

using namespace seisrtm;
using namespace seisrtm::validation;

namespace {

struct Node {
  long long ix, iy, iz;
};

TtiModel homogeneous(long long n, double h, int radius, double vp, double eps, double delta, double theta, double phi) {
  TtiModel m;
  m.grid.n = {n, n, n};
  m.grid.h = {h, h, h};
  m.radius = radius;
  const size_t cells = static_cast<size_t>(m.grid.cells());
  m.vp.assign(cells, vp);
  m.epsilon.assign(cells, eps);
  m.delta.assign(cells, delta);
  m.theta.assign(cells, theta);
  m.phi.assign(cells, phi);
  return m;
}

// A TTI run: a Ricker point source at `src` injected into p and q with f(n dt) at step n (as
// the acoustic propagator), p recorded at `rec` after every step (time (n + 1) dt).
struct TtiRun {
  std::vector<std::vector<double>> traces;
  std::vector<double> p_final;
};

TtiRun run_tti(const TtiModel& model, Node src, const std::vector<Node>& rec, long long steps, double f_peak) {
  CpuTti<double> wave(model);
  TtiRun out;
  out.traces.assign(rec.size(), std::vector<double>(steps));
  for (long long n = 0; n < steps; ++n) {
    wave.update();
    wave.inject(src.ix, src.iy, src.iz, ricker(n * model.dt, f_peak, 1.2 / f_peak));
    wave.finish();
    for (size_t r = 0; r < rec.size(); ++r) out.traces[r][n] = wave.p_at(rec[r].ix, rec[r].iy, rec[r].iz);
  }
  out.p_final = wave.p_field();
  return out;
}

// The isotropic CPU reference (acoustic_step in double, no damping, no free surface) with vp of
// the model, the same source and receivers.
TtiRun run_isotropic(const TtiModel& model, Node src, const std::vector<Node>& rec, long long steps, double f_peak) {
  Stencil st;
  st.n = model.grid.n;
  st.radius = model.radius;
  const auto c = second_derivative_weights(model.radius);
  std::array<std::vector<float>, 3> damping;
  for (int a = 0; a < 3; ++a) {
    for (int k = 0; k <= model.radius; ++k) st.d2[a].push_back(c[k] / (model.grid.h[a] * model.grid.h[a]));
    damping[a].assign(model.grid.n[a], 0.0f);
    st.damping[a] = damping[a].data();
  }
  const size_t cells = static_cast<size_t>(model.grid.cells());
  std::vector<double> m(cells), p(cells, 0.0), pn(cells, 0.0);
  for (size_t i = 0; i < cells; ++i) m[i] = model.vp[i] * model.vp[i] * model.dt * model.dt;
  const double volume = model.grid.h[0] * model.grid.h[1] * model.grid.h[2];
  const long long s = model.grid.index(src.ix, src.iy, src.iz);
  TtiRun out;
  out.traces.assign(rec.size(), std::vector<double>(steps));
  for (long long n = 0; n < steps; ++n) {
    acoustic_step<double>(st, m.data(), p.data(), pn.data(), st.whole());
    pn[s] += m[s] * ricker(n * model.dt, f_peak, 1.2 / f_peak) / volume;
    p.swap(pn);
    for (size_t r = 0; r < rec.size(); ++r) out.traces[r][n] = p[model.grid.index(rec[r].ix, rec[r].iy, rec[r].iz)];
  }
  out.p_final = p;
  return out;
}

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// Time (s) of the largest |value| of a trace sampled at t = (n + 1) dt, refined by the parabola
// through the peak sample and its two neighbours (sub-sample accuracy for a smooth pulse).
double peak_time(const std::vector<double>& tr, double dt) {
  size_t k = 0;
  for (size_t i = 1; i < tr.size(); ++i)
    if (std::abs(tr[i]) > std::abs(tr[k])) k = i;
  double shift = 0;
  if (k > 0 && k + 1 < tr.size()) {
    const double a = std::abs(tr[k - 1]), b = std::abs(tr[k]), c = std::abs(tr[k + 1]);
    shift = 0.5 * (a - c) / (a - 2 * b + c);
  }
  return (double(k) + 1 + shift) * dt;
}

// The rounding tolerance of one run against another whose arithmetic is the same in exact
// arithmetic (relative to the largest |p|). One cell update sums, in double, the 3 (2R + 1)
// taps of the second derivatives, the 2R taps of each first and each mixed derivative, about
// 20 products and sums of the coefficients and the leapfrog: at most n_ops = 6R + 3 + 4R + 20
// roundings in one chain, each at most eps of the magnitude of its terms. The terms of
// m (H0 p + Hz q) are bounded by m (S sum 1/h^2 + 6 A^2 / h^2) |p|max <= (4 + 6 A^2 / S) |p|max
// at the stability limit (A = sum |a_k| of the first derivative) and the leapfrog terms by 3 |p|max:
// a local error of at most n_ops (7 + 6 A^2 / S) eps |p|max per step. Rounding errors of
// successive steps are independent in sign, so they add as a random walk, sqrt(steps); the
// leapfrog carries each one on as a wave of about its own size. The per-step bound assumes every
// rounding at its worst and in the same direction, so it sits far above the usual error.
double rounding_tolerance(int radius, long long steps) {
  std::vector<double> pts;
  for (int k = -radius; k <= radius; ++k) pts.push_back(k);
  const auto w1 = fornberg_weights(1, pts, 0.0);
  double a = 0;
  for (double w : w1) a += std::abs(w);
  const double s = stencil_abs_sum(radius);
  const double n_ops = 6 * radius + 3 + 4 * radius + 20;
  return n_ops * (7 + 6 * a * a / s) * std::numeric_limits<double>::epsilon() * std::sqrt(double(steps));
}

}  // namespace

TEST_CASE("TTI stability premise: K_a >= G_a^2 for the centred Fornberg weights", "[unit]") {
  // cpu_tti.hpp derives dt_max from K0, Kz >= 0, which needs the symbol of -d2/dx2 (K) to be at
  // least the square of the symbol of d/dx (G) at every wavenumber (unit spacing).
  for (int radius = 1; radius <= 8; ++radius) {
    const auto c = second_derivative_weights(radius);
    std::vector<double> pts;
    for (int k = -radius; k <= radius; ++k) pts.push_back(k);
    const auto w1 = fornberg_weights(1, pts, 0.0);
    double worst = 0;
    for (int j = 0; j <= 1000; ++j) {
      const double kh = M_PI * j / 1000;
      double K = -c[0], G = 0;
      for (int k = 1; k <= radius; ++k) {
        K -= 2 * c[k] * std::cos(k * kh);
        G += 2 * w1[radius + k] * std::sin(k * kh);
      }
      worst = std::min(worst, K - G * G);
    }
    INFO("radius " << radius << ": min over k of K - G^2 = " << worst);
    CHECK(worst >= -1e-13);
  }
}

TEST_CASE("TTI model check rejects delta > epsilon", "[unit]") {
  TtiModel m = homogeneous(5, 10, 2, 2000, 0.1, 0.2, 0, 0);
  m.dt = 1e-3;
  CHECK_THROWS_WITH(check_tti_model(m), Catch::Matchers::Contains("valid: delta <= epsilon"));
  m.delta.assign(m.delta.size(), 0.05);
  CHECK_NOTHROW(check_tti_model(m));
  m.vp.pop_back();
  CHECK_THROWS_AS(check_tti_model(m), seisrtm::Error);
}

TEST_CASE("TTI with eps = delta = 0 equals the isotropic solver for any tilt", "[cpu]") {
  // Heterogeneous vp (two layers) and random angles per cell: with eps = delta = 0 the two
  // equations are the same, p = q at every step (bitwise: the coefficients are exactly 1 and
  // the source goes into both), so p_tt = vp^2 (H0 + Hz) p = vp^2 lap p, the acoustic equation.
  const long long n = 37;
  const double h = 10;
  TtiModel model = homogeneous(n, h, 4, 2000, 0, 0, 0, 0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-M_PI, M_PI);
  for (long long i = 0; i < model.grid.cells(); ++i) {
    model.theta[i] = angle(rng);
    model.phi[i] = angle(rng);
    if (i / (n * n) >= 22) model.vp[i] = 2500;
  }
  model.dt = 0.9 * tti_max_stable_dt(model);
  const long long steps = 100;
  const Node src{18, 18, 18};
  const std::vector<Node> rec{{26, 18, 18}, {18, 12, 18}, {18, 18, 30}};
  const TtiRun tti = run_tti(model, src, rec, steps, 15);
  const TtiRun iso = run_isotropic(model, src, rec, steps, 15);
  const double scale = max_abs(iso.p_final);
  double worst = max_abs_diff(tti.p_final, iso.p_final) / scale;
  for (size_t r = 0; r < rec.size(); ++r)
    worst = std::max(worst, max_abs_diff(tti.traces[r], iso.traces[r]) / max_abs(iso.traces[r]));
  const double tol = rounding_tolerance(4, steps);
  std::printf("TTI eps = delta = 0 vs isotropic: max relative difference %.3e (tolerance %.3e)\n", worst, tol);
  CHECK(scale > 0);
  CHECK(worst <= tol);
}

TEST_CASE("homogeneous VTI: traveltimes along x and z are r / (vp sqrt(1 + 2 eps)) and r / vp", "[cpu]") {
  // vp = 2000 m/s, eps = 0.2, delta = 0.1: horizontal speed 2366 m/s. Ricker 15 Hz (useful band
  // to 37.5 Hz: 5.3 points per wavelength of 2000 m/s at h = 10 m, 8th order). Source at the
  // centre of 81^3 cells (400 m to every face), receivers 200 m away along x and along z. The
  // earliest reflection reaches a receiver over 600 m: after 0.254 s along x (2366 m/s) plus the
  // wavelet's onset, later than the 0.24 s recorded.
  // Arrival time: the peak of |p| (the zero-phase Ricker's main lobe, where its envelope also
  // peaks). The peak lags r / v by the wavelet delay plus the scheme's small bias (grid
  // dispersion, near field); both are measured once on an isotropic run (acoustic_step, same
  // grid, dt, source) as b = t_peak - r / vp and subtracted. The far-field pulse of a
  // homogeneous medium has the same shape whatever the direction, so the same b applies.
  const double vp = 2000, eps = 0.2, delta = 0.1, h = 10, f = 15, r = 200;
  const long long n = 81, c = 40, cells_r = 20;
  TtiModel model = homogeneous(n, h, 4, vp, eps, delta, 0, 0);
  model.dt = 0.8 * tti_max_stable_dt(model);
  const long long steps = static_cast<long long>(0.24 / model.dt);
  const Node src{c, c, c};
  const std::vector<Node> rec{{c + cells_r, c, c}, {c, c, c + cells_r}};
  const TtiRun tti = run_tti(model, src, rec, steps, f);
  const TtiRun iso = run_isotropic(model, src, {rec[0]}, steps, f);
  const double bias = peak_time(iso.traces[0], model.dt) - r / vp;
  const double tx = peak_time(tti.traces[0], model.dt) - bias, tz = peak_time(tti.traces[1], model.dt) - bias;
  const double ex = r / (vp * std::sqrt(1 + 2 * eps)), ez = r / vp;
  std::printf(
      "VTI traveltime: bias %.5f s (delay %.5f s); along x %.5f s (expected %.5f, error %.3f%%), "
      "along z %.5f s (expected %.5f, error %.3f%%)\n",
      bias, 1.2 / f, tx, ex, 100 * (tx / ex - 1), tz, ez, 100 * (tz / ez - 1));
  CHECK(std::abs(tx / ex - 1) <= 0.01);
  CHECK(std::abs(tz / ez - 1) <= 0.01);
}

TEST_CASE("TTI tilted to x (theta = 90 deg, phi = 0) is the VTI field with x and z swapped", "[cpu]") {
  // On a cubic grid with equal spacing and the source at the centre, the map (x, y, z) ->
  // (z, y, x) takes the stencils onto each other, so the tilted run's p(ix, iy, iz) is the
  // untilted run's p(iz, iy, ix). In double, n = (sin(pi/2), 0, cos(pi/2)) = (1, 0, 6.1e-17):
  // the tilted operator carries extra terms 2 nx nz dxz ~ 1.2e-16 dxz and a different order of
  // summation, both rounding-level: the same tolerance as the isotropic-limit test.
  const long long n = 45, c = 22, cells_r = 12;
  TtiModel vti = homogeneous(n, 10, 4, 2000, 0.2, 0.1, 0, 0);
  vti.dt = 0.8 * tti_max_stable_dt(vti);
  TtiModel tilted = vti;
  tilted.theta.assign(tilted.theta.size(), M_PI / 2);
  const long long steps = 110;
  const Node src{c, c, c};
  const TtiRun a = run_tti(vti, src, {{c, c, c + cells_r}, {c + cells_r, c, c}}, steps, 15);
  const TtiRun b = run_tti(tilted, src, {{c + cells_r, c, c}, {c, c, c + cells_r}}, steps, 15);
  // Trace at +r along z (untilted) against +r along x (tilted), and the whole final field.
  double worst = max_abs_diff(a.traces[0], b.traces[0]) / max_abs(a.traces[0]);
  std::vector<double> mapped(a.p_final.size());
  for (long long iz = 0; iz < n; ++iz)
    for (long long iy = 0; iy < n; ++iy)
      for (long long ix = 0; ix < n; ++ix) mapped[(ix * n + iy) * n + iz] = a.p_final[(iz * n + iy) * n + ix];
  worst = std::max(worst, max_abs_diff(b.p_final, mapped) / max_abs(mapped));
  // The medium is anisotropic: the two directions differ, so the match is not trivial.
  const double anisotropy = max_abs_diff(a.traces[0], a.traces[1]) / max_abs(a.traces[0]);
  const double tol = rounding_tolerance(4, steps);
  std::printf(
      "TTI tilted to x vs VTI: max relative difference %.3e (tolerance %.3e); x vs z trace of VTI differ "
      "by %.3f\n",
      worst, tol, anisotropy);
  CHECK(worst <= tol);
  CHECK(anisotropy > 0.1);
}

TEST_CASE("a free surface is the odd image: the same field as a grid twice as deep with a mirrored source", "[cpu]") {
  // Method of images. A grid of nz planes with a free surface at z = 0 against a grid of
  // 2 nz - 1 planes without one (plane nz - 1 is z = 0), a source at depth +d and its negative
  // at -d, and the medium mirrored: the reflection z -> -z maps the axis (nx, ny, nz) to
  // (nx, ny, -nz), i.e. theta to 180 - theta. Every stencil of the deep grid then sees exactly
  // p(-z) = -p(z) (negation commutes with rounding), p stays 0 on z = 0 if the medium there is
  // its own mirror (theta = 0 on that plane), and the two runs do the same arithmetic on the
  // same values: equal to the rounding of a reordered sum, the tolerance of the other tests.
  // Tilted (theta 35 deg, phi 30 deg below z = 0) and VTI.
  for (const double theta_deg : {35.0, 0.0}) {
    const long long n = 31, nz = 19, src_depth = 5, steps = 90;
    TtiModel fs = homogeneous(n, 10, 4, 2000, 0.2, 0.1, theta_deg * M_PI / 180, 30 * M_PI / 180);
    fs.grid.n[2] = nz;
    const size_t cells = static_cast<size_t>(fs.grid.cells());
    for (auto* v : {&fs.vp, &fs.epsilon, &fs.delta, &fs.theta, &fs.phi}) v->resize(cells, v->front());
    for (long long i = 0; i < n * n; ++i) fs.theta[i] = 0;  // plane z = 0: its own mirror
    fs.free_surface = true;
    fs.dt = 0.8 * tti_max_stable_dt(fs);
    TtiModel deep = fs;
    deep.free_surface = false;
    deep.grid.n[2] = 2 * nz - 1;
    const size_t deep_cells = static_cast<size_t>(deep.grid.cells());
    for (auto* v : {&deep.vp, &deep.epsilon, &deep.delta, &deep.phi}) v->assign(deep_cells, v->front());
    deep.theta.assign(deep_cells, 0);
    for (long long iz = 0; iz < 2 * nz - 1; ++iz) {
      const long long z = iz - (nz - 1);  // depth index, 0 at the surface
      const double th = z > 0 ? theta_deg * M_PI / 180 : z < 0 ? M_PI - theta_deg * M_PI / 180 : 0.0;
      std::fill_n(deep.theta.begin() + iz * n * n, n * n, th);
    }
    CpuTti<double> a(fs), b(deep);
    const long long c = n / 2, top = nz - 1;
    for (long long s = 0; s < steps; ++s) {
      const double f = ricker(s * fs.dt, 15, 1.2 / 15);
      a.update();
      a.inject(c, c, src_depth, f);
      a.finish();
      b.update();
      b.inject(c, c, top + src_depth, f);
      b.inject(c, c, top - src_depth, -f);
      b.finish();
    }
    std::vector<double> shallow, mirrored;
    double near_surface = 0, largest = 0;
    for (long long iz = 0; iz < nz; ++iz)
      for (long long iy = 0; iy < n; ++iy)
        for (long long ix = 0; ix < n; ++ix) {
          shallow.push_back(a.p_at(ix, iy, iz));
          mirrored.push_back(b.p_at(ix, iy, top + iz));
          largest = std::max(largest, std::abs(a.p_at(ix, iy, iz)));
          if (iz >= 1 && iz <= 2) near_surface = std::max(near_surface, std::abs(a.p_at(ix, iy, iz)));
        }
    const double worst = max_abs_diff(shallow, mirrored) / max_abs(mirrored);
    const double tol = rounding_tolerance(4, steps);
    std::printf("free surface vs image source (theta %.0f deg): max relative difference %.3e (tolerance %.3e)\n",
                theta_deg, worst, tol);
    CHECK(worst <= tol);
    CHECK(near_surface > 1e-2 * largest);  // the wave reached the surface: the image matters
    // Without the image (p = 0 above the surface, no negation) the field differs: the test can fail.
    TtiModel zero = fs;
    zero.free_surface = false;
    CpuTti<double> z(zero);
    for (long long s = 0; s < steps; ++s) {
      z.update();
      z.inject(c, c, src_depth, ricker(s * fs.dt, 15, 1.2 / 15));
      z.finish();
    }
    std::vector<double> rigid;
    for (long long iz = 0; iz < nz; ++iz)
      for (long long iy = 0; iy < n; ++iy)
        for (long long ix = 0; ix < n; ++ix) rigid.push_back(z.p_at(ix, iy, iz));
    CHECK(max_abs_diff(rigid, mirrored) / max_abs(mirrored) > 100 * tol);
  }
}
