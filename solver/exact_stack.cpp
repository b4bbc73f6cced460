#include "solver/exact_stack.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/error.hpp"
#include "solver/problem.hpp"
#include "solver/storage.hpp"

namespace seisrtm {

namespace {

// Bits the sum of up to 2^31 contributions adds above each.
constexpr int kCountBits = 31;
// A signed 128-bit integer holds magnitudes below 2^127; one bit of headroom.
constexpr int kWordBits = 126;

int floor_log2(double v) {
  return std::ilogb(v);
}

int ceil_log2(long long n) {
  int e = 0;
  while ((1LL << e) < n) ++e;
  return e;
}

}  // namespace

StackExponents stack_exponents(const Problem& pb, const float* traces) {
  const double wmax = largest_magnitude(pb.wavelet.data(), pb.wavelet.size());
  const long long rows = pb.max_receivers(), nt = pb.steps;
  int src = std::numeric_limits<int>::min(), img = std::numeric_limits<int>::min();
  for (long long s = 0; s < pb.shot_count(); ++s) {
    // (A source that injects nothing images nothing; data that are not finite image NaN or Inf,
    // which ExactStack::add refuses by name.)
    const double sp = injection_peak(pb, pb.shots[s], wmax / pb.cell_volume());
    if (!(sp > 0) || !std::isfinite(sp)) continue;
    const PointSet& spread = pb.receivers_of(s);
    const double dmax = largest_magnitude(traces + s * rows * nt, static_cast<std::size_t>(spread.size() * nt));
    const double rp = dmax > 0 ? injection_peak(pb, spread, dmax) : 0;
    src = std::max(src, floor_log2(sp));
    if (rp > 0 && std::isfinite(rp)) img = std::max(img, floor_log2(sp) + floor_log2(rp));
  }
  // Every step's S R (or S^2) below 2^(e + 2) times 2^growth, nt steps (k imaging steps' sum
  // times k is nt of them at most).
  const int steps = ceil_log2(std::max(1LL, nt)) + 2 + kStackGrowthBits;
  StackExponents e;
  e.image = img == std::numeric_limits<int>::min() ? 0 : img + steps;
  e.illumination = src == std::numeric_limits<int>::min() ? 0 : 2 * src + steps;
  return e;
}

ExactStack::ExactStack(long long cells, StackExponents e, long long gathers)
    : e_(e),
      cells_(cells),
      gather_values_(gathers),
      image_(new __int128[static_cast<size_t>(cells)]),
      illumination_(new __int128[static_cast<size_t>(cells)]),
      gathers_(gathers > 0 ? new __int128[static_cast<size_t>(gathers)] : nullptr) {
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < cells; ++i) image_[i] = illumination_[i] = 0;
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < gathers; ++i) gathers_[i] = 0;
}

namespace {

// 2^95: the bound 2^b on the grid of 2^(b + count - word).
constexpr double kLimit = 39614081257132168796771975168.0;
static_assert(kWordBits - kCountBits == 95);

// k v on the grid: v k as float, scaled by `scale` = 2^(95 - b) (a power of two: exact), rounded
// to the nearest integer (ties to even). False where |k v| is not below 2^b (or not finite).
inline bool on_grid(float v, float k, double scale, __int128& out) {
  const double d = static_cast<double>(k * v) * scale;
  if (!(std::abs(d) < kLimit)) return false;
  out = static_cast<__int128>(std::nearbyint(d));
  return true;
}

}  // namespace

void ExactStack::add(const float* image, const float* illumination, float k, int threads, const float* gathers) {
  const long long n = cells();
  const double si = std::ldexp(1.0, kWordBits - kCountBits - e_.image);
  const double sl = std::ldexp(1.0, kWordBits - kCountBits - e_.illumination);
  long long bad = -1;
  if (threads <= 0) threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) reduction(max : bad) num_threads(threads)
  for (long long i = 0; i < n; ++i) {
    __int128 a = 0, b = 0;
    if (!on_grid(image[i], k, si, a) || !on_grid(illumination[i], k, sl, b)) {
      bad = std::max(bad, i);
      continue;
    }
    image_[i] += a;
    illumination_[i] += b;
  }
  if (bad >= 0) {
    char v[64];
    std::snprintf(v, sizeof v, "%g, %g", double(image[bad]), double(illumination[bad]));
    throw Error(std::string("the migrated image holds NaN or Inf, or a value beyond the stack's bound (2^") +
                std::to_string(e_.image) + " for the image, 2^" + std::to_string(e_.illumination) +
                " for the illumination): " + v + " (image, illumination) at cell " + std::to_string(bad) +
                ": a wavefield became NaN or Inf or grew without limit; check time.dt, the model (vp, epsilon, "
                "delta, theta, phi) and the data file; nothing was written");
  }
  if (!gathers_) return;
  if (!gathers) throw Error("ExactStack::add: a stack of image gathers given no gathers");
  const long long m = gather_values_;
  bad = -1;
#pragma omp parallel for schedule(static) reduction(max : bad) num_threads(threads)
  for (long long i = 0; i < m; ++i) {
    __int128 a = 0;
    if (!on_grid(gathers[i], k, si, a)) {
      bad = std::max(bad, i);
      continue;
    }
    gathers_[i] += a;
  }
  if (bad >= 0)
    throw Error("the migrated image gathers hold NaN or Inf, or a value beyond the stack's bound (2^" +
                std::to_string(e_.image) + "): " + std::to_string(double(gathers[bad])) + " at value " +
                std::to_string(bad) +
                ": a wavefield became NaN or Inf or grew without limit; check time.dt, the model and the data file; "
                "nothing was written");
}

void ExactStack::add(const ExactStack& other) {
  if (other.cells() != cells() || !(other.e_ == e_))
    throw Error("ExactStack::add: stacks of different grids (" + std::to_string(other.cells()) + " and " +
                std::to_string(cells()) + " cells)");
  if (other.gather_values_ != gather_values_)
    throw Error("ExactStack::add: stacks of different image gathers (" + std::to_string(other.gather_values_) +
                " and " + std::to_string(gather_values_) + " values)");
  const long long n = cells();
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) {
    image_[i] += other.image_[i];
    illumination_[i] += other.illumination_[i];
  }
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < gather_values_; ++i) gathers_[i] += other.gathers_[i];
}

void ExactStack::to_float(float* image, float* illumination) const {
  const long long n = cells();
  const double qi = std::ldexp(1.0, e_.image + kCountBits - kWordBits);
  const double ql = std::ldexp(1.0, e_.illumination + kCountBits - kWordBits);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) {
    // int128 to double rounds once (to nearest), the power of two is exact (a double's range
    // holds it: |b| < 2^9), double to float rounds again: the same bits for the same sum.
    image[i] = static_cast<float>(static_cast<double>(image_[i]) * qi);
    illumination[i] = static_cast<float>(static_cast<double>(illumination_[i]) * ql);
  }
}

void ExactStack::gathers_to_float(float* gathers) const {
  const double qi = std::ldexp(1.0, e_.image + kCountBits - kWordBits);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < gather_values_; ++i) gathers[i] = static_cast<float>(static_cast<double>(gathers_[i]) * qi);
}

}  // namespace seisrtm
