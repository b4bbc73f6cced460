// [cpu] The reference propagator against mathematics: the analytic point-source solution,
// convergence with order and spacing, the damping zone's reflections and reciprocity.
#include <cmath>
#include <cstdio>
#include <string>

#include "io/config.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"
#include "validation/analytic.hpp"
#include "validation/cpu_propagator.hpp"
#include "validation/norms.hpp"

using namespace seisrtm;
using namespace seisrtm::validation;

namespace {

struct Run {
  Problem problem;
  std::vector<float> traces;  // [receiver][step]
  std::vector<double> trace(long long r) const {
    return {traces.begin() + r * problem.steps, traces.begin() + (r + 1) * problem.steps};
  }
};

Run simulate(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  Run run{build_problem(parse_config(yaml, sets)), {}};
  CpuPropagator prop(run.problem);
  prop.begin_shot(0);
  prop.advance(0, run.problem.steps);
  run.traces.resize(run.problem.receivers.size() * run.problem.steps);
  prop.traces(run.traces.data());
  return run;
}

std::string cube(long long n, double h) {
  return "grid: {shape: [" + std::to_string(n) + ", " + std::to_string(n) + ", " + std::to_string(n) +
         "], spacing: " + std::to_string(h) + "}\n";
}

}  // namespace

TEST_CASE("homogeneous medium, 8th order: traces match f(t - r/v) / (4 pi r)", "[cpu]") {
  // v = 2000 m/s, Ricker 12 Hz (useful band to 30 Hz: 6.7 points per wavelength at h = 10 m).
  // The grid edge is 700 m from the source, so nothing returns from it within 0.35 s.
  const double v = 2000, f = 12, delay = 1.2 / f, h = 10;
  const long long n = 141;
  const double c = 70 * h;  // source at the centre node
  const std::string yaml = cube(n, h) + "time: {steps: 190}\nmodel: {vp: 2000}\n" +
                           "sources: {wavelet: {peak_frequency: 12}, shots: [[700, 700, 700]]}\n" +
                           "receivers: {list: [[800, 700, 700], [700, 900, 700], [700, 700, 1000]]}\n";
  const Run run = simulate(yaml);
  const double dt = run.problem.dt;
  const double dist[3] = {100, 200, 300};
  double peak[3];
  for (int r = 0; r < 3; ++r) {
    const auto num = run.trace(r);
    const auto ref = point_source_trace(dist[r], v, f, delay, dt, run.problem.steps);
    const double corr = normalised_correlation(num, ref);
    const long long shift = static_cast<long long>(peak_index(num)) - static_cast<long long>(peak_index(ref));
    peak[r] = std::abs(num[peak_index(num)]);
    INFO("receiver at r = " << dist[r] << " m: correlation " << corr << ", peak shift " << shift << " steps");
    CHECK(corr >= 0.99);
    CHECK(std::abs(shift) <= 1);
    // Amplitude and phase together: the trace's relative L2 error against the analytic one.
    // Its estimate is the leapfrog's phase error: a frequency w arrives shifted by
    // w T (w dt)^2 / 24 after the travel time T = r / v, so e ~ T dt^2 sqrt(<w^6>) / 24 over the
    // Ricker's power spectrum |U|^2 ~ w^4 exp(-2 w^2 / wp^2), whose moment is
    // <w^6> = (9/2)(7/2)(5/2) wp^6 / 8 (Gamma functions). The 8th-order stencil's own error is
    // far smaller at 6.7 points per wavelength (and of the opposite sign). A quarter more
    // leaves room for the second-order terms; a 2% error in amplitude alone exceeds it.
    const double wp = 2 * M_PI * f, T = dist[r] / v;
    const double bound = 1.25 * T * dt * dt * std::sqrt(78.75 / 8) * wp * wp * wp / 24;
    const double e = relative_l2(num, ref);
    std::printf("analytic check r = %.0f m: trace rel L2 %.3e (bound %.3e), peak %.4e (analytic %.4e)\n", dist[r], e,
                bound, std::abs(num[peak_index(num)]), std::abs(ref[peak_index(ref)]));
    CHECK(e <= bound);
    std::printf("analytic check r = %.0f m: correlation %.5f, peak shift %lld steps, peak %.4e (analytic %.4e)\n",
                dist[r], corr, shift, peak[r], std::abs(ref[peak_index(ref)]));
  }
  (void)c;
  // Geometrical spreading: amplitude ~ 1 / r.
  CHECK(peak[0] / peak[2] == Approx(dist[2] / dist[0]).epsilon(0.03));
  CHECK(peak[0] / peak[1] == Approx(dist[1] / dist[0]).epsilon(0.03));
}

TEST_CASE("convergence: the error falls with space order and with grid refinement", "[cpu]") {
  // Receiver 160 m from the source, v = 2000 m/s, Ricker 10 Hz (band to 25 Hz, lambda 80 m).
  // dt = 0.5 ms for every run so the spatial error dominates; the domain keeps boundary
  // returns out of the 0.3 s window.
  const double v = 2000, f = 10, delay = 1.2 / f;
  auto error = [&](int order, double h) {
    const long long half = std::lround(580.0 / h);
    const long long n = 2 * half + 1;
    const double c = half * h;
    char src[256];
    std::snprintf(src, sizeof src,
                  "sources: {wavelet: {peak_frequency: 10}, shots: [[%g, %g, %g]]}\n"
                  "receivers: {list: [[%g, %g, %g]]}\n",
                  c, c, c, c + 160, c, c);
    const Run run = simulate(cube(n, h) + "time: {steps: 600, dt: 0.0005}\nmodel: {vp: 2000}\n" + src,
                             {"physics.space_order=" + std::to_string(order), "boundary.damping_width=10"});
    const auto ref = point_source_trace(160, v, f, delay, run.problem.dt, run.problem.steps);
    return relative_l2(run.trace(0), ref);
  };
  const double e2_20 = error(2, 20), e2_10 = error(2, 10);
  const double e4_20 = error(4, 20), e4_10 = error(4, 10);
  const double e8_10 = error(8, 10);
  const double order2 = std::log2(e2_20 / e2_10), order4 = std::log2(e4_20 / e4_10);
  std::printf("convergence: order 2: error %.3e (h 20) -> %.3e (h 10), measured order %.2f\n", e2_20, e2_10, order2);
  std::printf("convergence: order 4: error %.3e (h 20) -> %.3e (h 10), measured order %.2f\n", e4_20, e4_10, order4);
  std::printf("convergence: h 10: order 2 %.3e, order 4 %.3e, order 8 %.3e\n", e2_10, e4_10, e8_10);
  CHECK(order2 >= 1.7);
  CHECK(order4 >= 3.0);
  CHECK(e4_10 < e2_10);
  CHECK(e8_10 < e4_10);
}

namespace {

// The damping zone's echo: a source and three receivers 70-130 m away at the centre of a grid of
// 40 interior cells and the default 30-cell zone on each side, against the same survey in a grid
// large enough that nothing returns within the 0.6 s window (a thin 10-cell zone 750 m from the
// source: its echo arrives after 0.7 s at 2000 m/s). `physics` gives the physics and model.
struct DampingEcho {
  Run small, large;
  double reflected = 0, direct = 0;  // energies of small - large and of large, all receivers
};
DampingEcho damping_echo(const std::string& physics, const std::string& label) {
  const double h = 10;
  auto run_in = [&](long long n, const std::vector<std::string>& sets) {
    const double c = (n / 2) * h;
    char body[512];
    std::snprintf(body, sizeof body,
                  "time: {steps: 330}\n"
                  "sources: {wavelet: {peak_frequency: 10}, shots: [[%g, %g, %g]]}\n"
                  "receivers: {list: [[%g, %g, %g], [%g, %g, %g], [%g, %g, %g]]}\n",
                  c, c, c, c + 100, c, c, c + 70, c + 70, c, c, c - 50, c + 120);
    return simulate(cube(n, h) + physics + body, sets);
  };
  DampingEcho e{run_in(101, {}), run_in(171, {"boundary.damping_width=10"})};
  for (long long r = 0; r < 3; ++r) {
    const auto a = e.small.trace(r), b = e.large.trace(r);
    double er = 0;
    for (size_t i = 0; i < a.size(); ++i) er += (a[i] - b[i]) * (a[i] - b[i]);
    std::printf("%s: receiver %lld: reflected/direct energy %.3e\n", label.c_str(), r, er / energy(b));
    e.reflected += er;
    e.direct += energy(b);
  }
  std::printf("%s: all receivers: reflected/direct energy %.3e (amplitude %.2f%%)\n", label.c_str(),
              e.reflected / e.direct, 100 * std::sqrt(e.reflected / e.direct));
  return e;
}

}  // namespace

TEST_CASE("damping zone: reflected energy <= 0.1% of the direct wave's", "[cpu]") {
  const DampingEcho e = damping_echo("model: {vp: 2000}\n", "damping zone");
  REQUIRE(e.small.problem.config.boundary.damping_width == 30);
  CHECK(e.reflected / e.direct <= 1e-3);
  CHECK(e.direct > 0);
}

TEST_CASE("damping zone for tti: reflected energy <= 0.1% of the direct wave's, as for acoustic", "[cpu]") {
  // The acoustic test's geometry and sponge in a homogeneous tilted medium (epsilon 0.2, delta
  // 0.1, theta 30, phi 20 degrees), at order 4 (8 points per shortest wavelength, enough for it;
  // the CPU TTI step at order 8 would keep the tier busy for over a minute). The zone's profile
  // is set by the fastest speed (the horizontal vp sqrt(1 + 2 eps) = 2191 m/s), so it must absorb
  // as well as for acoustic, the pseudo-acoustic system's slow mode included (it spends longer in
  // the zone). The reference's far zone: 750 m away, its echo returns after 0.68 s at 2191 m/s,
  // after the 0.6 s window.
  const DampingEcho e = damping_echo(
      "physics: {equation: tti, space_order: 4}\nmodel: {vp: 2000, epsilon: 0.2, delta: 0.1, theta: 30, phi: 20}\n",
      "damping zone, tti");
  REQUIRE(e.small.problem.equation == Equation::tti);
  REQUIRE(e.small.problem.steps * e.small.problem.dt <= 0.68);
  CHECK(e.reflected / e.direct <= 1e-3);
  CHECK(e.direct > 0);
}

TEST_CASE("reciprocity: swapping source and receiver gives the same trace", "[cpu]") {
  // Layered model with a free surface; both points off the grid (trilinear weights).
  const std::string base = cube(61, 10) +
                           "time: {steps: 250}\nboundary: {free_surface: true}\n"
                           "model: {vp: {type: layers, layers: [{top: 0, vp: 1800}, {top: 250, vp: 2600}]}}\n"
                           "sources: {wavelet: {peak_frequency: 10}}\n";
  const std::string a = "[213.0, 287.0, 104.0]", b = "[402.5, 331.0, 176.0]";
  const Run ab = simulate(base, {"sources.shots=[" + a + "]", "receivers.list=[" + b + "]"});
  const Run ba = simulate(base, {"sources.shots=[" + b + "]", "receivers.list=[" + a + "]"});
  const double diff = relative_l2(ab.traces.data(), ba.traces.data(), ab.traces.size());
  std::printf("reciprocity: relative difference %.3e\n", diff);
  CHECK(max_abs(ab.traces.data(), ab.traces.size()) > 0);
  CHECK(diff < 1e-4);
}

TEST_CASE("a CPU run that blows up stops with the step and a hint instead of writing NaN", "[cpu]") {
  // dt above the stability limit on purpose (bypassing the config check): the field grows
  // without bound and overflows to Inf, then NaN, within a few hundred steps.
  Problem p = build_problem(
      parse_config(cube(31, 10) + "time: {steps: 600}\nmodel: {vp: 2000}\n"
                                  "boundary: {damping_width: 5}\n"
                                  "sources: {shots: [[150, 150, 150]]}\nreceivers: {list: [[100, 150, 150]]}\n"));
  p.dt = 1.6 * p.dt_max;
  CpuPropagator prop(p);
  prop.begin_shot(0);
  CHECK_THROWS_WITH(prop.advance(0, p.steps),
                    Catch::Matchers::Contains("NaN or Inf by step") && Catch::Matchers::Contains("time.dt"));
}
