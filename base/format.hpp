#pragma once
// Small text functions every layer uses in its messages.
#include <cstdio>
#include <string>

namespace seisrtm {

// Bytes as GiB with three decimals, e.g. "1.907 GiB".
inline std::string gib(double bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "%.3f GiB", bytes / 1073741824.0);
  return b;
}

// A number as a message shows a config value: %g's 6 significant digits, so -1e-09 stays
// -1e-09 (not %f's -0.000000) and 1e+300 takes 6 characters (not 301 digits).
inline std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// A position in m as messages show it: 12 significant digits, so survey coordinates (UTM
// northings of 7 digits and their decimals) are shown whole.
inline std::string coordinate_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.12g", v);
  return b;
}

}  // namespace seisrtm
