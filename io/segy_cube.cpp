#include "io/segy_cube.hpp"

#include <segyio/segy.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "base/error.hpp"
#include "io/output_file.hpp"
#include "io/segy.hpp"
#include "io/segy_header.hpp"

namespace seisrtm::io {

using namespace segy;  // io/segy_header.hpp

SegyCube plan_segy_cube(const std::string& what, int revision, std::array<long long, 3> n, std::array<double, 3> h,
                        std::array<double, 3> origin) {
  auto bad = [&](const std::string& why) { return Error(what + ": " + why); };
  if (revision != 1 && revision != 2) throw bad("SEG-Y revision " + std::to_string(revision) + "; valid: 1, 2");
  const long long max_samples = segy_max_samples(revision);
  if (n[0] < 1 || n[1] < 1 || n[2] < 1)
    throw bad("an image of " + std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " + std::to_string(n[2]) +
              " cells has no trace to write");
  if (n[2] > max_samples)
    throw bad(std::to_string(n[2]) + " depth samples a trace exceed the " + std::to_string(max_samples) +
              " of the 16-bit count (bytes 3221, 115) of SEG-Y rev " + std::to_string(revision) +
              (revision == 1 ? "; rev 2 holds 65535" : ""));
  if (n[0] * n[1] > INT32_MAX)
    throw bad(std::to_string(n[0]) + " x " + std::to_string(n[1]) + " traces exceed the 2147483647 segyio can address");
  for (int a = 0; a < 3; ++a)
    if (!(h[a] > 0) || !std::isfinite(h[a]) || !std::isfinite(origin[a]))
      throw bad("spacing " + fmt(h[a]) + " m and origin " + fmt(origin[a]) + " m along axis " + std::to_string(a) +
                " must be finite, the spacing positive");
  // Depth samples: the interval fields hold metres x 1000 (mm) where time data hold us, so
  // tools that show the interval in ms show it in m (docs/SEGY.md).
  const double mm = std::round(h[2] * 1000.0);
  if (mm < 1 || mm > double(max_samples))
    throw bad("depth spacing " + fmt(h[2]) + " m is " + fmt(h[2] * 1000.0) + " mm, outside the 1 to " +
              std::to_string(max_samples) + " mm the 16-bit SEG-Y sample interval (bytes 3217, 117) holds");

  SegyCube c;
  c.revision = revision;
  c.n = n;
  c.h = h;
  c.origin = origin;
  c.interval = static_cast<int>(mm);
  // x and y: every column's coordinate (nx + ny values: x depends on i only, y on j only).
  std::vector<double> xy;
  for (long long i = 0; i < n[0]; ++i) xy.push_back(origin[0] + double(i) * h[0]);
  for (long long j = 0; j < n[1]; ++j) xy.push_back(origin[1] + double(j) * h[1]);
  const int kc = scalar_exponent(xy, 2147483647.0);
  if (kc < 0)
    throw bad("an x or y coordinate of the image (origin " + fmt(origin[0]) + ", " + fmt(origin[1]) +
              " m) exceeds the 32-bit range of the SEG-Y position fields (2147483647 m)");
  c.coordinate_scalar = scalar_of(kc);
  // The first sample's depth in the 16-bit delay field (109, "ms", here m), scaled by byte 215.
  const int kz = scalar_exponent({origin[2]}, 32767.0);
  if (kz < 0)
    throw bad("the image's first depth " + fmt(origin[2]) +
              " m exceeds the 16-bit SEG-Y delay field (bytes 109-110, -32768 to 32767)");
  c.depth_scalar = scalar_of(kz);
  c.first_depth = static_cast<int>(scaled(origin[2], c.depth_scalar));
  return c;
}

namespace {

// What a trace of a depth file says of itself beside its samples.
struct DepthTrace {
  double x = 0, y = 0;                        // m, survey coordinates of its column
  long long inline_no = 0, crossline_no = 0;  // bytes 189, 193
  long long ensemble = 0, in_ensemble = 0;    // bytes 21, 25
  long long offset = 0;                       // byte 37 (m)
};

// A file of depth traces of a cube's plan (its scalars, interval, first depth): the textual
// header (`textual`'s lines, then `map`), the binary header, then traces written one by one,
// each checked; close() flushes. A failure throws Error naming the final file.
class DepthTraceFile {
 public:
  DepthTraceFile(const std::string& path, const SegyCube& c, const std::string& textual,
                 const std::vector<std::string>& map, long long per_ensemble, long long traces, int sorting)
      : c_(c), shown_(shown_name(path)), f_(segy_open(path.c_str(), "w+b")) {
    if (!f_) fail("cannot create it");
    std::vector<std::string> lines;
    {
      std::istringstream in(textual);
      for (std::string l; std::getline(in, l) && lines.size() < 20;) lines.push_back(l.substr(0, 76));
    }
    lines.insert(lines.end(), map.begin(), map.end());
    std::string text = text_header(lines, c.revision);
    if (segy_write_textheader(f_.get(), 0, text.data()) != SEGY_OK) fail("textual header");
    char bin[kBin] = {};
    auto bset = [&](int field, int v) {
      if (segy_set_bfield(bin, field, v) != SEGY_OK) fail("binary header field " + std::to_string(field));
    };
    const long long nz = c.n[2];
    bset(SEGY_BIN_JOB_ID, 1);
    bset(SEGY_BIN_LINE_NUMBER, 1);
    bset(SEGY_BIN_REEL_NUMBER, 1);
    bset(SEGY_BIN_TRACES, static_cast<int>(std::min<long long>(per_ensemble, 32767)));
    bset(SEGY_BIN_INTERVAL, c.interval);
    bset(SEGY_BIN_INTERVAL_ORIG, c.interval);
    bset(SEGY_BIN_SAMPLES, static_cast<int>(nz));
    bset(SEGY_BIN_SAMPLES_ORIG, static_cast<int>(nz));
    bset(SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    bset(SEGY_BIN_ENSEMBLE_FOLD, static_cast<int>(std::min<long long>(sorting == 4 ? 1 : per_ensemble, 32767)));
    bset(SEGY_BIN_SORTING_CODE, sorting);
    bset(SEGY_BIN_MEASUREMENT_SYSTEM, 1);  // metres
    bset(SEGY_BIN_SEGY_REVISION, c.revision == 1 ? 0x0100 : 0x0200);
    bset(SEGY_BIN_TRACE_FLAG, 1);  // fixed length
    bset(SEGY_BIN_EXT_HEADERS, 0);
    if (c.revision == 2) put_rev2_fields(bin, per_ensemble, nz, c.h[2] * 1000.0, traces);  // (the interval in mm)
    if (segy_write_binheader(f_.get(), bin) != SEGY_OK) fail("binary header");
    trsize_ = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, static_cast<int>(nz));
  }

  // Trace t (0-based) from `samples` (c.n[2] native floats, converted in place).
  void trace(long long t, const DepthTrace& w, float* samples) {
    if (segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, c_.n[2], samples) != SEGY_OK) fail("sample conversion");
    char hdr[kTrace] = {};
    auto set = [&](int field, long long v) {
      if (v < INT32_MIN || v > INT32_MAX || segy_set_field(hdr, field, static_cast<int32_t>(v)) != SEGY_OK)
        fail("trace " + std::to_string(t + 1) + " header byte " + std::to_string(field) + " = " + std::to_string(v));
    };
    const long long sx = scaled(w.x, c_.coordinate_scalar), sy = scaled(w.y, c_.coordinate_scalar);
    set(SEGY_TR_SEQ_LINE, w.crossline_no);
    set(SEGY_TR_SEQ_FILE, t + 1);
    set(SEGY_TR_ENSEMBLE, w.ensemble);
    if (w.in_ensemble > 0) set(SEGY_TR_NUM_IN_ENSEMBLE, w.in_ensemble);
    set(SEGY_TR_TRACE_ID, 1);  // seismic data
    set(SEGY_TR_SUMMED_TRACES, 1);
    set(SEGY_TR_STACKED_TRACES, 1);
    set(SEGY_TR_DATA_USE, 1);
    if (w.offset != 0) set(SEGY_TR_OFFSET, w.offset);
    set(SEGY_TR_SOURCE_GROUP_SCALAR, c_.coordinate_scalar);
    // The column's position in the source and group fields too: readers that take positions
    // from them see the cell.
    set(SEGY_TR_SOURCE_X, sx);
    set(SEGY_TR_SOURCE_Y, sy);
    set(SEGY_TR_GROUP_X, sx);
    set(SEGY_TR_GROUP_Y, sy);
    set(SEGY_TR_COORD_UNITS, 1);  // length (m)
    set(SEGY_TR_DELAY_REC_TIME, c_.first_depth);
    set(SEGY_TR_SAMPLE_COUNT, c_.n[2]);
    set(SEGY_TR_SAMPLE_INTER, c_.interval);
    set(SEGY_TR_CDP_X, sx);
    set(SEGY_TR_CDP_Y, sy);
    set(SEGY_TR_INLINE, w.inline_no);
    set(SEGY_TR_CROSSLINE, w.crossline_no);
    set(SEGY_TR_SCALAR_TRACE_HEADER, c_.depth_scalar);
    const int at = static_cast<int>(t);
    if (segy_write_traceheader(f_.get(), at, hdr, kTrace0, trsize_) != SEGY_OK)
      fail("trace header " + std::to_string(t + 1));
    if (segy_writetrace(f_.get(), at, samples, kTrace0, trsize_) != SEGY_OK) fail("trace " + std::to_string(t + 1));
  }

  // segy_close flushes (checked: a full disk shows here), as io/segy.cpp's writer does.
  void close() {
    errno = 0;
    if (segy_close(f_.release()) != SEGY_OK) fail("flush");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("writing SEG-Y file '" + shown_ + "' failed: " + what + write_failure_reason());
  }
  SegyCube c_;
  std::string shown_;
  Handle f_;
  int trsize_ = 0;
};

// The textual header's lines on the depth axis and the positions, shared by the cube and the gathers.
std::vector<std::string> depth_lines(const SegyCube& c) {
  char dz[40], xy[80], z0[40];
  std::snprintf(dz, sizeof dz, "%.17g", c.h[2]);
  std::snprintf(xy, sizeof xy, "%.17g %.17g", c.origin[0], c.origin[1]);
  std::snprintf(z0, sizeof z0, "%.17g", c.origin[2]);
  return {
      "cell (i, j, k) at origin + (i hx, j hy, k hz), origin (cell 0 0 0):",
      std::string("ORIGIN X Y = ") + xy + " M",
      std::string("ORIGIN Z (FIRST SAMPLE DEPTH) = ") + z0 + " M",
      "cdp x, y 181/185 = source 73/77 = group 81/85, scalar 71: " + scalar_text(c.coordinate_scalar),
      "z down, m; interval 3217/117 = dz x 1000 (mm, shown as m where ms) = " + std::to_string(c.interval),
      std::string("EXACT DEPTH INTERVAL DZ = ") + dz + " M",
      "first sample depth: delay 109 = " + std::to_string(c.first_depth) +
          ", time scalar 215: " + scalar_text(c.depth_scalar),
      "format 5 (IEEE float, big-endian), fixed-length traces, units: m",
  };
}

}  // namespace

void write_segy_cube(const std::string& path, const SegyCube& c, const float* volume, const std::string& textual) {
  const long long nx = c.n[0], ny = c.n[1], nz = c.n[2];
  std::vector<std::string> map = {"depth image " + std::to_string(nx) + " x " + std::to_string(ny) + " x " +
                                  std::to_string(nz) + " cells (x y z), " + fmt(c.h[0]) + " " + fmt(c.h[1]) + " " +
                                  fmt(c.h[2]) + " m"};
  const std::vector<std::string> depth = depth_lines(c);
  map.insert(map.end(), depth.begin(), depth.end());
  map.insert(map.begin() + 4, {"a trace a column (x, y); inline 189 = j + 1 (y), crossline 193 = i + 1 (x)",
                               "sorted inline slowest, crossline fastest; cdp/ensemble 21 = trace + 1"});
  DepthTraceFile out(path, c, textual, map, nx, nx * ny, 4);  // an ensemble is an inline; horizontally stacked
  // One inline at a time: the volume's rows [z][j][*] (contiguous in x) are transposed into nx
  // traces of nz samples, so the volume is read in order once; 4 nx nz bytes of buffer.
  std::vector<float> line(static_cast<size_t>(nx * nz));
  for (long long j = 0; j < ny; ++j) {
    for (long long k = 0; k < nz; ++k) {
      const float* row = volume + (k * ny + j) * nx;
      for (long long i = 0; i < nx; ++i) line[static_cast<size_t>(i * nz + k)] = row[i];
    }
    const double y = c.origin[1] + double(j) * c.h[1];
    for (long long i = 0; i < nx; ++i) {
      const long long t = j * nx + i;
      out.trace(t, {c.origin[0] + double(i) * c.h[0], y, j + 1, i + 1, t + 1, 0, 0}, line.data() + i * nz);
    }
  }
  out.close();
}

void write_segy_gathers(const std::string& path, const SegyCube& c, const std::vector<long long>& x_cells,
                        const std::vector<long long>& y_cells, long long traces_each,
                        const std::vector<long long>& offsets, const float* gathers, const std::string& what,
                        const std::string& textual) {
  const long long nz = c.n[2], nxl = static_cast<long long>(x_cells.size()),
                  nyl = static_cast<long long>(y_cells.size());
  std::vector<std::string> map = {what + ": " + std::to_string(nyl) + " x " + std::to_string(nxl) +
                                  " locations (y x) x " + std::to_string(traces_each) + " traces x " +
                                  std::to_string(nz) + " depths, cells " + fmt(c.h[0]) + " " + fmt(c.h[1]) + " " +
                                  fmt(c.h[2]) + " m"};
  const std::vector<std::string> depth = depth_lines(c);
  map.insert(map.end(), depth.begin(), depth.end());
  map.insert(map.begin() + 4,
             {"a gather a location, its traces in order; inline 189 = j + 1 (y cell j), crossline 193 = i + 1",
              "ensemble 21 = location + 1 (y slowest), trace in ensemble 25 = trace + 1, offset 37 (m, rounded)"});
  DepthTraceFile out(path, c, textual, map, traces_each, nyl * nxl * traces_each, 2);  // CDP ensembles
  std::vector<float> t(static_cast<size_t>(nz));
  for (long long jy = 0; jy < nyl; ++jy)
    for (long long jx = 0; jx < nxl; ++jx)
      for (long long k = 0; k < traces_each; ++k) {
        const long long loc = jy * nxl + jx, n = loc * traces_each + k;
        std::copy(gathers + n * nz, gathers + (n + 1) * nz, t.begin());
        const long long i = x_cells[static_cast<size_t>(jx)], j = y_cells[static_cast<size_t>(jy)];
        out.trace(n,
                  {c.origin[0] + double(i) * c.h[0], c.origin[1] + double(j) * c.h[1], j + 1, i + 1, loc + 1, k + 1,
                   offsets.empty() ? 0 : offsets[static_cast<size_t>(k)]},
                  t.data());
      }
  out.close();
}

void write_segy_cube(const std::string& path, const float* volume, std::array<long long, 3> n, std::array<double, 3> h,
                     std::array<double, 3> origin, int revision, const std::string& textual) {
  const SegyCube c = plan_segy_cube("SEG-Y cube '" + shown_name(path) + "'", revision, n, h, origin);
  write_segy_cube(path, c, volume, textual);
}

CubeVolume read_segy_cube(const std::string& path, double host_limit) {
  const std::string where = "model file '" + path + "' (SEG-Y cube)";
  auto fail = [&](const std::string& why) -> void { throw Error(where + ": " + why); };
  Handle f(segy_open(path.c_str(), "rb"));
  if (!f) fail(std::string("cannot be opened: ") + std::strerror(errno));
  char bin[kBin];
  if (segy_binheader(f.get(), bin) != SEGY_OK) fail("no binary header (a file shorter than 3600 bytes?)");
  const int ns = segy_samples(bin), format = segy_format(bin);
  if (ns <= 0) fail("the binary header gives " + std::to_string(ns) + " samples a trace (bytes 3221)");
  if (format != SEGY_IEEE_FLOAT_4_BYTE && format != SEGY_IBM_FLOAT_4_BYTE)
    fail("sample format " + std::to_string(format) + " (bytes 3225); valid: 5 (IEEE float) or 1 (IBM float)");
  const long trace0 = segy_trace0(bin);
  const int trsize = segy_trsize(format, ns);
  int traces = 0;
  if (segy_traces(f.get(), &traces, trace0, trsize) != SEGY_OK || traces <= 0)
    fail("its size is not a whole number of traces of " + std::to_string(ns) + " samples after the headers");
  int32_t interval = 0;
  segy_get_bfield(bin, SEGY_BIN_INTERVAL, &interval);
  struct Trace {
    int32_t il = 0, xl = 0;
    double x = 0, y = 0, z0 = 0;
    double unit = 1;  // m: the coordinate scalar's step (scalar -100: 0.01 m)
  };
  std::vector<Trace> t(static_cast<size_t>(traces));
  char th[kTrace];
  for (int i = 0; i < traces; ++i) {
    if (segy_traceheader(f.get(), i, th, trace0, trsize) != SEGY_OK) fail("trace header " + std::to_string(i));
    int32_t cx = 0, cy = 0, sc = 0, delay = 0, dsc = 0, tr_interval = 0;
    segy_get_field(th, SEGY_TR_INLINE, &t[i].il);
    segy_get_field(th, SEGY_TR_CROSSLINE, &t[i].xl);
    segy_get_field(th, SEGY_TR_CDP_X, &cx);
    segy_get_field(th, SEGY_TR_CDP_Y, &cy);
    segy_get_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, &sc);
    segy_get_field(th, SEGY_TR_DELAY_REC_TIME, &delay);
    segy_get_field(th, SEGY_TR_SCALAR_TRACE_HEADER, &dsc);
    segy_get_field(th, SEGY_TR_SAMPLE_INTER, &tr_interval);
    if (interval <= 0) interval = tr_interval;
    t[i].x = unscaled(cx, sc), t[i].y = unscaled(cy, sc), t[i].z0 = unscaled(delay, dsc);
    t[i].unit = unscaled(1, sc);
  }
  if (interval <= 0) fail("no sample interval (bytes 3217 or trace bytes 117): the depth step in mm");
  // The inline and crossline ranges, every pair once.
  int32_t il0 = t[0].il, il1 = t[0].il, xl0 = t[0].xl, xl1 = t[0].xl;
  for (const Trace& r : t)
    il0 = std::min(il0, r.il), il1 = std::max(il1, r.il), xl0 = std::min(xl0, r.xl), xl1 = std::max(xl1, r.xl);
  const long long nx = static_cast<long long>(xl1) - xl0 + 1, ny = static_cast<long long>(il1) - il0 + 1;
  if (nx * ny != traces)
    fail(std::to_string(traces) + " traces for inlines " + std::to_string(il0) + ".." + std::to_string(il1) +
         " and crosslines " + std::to_string(xl0) + ".." + std::to_string(xl1) + " (" + std::to_string(nx * ny) +
         " pairs; bytes 189 and 193): a cube holds every pair once");
  std::vector<long long> at(static_cast<size_t>(traces), -1);  // (il, xl) -> trace
  for (int i = 0; i < traces; ++i) {
    long long& k = at[static_cast<size_t>((t[i].il - il0) * nx + (t[i].xl - xl0))];
    if (k >= 0) fail("inline " + std::to_string(t[i].il) + ", crossline " + std::to_string(t[i].xl) + " twice");
    k = i;
  }
  CubeVolume v;
  v.n = {nx, ny, ns};
  const Trace& first = t[static_cast<size_t>(at[0])];
  v.origin = {first.x, first.y, first.z0};
  v.h[2] = interval / 1000.0;
  v.h[0] = nx > 1 ? t[static_cast<size_t>(at[static_cast<size_t>(nx - 1)])].x - first.x : 0;
  v.h[1] = ny > 1 ? t[static_cast<size_t>(at[static_cast<size_t>((ny - 1) * nx)])].y - first.y : 0;
  if (nx > 1) v.h[0] /= double(nx - 1);
  if (ny > 1) v.h[1] /= double(ny - 1);
  // Axis-aligned and regular: x from the crossline alone, y from the inline alone, to within
  // the rounding of the coordinates (half the scalar's unit, and at least half a millimetre).
  for (long long j = 0; j < ny; ++j)
    for (long long i = 0; i < nx; ++i) {
      const Trace& r = t[static_cast<size_t>(at[static_cast<size_t>(j * nx + i)])];
      const double tol = std::max(5e-4, 0.5 * std::max(r.unit, first.unit));
      if (std::abs(r.x - (first.x + double(i) * v.h[0])) > tol ||
          std::abs(r.y - (first.y + double(j) * v.h[1])) > tol || r.z0 != first.z0)
        fail("inline " + std::to_string(r.il) + ", crossline " + std::to_string(r.xl) + " is at (" + fmt(r.x) + ", " +
             fmt(r.y) + ", first depth " + fmt(r.z0) + ") m, off the regular grid of the first trace (" + fmt(first.x) +
             ", " + fmt(first.y) + ") + (crossline " + fmt(v.h[0]) + ", inline " + fmt(v.h[1]) +
             ") m: only cubes with x along the crosslines and y along the inlines (not rotated) are read");
    }
  if ((nx > 1 && !(v.h[0] > 0)) || (ny > 1 && !(v.h[1] > 0)))
    fail("x must grow with the crossline number and y with the inline number (steps " + fmt(v.h[0]) + ", " +
         fmt(v.h[1]) + " m)");
  if (nx == 1) v.h[0] = 1;
  if (ny == 1) v.h[1] = 1;
  const double bytes = double(nx) * double(ny) * double(ns) * 4;
  if (host_limit > 0 && bytes > host_limit)
    fail("its " + std::to_string(nx * ny * ns) + " samples (" + fmt(bytes / 1073741824.0) +
         " GiB) exceed the host memory this run may use");
  v.data.resize(static_cast<size_t>(nx * ny * ns));
  std::vector<float> tr(static_cast<size_t>(ns));
  for (long long j = 0; j < ny; ++j)
    for (long long i = 0; i < nx; ++i) {
      const int k = static_cast<int>(at[static_cast<size_t>(j * nx + i)]);
      if (segy_readtrace(f.get(), k, tr.data(), trace0, trsize) != SEGY_OK) fail("trace " + std::to_string(k));
      segy_to_native(format, ns, tr.data());
      for (long long z = 0; z < ns; ++z)
        v.data[static_cast<size_t>((z * ny + j) * nx + i)] = tr[static_cast<size_t>(z)];
    }
  return v;
}

}  // namespace seisrtm::io
