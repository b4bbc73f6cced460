#include "io/png.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>

#include "io/output_file.hpp"
#include "solver/error.hpp"

namespace seisrtm::io {

namespace {

uint32_t crc32(const uint8_t* data, size_t n, uint32_t crc = 0xffffffffu) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<uint8_t>(x >> s));
}

void chunk(std::ofstream& out, const char* type, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> buf;
  put32(buf, static_cast<uint32_t>(data.size()));
  buf.insert(buf.end(), type, type + 4);
  buf.insert(buf.end(), data.begin(), data.end());
  const uint32_t crc = crc32(buf.data() + 4, buf.size() - 4) ^ 0xffffffffu;
  put32(buf, crc);
  out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
}

}  // namespace

void write_png_rgb(const std::string& path, const std::vector<uint8_t>& rgb, long long rows,
                   long long cols) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("cannot write picture '" + shown_name(path) + "'" + write_failure_reason());
  const uint8_t sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  out.write(reinterpret_cast<const char*>(sig), 8);
  std::vector<uint8_t> ihdr;
  put32(ihdr, static_cast<uint32_t>(cols));
  put32(ihdr, static_cast<uint32_t>(rows));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, no filter, no interlace
  chunk(out, "IHDR", ihdr);
  // Raw scanlines, each preceded by filter type 0.
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<size_t>(rows * (cols * 3 + 1)));
  for (long long r = 0; r < rows; ++r) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + r * cols * 3, rgb.begin() + (r + 1) * cols * 3);
  }
  // zlib stream of stored blocks (at most 65535 bytes each) and an Adler-32 trailer.
  std::vector<uint8_t> z{0x78, 0x01};
  uint32_t a = 1, b = 0;
  for (uint8_t x : raw) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  for (size_t pos = 0; pos < raw.size() || pos == 0; pos += 65535) {
    const size_t len = std::min<size_t>(65535, raw.size() - pos);
    const bool last = pos + len >= raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(len & 0xff);
    z.push_back(len >> 8);
    z.push_back(~len & 0xff);
    z.push_back((~len >> 8) & 0xff);
    z.insert(z.end(), raw.begin() + pos, raw.begin() + pos + len);
    if (last) break;
  }
  put32(z, (b << 16) | a);
  chunk(out, "IDAT", z);
  chunk(out, "IEND", {});
  out.close();  // flushes: a full disk shows here
  if (!out) throw Error("writing picture '" + shown_name(path) + "' failed" + write_failure_reason());
}

std::vector<float> resample_nearest(const std::vector<float>& v, long long rows, long long cols,
                                    long long out_rows, long long out_cols) {
  std::vector<float> out(static_cast<size_t>(out_rows * out_cols));
  for (long long r = 0; r < out_rows; ++r)
    for (long long c = 0; c < out_cols; ++c)
      out[r * out_cols + c] = v[(r * rows / out_rows) * cols + c * cols / out_cols];
  return out;
}

float percentile_abs(const std::vector<float>& values, double fraction) {
  if (values.empty()) return 0;
  std::vector<float> a(values.size());
  std::transform(values.begin(), values.end(), a.begin(), [](float v) { return std::abs(v); });
  const size_t k = std::min(a.size() - 1, static_cast<size_t>(fraction * (a.size() - 1)));
  std::nth_element(a.begin(), a.begin() + k, a.end());
  return a[k];
}

void write_png(const std::string& path, const std::vector<float>& v, long long rows, long long cols,
               Colormap map, float clip, int scale) {
  float lo = 0, hi = 0;
  if (map == Colormap::gray) {
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    lo = *mn;
    hi = *mx > *mn ? *mx : *mn + 1;
  } else {
    if (!(clip > 0)) clip = 1;
  }
  const long long R = rows * scale, C = cols * scale;
  std::vector<uint8_t> rgb(static_cast<size_t>(R * C * 3));
  for (long long r = 0; r < R; ++r)
    for (long long c = 0; c < C; ++c) {
      const float x = v[(r / scale) * cols + c / scale];
      uint8_t* px = &rgb[(r * C + c) * 3];
      if (map == Colormap::gray) {
        const auto g = static_cast<uint8_t>(std::clamp((x - lo) / (hi - lo), 0.0f, 1.0f) * 255);
        px[0] = px[1] = px[2] = g;
      } else {
        // Blue (negative) - white (0) - red (positive).
        const float t = std::clamp(x / clip, -1.0f, 1.0f);
        const auto fade = static_cast<uint8_t>(255 * (1 - std::abs(t)));
        px[0] = t < 0 ? fade : 255;
        px[1] = fade;
        px[2] = t > 0 ? fade : 255;
      }
    }
  write_png_rgb(path, rgb, R, C);
}

}  // namespace seisrtm::io
