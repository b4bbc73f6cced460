#include "solver/storage.hpp"

#include <algorithm>
#include <cmath>

namespace seisrtm {

float half_field_scale(double peak, int peak_exponent, const std::string& field) {
  if (!(peak > 0)) throw Error("half-precision storage: " + field + " injects nothing to scale the field by");
  return std::ldexp(power_of_two_below(static_cast<float>(peak)), -peak_exponent);
}

double injection_peak(const Problem& pb, const PointSet& ps, double value) {
  const auto& n = pb.grid.n;
  const double dt2 = pb.dt * pb.dt;
  double peak = 0;
  for (long long e = 0; e < ps.offset.back(); ++e) {
    const long long i = ps.cell[e];
    const long long ix = i % n[0], iy = (i / n[0]) % n[1], iz = i / (n[0] * n[1]);
    const double s = double(pb.damping[0][ix]) + pb.damping[1][iy] + pb.damping[2][iz];
    const double m = static_cast<float>(double(pb.vp[i]) * pb.vp[i] * dt2);
    peak = std::max(peak, std::abs(m / (1.0 + s) * ps.weight[e] * value));
  }
  return peak;
}

double largest_magnitude(const float* v, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, double(std::abs(v[i])));
  return m;
}

float source_field_scale(const Problem& pb, long long shot, int peak_exponent, const std::string& field) {
  const double wmax = largest_magnitude(pb.wavelet.data(), pb.wavelet.size());
  return half_field_scale(injection_peak(pb, pb.shots[shot], wmax / pb.cell_volume()), peak_exponent, field);
}

std::vector<float> store_scales(const Problem& global, int peak_exponent) {
  std::vector<float> scales;
  if (!global.config.migration || global.config.migration->store_precision != StorePrecision::fp16) return scales;
  for (long long s = 0; s < global.shot_count(); ++s)
    scales.push_back(source_field_scale(global, s, peak_exponent, "the source"));
  return scales;
}

float data_field_scale(const Problem& pb, const float* data, int peak_exponent) {
  const double dmax = largest_magnitude(data, static_cast<std::size_t>(pb.receivers.size() * pb.steps));
  return dmax > 0 ? half_field_scale(injection_peak(pb, pb.receivers, dmax), peak_exponent, "the data") : 1.0f;
}

}  // namespace seisrtm
