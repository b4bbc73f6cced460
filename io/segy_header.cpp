#include "io/segy_header.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace seisrtm::io::segy {

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

void put_be(char* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}

void put_rev2_fields(char* bin, long long per_ensemble, long long samples, double interval, long long traces) {
  put_be(bin + 3261 - 3201, static_cast<uint32_t>(per_ensemble), 4);
  put_be(bin + 3269 - 3201, static_cast<uint32_t>(samples), 4);
  uint64_t bits;
  std::memcpy(&bits, &interval, 8);
  put_be(bin + 3273 - 3201, bits, 8);
  put_be(bin + 3281 - 3201, bits, 8);
  put_be(bin + 3297 - 3201, 16909060, 4);
  put_be(bin + 3513 - 3201, static_cast<uint64_t>(traces), 8);
  put_be(bin + 3521 - 3201, static_cast<uint64_t>(kTrace0), 8);
}

int scalar_exponent(const std::vector<double>& values, double limit) {
  int fits = -1;
  for (int k = 0; k <= 4; ++k) {
    const double unit = std::pow(10.0, k);
    bool ok = true, exact = true;
    for (double v : values) {
      const double s = v * unit;
      if (!(std::abs(s) <= limit)) ok = false;
      if (std::abs(s - std::round(s)) > 1e-9 * std::max(1.0, std::abs(s))) exact = false;
    }
    if (!ok) break;
    fits = k;
    if (exact) return k;
  }
  return fits;
}

int scalar_of(int k) {
  return k == 0 ? 1 : -static_cast<int>(std::lround(std::pow(10.0, k)));
}

long long scaled(double v, int scalar) {
  const double f = scalar < 0 ? -scalar : 1.0 / scalar;  // stored = value x f
  return std::llround(v * f);
}

double unscaled(int32_t raw, int scalar) {
  if (scalar < 0) return raw / double(-scalar);
  if (scalar > 0) return double(raw) * scalar;
  return raw;
}

std::string scalar_text(int s) {
  return std::to_string(s) + (s == 1       ? " (m)"
                              : s == -10   ? " (dm)"
                              : s == -100  ? " (cm)"
                              : s == -1000 ? " (mm)"
                                           : " (0.1 mm)");
}

std::string text_header(std::vector<std::string> lines, int revision) {
  lines.resize(38);
  lines.push_back(revision == 1 ? "SEG Y REV1" : "SEG-Y_REV2.0");
  lines.push_back(revision == 1 ? "END TEXTUAL HEADER" : "END TEXT");
  std::string t(kText, ' ');
  for (int i = 0; i < 40; ++i) {
    char head[8];
    std::snprintf(head, sizeof head, "C%02d ", i + 1);
    std::string l(head);
    if (i < static_cast<int>(lines.size())) l.append(lines[i]);
    l.resize(80, ' ');
    t.replace(i * 80, 80, l);
  }
  t.push_back('\0');  // (segyio copies a C string)
  return t;
}

}  // namespace seisrtm::io::segy
