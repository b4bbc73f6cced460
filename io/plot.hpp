#pragma once
// Line charts as PNG (bench results): categorical x axis, one polyline per series, an optional
// horizontal reference line, a legend, and text in a built-in 5x7 pixel font (upper case,
// digits and a little punctuation; lower case is drawn as upper case).
#include <cstdint>
#include <string>
#include <vector>

namespace seisrtm::io {

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

// Panels stacked vertically in one image, written under a temporary name and renamed.
void write_line_plots(const std::string& path, const std::vector<LinePlot>& panels);

// A colour of a small qualitative palette.
void palette(int i, uint8_t rgb[3]);

}  // namespace seisrtm::io
