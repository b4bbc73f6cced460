// seisrtm plot FILE.h5 [what]: redraws a picture of a result file (run or migrate) with the
// slice, clip and colour map chosen on the command line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <optional>
#include <system_error>

#include "app/commands.hpp"
#include "base/error.hpp"
#include "base/format.hpp"
#include "io/hdf5_file.hpp"
#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "solver/image_gathers.hpp"
#include "solver/memory_estimate.hpp"

namespace seisrtm::app {

namespace {

namespace fs = std::filesystem;

// One open result file and the reads the pictures need, each checked and naming the object.
class ResultFile {
 public:
  explicit ResultFile(const std::string& path) : path_(path) {
    if (!fs::exists(path)) throw Error("result file '" + path + "' does not exist");
    file_ = io::H5Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file_.valid()) throw Error("'" + path + "' is not a readable HDF5 file");
  }
  const std::string& path() const { return path_; }

  bool has(const std::string& name) const {
    // Each level must exist before the next is asked for (H5Lexists on "a/b" without "a" fails).
    size_t pos = 0;
    while ((pos = name.find('/', pos + 1)) != std::string::npos)
      if (H5Lexists(file_.get(), name.substr(0, pos).c_str(), H5P_DEFAULT) <= 0) return false;
    return H5Lexists(file_.get(), name.c_str(), H5P_DEFAULT) > 0;
  }

  std::vector<hsize_t> dims(const std::string& name) const {
    io::H5Handle d = open(name);
    io::H5Handle s(H5Dget_space(d.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(s.get());
    std::vector<hsize_t> n(rank > 0 ? rank : 0);
    if (rank > 0) H5Sget_simple_extent_dims(s.get(), n.data(), nullptr);
    return n;
  }

  // Slab `index` along the first axis (all of it for index < 0), as float.
  std::vector<float> read_float(const std::string& name, long long index = -1) const {
    io::H5Handle d = open(name);
    const auto n = dims(name);
    io::H5Handle file_space(H5Dget_space(d.get()), H5Sclose);
    std::vector<hsize_t> start(n.size(), 0), count = n;
    if (index >= 0) {
      if (n.empty() || hsize_t(index) >= n[0])
        throw Error(where(name) + ": index " + std::to_string(index) + " outside");
      start[0] = hsize_t(index), count[0] = 1;
    }
    check_fits(name, n, count, 4);
    size_t total = 1;
    for (hsize_t c : count) total *= c;
    std::vector<float> v(total);
    if (n.empty()) count = {1};
    io::H5Handle mem(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
    if (!n.empty() &&
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
      throw Error(where(name) + ": selecting slab " + std::to_string(index) + " failed");
    if (H5Dread(d.get(), H5T_NATIVE_FLOAT, mem.get(), file_space.get(), H5P_DEFAULT, v.data()) < 0)
      throw Error(where(name) + ": reading failed");
    return v;
  }

  std::vector<double> read_double(const std::string& name) const {
    io::H5Handle d = open(name);
    const auto n = dims(name);
    check_fits(name, n, n, 8);
    size_t total = 1;
    for (hsize_t c : n) total *= c;
    std::vector<double> v(total);
    if (H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
      throw Error(where(name) + ": reading failed");
    return v;
  }

  // A numeric attribute of the root group; `fallback` when absent.
  std::vector<double> attribute(const std::string& name, std::vector<double> fallback) const {
    if (H5Aexists(file_.get(), name.c_str()) <= 0) return fallback;
    io::H5Handle a(H5Aopen(file_.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
    io::H5Handle s(H5Aget_space(a.get()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(s.get());
    std::vector<double> v(n > 0 ? size_t(n) : 0);
    if (!a.valid() || n <= 0 || H5Aread(a.get(), H5T_NATIVE_DOUBLE, v.data()) < 0)
      throw Error("result file '" + path_ + "': reading attribute '" + name + "' failed");
    return v;
  }

 private:
  // A small file can declare a huge dataset (chunks never written cost no disk): the bytes a
  // read of `count` (of a dataset of shape `shape`) holds are compared with the host's
  // available memory before anything is allocated. `value_bytes` a value read (4: float, 8:
  // double); a picture of a plane of it then holds at most 16 B a cell of the two largest
  // axes (its float values, percentile's float |v| copy and double copy; the read is freed
  // first), so the estimate is the larger of the read with its picture's values and that.
  void check_fits(const std::string& name, const std::vector<hsize_t>& shape, const std::vector<hsize_t>& count,
                  double value_bytes) const {
    double cells = 1;  // in double: the product of declared sizes may overflow 64 bits
    for (hsize_t c : count) cells *= double(c);
    std::vector<double> sorted(count.begin(), count.end());
    std::sort(sorted.rbegin(), sorted.rend());
    const double plane = (sorted.size() > 0 ? sorted[0] : 1) * (sorted.size() > 1 ? sorted[1] : 1);
    const double bytes = std::max(value_bytes * cells + 4 * plane, 16 * plane);
    const AvailableMemory memory = available_host_memory_detail();
    const double available = memory.bytes;
    if (available > 0 && bytes > kHostMemoryMargin * available) {
      std::string s;
      for (hsize_t c : shape) s += (s.empty() ? "" : ", ") + std::to_string(c);
      throw Error(where(name) + " declares shape [" + s + "]: drawing it needs " + gib(bytes) + " of host memory but " +
                  gib(available) + " is available (" + memory.source + "; seisrtm plot may use " +
                  std::to_string(static_cast<int>(kHostMemoryMargin * 100)) +
                  "% of it); nothing was read (a corrupt file, or draw it on a larger machine)");
    }
  }

  std::string where(const std::string& name) const { return "result file '" + path_ + "', dataset '" + name + "'"; }
  io::H5Handle open(const std::string& name) const {
    if (!has(name)) throw Error("result file '" + path_ + "' has no dataset '" + name + "'");
    io::H5Handle d(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.valid()) throw Error(where(name) + ": not a dataset");
    return d;
  }

  std::string path_;
  io::H5Handle file_;
};

std::string shot_name(long long s) {
  char b[32];
  std::snprintf(b, sizeof b, "shot_%04lld", s);
  return b;
}

// A volume of the file: its dataset, how to draw it and its name in titles.
struct VolumeItem {
  const char* what;
  const char* dataset;
  const char* title;
  const char* label;
  const char* unit;
  io::Colormap map;
  bool symmetric;
  double clip;  // percentile: of |v| when symmetric, else the range [100 - clip, clip]
};
constexpr VolumeItem kVolumes[] = {
    {"model", "model/vp", "model vp", "vp", "m/s", io::Colormap::viridis, false, 100},
    {"image", "image/laplacian", "image", "-lap(normalised image)", "1/m^2", io::Colormap::grey, true, 99},
    {"normalized", "image/normalized", "normalised image", "correlation / illumination", "", io::Colormap::grey, true,
     99},
    {"correlation", "image/correlation", "image correlation", "sum S R", "arb. units", io::Colormap::grey, true, 99},
    {"isic", "image/isic", "image (inverse scattering)", "sum (1/v^2) dS dR - grad S . grad R", "arb. units",
     io::Colormap::grey, true, 99},
    // The sources' surroundings are orders of magnitude brighter than the rest: clipped.
    {"illumination", "image/illumination", "illumination", "sum S^2", "arb. units", io::Colormap::viridis, false, 99},
};

// What the file holds, one line per item, for the listing and for the error on a wrong `what`.
std::vector<std::string> available(const ResultFile& f) {
  std::vector<std::string> items;
  if (f.has("traces")) {
    const auto n = f.dims("traces");
    if (n.size() == 3)
      items.push_back("gather        " + std::to_string(n[0]) + " shot(s) x " + std::to_string(n[1]) + " receivers x " +
                      std::to_string(n[2]) + " samples (--shot)");
  }
  long long shots = 0;
  while (f.has("snapshots/" + shot_name(shots))) ++shots;
  if (shots > 0) {
    const auto n = f.dims("snapshots/" + shot_name(0));
    items.push_back("wavefield     " + std::to_string(shots) + " shot(s) x " + std::to_string(n.empty() ? 0 : n[0]) +
                    " snapshots (--shot, --snapshot, --slice, --at)");
  }
  for (const auto& v : kVolumes)
    if (f.has(v.dataset))
      items.push_back(std::string(v.what) + std::string(14 - std::string(v.what).size(), ' ') + "/" + v.dataset +
                      " (--slice, --at)");
  for (const char* g : {"offset", "angle"})
    if (f.has(std::string("gathers/") + g)) {
      const auto n = f.dims(std::string("gathers/") + g);
      if (n.size() == 4)
        items.push_back(std::string(g) + "_gathers" + std::string(6 - std::string(g).size(), ' ') + "/gathers/" + g +
                        ": " + std::to_string(n[0]) + " x " + std::to_string(n[1]) +
                        " locations (y, x), a row along x " + "(--at y)");
    }
  return items;
}

std::string listing(const ResultFile& f) {
  std::string s;
  for (const auto& i : available(f)) s += "\n  " + i;
  return s.empty() ? "\n  (nothing this command draws)" : s;
}

std::string metres(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// The grid of the file's volumes: n, h, origin as [x, y, z].
struct FileGrid {
  std::array<long long, 3> n{};
  std::array<double, 3> h{}, origin{};
};

FileGrid grid_of(const ResultFile& f, const std::vector<hsize_t>& zyx) {
  FileGrid g;
  const auto h = f.attribute("spacing", {});
  if (h.size() != 3) throw Error("result file '" + f.path() + "' has no attribute 'spacing' [x, y, z] (m)");
  // A NaN, zero or negative spacing places no plane (--at would take the blame): refused here.
  if (!std::all_of(h.begin(), h.end(), [](double v) { return std::isfinite(v) && v > 0; }))
    throw Error("result file '" + f.path() + "': attribute 'spacing' = [" + metres(h[0]) + ", " + metres(h[1]) + ", " +
                metres(h[2]) + "] m; every grid spacing [x, y, z] must be a positive finite number of metres");
  const auto o = f.attribute("origin", {0, 0, 0});
  if (!std::all_of(o.begin(), o.end(), [](double v) { return std::isfinite(v); }))
    throw Error("result file '" + f.path() +
                "': attribute 'origin' holds a NaN or infinite value; it must be the "
                "grid's first node [x, y, z] in m");
  for (int k = 0; k < 3; ++k) {
    g.n[k] = static_cast<long long>(zyx[zyx.size() - 1 - k]);
    g.h[k] = h[k];
    g.origin[k] = o.size() == 3 ? o[k] : 0;
  }
  return g;
}

// The index of the plane `normal` = at (m), or the default position when `at` is not given.
long long plane_index(const FileGrid& g, char normal, std::optional<double> at, double fallback,
                      const std::string& file) {
  const int k = normal - 'x';
  const double m = at ? *at : fallback;
  const double last = g.origin[k] + double(g.n[k] - 1) * g.h[k];
  const long long i = std::llround((m - g.origin[k]) / g.h[k]);
  if (i < 0 || i >= g.n[k])
    throw Error("--at " + metres(m) + " m is outside the grid of '" + file + "': " + std::string(1, normal) +
                " runs from " + metres(g.origin[k]) + " to " + metres(last) + " m");
  return i;
}

// The mean source position (m), the default place of a slice; the grid's centre without sources.
io::Point3 mean_source(const ResultFile& f, const FileGrid& g) {
  io::Point3 p{};
  for (int k = 0; k < 3; ++k) p[k] = g.origin[k] + double(g.n[k] - 1) * g.h[k] / 2;
  if (!f.has("sources/positions")) return p;
  const auto s = f.read_double("sources/positions");
  if (s.size() < 3) return p;
  const size_t n = s.size() / 3;
  for (int k = 0; k < 2; ++k) {  // x and y: the plane through the shots; z stays mid-depth
    p[k] = 0;
    for (size_t i = 0; i < n; ++i) p[k] += s[i * 3 + k] / double(n);
  }
  return p;
}

// The first 8 bytes of every PNG file (PNG specification, 5.2).
constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

// The picture may replace only an earlier picture: the result file itself, or any existing file
// that does not start with the PNG signature (another result file, a YAML config), would lose
// its contents to the PNG.
void check_replaceable(const std::string& out, const std::string& input) {
  std::error_code ec;
  if (fs::equivalent(out, input, ec))
    throw Error("cannot write the picture to '" + out +
                "': it is the result file being drawn (name another .png file with --output)");
  if (!fs::exists(out, ec)) return;
  unsigned char head[sizeof kPngSignature] = {};
  bool png = false;
  if (fs::is_regular_file(out, ec)) {
    if (std::FILE* f = std::fopen(out.c_str(), "rb")) {
      png = std::fread(head, 1, sizeof head, f) == sizeof head &&
            std::equal(std::begin(head), std::end(head), std::begin(kPngSignature));
      std::fclose(f);
    }
  }
  if (!png)
    throw Error("cannot write the picture to '" + out +
                "': it exists and is not a PNG picture, and only an earlier picture is replaced (remove it, or "
                "name another .png file with --output)");
}

// A picture and the part of its default file name that says what it shows.
struct Picture {
  io::Image2D image;
  std::string suffix;
};

// /traces of shot --shot: receivers across, time down.
Picture draw_gather(const ResultFile& f, const PlotOptions& o, const std::string& name) {
  Picture pic;
  io::Image2D& im = pic.image;
  const auto n = f.dims("traces");
  if (n.size() != 3) throw Error("result file '" + o.file + "': /traces must be [shot, receiver, time]");
  if (o.shot < 0 || o.shot >= static_cast<long long>(n[0]))
    throw Error("--shot " + std::to_string(o.shot) + ": '" + o.file + "' has shots 0.." + std::to_string(n[0] - 1));
  const long long nrec = static_cast<long long>(n[1]), nt = static_cast<long long>(n[2]);
  const auto dt = f.attribute("dt", {});
  if (dt.size() != 1 || !(dt[0] > 0)) throw Error("result file '" + o.file + "' has no attribute 'dt' (s)");
  std::vector<io::Point3> rec;
  if (f.has("receivers/positions")) {
    const auto r = f.read_double("receivers/positions");
    for (size_t i = 0; i + 2 < r.size(); i += 3) rec.push_back({r[i], r[i + 1], r[i + 2]});
  }
  io::Point3 src{0, 0, 0};
  if (f.has("sources/positions")) {
    const auto s = f.read_double("sources/positions");
    if (s.size() >= size_t(3 * (o.shot + 1))) src = {s[3 * o.shot], s[3 * o.shot + 1], s[3 * o.shot + 2]};
  }
  im = io::gather_picture(f.read_float("traces", o.shot), nrec, nt, dt[0], rec, src);
  im.title = name + ": " + shot_name(o.shot) + " " + im.title;
  pic.suffix = "gather_" + shot_name(o.shot);
  return pic;
}

// A plane of snapshot --snapshot (the last by default) of shot --shot, through that shot.
Picture draw_wavefield(const ResultFile& f, const PlotOptions& o, const std::string& name) {
  Picture pic;
  io::Image2D& im = pic.image;
  const std::string ds = "snapshots/" + shot_name(o.shot);
  if (o.shot < 0 || !f.has(ds)) throw Error("--shot " + std::to_string(o.shot) + ": '" + o.file + "' has no " + ds);
  const auto n = f.dims(ds);
  if (n.size() != 4 || n[0] == 0) throw Error("result file '" + o.file + "': /" + ds + " must be [snapshot, z, y, x]");
  const long long k = o.snapshot ? *o.snapshot : static_cast<long long>(n[0]) - 1;
  if (k < 0 || k >= static_cast<long long>(n[0]))
    throw Error("--snapshot " + std::to_string(k) + ": '" + o.file + "' /" + ds + " has snapshots 0.." +
                std::to_string(n[0] - 1) + " (omit --snapshot for the last)");
  const FileGrid g = grid_of(f, n);
  io::Point3 at = mean_source(f, g);
  if (f.has("sources/positions")) {
    const auto s = f.read_double("sources/positions");
    if (s.size() >= size_t(3 * (o.shot + 1)))
      at = {s[3 * o.shot], s[3 * o.shot + 1], g.origin[2] + double(g.n[2] - 1) * g.h[2] / 2};
  }
  const char normal = o.slice.empty() ? 'y' : o.slice[0];
  const long long index = plane_index(g, normal, o.at, at[normal - 'x'], o.file);
  const auto v = f.read_float(ds, k);
  im = io::volume_slice(v.data(), g.n, g.h, g.origin, normal, index);
  double t = 0;
  if (f.has("snapshots/time")) {
    const auto times = f.read_double("snapshots/time");
    if (k < static_cast<long long>(times.size())) t = times[k];
  }
  char b[96];
  std::snprintf(b, sizeof b, " wavefield p at t = %.3f s (snapshot %lld), ", t, k);
  im.title = name + ": " + shot_name(o.shot) + b + im.title;
  im.value_label = "p", im.value_unit = "arb. units";
  im.clip_percentile = 99.5;
  pic.suffix = "wavefield_" + shot_name(o.shot) + "_" + std::to_string(k) + "_" + normal + "_" +
               metres(index * g.h[normal - 'x'] + g.origin[normal - 'x']) + "m";
  return pic;
}

// A plane of a volume of kVolumes; a z plane at the image's depth slice by default.
Picture draw_volume(const ResultFile& f, const PlotOptions& o, const std::string& name, const VolumeItem* volume) {
  Picture pic;
  io::Image2D& im = pic.image;
  const auto n = f.dims(volume->dataset);
  if (n.size() != 3) throw Error("result file '" + o.file + "': /" + volume->dataset + " must be [z, y, x]");
  const FileGrid g = grid_of(f, n);
  const char normal = o.slice.empty() ? 'y' : o.slice[0];
  double fallback = mean_source(f, g)[normal - 'x'];
  if (normal == 'z') {
    const auto d = f.attribute("depth_slice", {});
    if (d.size() == 1) fallback = d[0];
  }
  const long long index = plane_index(g, normal, o.at, fallback, o.file);
  const auto v = f.read_float(volume->dataset);
  im = io::volume_slice(v.data(), g.n, g.h, g.origin, normal, index);
  im.title = name + ": " + volume->title + ", " + im.title;
  im.value_label = volume->label, im.value_unit = volume->unit;
  im.map = volume->map, im.symmetric = volume->symmetric;
  im.clip_percentile = volume->clip;
  pic.suffix =
      std::string(volume->what) + "_" + normal + "_" + metres(index * g.h[normal - 'x'] + g.origin[normal - 'x']) + "m";
  return pic;
}

// A row of image gathers along x (offset_gathers, angle_gathers: /gathers/offset or /angle
// [y, x, trace, z]) at the y location nearest --at (m; the middle one without it).
Picture draw_gathers(const ResultFile& f, const PlotOptions& o, const std::string& name, const std::string& kind) {
  const std::string ds = "gathers/" + kind;
  const auto n = f.dims(ds);
  if (n.size() != 4) throw Error("result file '" + o.file + "': /" + ds + " must be [y, x, trace, z]");
  const std::vector<double> xs = f.read_double("gathers/x"), ys = f.read_double("gathers/y"), z = f.read_double("z");
  if (xs.size() != n[1] || ys.size() != n[0] || z.size() != n[3] || z.size() < 2)
    throw Error("result file '" + o.file + "': the axes of /" + ds + " (/gathers/x, /gathers/y, /z) do not match it");
  if (o.slice.size() && o.slice != "y") throw Error("--slice " + o.slice + ": gathers are drawn along x at a y (--at)");
  size_t jy = ys.size() / 2;
  if (o.at) {
    jy = 0;
    for (size_t k = 1; k < ys.size(); ++k)
      if (std::abs(ys[k] - *o.at) < std::abs(ys[jy] - *o.at)) jy = k;
  }
  const std::vector<float> all = f.read_float(ds, static_cast<long long>(jy));
  Picture pic;
  pic.image = gather_panel(all.data(), static_cast<long long>(n[1]), static_cast<long long>(n[2]),
                           static_cast<long long>(n[3]), xs, z[0], z[1] - z[0]);
  pic.image.title = name + ": " + kind + " gathers along x at y = " + metres(ys[jy]) + " m";
  pic.suffix = kind + "_gathers_y_" + metres(ys[jy]) + "m";
  return pic;
}

// Written through a temporary file, so a failed write leaves no partial picture under `out`.
void write_picture(const std::string& out, const std::string& input, const io::Image2D& im) {
  check_replaceable(out, input);
  // As run does for output.directory: a missing directory of --output is made.
  const fs::path dir = fs::path(out).parent_path();
  if (!dir.empty()) io::ensure_directory(dir.string());
  io::PartialFile png(out);
  io::write_image(png.temp_path(), im);
  png.commit();
}

}  // namespace

int cmd_plot(const PlotOptions& o) {
  const ResultFile f(o.file);
  if (o.what.empty()) {
    std::printf("%s holds:%s\ndraw one with: seisrtm plot %s WHAT [options] (seisrtm plot --help)\n", o.file.c_str(),
                listing(f).c_str(), o.file.c_str());
    return 0;
  }
  // A given value is held to its range (NaN fails every comparison): 0 and NaN were taken as
  // "not given" and drawn with the item's default.
  if (o.clip && !(*o.clip > 0 && *o.clip <= 100))
    throw Error("--clip " + metres(*o.clip) +
                ": a percentile in (0, 100] (99 clips at the 99th percentile of |value|)");
  if (o.at && !std::isfinite(*o.at))
    throw Error("--at " + metres(*o.at) + ": the slice's position must be a finite number of metres");
  const std::string stem = (fs::path(o.file).parent_path() / fs::path(o.file).stem()).string();
  const std::string name = fs::path(o.file).stem().string();
  Picture pic;

  const VolumeItem* volume = nullptr;
  for (const auto& v : kVolumes)
    if (o.what == v.what && f.has(v.dataset)) volume = &v;
  if (o.what == "gather" && f.has("traces"))
    pic = draw_gather(f, o, name);
  else if (o.what == "wavefield" && f.has("snapshots/" + shot_name(0)))
    pic = draw_wavefield(f, o, name);
  else if (volume)
    pic = draw_volume(f, o, name, volume);
  else if ((o.what == "offset_gathers" || o.what == "angle_gathers") &&
           f.has("gathers/" + o.what.substr(0, o.what.find('_'))))
    pic = draw_gathers(f, o, name, o.what.substr(0, o.what.find('_')));
  else
    throw Error("'" + o.what + "' is not in '" + o.file + "'; it holds:" + listing(f));
  io::Image2D& im = pic.image;
  if (o.clip) im.clip_percentile = *o.clip;
  if (!o.cmap.empty()) im.map = io::colormap_from_name(o.cmap);

  const std::string out = o.output.empty() ? stem + "_plot_" + pic.suffix + ".png" : o.output;
  write_picture(out, o.file, im);
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace seisrtm::app
