#pragma once
// Small text helpers every layer uses in its messages.
#include <cstdio>
#include <string>

namespace seisrtm {

// Bytes as GiB with three decimals, e.g. "1.907 GiB".
inline std::string gib(double bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "%.3f GiB", bytes / 1073741824.0);
  return b;
}

}  // namespace seisrtm
