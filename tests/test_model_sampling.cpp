// Model sampling (docs/MODEL.md): a node of a `layers` or `gradient` model carries the mean of
// 1/v^2 over its cell, so the discrete interface sits at the configured depth.
// [unit] node values against hand-computed cell means; [cpu] the reflection from a plane
// interface against the exact solution, for an interface on a node and between nodes.
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "io/config.hpp"
#include "io/hdf5_file.hpp"
#include "io/segy_cube.hpp"
#include "solver/numerics.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"
#include "validation/cpu_propagator.hpp"

using namespace seisrtm;
using namespace seisrtm::validation;

namespace {

// Node value of a cell that holds slowness-squared 1/v^2 in the given volume fractions.
double cell_mean(std::initializer_list<std::pair<double, double>> fraction_and_v) {
  double s2 = 0;
  for (const auto& [fraction, v] : fraction_and_v) s2 += fraction / (v * v);
  return 1 / std::sqrt(s2);
}

std::vector<float> column(const std::string& model_yaml) {
  const Config c = parse_config(
      "grid: {shape: [3, 3, 6], spacing: 10}\ntime: {steps: 1}\n"
      "sources: {shots: [[10, 10, 10]]}\nmodel: " +
      model_yaml + "\n");
  const Grid g{c.grid.shape, c.grid.spacing};
  const std::vector<float> vp = build_velocity(c, g);
  std::vector<float> col;
  for (long long iz = 0; iz < g.n[2]; ++iz) col.push_back(vp[g.index(1, 2, iz)]);
  return col;
}

}  // namespace

TEST_CASE("model sampling: node values are cell means of 1/v^2", "[unit]") {
  // Nodes at z = 0, 10, ..., 50 m; node iz's cell is [10 iz - 5, 10 iz + 5] m, clipped to [0, 50].
  SECTION("layers: interface on a node, inside a cell, in the clipped top cell") {
    const auto v = column(
        "{vp: {type: layers, layers: [{top: 0, vp: 1000}, {top: 2.5, vp: 1500}, "
        "{top: 20, vp: 2000}, {top: 37.5, vp: 3000}]}}");
    // Node 0, cell [0, 5]: half 1000, half 1500.
    CHECK(v[0] == Approx(cell_mean({{0.5, 1000}, {0.5, 1500}})).epsilon(1e-6));
    CHECK(v[1] == Approx(1500).epsilon(1e-6));
    // Node 2 (z = 20) on the interface: half a cell of each side.
    CHECK(v[2] == Approx(cell_mean({{0.5, 1500}, {0.5, 2000}})).epsilon(1e-6));
    CHECK(v[3] == Approx(2000).epsilon(1e-6));
    // Node 4, cell [35, 45]: a quarter 2000, three quarters 3000.
    CHECK(v[4] == Approx(cell_mean({{0.25, 2000}, {0.75, 3000}})).epsilon(1e-6));
    CHECK(v[5] == Approx(3000).epsilon(1e-6));
  }
  SECTION("gradient: mean of (v0 + g z)^-2 over [a, b] is 1 / (v(a) v(b))") {
    const auto v = column("{vp: {type: gradient, value: 2000, gradient: 0.5}}");
    CHECK(v[0] == Approx(std::sqrt(2000.0 * 2002.5)).epsilon(1e-6));  // cell [0, 5]
    CHECK(v[1] == Approx(std::sqrt(2002.5 * 2007.5)).epsilon(1e-6));  // cell [5, 15]
    CHECK(v[5] == Approx(std::sqrt(2022.5 * 2025.0)).epsilon(1e-6));  // cell [45, 50]
    const auto flat = column("{vp: {type: gradient, value: 1800, gradient: 0}}");
    for (const float x : flat) CHECK(x == 1800.0f);
  }
  SECTION("a velocity that reaches 0 m/s inside the model is refused") {
    CHECK_THROWS_WITH(column("{vp: {type: gradient, value: 2000, gradient: -50}}"),
                      Catch::Matchers::Contains("velocities must be > 0"));
  }
}

namespace {

// One column (x = 10, y = 20 m) of an anisotropy volume on the grid of `column`.
std::vector<float> anisotropy_column(const std::string& equation, const std::string& model_yaml,
                                     const std::string& name) {
  const Config c =
      parse_config("grid: {shape: [3, 3, 6], spacing: 10}\ntime: {steps: 1}\nphysics: {equation: " + equation +
                   "}\nsources: {shots: [[10, 10, 10]]}\nmodel: " + model_yaml + "\n");
  const Grid g{c.grid.shape, c.grid.spacing};
  const std::vector<float> v = build_anisotropy(c, g, name);
  std::vector<float> col;
  for (long long iz = 0; iz < g.n[2]; ++iz) col.push_back(v[g.index(1, 2, iz)]);
  return col;
}

}  // namespace

TEST_CASE("model sampling: anisotropy parameters are plain cell means", "[unit]") {
  // Nodes at z = 0, 10, ..., 50 m; node iz's cell is [10 iz - 5, 10 iz + 5] m, clipped to [0, 50].
  SECTION("layers: each layer weighted by its share of the cell") {
    const auto e =
        anisotropy_column("vti",
                          "{epsilon: {type: layers, layers: [{top: 0, epsilon: 0}, {top: 2.5, epsilon: 0.2}, "
                          "{top: 37.5, epsilon: 0.4}]}}",
                          "epsilon");
    // Node 0, cell [0, 5]: 2.5 m of 0 and 2.5 m of 0.2, (2.5 x 0 + 2.5 x 0.2) / 5 = 0.1.
    CHECK(e[0] == Approx(0.1).epsilon(1e-6));
    CHECK(e[1] == Approx(0.2).epsilon(1e-6));
    CHECK(e[3] == Approx(0.2).epsilon(1e-6));
    // Node 4, cell [35, 45], interface at 37.5 inside it: 2.5 m of 0.2 and 7.5 m of 0.4,
    // (2.5 x 0.2 + 7.5 x 0.4) / 10 = 0.35 (a mean of 1/v^2-like transforms would not give this).
    CHECK(e[4] == Approx(0.35).epsilon(1e-6));
    CHECK(e[5] == Approx(0.4).epsilon(1e-6));
  }
  SECTION("gradient: the value at the cell's midpoint") {
    const auto d = anisotropy_column("vti", "{delta: {type: gradient, value: 0.1, gradient: 0.002}}", "delta");
    CHECK(d[0] == Approx(0.1 + 0.002 * 2.5).epsilon(1e-6));   // cell [0, 5]
    CHECK(d[1] == Approx(0.1 + 0.002 * 10).epsilon(1e-6));    // cell [5, 15]
    CHECK(d[5] == Approx(0.1 + 0.002 * 47.5).epsilon(1e-6));  // cell [45, 50]
  }
  SECTION("bodies: the fraction inside blends linearly, in degrees as configured") {
    // A slab-like ellipsoid, |z - 20| <= 20 m. Sub-cell points of node 4 (z = 40) lie at
    // z = 36.25, 38.75, 41.25, 43.75: half of them inside, so 0.5 x 30 + 0.5 x 0 = 15 degrees;
    // node 3 (z = 30) lies wholly inside, node 5 (z = 50) wholly outside.
    const auto t = anisotropy_column(
        "tti", "{theta: {value: 0, bodies: [{center: [10, 20, 20], radii: [1e6, 1e6, 20], theta: 30}]}}", "theta");
    CHECK(t[3] == Approx(30).epsilon(1e-6));
    CHECK(t[4] == Approx(15).epsilon(1e-6));
    CHECK(t[5] == 0.0f);
  }
  SECTION("file: used as stored; epsilon and delta need 1 + 2 value > 0, angles only finite") {
    const auto dir = std::filesystem::temp_directory_path() / "seisrtm_test_model_anisotropy";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    // One file a dataset (write_float_file replaces the file).
    const std::string f = (dir / "aniso.h5").string(), short_file = (dir / "short.h5").string();
    std::vector<float> v(6 * 3 * 3, 0.1f);
    v[3 * 3 * 4 + 3 * 2 + 1] = -500.0f;  // node [z, y, x] = [4, 2, 1]: a valid angle, not a valid epsilon
    io::write_float_file(f, "theta", {6, 3, 3}, v);
    io::write_float_file(short_file, "phi", {5, 3, 3}, std::vector<float>(5 * 3 * 3, 0.1f));
    CHECK(anisotropy_column("tti", "{theta: {type: file, file: '" + f + "'}}", "theta")[4] == -500.0f);
    CHECK_THROWS_WITH(anisotropy_column("tti", "{epsilon: {type: file, file: '" + f + "', dataset: theta}}", "epsilon"),
                      Catch::Matchers::Contains("has epsilon = -500 at [z, y, x] = [4, 2, 1]") &&
                          Catch::Matchers::Contains("1 + 2 epsilon > 0"));
    CHECK_THROWS_WITH(
        anisotropy_column("tti", "{phi: {type: file, file: '" + short_file + "'}}", "phi"),
        Catch::Matchers::Contains("declares shape [5, 3, 3]") && Catch::Matchers::Contains("nothing was read"));
    std::filesystem::remove_all(dir);
  }
}

namespace {

// A vti or tti problem of 20^3 cells, h = 10 m, order 8 (radius 4), damping 5 cells.
Problem anisotropic_problem(const std::string& equation, const std::string& model_yaml,
                            const std::vector<std::string>& overrides = {}) {
  return build_problem(parse_config(
      "grid: {shape: [20, 20, 20], spacing: 10}\ntime: {steps: 10}\nboundary: {damping_width: 5}\n"
      "physics: {equation: " +
          equation + "}\nsources: {shots: [[100, 100, 100]]}\nsolver: {backend: cpu}\nmodel: " + model_yaml + "\n",
      overrides));
}

}  // namespace

TEST_CASE("anisotropic problem: radians, delta <= epsilon, clamping, the fastest speed sets dt", "[unit]") {
  const long long plane = 20 * 20;
  SECTION("tti: angles in radians; vti: none; acoustic: no anisotropy") {
    const Problem p = anisotropic_problem("tti", "{epsilon: 0.2, delta: 0.1, theta: 30, phi: -45}");
    CHECK(p.equation == Equation::tti);
    CHECK(p.anisotropic());
    REQUIRE(p.theta.size() == p.vp.size());
    REQUIRE(p.phi.size() == p.vp.size());
    CHECK(p.theta[1234] == static_cast<float>(30 * std::numbers::pi / 180));
    CHECK(p.phi[777] == static_cast<float>(-45 * std::numbers::pi / 180));
    CHECK(p.epsilon[5] == 0.2f);
    CHECK(p.delta[5] == 0.1f);
    CHECK(p.clamped_cells == 0);
    const Problem v = anisotropic_problem("vti", "{epsilon: 0.2}");
    CHECK(v.epsilon.size() == v.vp.size());
    CHECK(v.delta.size() == v.vp.size());
    CHECK(v.theta.empty());
    CHECK(v.phi.empty());
    const Problem a = anisotropic_problem("acoustic", "{vp: 2000}");
    CHECK(!a.anisotropic());
    CHECK(a.epsilon.empty());
    CHECK(a.delta.empty());
  }
  // delta = 0 down to 92.5 m, 0.2 below; epsilon = 0.1. Node 9, cell [85, 95]: 7.5 m of 0 and
  // 2.5 m of 0.2, delta = 0.05 <= 0.1. Node 10, cell [95, 105]: delta = 0.2 > 0.1, the first.
  const std::string crossing =
      "{epsilon: 0.1, delta: {type: layers, layers: [{top: 0, delta: 0}, {top: 92.5, delta: 0.2}]}}";
  SECTION("delta > epsilon is refused at its first cell") {
    CHECK_THROWS_WITH(anisotropic_problem("vti", crossing),
                      Catch::Matchers::Contains("delta = 0.2 > epsilon = 0.1 at [z, y, x] = [10, 0, 0]") &&
                          Catch::Matchers::Contains("[0, 0, 100] m") &&
                          Catch::Matchers::Contains("grows without bound") &&
                          Catch::Matchers::Contains("model.clamp_delta: true"));
  }
  SECTION("model.clamp_delta sets delta to epsilon there and counts the cells") {
    const Problem p = anisotropic_problem("vti", crossing.substr(0, crossing.size() - 1) + ", clamp_delta: true}");
    CHECK(p.clamped_cells == 10 * plane);  // nodes 10..19 of every column
    CHECK(p.delta[10 * plane + 21] == p.epsilon[10 * plane + 21]);
    CHECK(p.delta[19 * plane] == 0.1f);
    CHECK(p.delta[9 * plane + 5] == Approx(0.05).epsilon(1e-6));  // untouched
    REQUIRE(!p.warnings.empty());
    CHECK_THAT(p.warnings[0], Catch::Matchers::Contains("delta was set to epsilon in 4000 of 8000 cells"));
  }
  SECTION("1 + 2 delta <= 0 is refused naming the key") {
    CHECK_THROWS_WITH(anisotropic_problem("vti", "{delta: -0.5}"),
                      Catch::Matchers::Contains("'model.delta' gives delta = -0.5 at [z, y, x] = [0, 0, 0]") &&
                          Catch::Matchers::Contains("-0.5 < delta <= 10"));
  }
  SECTION("epsilon or delta above 10 or beyond the float range is refused naming the key; above 1 warns") {
    // 20 is 20% given as a fraction; 1e38 made dt 1e-19 of the isotropic one and a run of zeros;
    // 1e300 samples to inf in float.
    CHECK_THROWS_WITH(anisotropic_problem("vti", "{epsilon: 20, delta: 0.1}"),
                      Catch::Matchers::Contains("'model.epsilon' gives epsilon = 20 at [z, y, x] = [0, 0, 0]") &&
                          Catch::Matchers::Contains("-0.5 < epsilon <= 10"));
    CHECK_THROWS_WITH(anisotropic_problem("tti", "{epsilon: 1e38, delta: 0}"),
                      Catch::Matchers::Contains("'model.epsilon' gives epsilon = 1e+38"));
    CHECK_THROWS_WITH(anisotropic_problem("vti", "{epsilon: 0.2, delta: 1e300}"),
                      Catch::Matchers::Contains("'model.delta' gives delta = inf"));
    const Problem p = anisotropic_problem("vti", "{epsilon: 2, delta: 0.1}");
    REQUIRE(!p.warnings.empty());
    CHECK_THAT(p.warnings[0], Catch::Matchers::Contains("model.epsilon is 2 at") &&
                                  Catch::Matchers::Contains("a percentage given as a fraction?"));
    CHECK(anisotropic_problem("vti", "{epsilon: 1, delta: 0.1}").warnings.empty());
  }
  SECTION("tti: angles reduced to [-180, 180] degrees in double before radians; beyond the float range refused") {
    // 1e9 degrees is a float exactly and 280 degrees more than a multiple of 360: the same angle
    // as -80. Converted in float radians (1.7e7 rad, a float step of 2 rad) it was not.
    const Problem a = anisotropic_problem("tti", "{epsilon: 0.2, delta: 0.1, theta: 1e9, phi: 280}");
    const float want = static_cast<float>(-80 * std::numbers::pi / 180);
    CHECK(a.theta[100] == want);
    CHECK(a.phi[100] == want);
    // Angles in [-180, 180] keep their exact radians (every earlier result stays the same).
    CHECK(anisotropic_problem("tti", "{theta: -180, phi: 180}").phi[7] ==
          static_cast<float>(180 * std::numbers::pi / 180));
    CHECK_THROWS_WITH(anisotropic_problem("tti", "{epsilon: 0.2, delta: 0.1, phi: 1e39}"),
                      Catch::Matchers::Contains("'model.phi' gives phi = inf") &&
                          Catch::Matchers::Contains("a finite angle in degrees"));
  }
  SECTION("vti: dt_max from the fastest, horizontal P speed vp sqrt(1 + 2 eps)") {
    const Problem iso = anisotropic_problem("vti", "{vp: 2000}");
    const Problem p = anisotropic_problem("vti", "{vp: 2000, epsilon: 0.2}");
    const double fast = 2000 * std::sqrt(1 + 2 * 0.2);
    // epsilon is stored as a float (0.2f): agreement to float precision.
    CHECK(p.v_max == Approx(fast).epsilon(1e-7));
    CHECK(p.v_min == 2000);
    CHECK(p.dt_max == Approx(max_stable_dt(p.grid.h, p.radius, fast)).epsilon(1e-7));
    CHECK(p.dt_max == Approx(iso.dt_max / std::sqrt(1.4)).epsilon(1e-7));
    // The damping is set for the fastest wave too: sigma_max is proportional to v_max.
    CHECK(p.damping[0][0] / p.dt == Approx(iso.damping[0][0] / iso.dt * std::sqrt(1.4)).epsilon(1e-5));
    // epsilon < 0: the vertical speed vp is the fastest.
    CHECK(anisotropic_problem("vti", "{vp: 2000, epsilon: -0.2, delta: -0.3}").v_max == 2000);
    // A dt between the two limits: stable for vp alone, refused with the anisotropic speed named.
    const std::string dt = "time.dt=" + std::to_string(0.5 * (p.dt_max + iso.dt_max));
    CHECK_NOTHROW(anisotropic_problem("vti", "{vp: 2000}", {dt}));
    CHECK_THROWS_WITH(anisotropic_problem("vti", "{vp: 2000, epsilon: 0.2}", {dt}),
                      Catch::Matchers::Contains("'time.dt'") && Catch::Matchers::Contains("is unstable") &&
                          Catch::Matchers::Contains("the fastest, horizontal P speed vp sqrt(1 + 2 epsilon)"));
  }
}

namespace {

// Exact reflected pressure of a point source over a plane interface, receiver on the vertical
// through the source (offset 0). v1 above, v2 below, equal densities; image distance
// L = 2 d - zs - zr. Cagniard-de Hoop along an imaginary horizontal slowness, where the time
// t >= T = L / v1 is real: vertical slownesses q1 = t / L and q2 = sqrt(q1^2 - a),
// a = 1/v1^2 - 1/v2^2, reflection coefficient R(t) = (q1 - q2) / (q1 + q2), and
//   p_R(t) = f(t) * d/dt [H(t - T) R(t)] / (4 pi L)
//          = (R(T) f(t - T) + int_T^t R'(tau) f(t - tau) dtau) / (4 pi L).
// R(T) = (v2 - v1) / (v2 + v1); R falls to 0 for large t (at zero frequency the equation is
// Laplace's, which does not see v); R = 1 would give the image source f(t - T) / (4 pi L).
// The R' term is not small: at 12 Hz over L = 400 m it moves the event by milliseconds.
class PlaneInterfaceReflection {
 public:
  PlaneInterfaceReflection(double v1, double v2, double length, double f_peak, double delay)
      : v1_(v1), v2_(v2), l_(length), f_(f_peak), delay_(delay) {}

  double travel_time() const { return l_ / v1_; }

  double operator()(double t) const {
    const double t0 = travel_time();
    if (t <= t0) return 0;
    const double r0 = (v2_ - v1_) / (v2_ + v1_);
    // Simpson's rule on [T, t], steps of <= 0.05 ms (the Ricker's period is 83 ms).
    const long long n = 2 * static_cast<long long>(std::ceil((t - t0) / 1e-4)) + 2;
    const double d = (t - t0) / n;
    double integral = 0;
    for (long long j = 0; j <= n; ++j) {
      const double tau = t0 + j * d;
      const double w = (j == 0 || j == n) ? 1 : (j % 2 ? 4 : 2);
      integral += w * r_prime(tau) * source(t - tau);
    }
    integral *= d / 3;
    return (r0 * source(t - t0) + integral) / (4 * std::numbers::pi * l_);
  }

 private:
  // The simulation injects f(n dt) for n >= 0 only.
  double source(double t) const { return t < 0 ? 0 : ricker(t, f_, delay_); }
  // dR/dt = -2 a / (L q2 (q1 + q2)^2), a = 1/v1^2 - 1/v2^2: smooth for t >= T (q2 >= 1/v2).
  double r_prime(double t) const {
    const double a = 1 / (v1_ * v1_) - 1 / (v2_ * v2_);
    const double q1 = t / l_, q2 = std::sqrt(q1 * q1 - a);
    return -2 * a / (l_ * q2 * (q1 + q2) * (q1 + q2));
  }
  double v1_, v2_, l_, f_, delay_;
};

struct Pick {
  double lag = 0;             // s, numerical event minus exact event
  double misfit = 0;          // ||w (num - a ex(t))|| / ||w a ex(t)||, a the best scale
  double misfit_aligned = 0;  // the same against ex(t - lag)
};

// Arrival of `num` (sample n at t = (n + 1) dt) relative to `ex`: the lag that maximises the
// windowed normalised correlation sum w num ex(t - lag) / sqrt(sum w ex(t - lag)^2), searched in
// steps of dt/4 and refined by a parabola through the best three. The Hann window (half-width
// `half`, s) is centred on the exact event, so both traces see the same part of the record.
Pick pick_lag(const std::vector<double>& num, const PlaneInterfaceReflection& ex, double centre, double half,
              double dt) {
  std::vector<long long> idx;
  std::vector<double> w;
  for (long long n = 0; n < static_cast<long long>(num.size()); ++n) {
    const double u = ((n + 1) * dt - centre) / half;
    if (std::abs(u) < 1) {
      idx.push_back(n);
      w.push_back(std::pow(std::cos(std::numbers::pi * u / 2), 2));
    }
  }
  auto corr = [&](double lag) {
    double nr = 0, er = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const double e = ex((idx[i] + 1) * dt - lag);
      nr += w[i] * num[idx[i]] * e;
      er += w[i] * e * e;
    }
    return nr / std::sqrt(er);
  };
  const double step = dt / 4;
  const int m = 40;  // +- 10 dt
  std::vector<double> c(2 * m + 1);
  for (int j = -m; j <= m; ++j) c[j + m] = corr(j * step);
  const int b = std::clamp(static_cast<int>(std::max_element(c.begin(), c.end()) - c.begin()), 1, 2 * m - 1);
  const double y0 = c[b - 1], y1 = c[b], y2 = c[b + 1];
  // Relative misfit of the event after the best scaling, at a given lag.
  auto misfit = [&](double lag) {
    double ne = 0, ee = 0, rr = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const double e = ex((idx[i] + 1) * dt - lag);
      ne += w[i] * num[idx[i]] * e;
      ee += w[i] * e * e;
    }
    const double scale = ne / ee;
    for (size_t i = 0; i < idx.size(); ++i) {
      const double r = num[idx[i]] - scale * ex((idx[i] + 1) * dt - lag);
      rr += w[i] * r * r;
    }
    return std::sqrt(rr / (scale * scale * ee));
  };
  Pick p;
  p.lag = ((b - m) + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2)) * step;
  p.misfit = misfit(0);
  p.misfit_aligned = misfit(p.lag);
  return p;
}

// Numerical two-way-time error of the scheme over a path of length `path` m at frequency f Hz:
// the discrete dispersion relation of leapfrog in time and the 2R-th order stencil along one axis,
//   (2/dt)^2 sin^2(omega dt / 2) = v^2 K(k)^2,   K(k)^2 = -(1/h^2) (c0 + 2 sum_m c_m cos(m k h)),
// solved for the numerical wavenumber k(omega); returns the larger of the phase delay error
// path (k/omega - 1/v) and the group delay error path (dk/domega - 1/v), s.
double dispersion_delay_error(double f, double v, double h, double dt, int radius, double path) {
  const auto c = second_derivative_weights(radius);
  auto big_k = [&](double k) {
    double s = c[0];
    for (int m = 1; m <= radius; ++m) s += 2 * c[m] * std::cos(m * k * h);
    return std::sqrt(-s) / h;
  };
  auto k_of = [&](double omega) {
    const double want = 2 / (v * dt) * std::sin(omega * dt / 2);
    double lo = 0, hi = std::numbers::pi / h;  // K rises monotonically on [0, pi/h]
    for (int i = 0; i < 200; ++i) {
      const double mid = (lo + hi) / 2;
      (big_k(mid) < want ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
  };
  const double omega = 2 * std::numbers::pi * f, d_omega = omega * 1e-4;
  const double phase = path * (k_of(omega) / omega - 1 / v);
  const double group = path * ((k_of(omega + d_omega) - k_of(omega - d_omega)) / (2 * d_omega) - 1 / v);
  return std::max(std::abs(phase), std::abs(group));
}

}  // namespace

TEST_CASE("model sampling: a plane interface reflects from its configured depth, on and between nodes", "[cpu]") {
  // v1 = 2000 m/s over v2 = 3000 m/s, h = 10 m, order 8, Ricker 12 Hz (16.7 points per
  // wavelength at the peak), dt = 1 ms for every run. Source and receiver at the same node,
  // z = 350 m. Interface at d = 550 m (node 55) + 0, h/4, h/2, 3h/4: the two-way time
  // L / v1 = 2 (d - 350) / v1 = 0.2 s, the event peaks at 0.3 s. The reflection is isolated exactly
  // as the difference between the layered run and a run with v1 everywhere but the last node
  // (3000 m/s there, deep in the bottom damping zone, so that v_max and with it the damping are
  // the same): above the interface the two runs agree until the reflection arrives.
  // Damping zones (20 cells) are not transparent at 12 Hz: keep their echoes of the reflection
  // out of the +-0.07 s window. The top zone is 150 m above the receiver (echo >= 0.15 s later),
  // the bottom zone >= 232 m below the interface (>= 0.15 s), the side zones 200 m off the
  // vertical (path sqrt(400^2 + 200^2) + 200 m, >= 0.12 s).
  const double v1 = 2000, v2 = 3000, h = 10, f = 12, delay = 1.2 / f, dt = 0.001, zs = 350, d0 = 550;
  const std::string base =
      "grid: {shape: [81, 81, 100], spacing: 10}\n"
      "time: {steps: 400, dt: 0.001}\n"
      "boundary: {damping_width: 20}\n"
      "sources: {wavelet: {peak_frequency: 12}, shots: [[400, 400, 350]]}\n"
      "receivers: {list: [[400, 400, 350]]}\n";
  auto trace = [&](const std::string& model) {
    const Problem pb = build_problem(parse_config(base + "model: " + model + "\n"));
    REQUIRE(pb.dt == dt);
    CpuPropagator prop(pb);
    prop.begin_shot(0);
    prop.advance(0, pb.steps);
    std::vector<float> t(static_cast<size_t>(pb.steps));
    prop.traces(t.data());
    return std::vector<double>(t.begin(), t.end());
  };
  const auto direct = trace("{vp: {type: layers, layers: [{top: 0, vp: 2000}, {top: 985, vp: 3000}]}}");

  const int shifts = 4;
  std::vector<double> arrival(shifts), lag(shifts);
  for (int k = 0; k < shifts; ++k) {
    const double d = d0 + k * h / 4;
    char model[160];
    std::snprintf(model, sizeof model, "{vp: {type: layers, layers: [{top: 0, vp: 2000}, {top: %.3f, vp: 3000}]}}", d);
    auto refl = trace(model);
    for (size_t n = 0; n < refl.size(); ++n) refl[n] -= direct[n];
    const PlaneInterfaceReflection ex(v1, v2, 2 * (d - zs), f, delay);
    const Pick p = pick_lag(refl, ex, delay + ex.travel_time(), 0.07, dt);
    lag[k] = p.lag;
    arrival[k] = ex.travel_time() + p.lag;
    std::printf(
        "model sampling: interface at %.2f m: two-way time %.5f s, exact %.5f s, error %+.4f ms "
        "(%+.2f m of depth); misfit of the event %.2f%% (%.2f%% once aligned)\n",
        d, arrival[k], ex.travel_time(), 1e3 * p.lag, p.lag * v1 / 2, 100 * p.misfit, 100 * p.misfit_aligned);
  }

  // (2) d on a node: the exact time within the scheme's own dispersion. Along the path
  // L = 400 m in v1, the delay error of leapfrog + 8th-order stencil is largest at the top of the
  // band that carries the event (2 f_peak = 24 Hz, where the Ricker's spectrum still has 0.2 of
  // its peak); below f_peak it is smaller. Plus the pick's own resolution, 0.05 dt (generous: the
  // parabola spans +-dt/4 of a correlation peak ~60 dt wide, its bias is far below that).
  double disp = 0;
  for (const double fq : {f / 2, f, 1.5 * f, 2 * f})
    disp = std::max(disp, dispersion_delay_error(fq, v1, h, dt, 4, 2 * (d0 - zs)));
  const double tol_time = disp + 0.05 * dt;
  std::printf(
      "model sampling: on-node error %+.4f ms, tolerance %.4f ms (dispersion %.4f ms + "
      "pick %.4f ms)\n",
      1e3 * lag[0], 1e3 * tol_time, 1e3 * disp, 1e3 * 0.05 * dt);
  CHECK(std::abs(lag[0]) <= tol_time);

  // (1) Sub-cell shifts: each h/4 deeper adds 2 (h/4) / v1 = 2.5 ms. The averaged cell puts
  // the discrete interface's reflectivity into two jumps, at the cell's faces z_j -+ h/2, of
  // weights 1/2 -+ delta/h for an interface at z_j + delta. Their first moment is exactly
  // z_j + delta; the pair's phase, atan(x tan(k h)) with x = 2 delta / h, against 2 k delta
  // = x k h, is off by (k h)^3 x (1 - x^2) / 3, i.e. a depth error
  //   h (k h)^2 x (1 - x^2) / 6 <= h (k h)^2 / (9 sqrt(3))   (x = 1/sqrt(3)),
  // taken at 2 f_peak (k = 2 pi 24 / 2000 1/m: 0.009 h at f_peak, 0.036 h at 2 f_peak).
  // Two-way: 2 / v1 per m. Plus the pick's resolution twice (two picks per difference).
  const double k_top = 2 * std::numbers::pi * 2 * f / v1;
  const double depth_err = h * (k_top * h) * (k_top * h) / (9 * std::sqrt(3.0));
  const double tol_shift = 2 * depth_err / v1 + 2 * 0.05 * dt;
  const double want = 2 * (h / 4) / v1;
  for (int k = 1; k < shifts; ++k) {
    const double shift = arrival[k] - arrival[k - 1];
    std::printf("model sampling: shift %d: %.4f ms, want %.4f ms, tolerance %.4f ms\n", k, 1e3 * shift, 1e3 * want,
                1e3 * tol_shift);
    CHECK(std::abs(shift - want) <= tol_shift);
  }
}

namespace {

// A model volume file on its own grid: HDF5 with origin and spacing attributes on the dataset.
void write_model_h5(const std::string& file, const std::array<long long, 3>& n, const std::array<double, 3>& h,
                    const std::array<double, 3>& origin, const std::vector<float>& v) {
  io::write_float_file(file, "vp", {hsize_t(n[2]), hsize_t(n[1]), hsize_t(n[0])}, v);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, "vp", H5P_DEFAULT);
  io::write_attribute(d, "origin", std::vector<double>{origin[0], origin[1], origin[2]});
  io::write_attribute(d, "spacing", std::vector<double>{h[0], h[1], h[2]});
  H5Dclose(d);
  H5Fclose(f);
}

Config model_grid(const std::string& file, const std::array<double, 3>& origin, int damping = 3) {
  Config c;
  c.grid.shape = {16, 12, 20};
  c.grid.spacing = {10, 10, 10};
  c.grid.origin = origin;
  c.boundary.damping_width = damping;
  c.boundary.free_surface = true;
  c.model.vp.type = VolumeType::file;
  c.model.vp.file = file;
  c.model.vp.dataset = "vp";
  return c;
}

Grid grid_of(const Config& c) {
  Grid g;
  g.n = c.grid.shape, g.h = c.grid.spacing, g.origin = c.grid.origin;
  return g;
}

}  // namespace

TEST_CASE("a model on its own grid (HDF5 origin and spacing, or a SEG-Y cube) is resampled as cell means of 1/v^2",
          "[unit]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "seisrtm_model_resample";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::array<double, 3> o{500000, 4200000, 0};  // the grid's survey origin
  // The source: 12 x 9 x 14 samples of 20 x 20 x 20 m from 30 m west, 40 m south and 10 m above
  // the grid's corner (so it covers the grid, damping zone included), vp growing by a step of
  // 500 m/s below z = 110 m (a source cell boundary: samples at 10 + 20 k).
  const std::array<long long, 3> ns{12, 9, 14};
  const std::array<double, 3> hs{20, 20, 20}, os{o[0] - 30, o[1] - 40, o[2] - 10};
  std::vector<float> v(static_cast<size_t>(ns[0] * ns[1] * ns[2]));
  for (long long z = 0; z < ns[2]; ++z)
    for (long long i = 0; i < ns[0] * ns[1]; ++i)
      v[static_cast<size_t>(z * ns[0] * ns[1] + i)] = os[2] + double(z) * hs[2] < 110 ? 1500.0f : 2000.0f;
  const std::string h5 = (dir / "model.h5").string(), sgy = (dir / "model.sgy").string();
  write_model_h5(h5, ns, hs, os, v);
  io::write_segy_cube(sgy, v.data(), ns, hs, os, 2, "test model");

  const Config c = model_grid(h5, o);
  const Grid g = grid_of(c);
  const std::vector<float> from_h5 = build_velocity(c, g);
  Config cs = c;
  cs.model.vp.file = sgy;
  const std::vector<float> from_sgy = build_velocity(cs, g);
  // The same geometry and samples through either file: bit for bit.
  REQUIRE(from_h5.size() == from_sgy.size());
  CHECK(std::memcmp(from_h5.data(), from_sgy.data(), from_h5.size() * sizeof(float)) == 0);
  // The source's samples lie at z = -10 + 20 k, its cells 20 m tall: the step is at z = 100 m,
  // between the cells of the samples at 90 (1500) and 110 (2000). Node z = 90 m: its cell [85, 95]
  // is all 1500; z = 100: [95, 105] half in each, so 1 / sqrt((1/1500^2 + 1/2000^2) / 2) (the cell
  // mean of 1/v^2, one float rounding away: a derived bound of one ulp); z = 110: all 2000.
  const auto at = [&](long long ix, long long iy, long long iz) { return from_h5[size_t(g.index(ix, iy, iz))]; };
  const float half = static_cast<float>(1 / std::sqrt((1 / (1500.0 * 1500.0) + 1 / (2000.0 * 2000.0)) / 2));
  for (long long ix : {0LL, 7LL, 15LL}) {
    CHECK(std::abs(at(ix, 5, 9) - 1500.0f) <= std::nextafter(1500.0f, 2e3f) - 1500.0f);
    CHECK(std::abs(at(ix, 5, 10) - half) <= std::nextafter(half, 3e3f) - half);
    CHECK(std::abs(at(ix, 5, 11) - 2000.0f) <= std::nextafter(2000.0f, 3e3f) - 2000.0f);
  }
  // The grid's own geometry: used as stored, bit for bit.
  std::vector<float> mine(static_cast<size_t>(g.cells()));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = 1500.0f + float(i % 97);
  write_model_h5(h5, g.n, g.h, o, mine);
  const std::vector<float> stored = build_velocity(c, g);
  CHECK(std::memcmp(stored.data(), mine.data(), mine.size() * sizeof(float)) == 0);

  // A model of the interior only (damping width 3, free surface: x, y cells 3 .. n - 4, z 0 ..
  // 16): the damping zone takes the edge values, those of the interior's edge cells.
  const std::array<long long, 3> ni{10, 6, 17};
  std::vector<float> inner(static_cast<size_t>(ni[0] * ni[1] * ni[2]));
  for (size_t i = 0; i < inner.size(); ++i) inner[i] = 1500.0f + 10.0f * float(i % 13);
  write_model_h5(h5, ni, g.h, {o[0] + 30, o[1] + 30, o[2]}, inner);
  const std::vector<float> padded = build_velocity(c, g);
  const auto p = [&](long long ix, long long iy, long long iz) { return padded[size_t(g.index(ix, iy, iz))]; };
  for (long long iz : {0LL, 8LL, 16LL, 17LL, 19LL}) {
    CHECK(p(0, 0, iz) == p(3, 3, std::min(iz, 16LL)));
    CHECK(p(15, 11, iz) == p(12, 8, std::min(iz, 16LL)));
    CHECK(p(1, 5, iz) == p(3, 5, std::min(iz, 16LL)));
  }
  // One cell short of the interior in x: refused, naming what the model covers and what is needed.
  const std::array<long long, 3> short_x{9, 6, 17};
  write_model_h5(h5, short_x, g.h, {o[0] + 30, o[1] + 30, o[2]}, std::vector<float>(size_t(9 * 6 * 17), 1500.0f));
  CHECK_THROWS_WITH(build_velocity(c, g), Catch::Matchers::Contains("not covered x at 500120 m (cell 12)") &&
                                              Catch::Matchers::Contains("grid's interior needs x in [500030, 500120]"));
  // A negative velocity in the source is named by its sample, before any resampling.
  std::vector<float> bad = v;
  bad[5] = -1500;
  write_model_h5(h5, ns, hs, os, bad);
  CHECK_THROWS_WITH(build_velocity(c, g), Catch::Matchers::Contains("vp = -1500 at sample (x, y, z) = (5, 0, 0)"));
  std::filesystem::remove_all(dir);
}
