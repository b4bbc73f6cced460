// [unit] Finite-difference weights, stability limit, wavelets and interpolation weights.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>

#include "solver/geometry.hpp"
#include "solver/numerics.hpp"
#include "tests/catch.hpp"
#include "validation/half.hpp"

using namespace seisrtm;

TEST_CASE("Fornberg second-derivative weights match the published 8th-order stencil", "[unit]") {
  const auto c = second_derivative_weights(4);
  REQUIRE(c.size() == 5);
  CHECK(c[0] == Approx(-205.0 / 72).epsilon(1e-14));
  CHECK(c[1] == Approx(8.0 / 5).epsilon(1e-14));
  CHECK(c[2] == Approx(-1.0 / 5).epsilon(1e-14));
  CHECK(c[3] == Approx(8.0 / 315).epsilon(1e-14));
  CHECK(c[4] == Approx(-1.0 / 560).epsilon(1e-14));
  // Order 2: the classic [1, -2, 1].
  const auto c2 = second_derivative_weights(1);
  CHECK(c2[0] == Approx(-2.0));
  CHECK(c2[1] == Approx(1.0));
}

TEST_CASE("second-derivative weights are exact on polynomials up to degree 2R", "[unit]") {
  for (int r : {1, 2, 4, 8}) {
    const auto c = second_derivative_weights(r);
    // Weights sum to zero (constants) and reproduce d2/dx2 x^2 = 2 at 0 (with symmetry).
    double sum = c[0], second = 0, high = 0;
    for (int k = 1; k <= r; ++k) {
      sum += 2 * c[k];
      second += 2 * c[k] * k * k;
      high += 2 * c[k] * std::pow(k, 2 * r);  // x^{2R}: exact second derivative at 0 is 0 for R > 1
    }
    INFO("radius " << r);
    CHECK(std::abs(sum) < 1e-10);
    CHECK(second == Approx(2.0).epsilon(1e-10));
    if (r > 1) CHECK(std::abs(high) < 1e-6 * std::pow(r, 2 * r));
  }
}

TEST_CASE("first-derivative weights from the same recursion", "[unit]") {
  const auto w = fornberg_weights(1, {-1, 0, 1}, 0.0);
  CHECK(w[0] == Approx(-0.5));
  CHECK(std::abs(w[1]) < 1e-15);
  CHECK(w[2] == Approx(0.5));
}

TEST_CASE("stability limit: 0.453 h / v_max at 8th order on a cubic grid", "[unit]") {
  CHECK(stencil_abs_sum(4) == Approx(6.50).epsilon(2e-3));
  const double dt = max_stable_dt({10, 10, 10}, 4, 2000);
  CHECK(dt == Approx(0.453 * 10 / 2000).epsilon(2e-3));
  // Order 2: S = 4, dt = 2 / (v sqrt(3 * 4 / h^2)) = h / (v sqrt 3), the textbook CFL.
  CHECK(max_stable_dt({10, 10, 10}, 1, 2000) == Approx(10 / (2000 * std::sqrt(3.0))));
}

TEST_CASE("Ricker wavelet: peak 1 at the delay, zero crossings at t0 +- 1/(pi f sqrt 2)", "[unit]") {
  const double f = 10, t0 = 0.12;
  CHECK(ricker(t0, f, t0) == Approx(1.0));
  const double tz = 1 / (M_PI * f * std::sqrt(2.0));
  CHECK(std::abs(ricker(t0 + tz, f, t0)) < 1e-12);
  CHECK(std::abs(ricker(t0 - tz, f, t0)) < 1e-12);
  // Its spectrum stands at 3.3% of the peak at 2.5 f_peak.
  std::vector<float> w(400);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(ricker(i * 1e-3, f, t0));
  CHECK(highest_useful_frequency(w, 1e-3, 0.033) == Approx(2.5 * f).epsilon(0.03));
}

TEST_CASE("interpolation weights: on-grid points are single nodes, weights sum to one", "[unit]") {
  Grid g;
  g.n = {20, 20, 20};
  g.h = {10, 10, 10};
  for (const Interpolation method : {Interpolation::nearest, Interpolation::trilinear, Interpolation::hicks}) {
    PointSet on;
    on.add(g, {50, 60, 70}, method);
    REQUIRE(on.cell.size() == 1);
    CHECK(on.cell[0] == g.index(5, 6, 7));
    CHECK(on.weight[0] == 1.0f);
    PointSet off;
    off.add(g, {53, 61.5, 77}, method);
    const double sum = std::accumulate(off.weight.begin(), off.weight.end(), 0.0);
    INFO(to_text(method));
    CHECK(sum == Approx(1.0).epsilon(method == Interpolation::hicks ? 0.02 : 1e-6));
  }
  PointSet tri;
  tri.add(g, {55, 60, 70}, Interpolation::trilinear);
  REQUIRE(tri.cell.size() == 2);
  CHECK(tri.weight[0] == Approx(0.5));
}

TEST_CASE("round_to_half: binary16 rounding (ties to even, subnormals, overflow) as the compiler's _Float16",
          "[unit]") {
  using validation::round_to_half;
  // Hand-checked values: 1 + 2^-11 is the tie between 1 and 1 + 2^-10 (to the even 1); 1 + 3 2^-11
  // the tie between 1 + 2^-10 and 1 + 2^-9 (to the even 1 + 2^-9); 65519 rounds to the largest
  // half 65504, 65520 overflows; 2^-25 is the tie between 0 and 2^-24 (to 0), a little more
  // rounds up; 3 2^-25 between 2^-24 and 2^-23 (to the even 2^-23).
  CHECK(round_to_half(1.0f + 0x1p-11f) == 1.0f);
  CHECK(round_to_half(1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f);
  CHECK(round_to_half(1.0f + 0x1p-10f) == 1.0f + 0x1p-10f);
  CHECK(round_to_half(65519.0f) == 65504.0f);
  CHECK(round_to_half(65520.0f) == std::numeric_limits<float>::infinity());
  CHECK(round_to_half(-70000.0f) == -std::numeric_limits<float>::infinity());
  CHECK(round_to_half(0x1p-25f) == 0.0f);
  CHECK(round_to_half(0x1.01p-25f) == 0x1p-24f);
  CHECK(round_to_half(3 * 0x1p-25f) == 0x1p-23f);
  CHECK(round_to_half(-0x1p-30f) == 0.0f);
  CHECK(std::signbit(round_to_half(-0x1p-30f)));
  CHECK(std::isnan(round_to_half(std::numeric_limits<float>::quiet_NaN())));
  // bfloat16: 1 + 2^-8 is the tie between 1 and 1 + 2^-7 (to the even 1), 1 + 3 2^-8 between
  // 1 + 2^-7 and 1 + 2^-6 (to 1 + 2^-6); float's range: 1e-30 keeps its exponent; the largest
  // float rounds up to Inf.
  CHECK(validation::round_to_bfloat16(1.0f + 0x1p-8f) == 1.0f);
  CHECK(validation::round_to_bfloat16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);
  CHECK(validation::round_to_bfloat16(1e-30f) == Approx(1e-30).epsilon(0x1p-8));
  CHECK(validation::round_to_bfloat16(std::numeric_limits<float>::max()) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(validation::round_to_bfloat16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(validation::power_of_two_below(3.0f) == 2.0f);
  CHECK(validation::power_of_two_below(0.75f) == 0.5f);
#if defined(__FLT16_MAX__)
  // Every float of random bits between 2^-28 and 2^17 (both signs), and every float near the
  // ties and edges above, against the compiler's own conversion (an independent implementation).
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits(0x31800000u, 0x48000000u);
  long long mismatches = 0, n = 0;
  auto check = [&](float x) {
    const float want = static_cast<float>(static_cast<_Float16>(x));
    ++n;
    if (std::bit_cast<uint32_t>(round_to_half(x)) != std::bit_cast<uint32_t>(want)) {
      if (mismatches++ < 5) UNSCOPED_INFO("x = " << x << ": " << round_to_half(x) << ", _Float16 gives " << want);
    }
  };
  for (int i = 0; i < 2000000; ++i) {
    const float x = std::bit_cast<float>(bits(rng));
    check(x);
    check(-x);
  }
  for (float edge : {1.0f + 0x1p-11f, 65504.0f, 65520.0f, 0x1p-14f, 0x1p-24f, 0x1p-25f, 3 * 0x1p-25f})
    for (int d = -64; d <= 64; ++d) check(std::bit_cast<float>(std::bit_cast<uint32_t>(edge) + d));
  INFO(n << " values compared");
  CHECK(mismatches == 0);
#else
  WARN("no _Float16 in this compiler: round_to_half checked on the hand-checked values only");
#endif
}
