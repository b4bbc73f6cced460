#pragma once
// Pictures a person looks at: image panels (gathers, wavefield, model and image slices) with
// physical axes, ticks, a title and a colour bar, and line charts (the bench). Drawn with libgd
// and its built-in bitmap fonts (no font files needed) and encoded as compressed PNG by libpng.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace seisrtm::io {

enum class Colormap {
  seismic,  // dark blue - blue - white (0) - red - dark red: signed data, zero is white
  grey,     // white (most negative) - black (most positive): signed data, peaks black
  viridis,  // dark purple - blue - green - yellow: sequential (velocities, illumination)
};
// "seismic" | "grey" (or "gray") | "viridis"; throws an Error naming the valid ones.
Colormap colormap_from_name(const std::string& name);
const char* colormap_name(Colormap m);

// A sampled axis: sample i sits at start + i * step (in `unit`).
struct Axis {
  std::string label;  // "x", "time", "depth z", "offset"
  std::string unit;   // "m", "s"; empty: none (a trace number)
  double start = 0;
  double step = 1;
};

// A 2D array drawn on physical axes. values[r * cols + c]: column c is at x.start + c * x.step,
// row r at y.start + r * y.step. y_down: row 0 at the top (time, depth) and the x axis drawn
// along the top as seismic sections are; else row 0 at the bottom (a map view, y north).
struct Image2D {
  std::vector<float> values;
  long long rows = 0, cols = 0;
  Axis x, y;
  bool y_down = true;
  std::string title;
  std::string value_label;  // colour bar label: "p", "vp"
  std::string value_unit;   // "m/s", "arb. units"
  Colormap map = Colormap::seismic;
  // symmetric: colours span [-clip, clip] with clip the clip_percentile-th percentile of |v|
  // (signed seismic data; the value is stated on the colour bar). Else [lo, hi] = the
  // (100 - clip_percentile)-th and clip_percentile-th percentiles of v (100: min..max).
  bool symmetric = true;
  double clip_percentile = 99;
  // Plot area in pixels; 0: chosen from the axes (equal metres per pixel on both axes when
  // they share a unit, else about 560 x 640).
  int width = 0, height = 0;
};

// The colour range write_image uses for `im` (lo, hi), from its clip settings.
struct ColourRange {
  double lo = 0, hi = 1;
};
ColourRange colour_range(const Image2D& im);

// The p-th percentile (0..100) of |v| and of v, interpolating linearly between order statistics
// (numpy.percentile's default): of |{0, 1, ..., 100}| the 99th is 99, of {1..10} the 50th 5.5.
// NaN samples are ignored; an empty (or all-NaN) array gives 0.
double percentile_abs(const std::vector<float>& v, double p);
double percentile(const std::vector<float>& v, double p);

// The colour of value t in [0, 1] along a map (0: the lo end, 1: the hi end), as 0xRRGGBB.
uint32_t colour_at(Colormap m, double t);

// Tick values at a 1, 2 or 5 times a power of ten step, about `n` intervals over [lo, hi].
struct Ticks {
  std::vector<double> values;
  double step = 1;
};
Ticks nice_ticks(double lo, double hi, int n);
// A tick label: as few digits as the step needs ("0.25", "500", "-2e-4").
std::string tick_label(double v, double step);

// Where write_image puts things, in pixels: the whole picture, the plot area (x0, y0 its top
// left, w x h) and the colour bar (bar_x its left column, bar_w wide, as tall as the area).
struct ImageLayout {
  int width = 0, height = 0;
  int x0 = 0, y0 = 0, w = 0, h = 0;
  int bar_x = 0, bar_w = 0;
};
ImageLayout image_layout(const Image2D& im);

// Writes the picture to `path` (as given: the caller picks temporary names). Throws an Error
// naming the file when encoding or the write (its close included) fails.
void write_image(const std::string& path, const Image2D& im);

// The pictures run, migrate and `seisrtm plot` draw, from plain arrays; callers add the title's
// front ("quickstart: wavefield p at t = 1.000 s, ") and the value label, unit and map.
using Point3 = std::array<double, 3>;  // m, [x, y, z]

// A shot gather: time (s) down, samples at (n + 1) dt; across, the signed offset (m) along the
// receiver line from the source when the receivers lie evenly on a line, else the receiver
// number. traces[receiver * nt + n].
Image2D gather_picture(const std::vector<float>& traces, long long nrec, long long nt, double dt,
                       const std::vector<Point3>& receivers, const Point3& source);

// A slice of a [z][y][x] volume (n, h, origin as [x, y, z]; m) through the plane `normal`
// ('x', 'y' or 'z') = origin + index * h: y-z, x-z (depth down) or x-y (a map view, y up).
// Its title is the slice's name, "x-z at y = 495 m".
Image2D volume_slice(const float* volume, const std::array<long long, 3>& n, const std::array<double, 3>& h,
                     const std::array<double, 3>& origin, char normal, long long index);

// Line charts: categorical x axis, one polyline per series, an optional horizontal reference
// line, a legend.
struct Series {
  std::string label;
  std::vector<double> y;  // one per x tick; NaN = no point
  uint8_t rgb[3] = {0, 0, 0};
  bool dashed = false;
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<std::string> x_ticks;
  std::vector<Series> series;
  double reference = 0;  // a horizontal line (e.g. the roofline); 0 = none
  std::string reference_label;
};

// Panels stacked vertically in one image (1200 x 560 pixels each), written under a temporary
// name and renamed.
void write_line_plots(const std::string& path, const std::vector<LinePlot>& panels);

// A colour of a small qualitative palette.
void palette(int i, uint8_t rgb[3]);

}  // namespace seisrtm::io
