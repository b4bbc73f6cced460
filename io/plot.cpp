#include "io/plot.hpp"

#include <gd.h>
#include <gdfontg.h>
#include <gdfontmb.h>
#include <gdfonts.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "base/error.hpp"
#include "io/output_file.hpp"

namespace seisrtm::io {

namespace {

struct GdImageDeleter {
  void operator()(gdImagePtr im) const { gdImageDestroy(im); }
};
using GdImage = std::unique_ptr<gdImage, GdImageDeleter>;

struct GdBufferDeleter {
  void operator()(void* p) const { gdFree(p); }
};

constexpr int kPngLevel = 6;  // zlib level: most of 9's size at a fraction of its time

// Pictures are palette images: at most 256 colours (the map's levels, black, white, a few
// greys and series colours) compress to a third of true colour. A colour is found in the
// palette or added to it.
int rgb(gdImagePtr im, uint32_t c) {
  return gdImageColorResolve(im, int(c >> 16), int((c >> 8) & 0xff), int(c & 0xff));
}
// Levels of a colour map in a picture: odd, so the middle (zero of a symmetric scale) is a
// level of its own and exactly the map's middle colour.
constexpr int kLevels = 225;
constexpr uint32_t kBlack = 0x000000, kWhite = 0xffffff, kGrid = 0xe1e1e1, kRef = 0x787878;

// The fonts, ISO 8859-2 bitmaps compiled into libgd: pictures draw the same on every machine.
gdFontPtr title_font() {
  return gdFontGetGiant();
}  // 9 x 15
gdFontPtr label_font() {
  return gdFontGetMediumBold();
}  // 7 x 13
gdFontPtr tick_font() {
  return gdFontGetSmall();
}  // 6 x 13

int text_width(gdFontPtr f, const std::string& s) {
  return f->w * static_cast<int>(s.size());
}

void text(gdImagePtr im, gdFontPtr f, int x, int y, const std::string& s, uint32_t c) {
  gdImageString(im, f, x, y, reinterpret_cast<unsigned char*>(const_cast<char*>(s.c_str())), rgb(im, c));
}
// Vertical text reading upwards, centred on (x, y) horizontally and vertically.
void text_up_centred(gdImagePtr im, gdFontPtr f, int x, int y, const std::string& s, uint32_t c) {
  gdImageStringUp(im, f, x - f->h / 2, y + text_width(f, s) / 2,
                  reinterpret_cast<unsigned char*>(const_cast<char*>(s.c_str())), rgb(im, c));
}

void line(gdImagePtr im, double x0, double y0, double x1, double y1, uint32_t c, int thick = 1) {
  gdImageSetThickness(im, thick);
  gdImageLine(im, int(std::lround(x0)), int(std::lround(y0)), int(std::lround(x1)), int(std::lround(y1)), rgb(im, c));
  gdImageSetThickness(im, 1);
}
// Dashes of 10 pixels every 16 along the segment.
void dashed_line(gdImagePtr im, double x0, double y0, double x1, double y1, uint32_t c, int thick) {
  const double len = std::hypot(x1 - x0, y1 - y0);
  for (double s = 0; s < len; s += 16) {
    const double a = s / len, b = std::min(s + 10, len) / len;
    line(im, x0 + a * (x1 - x0), y0 + a * (y1 - y0), x0 + b * (x1 - x0), y0 + b * (y1 - y0), c, thick);
  }
}

// ": <strerror>" of the system call that failed since errno was cleared; every failure of a
// picture says why (a missing directory, permissions, a full disk).
std::string system_reason() {
  const int e = errno;
  return e != 0 ? std::string(": ") + std::strerror(e) : std::string(": the system reported no reason");
}

// Encodes with libpng (through gd) and writes the bytes; the close is checked: a full disk
// often shows only there.
void save_png(gdImagePtr im, const std::string& path) {
  int size = 0;
  std::unique_ptr<void, GdBufferDeleter> png(gdImagePngPtrEx(im, &size, kPngLevel));
  if (!png || size <= 0) throw Error("encoding picture '" + shown_name(path) + "' as PNG failed");
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("cannot write picture '" + shown_name(path) + "'" + system_reason());
  out.write(static_cast<const char*>(png.get()), size);
  out.close();
  if (!out) throw Error("writing picture '" + shown_name(path) + "' failed" + system_reason());
}

GdImage blank(int w, int h) {
  GdImage im(gdImageCreate(w, h));
  if (!im) throw Error("cannot make a " + std::to_string(w) + " x " + std::to_string(h) + " picture");
  gdImageFilledRectangle(im.get(), 0, 0, w - 1, h - 1, rgb(im.get(), kWhite));  // the first colour: background
  return im;
}

// Piecewise-linear maps through evenly spaced stops (0xRRGGBB).
uint32_t through_stops(const uint32_t* stops, int n, double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0) * (n - 1);
  const int i = std::min(n - 2, static_cast<int>(t));
  const double f = t - i;
  uint32_t out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    const double a = (stops[i] >> shift) & 0xff, b = (stops[i + 1] >> shift) & 0xff;
    out |= static_cast<uint32_t>(std::lround(a + f * (b - a))) << shift;
  }
  return out;
}

// "a (unit)" or "a" when there is no unit.
std::string with_unit(const std::string& label, const std::string& unit) {
  return unit.empty() ? label : label + " (" + unit + ")";
}

struct Extent {
  double first, last;  // coordinates of the first and last sample
};
Extent extent(const Axis& a, long long n) {
  return {a.start, a.start + double(std::max(0LL, n - 1)) * a.step};
}

std::string percent(double p) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", p);
  return b;
}

}  // namespace

Colormap colormap_from_name(const std::string& name) {
  if (name == "seismic") return Colormap::seismic;
  if (name == "grey" || name == "gray") return Colormap::grey;
  if (name == "viridis") return Colormap::viridis;
  throw Error("unknown colour map '" + name + "'; valid: seismic, grey, viridis");
}

const char* colormap_name(Colormap m) {
  switch (m) {
    case Colormap::seismic:
      return "seismic";
    case Colormap::grey:
      return "grey";
    case Colormap::viridis:
      return "viridis";
  }
  return "?";
}

uint32_t colour_at(Colormap m, double t) {
  // seismic: the stops of matplotlib's "seismic" (0.3 blue, blue, white, red, 0.5 red): the
  // dark ends keep the strongest amplitudes apart from the clipped ones' neighbours.
  static const uint32_t seismic[] = {0x00004d, 0x0000ff, 0xffffff, 0xff0000, 0x800000};
  // viridis at t = 0, 1/8, ..., 1 (its published values, van der Walt and Smith, 2015):
  // perceptually uniform and readable in grey and by most colour-blind readers.
  static const uint32_t viridis[] = {0x440154, 0x472d7b, 0x3b528b, 0x2c728e, 0x21918c,
                                     0x28ae80, 0x5ec962, 0xaddc30, 0xfde725};
  static const uint32_t grey[] = {0xffffff, 0x000000};
  switch (m) {
    case Colormap::seismic:
      return through_stops(seismic, 5, t);
    case Colormap::grey:
      return through_stops(grey, 2, t);
    case Colormap::viridis:
      return through_stops(viridis, 9, t);
  }
  return 0;
}

double percentile(const std::vector<float>& v, double p) {
  std::vector<double> a;
  a.reserve(v.size());
  for (float x : v)
    if (!std::isnan(x)) a.push_back(x);
  if (a.empty()) return 0;
  // Position (n - 1) p / 100 between the order statistics below and above it.
  const double pos = std::clamp(p, 0.0, 100.0) / 100 * double(a.size() - 1);
  const size_t k = static_cast<size_t>(pos);
  std::nth_element(a.begin(), a.begin() + k, a.end());
  const double below = a[k];
  if (k + 1 >= a.size()) return below;
  const double above = *std::min_element(a.begin() + k + 1, a.end());
  return below + (pos - double(k)) * (above - below);
}

double percentile_abs(const std::vector<float>& v, double p) {
  std::vector<float> a(v.size());
  std::transform(v.begin(), v.end(), a.begin(), [](float x) { return std::abs(x); });
  return percentile(a, p);
}

ColourRange colour_range(const Image2D& im) {
  ColourRange r;
  if (im.symmetric) {
    const double clip = percentile_abs(im.values, im.clip_percentile);
    r.hi = clip > 0 && std::isfinite(clip) ? clip : 1;  // all zero: any range draws white
    r.lo = -r.hi;
  } else {
    r.lo = percentile(im.values, 100 - im.clip_percentile);
    r.hi = percentile(im.values, im.clip_percentile);
    if (!(r.hi > r.lo)) {  // a constant: centre it in a range of its own size
      const double w = r.lo != 0 ? std::abs(r.lo) * 0.01 : 1;
      r.lo -= w, r.hi += w;
    }
  }
  return r;
}

Ticks nice_ticks(double lo, double hi, int n) {
  Ticks t;
  if (hi < lo) std::swap(lo, hi);
  if (!(hi > lo) || !std::isfinite(hi - lo)) {
    t.values = {lo};
    t.step = lo != 0 ? std::abs(lo) : 1;
    return t;
  }
  const double raw = (hi - lo) / std::max(1, n), p = std::pow(10.0, std::floor(std::log10(raw)));
  t.step = 10 * p;
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw * (1 - 1e-9)) {
      t.step = m * p;
      break;
    }
  // Integer multiples of the step, so 0 is exactly 0 and labels do not drift. A step of about
  // the whole range can leave one or two multiples inside it (a colour bar of [-1.5, 1.5] with
  // step 2 had only "0"): the next smaller 1-2-5 step is taken until there are three. Steps
  // shrink by at most 2.5 and a step <= (hi - lo) / 3 always has three multiples in [lo, hi],
  // so it takes at most 3 rounds from a first step <= 2.5 (hi - lo) (n >= 1); the bound of 6
  // only guards against rounding in ranges of a few ulps.
  for (int round = 0;; ++round) {
    t.values.clear();
    const long long first = static_cast<long long>(std::ceil(lo / t.step - 1e-9));
    for (long long k = first; double(k) * t.step <= hi + 1e-9 * t.step; ++k) t.values.push_back(double(k) * t.step);
    if (t.values.size() >= 3 || round == 6) return t;
    const int e = static_cast<int>(std::floor(std::log10(t.step) + 1e-9));
    const long long m = std::llround(t.step / std::pow(10.0, e));  // 1, 2, 5 (or 10)
    t.step = m == 1 ? 5 * std::pow(10.0, e - 1) : m == 2 ? std::pow(10.0, e) : 2 * std::pow(10.0, e);
  }
}

std::string tick_label(double v, double step) {
  char b[48];
  step = std::abs(step);
  if (std::abs(v) < 1e-9 * step || v == 0) return "0";
  const double big = std::max(std::abs(v), step);
  if (step >= 1 && big < 1e6) {
    std::snprintf(b, sizeof b, "%.0f", v);
  } else if (step >= 1e-3 && big < 1e6) {
    const int decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
  } else {
    // Scientific, with the mantissa digits the step needs: 1.5e-4 between 1e-4 and 2e-4.
    const int digits = std::max(0, static_cast<int>(std::floor(std::log10(std::abs(v)) + 1e-9)) -
                                       static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    std::snprintf(b, sizeof b, "%.*e", std::min(digits, 6), v);
    std::string s = b;  // "-2e-04" -> "-2e-4", "3e+05" -> "3e5"
    const size_t e = s.find('e');
    std::string mant = s.substr(0, e), ex = s.substr(e + 1);
    const bool neg = ex[0] == '-';
    ex = ex.substr(1);
    while (ex.size() > 1 && ex[0] == '0') ex.erase(0, 1);
    return mant + "e" + (neg ? "-" : "") + ex;
  }
  return b;
}

namespace {

constexpr int kTick = 5, kPad = 10, kBarW = 18, kBarGap = 24;

// Everything write_image places, computed once: the layout, the axes' ticks, the colour range.
struct Frame {
  ImageLayout l;
  Extent ex, ey;
  ColourRange range;
  Ticks tx, ty, tc;
  std::string scale_line;  // the second title line: how values map to colours
  // Colour bar ticks are labelled in units of 10^bar_exponent (stated in its label), so a bar
  // of 1e-4 reads 2.0, 1.5, ... rather than a column of exponents.
  int bar_exponent = 0;
  std::string bar_label;
  int clab_w = 0;  // width of the widest colour bar label
};

std::string bar_tick(const Frame& f, double v) {
  const double s = std::pow(10.0, -f.bar_exponent);
  return tick_label(v * s, f.tc.step * s);
}

Frame frame_of(const Image2D& im, const std::string& path) {
  if (im.rows <= 0 || im.cols <= 0 || im.values.size() != size_t(im.rows * im.cols))
    throw Error("picture '" + shown_name(path) + "': " + std::to_string(im.values.size()) + " values do not fill " +
                std::to_string(im.rows) + " x " + std::to_string(im.cols));
  Frame f;
  f.ex = extent(im.x, im.cols), f.ey = extent(im.y, im.rows);
  const Extent &ex = f.ex, &ey = f.ey;

  // The plot area: equal metres per pixel when both axes share a unit (a slice looks like
  // the earth), about 560 x 640 otherwise (a gather); never thinner than 160 pixels.
  int W = im.width, H = im.height;
  if (W <= 0 || H <= 0) {
    const double wx = std::abs(ex.last - ex.first), wy = std::abs(ey.last - ey.first);
    if (im.x.unit == im.y.unit && wx > 0 && wy > 0) {
      const double s = std::min(640 / wx, 520 / wy);
      W = static_cast<int>(std::lround(wx * s));
      H = static_cast<int>(std::lround(wy * s));
    } else {
      W = 560, H = 640;
    }
    W = std::max(W, 160), H = std::max(H, 160);
  }
  f.range = colour_range(im);
  const ColourRange& range = f.range;

  f.tx = nice_ticks(std::min(ex.first, ex.last), std::max(ex.first, ex.last), std::max(2, W / 90));
  f.ty = nice_ticks(std::min(ey.first, ey.last), std::max(ey.first, ey.last), std::max(2, H / 60));
  f.tc = nice_ticks(range.lo, range.hi, std::max(2, H / 70));
  gdFontPtr ft = title_font(), fl = label_font(), fk = tick_font();
  int ylab_w = 0;
  for (double v : f.ty.values) ylab_w = std::max(ylab_w, text_width(fk, tick_label(v, f.ty.step)));
  const double big = std::max(std::abs(range.lo), std::abs(range.hi));
  if (big > 0 && (big < 1e-2 || big >= 1e5)) f.bar_exponent = static_cast<int>(std::floor(std::log10(big)));
  std::string unit = im.value_unit;
  if (f.bar_exponent != 0) unit = "1e" + std::to_string(f.bar_exponent) + (unit.empty() ? "" : " ") + unit;
  f.bar_label = with_unit(im.value_label, unit);
  for (double v : f.tc.values) f.clab_w = std::max(f.clab_w, text_width(fk, bar_tick(f, v)));

  // The second title line states the colour scale.
  char b[256];
  const char* sp = im.value_unit.empty() ? "" : " ";
  if (im.symmetric) {
    std::snprintf(b, sizeof b, "%s, clip %s%% of |%s|: +/-%s%s%s", colormap_name(im.map),
                  percent(im.clip_percentile).c_str(), im.value_label.c_str(),
                  tick_label(range.hi, range.hi / 100).c_str(), sp, im.value_unit.c_str());
  } else if (im.clip_percentile < 100) {
    std::snprintf(b, sizeof b, "%s, %s..%s percentiles: %s..%s%s%s", colormap_name(im.map),
                  percent(100 - im.clip_percentile).c_str(), percent(im.clip_percentile).c_str(),
                  tick_label(range.lo, f.tc.step / 10).c_str(), tick_label(range.hi, f.tc.step / 10).c_str(), sp,
                  im.value_unit.c_str());
  } else {
    std::snprintf(b, sizeof b, "%s, min..max: %s..%s%s%s", colormap_name(im.map),
                  tick_label(range.lo, f.tc.step / 10).c_str(), tick_label(range.hi, f.tc.step / 10).c_str(), sp,
                  im.value_unit.c_str());
  }
  f.scale_line = b;

  const int axis_text = kTick + 3 + fk->h + 4 + fl->h;  // ticks, their labels, the axis label
  const int head = kPad + ft->h + 4 + fk->h + 8;        // title and the scale line
  const int left = kPad + fl->h + 6 + ylab_w + 4 + kTick;
  const int top = head + (im.y_down ? axis_text + 4 : 0);
  const int bottom = (im.y_down ? 0 : axis_text + 4) + kPad;
  const int right = kBarGap + kBarW + kTick + 3 + f.clab_w + 8 + fl->h + kPad;
  ImageLayout& l = f.l;
  l.width = std::max(left + W + right, kPad * 2 + std::max(text_width(ft, im.title), text_width(fk, f.scale_line)));
  l.height = top + H + bottom;
  l.x0 = left, l.y0 = top, l.w = W, l.h = H;
  l.bar_x = left + W + kBarGap, l.bar_w = kBarW;
  return f;
}

}  // namespace

ImageLayout image_layout(const Image2D& im) {
  return frame_of(im, "").l;
}

void write_image(const std::string& path, const Image2D& im) {
  const Frame f = frame_of(im, path);
  const ImageLayout& l = f.l;
  const Extent &ex = f.ex, &ey = f.ey;
  const ColourRange& range = f.range;
  const Ticks &tx = f.tx, &ty = f.ty, &tc = f.tc;
  const int W = l.w, H = l.h, clab_w = f.clab_w;
  gdFontPtr ft = title_font(), fl = label_font(), fk = tick_font();
  GdImage img = blank(l.width, l.height);
  gdImagePtr g = img.get();
  const int x0 = l.x0, y0 = l.y0;  // top-left of the plot area

  // The data: each pixel samples the array bilinearly at its coordinate (samples sit on the
  // area's edges and spread evenly between them).
  const double span = range.hi - range.lo;
  std::array<int, kLevels> level;
  for (int k = 0; k < kLevels; ++k) level[k] = rgb(g, colour_at(im.map, double(k) / (kLevels - 1)));
  for (int j = 0; j < H; ++j) {
    const double fy = H > 1 ? double(j) / (H - 1) : 0;
    const double r = (im.y_down ? fy : 1 - fy) * double(im.rows - 1);
    const long long r0 = std::min(static_cast<long long>(r), im.rows - 1), r1 = std::min(r0 + 1, im.rows - 1);
    const double wr = r - double(r0);
    for (int i = 0; i < W; ++i) {
      const double c = (W > 1 ? double(i) / (W - 1) : 0) * double(im.cols - 1);
      const long long c0 = std::min(static_cast<long long>(c), im.cols - 1), c1 = std::min(c0 + 1, im.cols - 1);
      const double wc = c - double(c0);
      const auto at = [&](long long rr, long long cc) { return double(im.values[rr * im.cols + cc]); };
      const double v =
          (1 - wr) * ((1 - wc) * at(r0, c0) + wc * at(r0, c1)) + wr * ((1 - wc) * at(r1, c0) + wc * at(r1, c1));
      const double t = std::clamp(std::isfinite(v) ? (v - range.lo) / span : 0.5, 0.0, 1.0);
      gdImageSetPixel(g, x0 + i, y0 + j, level[static_cast<size_t>(std::lround(t * (kLevels - 1)))]);
    }
  }
  gdImageRectangle(g, x0 - 1, y0 - 1, x0 + W, y0 + H, rgb(g, kBlack));

  // Title and scale line.
  text(g, ft, kPad, kPad, im.title, kBlack);
  text(g, fk, kPad, kPad + ft->h + 4, f.scale_line, kBlack);

  // x axis: along the top for y-down sections, else along the bottom.
  const auto px = [&](double v) {
    return x0 + (ex.last != ex.first ? (v - ex.first) / (ex.last - ex.first) * (W - 1) : (W - 1) / 2.0);
  };
  const auto py = [&](double v) {
    const double f = ey.last != ey.first ? (v - ey.first) / (ey.last - ey.first) : 0.5;
    return y0 + (im.y_down ? f : 1 - f) * (H - 1);
  };
  const std::string xl = with_unit(im.x.label, im.x.unit), yl = with_unit(im.y.label, im.y.unit);
  for (double v : tx.values) {
    const int x = static_cast<int>(std::lround(px(v)));
    const std::string s = tick_label(v, tx.step);
    if (im.y_down) {
      line(g, x, y0 - 1, x, y0 - 1 - kTick, kBlack);
      text(g, fk, x - text_width(fk, s) / 2, y0 - 1 - kTick - 3 - fk->h, s, kBlack);
    } else {
      line(g, x, y0 + H, x, y0 + H + kTick, kBlack);
      text(g, fk, x - text_width(fk, s) / 2, y0 + H + kTick + 3, s, kBlack);
    }
  }
  const int xl_x = x0 + W / 2 - text_width(fl, xl) / 2;
  if (im.y_down)
    text(g, fl, xl_x, y0 - 1 - kTick - 3 - fk->h - 4 - fl->h, xl, kBlack);
  else
    text(g, fl, xl_x, y0 + H + kTick + 3 + fk->h + 4, xl, kBlack);
  for (double v : ty.values) {
    const int y = static_cast<int>(std::lround(py(v)));
    const std::string s = tick_label(v, ty.step);
    line(g, x0 - 1, y, x0 - 1 - kTick, y, kBlack);
    text(g, fk, x0 - 1 - kTick - 3 - text_width(fk, s), y - fk->h / 2, s, kBlack);
  }
  text_up_centred(g, fl, kPad + fl->h / 2, y0 + H / 2, yl, kBlack);

  // Colour bar: range.lo at the bottom, range.hi at the top.
  const int bx = l.bar_x;
  for (int j = 0; j < H; ++j) {
    const double t = H > 1 ? 1 - double(j) / (H - 1) : 0.5;
    gdImageLine(g, bx, y0 + j, bx + kBarW - 1, y0 + j, level[static_cast<size_t>(std::lround(t * (kLevels - 1)))]);
  }
  gdImageRectangle(g, bx - 1, y0 - 1, bx + kBarW, y0 + H, rgb(g, kBlack));
  for (double v : tc.values) {
    const int y = static_cast<int>(std::lround(y0 + (range.hi - v) / span * (H - 1)));
    const std::string s = bar_tick(f, v);
    line(g, bx + kBarW, y, bx + kBarW + kTick, y, kBlack);
    text(g, fk, bx + kBarW + kTick + 3, y - fk->h / 2, s, kBlack);
  }
  text_up_centred(g, fl, bx + kBarW + kTick + 3 + clab_w + 8 + fl->h / 2, y0 + H / 2, f.bar_label, kBlack);
  save_png(g, path);
}

namespace {
std::string metres(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", std::abs(v) < 1e-9 ? 0.0 : v);
  return b;
}
}  // namespace

Image2D gather_picture(const std::vector<float>& traces, long long nrec, long long nt, double dt,
                       const std::vector<Point3>& receivers, const Point3& source) {
  Image2D im;
  im.rows = nt, im.cols = nrec;
  im.values.resize(static_cast<size_t>(nt * nrec));
  for (long long r = 0; r < nrec; ++r)
    for (long long n = 0; n < nt; ++n) im.values[n * nrec + r] = traces[r * nt + n];
  im.y = {"time", "s", dt, dt};
  im.x = {"receiver number", "", 0, 1};
  // Evenly spaced on a line (within 1 mm or 0.1% of the spacing): the signed offset along the
  // line, from the source's projection, is the axis a geophysicist reads a gather by.
  if (nrec >= 2 && receivers.size() == size_t(nrec)) {
    const Point3 &a = receivers.front(), &b = receivers.back();
    Point3 u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double len = std::hypot(u[0], u[1], u[2]);
    if (len > 0) {
      for (double& c : u) c /= len;
      const double step = len / double(nrec - 1), tol = std::max(1e-3, 1e-3 * step);
      bool even = true;
      for (long long r = 0; r < nrec && even; ++r) {
        const Point3& p = receivers[r];
        double along = 0, off2 = 0;
        for (int k = 0; k < 3; ++k) along += (p[k] - a[k]) * u[k];
        for (int k = 0; k < 3; ++k) off2 += std::pow(p[k] - a[k] - along * u[k], 2);
        even = std::abs(along - double(r) * step) < tol && std::sqrt(off2) < tol;
      }
      if (even) {
        double start = 0;
        for (int k = 0; k < 3; ++k) start += (a[k] - source[k]) * u[k];
        im.x = {"offset", "m", start, step};
      }
    }
  }
  char t[128];
  std::snprintf(t, sizeof t, "gather, source at (%.10g, %.10g, %.10g) m", source[0], source[1], source[2]);
  im.title = t;
  im.value_label.assign(1, 'p');  // not = "p": GCC 12 warns falsely (-Wrestrict) on that at -O3
  im.value_unit = "arb. units";
  im.map = Colormap::seismic;
  return im;
}

Image2D volume_slice(const float* v, const std::array<long long, 3>& n, const std::array<double, 3>& h,
                     const std::array<double, 3>& origin, char normal, long long index) {
  const int k = normal == 'x' ? 0 : normal == 'y' ? 1 : normal == 'z' ? 2 : -1;
  if (k < 0) throw Error(std::string("slice normal '") + normal + "': valid are x, y, z");
  if (index < 0 || index >= n[k])
    throw Error(std::string("slice ") + normal + " index " + std::to_string(index) + " is outside 0.." +
                std::to_string(n[k] - 1));
  const Axis ax{"x", "m", origin[0], h[0]}, ay{"y", "m", origin[1], h[1]}, az{"depth z", "m", origin[2], h[2]};
  const auto at = [&](long long ix, long long iy, long long iz) { return v[(iz * n[1] + iy) * n[0] + ix]; };
  Image2D im;
  const std::string where = metres(origin[k] + double(index) * h[k]);
  if (k == 2) {  // a map view: x across, y up
    im.rows = n[1], im.cols = n[0], im.x = ax, im.y = ay, im.y_down = false;
    im.title = "x-y at depth z = " + where + " m";
    for (long long iy = 0; iy < n[1]; ++iy)
      for (long long ix = 0; ix < n[0]; ++ix) im.values.push_back(at(ix, iy, index));
  } else {  // a vertical section, depth down
    const long long nc = n[k == 1 ? 0 : 1];
    im.rows = n[2], im.cols = nc, im.x = k == 1 ? ax : ay, im.y = az;
    im.title = std::string(k == 1 ? "x-z at y = " : "y-z at x = ") + where + " m";
    for (long long iz = 0; iz < n[2]; ++iz)
      for (long long c = 0; c < nc; ++c) im.values.push_back(k == 1 ? at(c, index, iz) : at(index, c, iz));
  }
  return im;
}

void palette(int i, uint8_t c[3]) {
  static const uint8_t k[][3] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                 {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127}};
  const auto& p = k[i % 8];
  c[0] = p[0], c[1] = p[1], c[2] = p[2];
}

namespace {

void draw_panel(gdImagePtr g, int top, int height, const LinePlot& p) {
  gdFontPtr ft = title_font(), fl = label_font(), fk = label_font();
  const int left = 90, right = 360, bottom = 60, head = 40;
  const int x0 = left, x1 = gdImageSX(g) - right, y0 = top + head, y1 = top + height - bottom;
  double ymax = p.reference;
  for (const auto& s : p.series)
    for (double v : s.y)
      if (std::isfinite(v)) ymax = std::max(ymax, v);
  if (ymax <= 0) ymax = 1;
  const Ticks ty = nice_ticks(0, ymax * 1.08, 6);
  const double top_value = std::ceil(ymax * 1.08 / ty.step) * ty.step;
  auto Y = [&](double v) { return y1 - (y1 - y0) * v / top_value; };
  const int nx = static_cast<int>(p.x_ticks.size());
  auto X = [&](int i) { return x0 + (x1 - x0) * (i + 0.5) / std::max(1, nx); };

  text(g, ft, x0, top + 12, p.title, kBlack);
  for (double v = 0; v <= top_value + ty.step / 2; v += ty.step) {
    const double y = Y(v);
    line(g, x0, y, x1, y, kGrid);
    const std::string t = tick_label(v, ty.step);
    text(g, fk, x0 - 8 - text_width(fk, t), static_cast<int>(std::lround(y)) - fk->h / 2, t, kBlack);
  }
  line(g, x0, y0, x0, y1, kBlack, 2);
  line(g, x0, y1, x1, y1, kBlack, 2);
  for (int i = 0; i < nx; ++i) {
    const double x = X(i);
    line(g, x, y1, x, y1 + 6, kBlack, 2);
    text(g, fk, static_cast<int>(std::lround(x)) - text_width(fk, p.x_ticks[i]) / 2, y1 + 10, p.x_ticks[i], kBlack);
  }
  text(g, fl, (x0 + x1 - text_width(fl, p.x_label)) / 2, y1 + 32, p.x_label, kBlack);
  text_up_centred(g, fl, 20, (y0 + y1) / 2, p.y_label, kBlack);
  if (p.reference > 0) {
    dashed_line(g, x0, Y(p.reference), x1, Y(p.reference), kRef, 2);
    text(g, fl, x1 - 6 - text_width(fl, p.reference_label), static_cast<int>(Y(p.reference)) + 6, p.reference_label,
         kRef);
  }
  int legend_y = y0;
  for (const auto& s : p.series) {
    const uint32_t c = (uint32_t(s.rgb[0]) << 16) | (uint32_t(s.rgb[1]) << 8) | s.rgb[2];
    const auto draw = [&](double a, double b, double e, double f) {
      if (s.dashed)
        dashed_line(g, a, b, e, f, c, 3);
      else
        line(g, a, b, e, f, c, 3);
    };
    for (int i = 0; i + 1 < nx && i + 1 < static_cast<int>(s.y.size()); ++i)
      if (std::isfinite(s.y[i]) && std::isfinite(s.y[i + 1])) draw(X(i), Y(s.y[i]), X(i + 1), Y(s.y[i + 1]));
    for (int i = 0; i < nx && i < static_cast<int>(s.y.size()); ++i)
      if (std::isfinite(s.y[i]))
        gdImageFilledEllipse(g, static_cast<int>(std::lround(X(i))), static_cast<int>(std::lround(Y(s.y[i]))), 9, 9,
                             rgb(g, c));
    draw(x1 + 16, legend_y + fl->h / 2, x1 + 56, legend_y + fl->h / 2);
    text(g, fl, x1 + 64, legend_y, s.label, kBlack);
    legend_y += 20;
  }
}

}  // namespace

void write_line_plots(const std::string& path, const std::vector<LinePlot>& panels) {
  if (panels.empty()) throw Error("no data to plot for " + path);
  const int panel_h = 560;
  GdImage img = blank(1200, panel_h * static_cast<int>(panels.size()));
  for (size_t i = 0; i < panels.size(); ++i) draw_panel(img.get(), static_cast<int>(i) * panel_h, panel_h, panels[i]);
  PartialFile out(path);
  save_png(img.get(), out.temp_path());
  out.commit();
}

}  // namespace seisrtm::io
