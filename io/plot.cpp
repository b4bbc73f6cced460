#include "io/plot.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "io/output_file.hpp"
#include "io/png.hpp"
#include "solver/error.hpp"

namespace seisrtm::io {

namespace {

// 5x7 glyphs: seven rows of five pixels, from the top.
struct Glyph {
  char c;
  const char* rows[7];
};
constexpr Glyph kFont[] = {
    {'A', {"01110", "10001", "10001", "11111", "10001", "10001", "10001"}},
    {'B', {"11110", "10001", "10001", "11110", "10001", "10001", "11110"}},
    {'C', {"01110", "10001", "10000", "10000", "10000", "10001", "01110"}},
    {'D', {"11110", "10001", "10001", "10001", "10001", "10001", "11110"}},
    {'E', {"11111", "10000", "10000", "11110", "10000", "10000", "11111"}},
    {'F', {"11111", "10000", "10000", "11110", "10000", "10000", "10000"}},
    {'G', {"01110", "10001", "10000", "10111", "10001", "10001", "01111"}},
    {'H', {"10001", "10001", "10001", "11111", "10001", "10001", "10001"}},
    {'I', {"01110", "00100", "00100", "00100", "00100", "00100", "01110"}},
    {'J', {"00111", "00010", "00010", "00010", "00010", "10010", "01100"}},
    {'K', {"10001", "10010", "10100", "11000", "10100", "10010", "10001"}},
    {'L', {"10000", "10000", "10000", "10000", "10000", "10000", "11111"}},
    {'M', {"10001", "11011", "10101", "10101", "10001", "10001", "10001"}},
    {'N', {"10001", "10001", "11001", "10101", "10011", "10001", "10001"}},
    {'O', {"01110", "10001", "10001", "10001", "10001", "10001", "01110"}},
    {'P', {"11110", "10001", "10001", "11110", "10000", "10000", "10000"}},
    {'Q', {"01110", "10001", "10001", "10001", "10101", "10010", "01101"}},
    {'R', {"11110", "10001", "10001", "11110", "10100", "10010", "10001"}},
    {'S', {"01111", "10000", "10000", "01110", "00001", "00001", "11110"}},
    {'T', {"11111", "00100", "00100", "00100", "00100", "00100", "00100"}},
    {'U', {"10001", "10001", "10001", "10001", "10001", "10001", "01110"}},
    {'V', {"10001", "10001", "10001", "10001", "10001", "01010", "00100"}},
    {'W', {"10001", "10001", "10001", "10101", "10101", "10101", "01010"}},
    {'X', {"10001", "10001", "01010", "00100", "01010", "10001", "10001"}},
    {'Y', {"10001", "10001", "01010", "00100", "00100", "00100", "00100"}},
    {'Z', {"11111", "00001", "00010", "00100", "01000", "10000", "11111"}},
    {'0', {"01110", "10001", "10011", "10101", "11001", "10001", "01110"}},
    {'1', {"00100", "01100", "00100", "00100", "00100", "00100", "01110"}},
    {'2', {"01110", "10001", "00001", "00010", "00100", "01000", "11111"}},
    {'3', {"11111", "00010", "00100", "00010", "00001", "10001", "01110"}},
    {'4', {"00010", "00110", "01010", "10010", "11111", "00010", "00010"}},
    {'5', {"11111", "10000", "11110", "00001", "00001", "10001", "01110"}},
    {'6', {"00110", "01000", "10000", "11110", "10001", "10001", "01110"}},
    {'7', {"11111", "00001", "00010", "00100", "01000", "01000", "01000"}},
    {'8', {"01110", "10001", "10001", "01110", "10001", "10001", "01110"}},
    {'9', {"01110", "10001", "10001", "01111", "00001", "00010", "01100"}},
    {'.', {"00000", "00000", "00000", "00000", "00000", "01100", "01100"}},
    {',', {"00000", "00000", "00000", "00000", "01100", "00100", "01000"}},
    {'/', {"00001", "00001", "00010", "00100", "01000", "10000", "10000"}},
    {'_', {"00000", "00000", "00000", "00000", "00000", "00000", "11111"}},
    {'-', {"00000", "00000", "00000", "11111", "00000", "00000", "00000"}},
    {':', {"00000", "01100", "01100", "00000", "01100", "01100", "00000"}},
    {'%', {"11000", "11001", "00010", "00100", "01000", "10011", "00011"}},
    {'(', {"00010", "00100", "01000", "01000", "01000", "00100", "00010"}},
    {')', {"01000", "00100", "00010", "00010", "00010", "00100", "01000"}},
    {'^', {"00100", "01010", "10001", "00000", "00000", "00000", "00000"}},
    {'+', {"00000", "00100", "00100", "11111", "00100", "00100", "00000"}},
    {'=', {"00000", "00000", "11111", "00000", "11111", "00000", "00000"}},
};

const Glyph* glyph(char c) {
  c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& g : kFont)
    if (g.c == c) return &g;
  return nullptr;  // space and anything unknown: blank
}

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(size_t(w) * h * 3, 255) {}
  int width() const { return w_; }
  int height() const { return h_; }
  void set(int x, int y, const uint8_t c[3]) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(size_t(y) * w_ + x) * 3];
    p[0] = c[0], p[1] = c[1], p[2] = c[2];
  }
  void rect(int x0, int y0, int x1, int y1, const uint8_t c[3]) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) set(x, y, c);
  }
  // A line `thick` pixels wide; dashed lines draw 8 pixels of every 14.
  void line(double x0, double y0, double x1, double y1, const uint8_t c[3], int thick, bool dashed) {
    const double len = std::hypot(x1 - x0, y1 - y0);
    const int n = std::max(1, static_cast<int>(std::ceil(len)));
    for (int i = 0; i <= n; ++i) {
      if (dashed && (i % 14) >= 8) continue;
      const double t = double(i) / n;
      const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0))), y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      rect(x - thick / 2, y - thick / 2, x - thick / 2 + thick - 1, y - thick / 2 + thick - 1, c);
    }
  }
  // Text with its top-left corner at (x, y); each font pixel is `scale` pixels.
  void text(int x, int y, const std::string& s, const uint8_t c[3], int scale = 2) {
    glyphs(s, [&](int i, int r, int k) {
      const int px = x + (6 * i + k) * scale, py = y + r * scale;
      rect(px, py, px + scale - 1, py + scale - 1, c);
    });
  }
  static int text_width(const std::string& s, int scale = 2) { return static_cast<int>(s.size()) * 6 * scale; }
  // Vertical text, bottom to top, starting at (x, y) = its bottom-left corner.
  void text_up(int x, int y, const std::string& s, const uint8_t c[3], int scale = 2) {
    glyphs(s, [&](int i, int r, int k) {
      const int px = x + r * scale, py = y - (6 * i + k + 1) * scale;
      rect(px, py, px + scale - 1, py + scale - 1, c);
    });
  }
  const std::vector<uint8_t>& pixels() const { return px_; }

 private:
  // Calls put(character index, font row, font column) for every set pixel of `s`.
  template <class Put>
  static void glyphs(const std::string& s, Put put) {
    for (size_t i = 0; i < s.size(); ++i)
      if (const Glyph* g = glyph(s[i]))
        for (int r = 0; r < 7; ++r)
          for (int k = 0; k < 5; ++k)
            if (g->rows[r][k] == '1') put(static_cast<int>(i), r, k);
  }

  int w_, h_;
  std::vector<uint8_t> px_;
};

// A tick step of 1, 2 or 5 times a power of ten giving about `n` intervals up to `top`.
double nice_step(double top, int n) {
  const double raw = top / n, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

void draw_panel(Canvas& cv, int top, int height, const LinePlot& p) {
  const uint8_t black[3] = {0, 0, 0}, grid[3] = {225, 225, 225}, ref[3] = {120, 120, 120};
  const int left = 90, right = 360, bottom = 60, head = 40;
  const int x0 = left, x1 = cv.width() - right, y0 = top + head, y1 = top + height - bottom;
  double ymax = p.reference;
  for (const auto& s : p.series)
    for (double v : s.y)
      if (std::isfinite(v)) ymax = std::max(ymax, v);
  if (ymax <= 0) ymax = 1;
  const double step = nice_step(ymax * 1.08, 6), top_value = std::ceil(ymax * 1.08 / step) * step;
  auto Y = [&](double v) { return y1 - (y1 - y0) * v / top_value; };
  const int nx = static_cast<int>(p.x_ticks.size());
  auto X = [&](int i) { return x0 + (x1 - x0) * (i + 0.5) / std::max(1, nx); };

  cv.text(x0, top + 10, p.title, black);
  for (double v = 0; v <= top_value + step / 2; v += step) {
    const int y = static_cast<int>(std::lround(Y(v)));
    cv.line(x0, y, x1, y, grid, 1, false);
    const std::string t = number(v);
    cv.text(x0 - 8 - Canvas::text_width(t), y - 7, t, black);
  }
  cv.line(x0, y0, x0, y1, black, 2, false);
  cv.line(x0, y1, x1, y1, black, 2, false);
  for (int i = 0; i < nx; ++i) {
    const int x = static_cast<int>(std::lround(X(i)));
    cv.line(x, y1, x, y1 + 6, black, 2, false);
    cv.text(x - Canvas::text_width(p.x_ticks[i]) / 2, y1 + 12, p.x_ticks[i], black);
  }
  cv.text((x0 + x1 - Canvas::text_width(p.x_label)) / 2, y1 + 36, p.x_label, black);
  cv.text_up(12, (y0 + y1 + Canvas::text_width(p.y_label)) / 2, p.y_label, black);
  if (p.reference > 0) {
    cv.line(x0, Y(p.reference), x1, Y(p.reference), ref, 2, true);
    cv.text(x1 - 6 - Canvas::text_width(p.reference_label), static_cast<int>(Y(p.reference)) + 8, p.reference_label, ref);
  }
  int legend_y = y0;
  for (const auto& s : p.series) {
    for (int i = 0; i + 1 < nx; ++i)
      if (std::isfinite(s.y[i]) && std::isfinite(s.y[i + 1]))
        cv.line(X(i), Y(s.y[i]), X(i + 1), Y(s.y[i + 1]), s.rgb, 3, s.dashed);
    for (int i = 0; i < nx; ++i)
      if (std::isfinite(s.y[i])) {
        const int x = static_cast<int>(std::lround(X(i))), y = static_cast<int>(std::lround(Y(s.y[i])));
        cv.rect(x - 4, y - 4, x + 4, y + 4, s.rgb);
      }
    cv.line(x1 + 16, legend_y + 7, x1 + 56, legend_y + 7, s.rgb, 3, s.dashed);
    cv.text(x1 + 64, legend_y, s.label, black);
    legend_y += 22;
  }
}

}  // namespace

void palette(int i, uint8_t rgb[3]) {
  static const uint8_t k[][3] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40},
                                 {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127}};
  const auto& c = k[i % 8];
  rgb[0] = c[0], rgb[1] = c[1], rgb[2] = c[2];
}

void write_line_plots(const std::string& path, const std::vector<LinePlot>& panels) {
  if (panels.empty()) throw Error("no data to plot for " + path);
  const int panel_h = 560;
  Canvas cv(1200, panel_h * static_cast<int>(panels.size()));
  for (size_t i = 0; i < panels.size(); ++i) draw_panel(cv, static_cast<int>(i) * panel_h, panel_h, panels[i]);
  PartialFile out(path);
  write_png_rgb(out.temp_path(), cv.pixels(), cv.height(), cv.width());
  out.commit();
}

}  // namespace seisrtm::io
