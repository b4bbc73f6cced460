#include "solver/image_gathers.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "base/error.hpp"

namespace seisrtm {

GatherLayout gather_layout(const Grid& g, const CellBox& box, long long half_offsets, std::array<long long, 2> every) {
  GatherLayout l;
  l.half_offsets = half_offsets;
  l.nz = g.n[2];
  for (long long ix = box.lo[0]; ix < box.hi[0]; ix += std::max(1LL, every[0])) l.x.push_back(ix);
  for (long long iy = box.lo[1]; iy < box.hi[1]; iy += std::max(1LL, every[1])) l.y.push_back(iy);
  return l;
}

void add_from_device_layout(const GatherLayout& l, const float* device, float* out, const DevicePlanes& p) {
  // Per (y, x) location its offsets' rows, z inner: a row reads one float of each of nz cache lines,
  // and the next offsets read the neighbouring floats of the same lines, still in cache (a 32 x
  // 32 tiled transpose was 1.4 to 2 times slower on 0.1 to 0.8 GB).
  const long long nyl = static_cast<long long>(l.y.size()), nxl = static_cast<long long>(l.x.size());
  const long long nh = l.offsets(), nz = l.nz, planes = p.planes;
  if (p.z_lo < 0 || p.z_hi > planes || p.z_lo + p.z_shift < 0 || p.z_hi + p.z_shift > nz)
    throw Error("add_from_device_layout: planes [" + std::to_string(p.z_lo) + ", " + std::to_string(p.z_hi) +
                ") shifted by " + std::to_string(p.z_shift) + " do not fit the layout's " + std::to_string(nz));
#pragma omp parallel for collapse(2) schedule(static)
  for (long long jy = 0; jy < nyl; ++jy)
    for (long long jx = 0; jx < nxl; ++jx)
      for (long long h = 0; h < nh; ++h) {
        float* o = out + ((jy * nxl + jx) * nh + h) * nz + p.z_shift;
        const float* from = device + (jy * planes * nxl + jx) * nh + h;
        for (long long z = p.z_lo; z < p.z_hi; ++z) o[z] += from[z * nxl * nh];
      }
}

io::Image2D gather_panel(const float* g, long long locations, long long cols, long long nz,
                         const std::vector<double>& x, double z0, double dz) {
  io::Image2D p;
  const long long per = cols + 1;  // a blank trace between neighbouring gathers
  const double spacing = locations > 1 ? (x[1] - x[0]) : 1.0;
  p.rows = nz, p.cols = locations * per;
  p.x = {"x", "m", x.front() - spacing / 2, spacing / double(per)};
  p.y = {"depth z", "m", z0, dz};
  p.values.assign(static_cast<size_t>(p.rows * p.cols), 0.0f);
  for (long long j = 0; j < locations; ++j)
    for (long long c = 0; c < cols; ++c) {
      const float* t = g + (j * cols + c) * nz;
      for (long long z = 1; z + 1 < nz; ++z)
        p.values[static_cast<size_t>(z * p.cols + j * per + c)] =
            static_cast<float>(-(double(t[z - 1]) - 2.0 * t[z] + double(t[z + 1])) / (dz * dz));
    }
  p.value_label = "-d2/dz2 gather";
  p.value_unit = "1/m^2 x correlation units";
  p.map = io::Colormap::grey;
  return p;
}

namespace {

using Complex = std::complex<double>;

long long next_power_of_two(long long n) {
  long long p = 1;
  while (p < n) p *= 2;
  return p;
}

// In-place radix-2 FFT of a[0], a[stride], ... (n a power of two); sign -1 forward, +1 inverse
// (unscaled).
void fft(Complex* a, long long n, long long stride, int sign) {
  for (long long i = 1, j = 0; i < n; ++i) {
    long long bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i * stride], a[j * stride]);
  }
  for (long long len = 2; len <= n; len *= 2) {
    const double ang = sign * 2 * std::numbers::pi / double(len);
    const Complex w(std::cos(ang), std::sin(ang));
    for (long long i = 0; i < n; i += len) {
      Complex wk(1, 0);
      for (long long k = 0; k < len / 2; ++k, wk *= w) {
        Complex& u = a[(i + k) * stride];
        Complex& v = a[(i + k + len / 2) * stride];
        const Complex t = v * wk;
        v = u - t;
        u += t;
      }
    }
  }
}

}  // namespace

std::vector<float> offset_to_angle(const float* g, long long offsets, long long nz, double dh, double dz,
                                   const std::vector<double>& angles_deg) {
  // Zero-padded to twice each length (no wrap-around of the events), a power of two.
  const long long nh2 = next_power_of_two(2 * offsets), nz2 = next_power_of_two(2 * nz);
  const long long half = offsets / 2;                      // offset index of h = 0
  std::vector<Complex> f(static_cast<size_t>(nh2 * nz2));  // [kh][kz]
  for (long long h = 0; h < offsets; ++h) {
    // h = 0 at index 0, negative offsets wrapped to the end: the transform's phase is h's own.
    const long long row = (h - half + nh2) % nh2;
    for (long long z = 0; z < nz; ++z) f[static_cast<size_t>(row * nz2 + z)] = g[h * nz + z];
  }
  for (long long r = 0; r < nh2; ++r) fft(f.data() + r * nz2, nz2, 1, -1);  // over z
  for (long long c = 0; c < nz2; ++c) fft(f.data() + c, nh2, nz2, -1);      // over h
  // k_h sampled where tan(gamma) = -k_h / k_z, linearly between the transform's bins.
  const double dkh = 2 * std::numbers::pi / (double(nh2) * dh), dkz = 2 * std::numbers::pi / (double(nz2) * dz);
  std::vector<float> out(static_cast<size_t>(static_cast<long long>(angles_deg.size()) * nz));
  std::vector<Complex> col(static_cast<size_t>(nz2));
  for (size_t a = 0; a < angles_deg.size(); ++a) {
    const double t = std::tan(angles_deg[a] * std::numbers::pi / 180);
    for (long long c = 0; c < nz2; ++c) {
      const double kz = double(c <= nz2 / 2 ? c : c - nz2) * dkz;
      const double bin = -kz * t / dkh;  // k_h in bins, signed
      const double lo = std::floor(bin), w = bin - lo;
      auto at = [&](long long b) -> Complex {
        if (b < -nh2 / 2 || b >= nh2 / 2) return 0;  // beyond the offsets' Nyquist
        return f[static_cast<size_t>(((b + nh2) % nh2) * nz2 + c)];
      };
      col[static_cast<size_t>(c)] = (1 - w) * at(static_cast<long long>(lo)) + w * at(static_cast<long long>(lo) + 1);
    }
    fft(col.data(), nz2, 1, +1);
    for (long long z = 0; z < nz; ++z)
      out[a * static_cast<size_t>(nz) + static_cast<size_t>(z)] =
          static_cast<float>(col[static_cast<size_t>(z)].real() / double(nz2 * nh2));
  }
  return out;
}

}  // namespace seisrtm
