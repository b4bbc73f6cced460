#include "solver/problem.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <sstream>

#include "base/error.hpp"
#include "base/format.hpp"
#include "io/hdf5_file.hpp"
#include "io/segy.hpp"
#include "io/segy_cube.hpp"
#include "solver/device_info.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/model_smoothing.hpp"
#include "solver/numerics.hpp"

namespace seisrtm {

std::string cell_text(const Grid& g, size_t i) {
  const long long ix = i % g.n[0], iy = (i / g.n[0]) % g.n[1], iz = i / (g.n[0] * g.n[1]);
  return "[z, y, x] = [" + std::to_string(iz) + ", " + std::to_string(iy) + ", " + std::to_string(ix) + "]";
}

namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

std::string fmt3(const std::array<double, 3>& p) {
  std::string s = "[";  // appended: "[" + a temporary makes GCC 12 warn (-Wrestrict) falsely
  s += coordinate_text(p[0]) + ", " + coordinate_text(p[1]) + ", " + coordinate_text(p[2]) + "]";
  return s;
}

// p relative to cell 0; the message in survey coordinates (grid.origin).
void check_inside(const Grid& g, const std::array<double, 3>& p, const std::string& key) {
  for (int a = 0; a < 3; ++a) {
    if (!(p[a] >= 0 && p[a] <= g.extent(a))) {
      std::string valid;
      for (int b = 0; b < 3; ++b)
        valid += std::string(b ? ", " : "") + "xyz"[b] + " in [" + coordinate_text(g.origin[b]) + ", " +
                 coordinate_text(g.origin[b] + g.extent(b)) + "]";
      throw Error("config key '" + key + "' = " + fmt3(g.survey(p)) + " m lies outside the grid; valid: " + valid +
                  " m (grid.origin + [0, (grid.shape - 1) x grid.spacing])");
    }
  }
}

std::string dims_text(const std::vector<hsize_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

bool in_damping_zone(const Grid& g, const std::array<double, 3>& p, int width, bool free_surface) {
  for (int a = 0; a < 3; ++a) {
    const double i = p[a] / g.h[a];
    const bool low = !(a == 2 && free_surface);
    if ((low && i < width) || i > static_cast<double>(g.n[a] - 1 - width)) return true;
  }
  return false;
}

// Physical range of vp (checks.physical_ranges). 100 m/s: below the slowest P speed of dry sand
// (about 200 m/s) and of air (343 m/s); a velocity in km/s (water 1.48, the fastest rock below 9)
// lies far below it. 10000 m/s: above every rock of the crust and the upper mantle (dolomite
// about 7000 m/s, the mantle below the Moho 8100 to 9000 m/s); the deep mantle, up to 13700 m/s,
// needs the override. A velocity in ft/s (a factor 3.28 too large) lies above it from 3050 m/s.
constexpr double kVpMin = 100, kVpMax = 10000;  // m/s

// The fewest grid points per wavelength at f_max that can represent a wave at all: the Nyquist
// limit, 2 samples a period. The milder shortfall, below required_points_per_wavelength of the
// space order (4 to 10), is a warning.
constexpr double kMinPointsPerWavelength = 2;

// A finding of checks.physical_ranges: refused, or with the override a warning and the run goes on.
// `refusal_note` says what the override is for.
void physical_range_finding(const Config& c, std::vector<std::string>& warnings, const std::string& text,
                            const std::string& refusal_note = "") {
  if (c.checks.physical_ranges) throw Error(text + " (or set checks.physical_ranges: false" + refusal_note + ")");
  warnings.push_back(text + " (checks.physical_ranges is false: run as given)");
}

// The likely unit mistake behind a vp outside [kVpMin, kVpMax].
std::string vp_unit_hint(double v) {
  if (v < kVpMin && v * 1000 >= kVpMin && v * 1000 <= kVpMax) return "; km/s? use " + fmt(v * 1000);
  if (v < kVpMin) return "";
  if (v * 0.3048 >= kVpMin && v * 0.3048 <= kVpMax) return "; ft/s? use " + fmt(v * 0.3048);
  return "";
}

// vp of the built model (a file's values, layers, bodies and smoothing included) against the
// physical range; refused unless checks.physical_ranges is false, then a warning.
void check_vp_range(const Config& c, const Grid& g, const std::vector<float>& vp, std::vector<std::string>& warnings) {
  const auto [mn, mx] = std::minmax_element(vp.begin(), vp.end());
  for (const auto* it : {&*mn, &*mx}) {
    const double v = *it;
    if ((v >= kVpMin && v <= kVpMax) || (it == &*mx && *mx == *mn)) continue;
    const auto i = static_cast<size_t>(it - vp.data());
    const VolumeConfig& m = c.model.vp;
    const std::string where = m.type == VolumeType::file
                                  ? "model file '" + m.file + "' dataset '" + m.dataset + "' (model.vp.file) has vp = "
                                  : "config key 'model.vp' gives vp = ";
    const std::string what = v < kVpMin
                                 ? "slower than any rock or fluid (water 1480 m/s, air 343 m/s, dry sand about 200 m/s)"
                                 : "faster than any rock of the crust or upper mantle (at most about 9000 m/s)";
    const std::string text = where + fmt(v) + " m/s at " + cell_text(g, i) + ", " + what + vp_unit_hint(v) +
                             "; valid: " + fmt(kVpMin) + " to " + fmt(kVpMax) + " m/s";
    physical_range_finding(c, warnings, text, " for a medium outside it");
  }
}

// Model sampling (docs/MODEL.md). The wave equation is (1/v^2) p_tt = lap p, so a node carries
// the mean of the slowness squared s = 1/v^2 over its cell [z - hz/2, z + hz/2], clipped to the
// model's depth range [0, (nz - 1) hz]. The discrete model then has its interface where the
// configured one is, to second order in k hz, on a node and between nodes alike (a node-point
// sample would put it halfway between the last slow and the first fast node). The anisotropy
// parameters enter the pseudo-acoustic equations as they are (1 + 2 eps, the axis from theta and
// phi), so their nodes carry the plain mean over the same cell.
//
// One machinery for both: a transform T says what is averaged. T::to maps a value to the
// averaged quantity, T::from maps a mean back, T::gradient_mean is the mean of to(v0 + g z) over
// [a, b] (a == b: the value at a, for a grid of one node along z).
struct SlownessSquared {
  static double to(double v) { return 1 / (v * v); }
  static double from(double s) { return 1 / std::sqrt(s); }
  // int_a^b (v0 + g z)^-2 dz = (v(b) - v(a)) / (g v(a) v(b)) = (b - a) / (v(a) v(b)), so the mean
  // is 1 / (v(a) v(b)), for g = 0 too. Needs v > 0 at both ends (checked by build_velocity).
  static double gradient_mean(double v0, double g, double a, double b) { return 1.0 / ((v0 + g * a) * (v0 + g * b)); }
};
struct Identity {
  static double to(double v) { return v; }
  static double from(double v) { return v; }
  // The mean of a linear function is its value at the interval's midpoint.
  static double gradient_mean(double v0, double g, double a, double b) { return v0 + g * (a + b) / 2; }
};

// Mean of T::to(value) over [a, b] m of a layered volume: each layer weighted by its share of the
// interval. Layer l spans [top_l, top_{l+1}); the first also extends upwards, the last downwards.
template <class T>
double layers_mean(const std::vector<LayerConfig>& layers, double a, double b) {
  if (!(b > a)) {  // a grid of one node along z: the value at depth a
    double v = layers.front().value;
    for (const auto& l : layers)
      if (a >= l.top) v = l.value;
    return T::to(v);
  }
  double sum = 0;  // integral of T::to(value) dz
  for (size_t l = 0; l < layers.size(); ++l) {
    const double lo = l == 0 ? a : std::max(a, layers[l].top);
    const double hi = l + 1 == layers.size() ? b : std::min(b, layers[l + 1].top);
    if (hi > lo) sum += (hi - lo) * T::to(layers[l].value);
  }
  return sum / (b - a);
}

// vp = v0 + g z must be > 0 on [a, b], that is at both ends.
// a, b relative to cell 0; the message in survey coordinates (z0: grid.origin's z).
void check_gradient_velocity(double v0, double g, double a, double b, double z0 = 0) {
  for (const double z : {a, b}) {
    const double v = v0 + g * z;
    if (!(v > 0))
      throw Error("config key 'model.vp' gives vp = " + fmt(v) + " m/s at depth " + fmt(z + z0) +
                  " m; velocities must be > 0 (check model.vp.gradient)");
  }
}

// Lays an ellipsoid of constant value over a volume with the same sampling rule: a node takes
// the mean of T::to over its cell, here from the fraction f of 4 x 4 x 4 sub-cell points inside:
// from(f to(body) + (1 - f) to(background)).
template <class T>
void add_body(const Grid& g, const BodyConfig& b, std::vector<float>& vol) {
  constexpr int kSub = 4;
  std::array<long long, 3> lo{}, hi{};
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::clamp<long long>(static_cast<long long>(std::floor((b.center[a] - b.radii[a]) / g.h[a])) - 1, 0,
                                  g.n[a] - 1);
    hi[a] = std::clamp<long long>(static_cast<long long>(std::ceil((b.center[a] + b.radii[a]) / g.h[a])) + 1, 0,
                                  g.n[a] - 1);
  }
  const double tb = T::to(b.value);
#pragma omp parallel for schedule(static)
  for (long long iz = lo[2]; iz <= hi[2]; ++iz)
    for (long long iy = lo[1]; iy <= hi[1]; ++iy)
      for (long long ix = lo[0]; ix <= hi[0]; ++ix) {
        int inside = 0;
        for (int k = 0; k < kSub; ++k)
          for (int j = 0; j < kSub; ++j)
            for (int i = 0; i < kSub; ++i) {
              const double q[3] = {(ix + (i + 0.5) / kSub - 0.5) * g.h[0], (iy + (j + 0.5) / kSub - 0.5) * g.h[1],
                                   (iz + (k + 0.5) / kSub - 0.5) * g.h[2]};
              double r = 0;
              for (int a = 0; a < 3; ++a) r += (q[a] - b.center[a]) * (q[a] - b.center[a]) / (b.radii[a] * b.radii[a]);
              inside += r <= 1;
            }
        if (inside == 0) continue;
        const double f = double(inside) / (kSub * kSub * kSub);
        float& v = vol[g.index(ix, iy, iz)];
        v = static_cast<float>(T::from(f * tb + (1 - f) * T::to(v)));
      }
}

// A constant, gradient or layers volume with its bodies, sampled as cell means of T::to.
template <class T>
std::vector<float> sample_volume(const VolumeConfig& m, const Grid& g) {
  std::vector<float> vol(static_cast<size_t>(g.cells()));
  const double hz = g.h[2], z_max = g.extent(2);
  bool dipping = false;
  for (const auto& l : m.layers) dipping = dipping || l.dip[0] != 0 || l.dip[1] != 0;
  const double xc = g.extent(0) / 2, yc = g.extent(1) / 2;
  // Columns share their values unless a layer dips: then each (x, y) has its own tops, at
  // top + tan(dip_x) (x - xc) + tan(dip_y) (y - yc), never above the top of the layer before.
  const long long columns = dipping ? g.n[0] * g.n[1] : 1;
  // Per thread a copy of the layers whose tops a dipping model moves column by column, made
  // before the parallel loop: nothing may throw inside it (an exception leaving it ends the
  // program).
  std::vector<std::vector<LayerConfig>> thread_layers(static_cast<size_t>(omp_get_max_threads()), m.layers);
#pragma omp parallel for schedule(static)
  for (long long col = 0; col < columns; ++col) {
    std::vector<LayerConfig>& layers = thread_layers[static_cast<size_t>(omp_get_thread_num())];
    if (dipping) {
      const double x = (col % g.n[0]) * g.h[0] - xc, y = (col / g.n[0]) * g.h[1] - yc;
      for (size_t l = 0; l < layers.size(); ++l) {
        layers[l].top = m.layers[l].top + std::tan(layers[l].dip[0] * std::numbers::pi / 180) * x +
                        std::tan(layers[l].dip[1] * std::numbers::pi / 180) * y;
        if (l > 0) layers[l].top = std::max(layers[l].top, layers[l - 1].top);
      }
    }
    for (long long iz = 0; iz < g.n[2]; ++iz) {
      // Node iz's cell, clipped to the model: the top node's cell is [0, hz/2].
      const double a = std::max(0.0, (iz - 0.5) * hz), b = std::min(z_max, (iz + 0.5) * hz);
      double v = m.value;
      if (m.type == VolumeType::gradient) v = T::from(T::gradient_mean(m.value, m.gradient, a, b));
      if (m.type == VolumeType::layers) v = T::from(layers_mean<T>(layers, a, b));
      if (dipping)
        vol[iz * g.n[0] * g.n[1] + col] = static_cast<float>(v);
      else
        std::fill_n(vol.begin() + iz * g.n[0] * g.n[1], g.n[0] * g.n[1], static_cast<float>(v));
    }
  }
  for (const auto& body : m.bodies) add_body<T>(g, body, vol);
  return vol;
}

// The first index i < n (x fastest, then y, then z) where bad(i), or n; parallel, throws nothing.
template <class Bad>
size_t first_where(size_t n, Bad bad) {
  size_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first)
  for (size_t i = 0; i < n; ++i)
    if (i < first && bad(i)) first = i;
  return first;
}

// A `file` volume on the grid itself (no geometry, or the grid's), shape-checked from the file's
// metadata before anything is read, used as stored; its values are the caller's to check.
std::vector<float> read_volume_as_stored(const VolumeConfig& m, const Grid& g) {
  const std::array<long long, 3> want{g.n[2], g.n[1], g.n[0]};
  const std::vector<hsize_t> dims = io::declared_dataset(m.file, m.dataset).dims;
  if (!dims.empty() && dims != std::vector<hsize_t>{hsize_t(want[0]), hsize_t(want[1]), hsize_t(want[2])})
    throw Error("model file '" + m.file + "' dataset '" + m.dataset + "' declares shape " + dims_text(dims) +
                "; the grid needs [nz, ny, nx] = [" + std::to_string(want[0]) + ", " + std::to_string(want[1]) + ", " +
                std::to_string(want[2]) + "] (grid.shape is [nx, ny, nz]); nothing was read");
  io::Array3 a = io::read_float3(m.file, m.dataset);
  if (a.shape != want)
    throw Error("model file '" + m.file + "' dataset '" + m.dataset + "' has shape [" + std::to_string(a.shape[0]) +
                ", " + std::to_string(a.shape[1]) + ", " + std::to_string(a.shape[2]) +
                "]; the grid needs [nz, ny, nx] = [" + std::to_string(want[0]) + ", " + std::to_string(want[1]) + ", " +
                std::to_string(want[2]) + "] (grid.shape is [nx, ny, nz])");
  return std::move(a.data);
}

// The source cells (index, weight) whose extents overlap each target node's cell on one axis,
// weights summing to 1. Target node i's cell is [(i - 1/2) h, (i + 1/2) h] clipped to the grid's
// [0, (n - 1) h] (the cell-mean rule of sample_volume), in survey coordinates o_t + ...; source
// sample j is the centre of its cell [o_s + (j - 1/2) h_s, o_s + (j + 1/2) h_s]. A cell beyond the
// source takes the nearest source cell (edge extension); covered[i]: the cell lies inside it.
struct AxisOverlap {
  std::vector<std::vector<std::pair<long long, double>>> w;
  std::vector<char> covered;
};
AxisOverlap axis_overlap(long long n_t, double h_t, double o_t, long long n_s, double h_s, double o_s) {
  AxisOverlap r;
  r.w.resize(static_cast<size_t>(n_t));
  r.covered.resize(static_cast<size_t>(n_t));
  const double lo_s = o_s - h_s / 2, hi_s = o_s + (double(n_s) - 0.5) * h_s, tol = 1e-6 * std::max(1.0, h_t);
  const double top = double(n_t - 1) * h_t;
  for (long long i = 0; i < n_t; ++i) {
    const double a = o_t + std::max(0.0, (double(i) - 0.5) * h_t), b = o_t + std::min(top, (double(i) + 0.5) * h_t);
    r.covered[static_cast<size_t>(i)] = a >= lo_s - tol && b <= hi_s + tol;
    const double ca = std::max(a, lo_s), cb = std::min(b, hi_s);
    auto& w = r.w[static_cast<size_t>(i)];
    if (!(cb - ca > tol)) {  // outside, or a point: the source cell nearest the cell's middle
      const long long j = std::llround(((a + b) / 2 - o_s) / h_s);
      w.push_back({std::clamp<long long>(j, 0, n_s - 1), 1.0});
      continue;
    }
    const long long j0 = std::clamp<long long>(static_cast<long long>(std::floor((ca - lo_s) / h_s)), 0, n_s - 1);
    for (long long j = j0; j < n_s; ++j) {
      const double s0 = std::max(ca, lo_s + double(j) * h_s), s1 = std::min(cb, lo_s + double(j + 1) * h_s);
      if (s0 >= cb) break;
      if (s1 > s0) w.push_back({j, (s1 - s0) / (cb - ca)});
    }
  }
  return r;
}

// A model volume on its own grid (n, h, origin: survey coordinates of sample 0), as the file
// gives it.
struct SourceVolume {
  std::array<long long, 3> n{0, 0, 0};
  std::array<double, 3> h{0, 0, 0}, origin{0, 0, 0};
  std::vector<float> data;  // [z][y][x]
};

// Resampled onto the grid: each node the cell mean of T::to over its cell (slowness squared for
// vp, the value itself for the anisotropy), the source piecewise constant over its cells. The
// grid's interior (cells w .. n - 1 - w on every axis, from 0 in z under a free surface) must lie
// inside the source; the damping zone beyond takes the source's edge values.
template <class T>
std::vector<float> resample(const SourceVolume& src, const Grid& g, const BoundaryConfig& bc, const std::string& what) {
  AxisOverlap ax[3];
  for (int a = 0; a < 3; ++a) ax[a] = axis_overlap(g.n[a], g.h[a], g.origin[a], src.n[a], src.h[a], src.origin[a]);
  const long long w = bc.damping_width;
  std::string uncovered, needed, covers;
  for (int a = 0; a < 3; ++a) {
    const long long lo = a == 2 && bc.free_surface ? 0 : std::min(w, g.n[a] - 1), hi = std::max(lo, g.n[a] - 1 - w);
    needed += std::string(a ? ", " : "") + "xyz"[a] + " in [" + coordinate_text(g.origin[a] + double(lo) * g.h[a]) +
              ", " + coordinate_text(g.origin[a] + double(hi) * g.h[a]) + "]";
    covers += std::string(a ? ", " : "") + "xyz"[a] + " in [" + coordinate_text(src.origin[a] - src.h[a] / 2) + ", " +
              coordinate_text(src.origin[a] + (double(src.n[a]) - 0.5) * src.h[a]) + "]";
    for (long long i = lo; i <= hi; ++i)
      if (!ax[a].covered[static_cast<size_t>(i)]) {
        uncovered += std::string(uncovered.empty() ? "" : "; ") + "xyz"[a] + " at " +
                     coordinate_text(g.origin[a] + double(i) * g.h[a]) + " m (cell " + std::to_string(i) + ")";
        break;
      }
  }
  if (!uncovered.empty())
    throw Error(what + " covers " + covers +
                " m (its samples the centres of its cells, survey coordinates), but the grid's interior needs " +
                needed + " m (grid.origin + cells w .. n - 1 - w, boundary.damping_width w = " + std::to_string(w) +
                "): not covered " + uncovered +
                "; extend the model, or move grid.origin or shrink grid.shape (the damping zone beyond the interior "
                "takes the model's edge values)");
  std::vector<float> out(static_cast<size_t>(g.cells()));
  const long long nxs = src.n[0], nys = src.n[1];
#pragma omp parallel for schedule(static)
  for (long long iz = 0; iz < g.n[2]; ++iz)
    for (long long iy = 0; iy < g.n[1]; ++iy)
      for (long long ix = 0; ix < g.n[0]; ++ix) {
        double sum = 0;
        for (const auto& [jz, wz] : ax[2].w[static_cast<size_t>(iz)])
          for (const auto& [jy, wy] : ax[1].w[static_cast<size_t>(iy)])
            for (const auto& [jx, wx] : ax[0].w[static_cast<size_t>(ix)])
              sum += wz * wy * wx * T::to(src.data[static_cast<size_t>((jz * nys + jy) * nxs + jx)]);
        out[static_cast<size_t>(g.index(ix, iy, iz))] = static_cast<float>(T::from(sum));
      }
  return out;
}

// A `file` volume (model.<name>.file): an HDF5 dataset, or a SEG-Y cube (.sgy, .segy: its
// geometry from the headers, io/segy_cube.hpp). On the grid itself (an HDF5 dataset without
// origin and spacing attributes, or with the grid's) it is used as stored; otherwise resampled
// (resample). bad(value): a source value the caller refuses, named with its sample before any
// resampling (a negative vp would square away), the message ending in `suffix`.
template <class T, class Bad>
std::vector<float> read_volume_file(const VolumeConfig& m, const Grid& g, const BoundaryConfig& bc,
                                    const std::string& name, Bad bad, const std::string& suffix) {
  const std::string what =
      "model file '" + m.file + "'" + (io::is_segy_path(m.file) ? "" : " dataset '" + m.dataset + "'");
  SourceVolume src;
  if (io::is_segy_path(m.file)) {
    io::CubeVolume c = io::read_segy_cube(m.file, 0.5 * available_host_memory());
    src.n = c.n, src.h = c.h, src.origin = c.origin, src.data = std::move(c.data);
  } else {
    const io::DeclaredDataset d = io::declared_dataset(m.file, m.dataset);
    const bool geometry = d.origin.size() == 3 && d.spacing.size() == 3;
    const bool same = !geometry || (std::array<double, 3>{d.origin[0], d.origin[1], d.origin[2]} == g.origin &&
                                    std::array<double, 3>{d.spacing[0], d.spacing[1], d.spacing[2]} == g.h &&
                                    d.dims == std::vector<hsize_t>{hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0])});
    if (same) {
      std::vector<float> v = read_volume_as_stored(m, g);
      const size_t i = first_where(v.size(), [&](size_t k) { return bad(v[k]); });
      if (i < v.size()) throw Error(what + " has " + name + " = " + fmt(v[i]) + " at " + cell_text(g, i) + suffix);
      return v;
    }
    io::Array3 a = io::read_float3(m.file, m.dataset);
    src.n = {a.shape[2], a.shape[1], a.shape[0]};
    src.h = {d.spacing[0], d.spacing[1], d.spacing[2]};
    src.origin = {d.origin[0], d.origin[1], d.origin[2]};
    src.data = std::move(a.data);
    for (int k = 0; k < 3; ++k)
      if (!(src.h[k] > 0) || !std::isfinite(src.origin[k]))
        throw Error(what + " has spacing " + fmt3(src.h) + " and origin " + fmt3(src.origin) +
                    " (attributes); the spacing must be > 0 m and the origin finite");
  }
  const size_t i = first_where(src.data.size(), [&](size_t k) { return bad(src.data[k]); });
  if (i < src.data.size())
    throw Error(what + " has " + name + " = " + fmt(src.data[i]) + " at sample (x, y, z) = (" +
                std::to_string(i % src.n[0]) + ", " + std::to_string((i / src.n[0]) % src.n[1]) + ", " +
                std::to_string(i / (src.n[0] * src.n[1])) + ")" + suffix);
  return resample<T>(src, g, bc,
                     what + " (" + std::to_string(src.n[0]) + " x " + std::to_string(src.n[1]) + " x " +
                         std::to_string(src.n[2]) + " samples, spacing " + fmt3(src.h) + " m)");
}

}  // namespace

std::vector<float> build_velocity(const Config& c, const Grid& g) {
  const VolumeConfig& m = c.model.vp;
  if (m.type == VolumeType::file) {
    return read_volume_file<SlownessSquared>(
        m, g, c.boundary, "vp", [](float v) { return !std::isfinite(v) || v <= 0; },
        "; velocities must be finite and > 0 m/s");
  }
  if (m.type == VolumeType::constant && !(m.value > 0))
    throw Error("config key 'model.vp' gives vp = " + fmt(m.value) + " m/s; velocities must be > 0");
  // Checked here, serially: an exception must not leave the parallel loop of sample_volume.
  if (m.type == VolumeType::gradient)
    for (long long iz = 0; iz < g.n[2]; ++iz)
      check_gradient_velocity(m.value, m.gradient, std::max(0.0, (iz - 0.5) * g.h[2]),
                              std::min(g.extent(2), (iz + 0.5) * g.h[2]), g.origin[2]);
  return sample_volume<SlownessSquared>(m, g);
}

std::vector<float> build_anisotropy(const Config& c, const Grid& g, const std::string& name) {
  const ModelConfig& mc = c.model;
  const VolumeConfig* found = name == "epsilon" ? &mc.epsilon
                              : name == "delta" ? &mc.delta
                              : name == "theta" ? &mc.theta
                              : name == "phi"   ? &mc.phi
                                                : nullptr;
  if (!found) throw Error("build_anisotropy: no model volume '" + name + "'; valid: epsilon, delta, theta, phi");
  const VolumeConfig& m = *found;
  if (m.type != VolumeType::file) return sample_volume<Identity>(m, g);
  // Angles may take any finite value; epsilon and delta enter as 1 + 2 value (delta under a
  // square root), which must be positive.
  const bool angle = name == "theta" || name == "phi";
  return read_volume_file<Identity>(
      m, g, c.boundary, name, [&](float v) { return !std::isfinite(v) || (!angle && !(1 + 2 * double(v) > 0)); },
      " (model." + name + ".file); values must be finite" +
          (angle ? std::string(" (degrees)") : " with 1 + 2 " + name + " > 0, i.e. " + name + " > -0.5"));
}

namespace {

// vti, tti: the anisotropy volumes, checked cell by cell, delta clamped where the config asks,
// angles in radians; v_max becomes the fastest P speed.
void add_anisotropy(const Config& c, Problem& p) {
  const Grid& g = p.grid;
  const size_t cells = static_cast<size_t>(g.cells());
  auto where = [&](size_t i) {
    const std::array<double, 3> x{double(i % g.n[0]) * g.h[0], double((i / g.n[0]) % g.n[1]) * g.h[1],
                                  double(i / (g.n[0] * g.n[1])) * g.h[2]};
    return cell_text(g, i) + " (x, y, z = " + fmt3(x) + " m)";
  };
  p.epsilon = build_anisotropy(c, g, "epsilon");
  p.delta = build_anisotropy(c, g, "delta");
  for (const auto& [name, vol] : {std::pair<std::string, const std::vector<float>*>{"epsilon", &p.epsilon},
                                  std::pair<std::string, const std::vector<float>*>{"delta", &p.delta}}) {
    const std::vector<float>& v = *vol;
    // Finite (a config value beyond the float range samples to inf) and -0.5 < value <= 10: the
    // Thomsen parameters of rocks lie below about 1, and epsilon = 1e38 would make the time step
    // 1e-19 of the isotropic one, a run of zeros.
    const size_t i =
        first_where(cells, [&](size_t k) { return !std::isfinite(v[k]) || !(1 + 2 * double(v[k]) > 0) || v[k] > 10; });
    if (i < cells)
      throw Error("config key 'model." + name + "' gives " + name + " = " + fmt(v[i]) + " at " + where(i) +
                  "; valid: -0.5 < " + name + " <= 10 everywhere (" +
                  (name == "delta" ? "sqrt(1 + 2 delta) is a coefficient of the equations"
                                   : "1 + 2 epsilon is the squared ratio of horizontal to vertical P speed") +
                  "; rocks lie below about 1)");
    const size_t big = first_where(cells, [&](size_t k) { return v[k] > 1; });
    if (big < cells)
      p.warnings.push_back("model." + name + " is " + fmt(v[big]) + " at " + where(big) +
                           ": Thomsen parameters of rocks lie below about 1 (a percentage given as a fraction?)");
  }
  const size_t bad = first_where(cells, [&](size_t k) { return p.delta[k] > p.epsilon[k]; });
  if (bad < cells) {
    if (!c.model.clamp_delta)
      throw Error("config keys 'model.delta' and 'model.epsilon' give delta = " + fmt(p.delta[bad]) +
                  " > epsilon = " + fmt(p.epsilon[bad]) + " at " + where(bad) +
                  ": the pseudo-acoustic system grows without bound where delta > epsilon; valid: delta <= epsilon "
                  "everywhere, or set model.clamp_delta: true");
    const float first_delta = p.delta[bad];
    long long clamped = 0;
#pragma omp parallel for schedule(static) reduction(+ : clamped)
    for (size_t k = bad; k < cells; ++k)
      if (p.delta[k] > p.epsilon[k]) {
        p.delta[k] = p.epsilon[k];
        ++clamped;
      }
    p.clamped_cells = clamped;
    p.warnings.push_back("model.clamp_delta: delta was set to epsilon in " + std::to_string(clamped) + " of " +
                         std::to_string(cells) + " cells, where delta > epsilon (the first at " + where(bad) +
                         ": delta " + fmt(first_delta) + ", epsilon " + fmt(p.epsilon[bad]) +
                         "); the model there is not the one configured");
  }
  if (p.equation == Equation::tti) {
    // The config gives degrees; the solvers take radians, reduced to [-pi, pi] from the degrees
    // in double (a float of 1e9 degrees' radians is 2 radians coarse).
    for (const char* name : {"theta", "phi"}) {
      std::vector<float> vol = build_anisotropy(c, g, name);
      const size_t i = first_where(cells, [&](size_t k) { return !std::isfinite(vol[k]); });
      if (i < cells)
        throw Error(std::string("config key 'model.") + name + "' gives " + name + " = " + fmt(vol[i]) + " at " +
                    where(i) + "; valid: a finite angle in degrees (a value beyond 3.4e38 does not fit a float)");
#pragma omp parallel for schedule(static)
      for (size_t k = 0; k < cells; ++k)
        vol[k] = static_cast<float>(std::remainder(double(vol[k]), 360.0) * std::numbers::pi / 180);
      (std::string(name) == "theta" ? p.theta : p.phi) = std::move(vol);
    }
  }
  // The fastest wave: the P speed perpendicular to the symmetry axis, vp sqrt(1 + 2 eps), where
  // it exceeds vp (the bound of validation/cpu_tti.hpp, tti_max_stable_dt).
  double v_max = 0;
#pragma omp parallel for schedule(static) reduction(max : v_max)
  for (size_t k = 0; k < cells; ++k)
    v_max = std::max(v_max, double(p.vp[k]) * std::sqrt(std::max(1.0, 1 + 2 * double(p.epsilon[k]))));
  p.v_max = v_max;
}

}  // namespace

std::vector<float> damping_profile(long long n, int width, double h, double v_max, double dt, double reflection,
                                   bool low, bool high) {
  std::vector<float> prof(static_cast<size_t>(n), 0.0f);
  if (width <= 0) return prof;
  const double sigma_max = 3.0 * v_max * std::log(1.0 / reflection) / (width * h);  // 1/s
  for (long long i = 0; i < n; ++i) {
    double d = 0;  // depth into the zone, 0 at its inner edge, 1 at the grid's edge
    if (low && i < width) d = static_cast<double>(width - i) / width;
    if (high && i > n - 1 - width) d = std::max(d, static_cast<double>(i - (n - 1 - width)) / width);
    prof[i] = static_cast<float>(sigma_max * d * d * dt / 2);
  }
  return prof;
}

namespace {

// Every axis holds both damping zones and the stencil's reach.
void check_grid_shape(const Config& c, const Problem& p) {
  const Grid& g = p.grid;
  const int w = c.boundary.damping_width;
  for (int a = 0; a < 3; ++a) {
    const long long need = 2LL * w + 1;
    if (g.n[a] < need || g.n[a] < 2LL * p.radius + 1)
      throw Error("config key 'grid.shape' is too small: axis " + std::string(1, "xyz"[a]) + " has " +
                  std::to_string(g.n[a]) + " cells, but boundary.damping_width " + std::to_string(w) +
                  " and space_order " + std::to_string(c.physics.space_order) + " need at least " +
                  std::to_string(std::max(need, 2LL * p.radius + 1)));
  }
}

// vp, smoothed and checked, its range, and the anisotropy parameters.
void set_velocity(const Config& c, Problem& p) {
  const Grid& g = p.grid;
  p.vp = build_velocity(c, g);
  // A Gaussian of standard deviation L, the grid's largest extent (shape - 1) x spacing, weighs
  // any two cells of a line within exp(-1/2) = 0.61 of each other: the model is already close to
  // its mean slowness, and a wider one only moves it towards that constant while its cost grows
  // as 6 L / spacing taps a cell and axis (1e10 m overflowed the tap count).
  const double extent = std::max({g.extent(0), g.extent(1), g.extent(2)});
  if (c.model.vp.smoothing > extent)
    throw Error("config key 'model.vp.smoothing' = " + fmt(c.model.vp.smoothing) +
                " m is wider than the grid's largest extent " + fmt(extent) +
                " m ((grid.shape - 1) x grid.spacing): the smoothed model would be a constant; valid: 0 to " +
                fmt(extent) + " m");
  smooth_slowness(g, c.model.vp.smoothing, p.vp);
  check_vp_range(c, g, p.vp, p.warnings);
  // The mute's velocity is a P speed too (the direct arrival's): the same range and override.
  if (c.migration && c.migration->mute.enabled) {
    const double v = c.migration->mute.velocity;
    if (!(v >= kVpMin && v <= kVpMax)) {
      const std::string text = "config key 'migration.mute.velocity' = " + fmt(v) +
                               " m/s lies outside the physical range of vp" + vp_unit_hint(v) +
                               "; valid: " + fmt(kVpMin) + " to " + fmt(kVpMax) + " m/s";
      physical_range_finding(c, p.warnings, text);
    }
  }
  const auto [mn, mx] = std::minmax_element(p.vp.begin(), p.vp.end());
  p.v_min = *mn;
  p.v_max = *mx;
  p.equation = c.physics.equation;
  if (p.anisotropic()) add_anisotropy(c, p);
}

// dt: time.dt checked against the stability limit and float rounding, or safety x dt_max.
void set_time_step(const Config& c, Problem& p) {
  const Grid& g = p.grid;
  p.dt_max = max_stable_dt(g.h, p.radius, p.v_max);
  if (c.time.dt) {
    p.dt = *c.time.dt;
    if (p.dt > p.dt_max)
      throw Error("config key 'time.dt' = " + fmt(p.dt) + " s is unstable: the largest stable dt for space_order " +
                  std::to_string(c.physics.space_order) + ", v_max " + fmt(p.v_max) + " m/s" +
                  (p.anisotropic() ? " (physics.equation " + to_text(p.equation) +
                                         ": the fastest, horizontal P speed vp sqrt(1 + 2 epsilon))"
                                   : "") +
                  " and spacing " + fmt3(g.h) + " m is " + fmt(p.dt_max) + " s (or use time.dt: auto)");
    // The update adds (v dt / h)^2 x (a Laplacian stencil of order 1 in p) to p, a term that is
    // about (dt / dt_max)^2 of p; below float's relative precision 2^-23 it is rounded away and the
    // wave stands still (1e-20 s also underflows the injection to zero). So dt >= dt_max x
    // sqrt(2^-23) = dt_max / 2896.
    const double dt_min = p.dt_max * std::sqrt(static_cast<double>(std::numeric_limits<float>::epsilon()));
    if (p.dt < dt_min) {
      const std::string text = "config key 'time.dt' = " + fmt(p.dt) + " s is below " + fmt(dt_min) +
                               " s, the largest stable dt " + fmt(p.dt_max) +
                               " s / 2896: each step's change of the field would be lost in float rounding "
                               "and the traces and snapshots would be zero or standing; valid: " +
                               fmt(dt_min) + " to " + fmt(p.dt_max) + " s or auto";
      physical_range_finding(c, p.warnings, text);
    }
  } else {
    p.dt = c.time.safety * p.dt_max;
  }
  if (!(std::isfinite(p.dt) && p.dt > 0))
    throw Error("the time step is " + fmt(p.dt) + " s (from grid.spacing " + fmt3(g.h) + " m and v_max " +
                fmt(p.v_max) +
                " m/s): it must be a finite positive number; check grid.spacing and the model's velocities");
}

// The source wavelet at the run's dt; returns its highest useful frequency f_max (Hz).
double build_wavelet(const Config& c, Problem& p) {
  // Wavelet f(n dt), n = 0..steps-1.
  const auto& wc = c.sources.wavelet;
  p.wavelet.resize(static_cast<size_t>(p.steps));
  double f_max = 0;
  if (wc.type == WaveletType::ricker) {
    const double delay = wc.delay ? *wc.delay : 1.2 / wc.peak_frequency;
    for (long long n = 0; n < p.steps; ++n)
      p.wavelet[n] = static_cast<float>(ricker(n * p.dt, wc.peak_frequency, delay));
    f_max = 2.5 * wc.peak_frequency;
  } else {
    // The declared length against wavelet_file_limit before anything is read.
    const io::DeclaredDataset decl = io::declared_dataset(wc.file, wc.dataset);
    if (decl.dims.size() == 1) {
      const double fdt = std::isfinite(decl.dt) && decl.dt > 0 ? decl.dt : p.dt;
      if (fdt < wavelet_finest_dt(p.dt))
        throw Error("wavelet file '" + wc.file + "' dataset '" + wc.dataset + "' has the attribute dt = " + fmt(fdt) +
                    " s, finer than 1/1024 of the run's dt " + fmt(p.dt) +
                    " s: a mis-declared sample interval (sources.wavelet.file); nothing was read");
      const double used = std::ceil(double(p.steps) * p.dt / fdt) + 1;
      const double limit = wavelet_file_limit(used);
      if (double(decl.dims[0]) > limit)
        throw Error("wavelet file '" + wc.file + "' dataset '" + wc.dataset + "' declares shape " +
                    dims_text(decl.dims) + "; the run uses [" + std::to_string(static_cast<long long>(used)) +
                    "] samples (time.steps x dt / the file's dt " + fmt(fdt) + " s) and accepts at most [" +
                    std::to_string(static_cast<long long>(limit)) + "] (sources.wavelet.file); nothing was read");
    }
    double wdt = 0;
    const auto raw = io::read_float1(wc.file, wc.dataset, &wdt);
    for (size_t i = 0; i < raw.size(); ++i)
      if (!std::isfinite(raw[i]))
        throw Error("wavelet file '" + wc.file + "' dataset '" + wc.dataset +
                    "' has a NaN or infinite value at sample " + std::to_string(i) +
                    " (sources.wavelet.file): every sample must be a finite number");
    if (std::isnan(wdt) || std::isinf(wdt) || wdt < 0)
      throw Error("wavelet file '" + wc.file + "' dataset '" + wc.dataset + "' has the attribute dt = " + fmt(wdt) +
                  "; it must be a positive sample interval in s (or absent: sampled at the run's dt)");
    if (wdt == 0) wdt = p.dt;  // no attribute: sampled at the simulation's dt
    for (long long n = 0; n < p.steps; ++n) {
      const double s = n * p.dt / wdt;  // linear resampling; zero past the end
      const auto i = static_cast<size_t>(s);
      const double t = s - i;
      const double a = i < raw.size() ? raw[i] : 0.0, b = i + 1 < raw.size() ? raw[i + 1] : 0.0;
      p.wavelet[n] = static_cast<float>((1 - t) * a + t * b);
    }
    // 0.033 of the peak is where a Ricker's spectrum stands at 2.5 f_peak.
    f_max = highest_useful_frequency(std::vector<float>(raw.begin(), raw.end()), wdt, 0.033);
  }
  return f_max;
}

// A forward run's wavelet: not zero, and a Ricker peak not typed in kHz.
void check_wavelet(const Config& c, Problem& p) {
  const auto& wc = c.sources.wavelet;
  // A zero source gives an all-zero result: refused rather than run (a forward run has nothing
  // else to show). A migration replaces this wavelet with its data's (prepare_migration).
  if (!c.migration && std::all_of(p.wavelet.begin(), p.wavelet.end(), [](float v) { return v == 0.0f; }))
    throw Error("the source wavelet is zero at every one of the " + std::to_string(p.steps) + " time steps (" +
                (wc.type == WaveletType::file
                     ? "wavelet file '" + wc.file + "' dataset '" + wc.dataset + "'"
                     : "sources.wavelet.delay " + fmt(wc.delay ? *wc.delay : 1.2 / wc.peak_frequency) + " s") +
                "): every trace and snapshot would be zero; give a wavelet that is non-zero within time.steps x dt = " +
                fmt(p.steps * p.dt) + " s");
  // Below 0.1 Hz a Ricker's wavelength in water passes 15 km and its automatic delay 1.2 / f
  // passes 12 s: no source an exploration grid models peaks there, and a value typed in kHz
  // (0.015 for 15 Hz) lands there, giving a source that has not begun within the record.
  if (wc.type == WaveletType::ricker && wc.peak_frequency < 0.1 && !c.migration) {
    const std::string text = "config key 'sources.wavelet.peak_frequency' = " + fmt(wc.peak_frequency) +
                             " Hz is below 0.1 Hz, lower than the peak of any source this grid models (its delay " +
                             fmt(wc.delay ? *wc.delay : 1.2 / wc.peak_frequency) + " s against a record of " +
                             fmt(p.steps * p.dt) + " s); was " + fmt(wc.peak_frequency * 1000) +
                             " Hz meant (a value in kHz)?";
    physical_range_finding(c, p.warnings, text);
  }
}

void check_points_per_wavelength(const Config& c, Problem& p, double f_max) {
  const Grid& g = p.grid;
  const auto& wc = c.sources.wavelet;
  const double h_max = std::max({g.h[0], g.h[1], g.h[2]});
  const double ppw = p.v_min / (f_max * h_max);
  const double need_ppw = required_points_per_wavelength(c.physics.space_order);
  // A migration's wavelet is its data's (prepare_migration), not this default one.
  if (ppw < kMinPointsPerWavelength && !c.migration) {
    const std::string key = wc.type == WaveletType::ricker ? "sources.wavelet.peak_frequency" : "sources.wavelet.file";
    const std::string value =
        wc.type == WaveletType::ricker
            ? " = " + fmt(wc.peak_frequency) + " Hz (a Ricker reaches f_max = 2.5 f_peak = " + fmt(f_max) + " Hz)"
            : " '" + wc.file + "' reaches f_max = " + fmt(f_max) + " Hz (where its spectrum falls to 3.3%)";
    // The peak frequency that would give kMinPointsPerWavelength and need_ppw.
    const double f_ok = p.v_min / (kMinPointsPerWavelength * h_max * 2.5), f_good = p.v_min / (need_ppw * h_max * 2.5);
    // From 1 kHz a peak lies beyond every seismic source (lab ultrasonics needs mm cells and the
    // override anyway): likely a value in the wrong unit.
    const std::string hint =
        wc.type == WaveletType::ricker && wc.peak_frequency >= 1000 && wc.peak_frequency / 1000 <= f_ok
            ? "; was " + fmt(wc.peak_frequency / 1000) + " Hz meant (a value 1000 times too large)?"
            : "";
    const std::string text =
        "config key '" + key + "'" + value + ": v_min " + fmt(p.v_min) + " m/s / (f_max " + fmt(f_max) +
        " Hz x h_max " + fmt(h_max) + " m) = " + fmt(ppw) + " points per wavelength; fewer than " +
        fmt(kMinPointsPerWavelength) + " cannot represent the wave at all" + hint + "; valid: " +
        (wc.type == WaveletType::ricker
             ? "a peak frequency <= " + fmt(f_ok) + " Hz (space_order " + std::to_string(c.physics.space_order) +
                   " wants <= " + fmt(f_good) + " Hz)"
             : "a wavelet with f_max <= " + fmt(2.5 * f_ok) + " Hz (space_order " +
                   std::to_string(c.physics.space_order) + " wants <= " + fmt(2.5 * f_good) + " Hz)") +
        ", or grid.spacing <= " + fmt(p.v_min / (f_max * need_ppw)) + " m";
    physical_range_finding(c, p.warnings, text);
  } else if (ppw < need_ppw)
    p.warnings.push_back("too few points per wavelength: v_min " + fmt(p.v_min) + " m/s / (f_max " + fmt(f_max) +
                         " Hz x h_max " + fmt(h_max) + " m) = " + fmt(ppw) + " points; space_order " +
                         std::to_string(c.physics.space_order) + " wants >= " + fmt(need_ppw) +
                         " (refine grid.spacing to <= " + fmt(p.v_min / (f_max * need_ppw)) +
                         " m or lower the peak frequency)");
}

void warn_fp16_storage(const Config& c, Problem& p, double f_max) {
  if (c.solver.storage == SolverStorage::fp16) {
    // The levels' rounding acts as a kick that grows by 1 / (w dt) (validation/half.hpp,
    // HalfFields): the error study of tests/test_storage.cpp on the quickstart (13 there).
    const double f_peak = f_max / 2.5, growth = 1 / (2 * std::acos(-1.0) * f_peak * p.dt);
    p.warnings.push_back(
        "solver.storage fp16 rounds the wavefield to 16 bits every step, and a rounding grows by about 1 / (2 pi f "
        "dt) = " +
        fmt(std::round(growth * 10) / 10) + " at the " + fmt(f_peak) +
        " Hz peak here; on the quickstart (13) the traces differed from fp32 storage by 0.27% (relative L2), the "
        "weakest trace by 2.9% and the wavefield after 1000 steps by 3.2%, beyond the 1% goal, a migrated image "
        "by 0.1% (docs/BENCHMARKS.md): "
        "seisrtm validate measures it for this config");
  }
}

}  // namespace

Config local_positions(const Config& c) {
  Config l = c;
  const std::array<double, 3>& o = c.grid.origin;
  auto shift = [&](std::array<double, 3>& q) {
    for (int a = 0; a < 3; ++a) q[a] -= o[a];
  };
  for (auto& s : l.sources.shots) shift(s);
  // Receivers relative to their shot keep their x and y offsets; their z is a position.
  auto shift_receiver = [&](std::array<double, 3>& q) {
    if (c.receivers.relative)
      q[2] -= o[2];
    else
      shift(q);
  };
  shift_receiver(l.receivers.line.start);
  shift_receiver(l.receivers.line.end);
  shift_receiver(l.receivers.grid.origin);
  for (auto& r : l.receivers.list) shift_receiver(r);
  for (auto& spread : l.receivers.per_shot)
    for (auto& r : spread) shift(r);
  for (VolumeConfig* v : {&l.model.vp, &l.model.epsilon, &l.model.delta, &l.model.theta, &l.model.phi}) {
    for (auto& layer : v->layers) layer.top -= o[2];
    for (auto& b : v->bodies) shift(b.center);
    if (v->type == VolumeType::gradient) v->value += v->gradient * o[2];  // the value at cell 0's depth
  }
  if (l.migration && l.migration->depth_slice) *l.migration->depth_slice -= o[2];
  return l;
}

namespace {

void add_shots(const Config& c, Problem& p) {
  const Grid& g = p.grid;
  const int w = c.boundary.damping_width;
  for (size_t s = 0; s < c.sources.shots.size(); ++s) {
    const std::string key = "sources.shots[" + std::to_string(s) + "]";
    check_inside(g, c.sources.shots[s], key);
    if (in_damping_zone(g, c.sources.shots[s], w, p.free_surface))
      p.warnings.push_back(key + " = " + fmt3(g.survey(c.sources.shots[s])) + " m lies in the damping zone");
    // p = 0 is enforced on the plane z = 0: a source there injects into a value that is then
    // zeroed (all-zero output at z = 0 with nearest or trilinear interpolation), and within the
    // first cell part of its injection is lost.
    if (p.free_surface && c.sources.shots[s][2] < g.h[2])
      p.warnings.push_back(
          key + " = " + fmt3(g.survey(c.sources.shots[s])) +
          " m lies less than one cell below the free surface, "
          "where p = 0 is enforced: its injection is partly or (at z = 0) wholly zeroed and the output "
          "is weak or all zero; put it at least one cell deep, z >= " +
          fmt(g.h[2]) + " m");
    PointSet ps;
    ps.add(g, c.sources.shots[s], c.sources.interpolation);
    p.shots.push_back(std::move(ps));
  }
}

// The receivers' positions (m) as receivers.layout lists them.
std::vector<std::array<double, 3>> receiver_positions(const Config& c) {
  const auto& rc = c.receivers;
  std::vector<std::array<double, 3>> rec;
  if (rc.layout == ReceiverLayout::line) {
    for (long long i = 0; i < rc.line.count; ++i) {
      const double t = rc.line.count > 1 ? static_cast<double>(i) / (rc.line.count - 1) : 0.0;
      std::array<double, 3> q{};
      for (int a = 0; a < 3; ++a) q[a] = rc.line.start[a] + t * (rc.line.end[a] - rc.line.start[a]);
      rec.push_back(q);
    }
  } else if (rc.layout == ReceiverLayout::grid) {
    for (long long j = 0; j < rc.grid.count[1]; ++j)
      for (long long i = 0; i < rc.grid.count[0]; ++i)
        rec.push_back({rc.grid.origin[0] + i * rc.grid.spacing[0], rc.grid.origin[1] + j * rc.grid.spacing[1],
                       rc.grid.origin[2]});
  } else if (rc.layout == ReceiverLayout::list) {
    rec = rc.list;
  }
  return rec;
}

// The spreads: one for every shot, or (receivers.relative, per_shot) one a shot, each position
// checked inside the grid; a receiver on a free surface moved one cell down; warnings counted
// over every spread.
void add_receivers(const Config& c, Problem& p) {
  const Grid& g = p.grid;
  const int w = c.boundary.damping_width;
  const auto& rc = c.receivers;
  const bool varying = rc.relative || rc.layout == ReceiverLayout::per_shot;
  const std::vector<std::array<double, 3>> common = receiver_positions(c);
  const long long spreads = varying ? p.shot_count() : 1;
  const std::string layout = "receivers." + to_text(rc.layout);
  long long damped = 0, moved = 0, shallow = 0, total = 0;
  for (long long s = 0; s < spreads; ++s) {
    std::vector<std::array<double, 3>> rec =
        rc.layout == ReceiverLayout::per_shot ? rc.per_shot[static_cast<size_t>(s)] : common;
    if (rc.relative)  // x and y from the shot (relative to cell 0, as the shot's position is)
      for (auto& q : rec) {
        q[0] += c.sources.shots[static_cast<size_t>(s)][0];
        q[1] += c.sources.shots[static_cast<size_t>(s)][1];
      }
    PointSet spread;
    for (size_t r = 0; r < rec.size(); ++r) {
      const std::string key =
          layout + (rc.layout == ReceiverLayout::per_shot ? "[" + std::to_string(s) + "][" + std::to_string(r) + "]"
                    : rc.layout == ReceiverLayout::list
                        ? "[" + std::to_string(r) + "]" + (varying ? " of shot " + std::to_string(s) : std::string())
                        : " (receiver " + std::to_string(r) + (varying ? " of shot " + std::to_string(s) : "") + ")");
      check_inside(g, rec[r], key);
      // p = 0 is enforced on the plane z = 0 under a free surface: a receiver whose weights lie
      // on that plane only would record zeros in a run and inject into zeroed values in a
      // migration. It records one cell down instead, where the field is.
      if (p.free_surface && only_on_top_plane(g, rec[r], rc.interpolation)) {
        rec[r][2] = g.h[2];
        ++moved;
      } else if (p.free_surface && rec[r][2] < g.h[2]) {
        ++shallow;  // partly weighted on z = 0: recorded, weakly (the pressure vanishes at the surface)
      }
      damped += in_damping_zone(g, rec[r], w, p.free_surface);
      spread.add(g, rec[r], rc.interpolation);
    }
    total += static_cast<long long>(rec.size());
    if (varying) p.shot_receivers.push_back(spread);
    if (s == 0) p.receivers = std::move(spread);
  }
  const std::string of = std::to_string(total) + (varying ? " receivers of all shots" : " receivers");
  if (moved > 0)
    p.warnings.push_back(std::to_string(moved) + " of " + of + " lie on the free surface (z = " + fmt(g.origin[2]) +
                         ", " + to_text(rc.interpolation) +
                         " interpolation), where p = 0 is enforced and they would record only zeros: moved one cell "
                         "down, to z = " +
                         fmt(g.origin[2] + g.h[2]) +
                         " m (their traces and positions in the outputs are at that depth; " +
                         (c.migration ? "the receivers of migration.data" : layout) + ")");
  if (shallow > 0)
    p.warnings.push_back(std::to_string(shallow) + " of " + of +
                         " lie less than one cell below the free surface (z < " + fmt(g.origin[2] + g.h[2]) +
                         " m), where part of their interpolation weight falls on the plane z = 0 and p = 0 is "
                         "enforced: their traces are weak; put them at least one cell deep (" +
                         (c.migration ? "the receivers of migration.data" : layout) + ")");
  if (damped > 0 && w > 0) {
    std::string interior;
    for (int a = 0; a < 3; ++a) {
      const double lo = a == 2 && p.free_surface ? 0.0 : w * g.h[a];
      interior += std::string(a ? ", " : "") + "xyz"[a] + " in [" + coordinate_text(g.origin[a] + lo) + ", " +
                  coordinate_text(g.origin[a] + (g.n[a] - 1 - w) * g.h[a]) + "]";
    }
    p.warnings.push_back(std::to_string(damped) + " of " + of + " lie in the damping zone (boundary.damping_width " +
                         std::to_string(w) +
                         " cells), where the field is attenuated: their traces are damped; the undamped interior is " +
                         interior + " m (" + layout + ")");
  }
}

}  // namespace

Problem build_problem(const Config& survey) {
  // Built from positions relative to cell 0; the problem keeps the config as given.
  const Config c = local_positions(survey);
  Problem p;
  p.config = survey;
  p.grid.n = c.grid.shape;
  p.grid.h = c.grid.spacing;
  p.grid.origin = c.grid.origin;
  p.radius = c.physics.space_order / 2;
  p.steps = c.time.steps;
  p.free_surface = c.boundary.free_surface;
  const Grid& g = p.grid;

  check_grid_shape(c, p);

  // The host memory of the whole run, before anything large is allocated; the backend that
  // solver.backend auto will choose (the GPU where there is one, as make_propagator does).
  const SolverBackend backend = c.solver.backend != SolverBackend::automatic ? c.solver.backend
                                : gpu_available()                            ? SolverBackend::cuda
                                                                             : SolverBackend::cpu;
  const AvailableMemory available = available_host_memory_detail();
  check_host_memory(estimate_host_memory(c, backend), c, available.bytes, available.source);

  set_velocity(c, p);
  set_time_step(c, p);

  const int w = c.boundary.damping_width;
  for (int a = 0; a < 3; ++a) {
    const auto cw = second_derivative_weights(p.radius);
    p.d2[a].resize(cw.size());
    for (size_t k = 0; k < cw.size(); ++k) p.d2[a][k] = cw[k] / (g.h[a] * g.h[a]);
    const bool low = !(a == 2 && p.free_surface);
    p.damping[a] = damping_profile(g.n[a], w, g.h[a], p.v_max, p.dt, c.boundary.reflection, low, true);
  }

  const double f_max = build_wavelet(c, p);
  check_wavelet(c, p);
  check_points_per_wavelength(c, p, f_max);
  warn_fp16_storage(c, p, f_max);
  add_shots(c, p);
  add_receivers(c, p);
  if (c.output.snapshot_interval > p.steps)
    p.warnings.push_back("output.snapshot_interval " + std::to_string(c.output.snapshot_interval) +
                         " exceeds time.steps " + std::to_string(p.steps) + ": no snapshot will be written");
  return p;
}

}  // namespace seisrtm
