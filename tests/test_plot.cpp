// Pictures: [unit] the percentile clip, ticks, colour maps, and pictures decoded back (libgd)
// to check where values, the colour bar and the axis labels land; [integration] seisrtm plot on
// the file of a small run of configs/quickstart.yaml and a migration of it.
#include <gd.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "io/plot.hpp"
#include "tests/catch.hpp"
#include "tests/cli_util.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  return test::fresh_dir("seisrtm_test_plot_", name);
}

struct GdImageDeleter {
  void operator()(gdImagePtr im) const { gdImageDestroy(im); }
};
using Picture = std::unique_ptr<gdImage, GdImageDeleter>;

// Decodes a PNG with libgd (libpng underneath); null when it is not one.
Picture decode(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return nullptr;
  Picture p(gdImageCreateFromPng(f));
  std::fclose(f);
  return p;
}

uint32_t pixel(const Picture& p, int x, int y) {
  const int c = gdImageGetPixel(p.get(), x, y);
  return uint32_t(gdImageRed(p.get(), c)) << 16 | uint32_t(gdImageGreen(p.get(), c)) << 8 | gdImageBlue(p.get(), c);
}

// Pixels in [x0, x1) x [y0, y1) that are not the white background.
int inked(const Picture& p, int x0, int x1, int y0, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) n += pixel(p, x, y) != 0xffffff;
  return n;
}

// 3 x 3 samples: +1 top left, -1 top right, 0 bottom left; the rest in between.
io::Image2D known_image() {
  io::Image2D im;
  im.rows = 3, im.cols = 3;
  im.values = {1.0f, 0.5f, -1.0f, 0.25f, 0.0f, -0.5f, 0.0f, 0.1f, -0.25f};
  im.x = {"x", "m", 0, 10};
  im.y = {"depth z", "m", 0, 10};
  im.title = "known";
  im.value_label = "p";
  im.value_unit = "arb. units";
  im.clip_percentile = 100;  // clip = max |v| = 1
  im.width = 200, im.height = 160;
  return im;
}

}  // namespace

TEST_CASE("percentile: numpy's linear interpolation between order statistics", "[unit]") {
  std::vector<float> v;
  for (int i = 0; i <= 100; ++i) v.push_back(i % 2 ? float(i) : -float(i));  // |v| = 0..100
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  CHECK(io::percentile_abs(v, 99) == Approx(99.0));
  CHECK(io::percentile_abs(v, 99.5) == Approx(99.5));
  CHECK(io::percentile_abs(v, 100) == Approx(100.0));
  CHECK(io::percentile_abs(v, 0) == Approx(0.0));
  const std::vector<float> ten = {10, 3, 7, 1, 5, 9, 2, 8, 4, 6};
  CHECK(io::percentile(ten, 50) == Approx(5.5));  // numpy.percentile(range(1, 11), 50)
  CHECK(io::percentile(ten, 90) == Approx(9.1));
  CHECK(io::percentile({NAN, 2.0f, NAN, 4.0f}, 50) == Approx(3.0));
  CHECK(io::percentile({}, 99) == 0);
  // The symmetric colour range of an Image2D is +/- that percentile of |v|.
  io::Image2D im;
  im.values = v;
  im.rows = 1, im.cols = static_cast<long long>(v.size());
  im.clip_percentile = 99;
  CHECK(io::colour_range(im).hi == Approx(99.0));
  CHECK(io::colour_range(im).lo == Approx(-99.0));
  im.symmetric = false, im.clip_percentile = 100;
  CHECK(io::colour_range(im).lo == Approx(-100.0));
}

TEST_CASE("ticks: 1-2-5 steps, exact zero, labels with the digits the step needs", "[unit]") {
  const io::Ticks a = io::nice_ticks(0, 1000, 5);
  CHECK(a.step == Approx(200));
  CHECK(a.values == std::vector<double>{0, 200, 400, 600, 800, 1000});
  const io::Ticks b = io::nice_ticks(-3.2e-4, 3.2e-4, 7);
  CHECK(b.step == Approx(1e-4));
  REQUIRE(b.values.size() == 7);
  CHECK(b.values[3] == 0.0);
  const io::Ticks c = io::nice_ticks(0.0012, 1.2, 6);  // a gather's time axis, from dt
  CHECK(c.step == Approx(0.2));
  CHECK(c.values.front() == Approx(0.2));
  CHECK(io::tick_label(0.2, 0.2) == "0.2");
  CHECK(io::tick_label(0.05, 0.05) == "0.05");
  CHECK(io::tick_label(500, 100) == "500");
  CHECK(io::tick_label(-2e-4, 1e-4) == "-2e-4");
  CHECK(io::tick_label(1.5e-4, 5e-5) == "1.5e-4");
  CHECK(io::tick_label(1e-20, 1e-4) == "0");
}

TEST_CASE("colour maps: seismic ends and white zero, grey peaks black, viridis ends", "[unit]") {
  CHECK(io::colour_at(io::Colormap::seismic, 0.5) == 0xffffffu);
  CHECK(io::colour_at(io::Colormap::seismic, 1.0) == 0x800000u);  // the red end
  CHECK(io::colour_at(io::Colormap::seismic, 0.0) == 0x00004du);  // the blue end
  CHECK(io::colour_at(io::Colormap::seismic, 0.75) == 0xff0000u);
  CHECK(io::colour_at(io::Colormap::grey, 1.0) == 0x000000u);
  CHECK(io::colour_at(io::Colormap::grey, 0.0) == 0xffffffu);
  CHECK(io::colour_at(io::Colormap::viridis, 0.0) == 0x440154u);
  CHECK(io::colour_at(io::Colormap::viridis, 1.0) == 0xfde725u);
  CHECK(io::colour_at(io::Colormap::viridis, 2.0) == 0xfde725u);  // clamped
  CHECK(io::colormap_from_name("gray") == io::Colormap::grey);
  CHECK_THROWS_WITH(io::colormap_from_name("jet"), Contains("seismic, grey, viridis"));
}

TEST_CASE("image picture: decodes to its layout, values land in their colours, bar and labels drawn", "[unit]") {
  const fs::path d = fresh_dir("image");
  const io::Image2D im = known_image();
  const io::ImageLayout l = io::image_layout(im);
  CHECK(l.w == 200);
  CHECK(l.h == 160);
  const std::string f = (d / "known.png").string();
  io::write_image(f, im);
  const Picture p = decode(f);
  REQUIRE(p);
  CHECK(gdImageSX(p.get()) == l.width);
  CHECK(gdImageSY(p.get()) == l.height);
  // Samples sit on the plot area's corners: +1 (the clip) at the top left is the red end,
  // -1 at the top right the blue end, 0 at the bottom left white (y points down).
  CHECK(pixel(p, l.x0, l.y0) == io::colour_at(io::Colormap::seismic, 1));
  CHECK(pixel(p, l.x0 + l.w - 1, l.y0) == io::colour_at(io::Colormap::seismic, 0));
  CHECK(pixel(p, l.x0, l.y0 + l.h - 1) == 0xffffffu);
  // Colour bar: the top is the high end, the bottom the low end, the middle zero.
  const int bx = l.bar_x + l.bar_w / 2;
  CHECK(pixel(p, bx, l.y0) == io::colour_at(io::Colormap::seismic, 1));
  CHECK(pixel(p, bx, l.y0 + l.h - 1) == io::colour_at(io::Colormap::seismic, 0));
  // Its middle row is within a level (1/224 of the range) of white.
  const uint32_t mid = pixel(p, bx, l.y0 + (l.h - 1) / 2);
  CHECK(((mid >> 16) >= 0xf8 && ((mid >> 8) & 0xff) >= 0xf8 && (mid & 0xff) >= 0xf8));
  // Tick labels and axis labels: ink left of the area (depth), above it (x, drawn along the
  // top for a y-down section), right of the bar (its ticks and label); a frame around the area.
  CHECK(inked(p, 0, l.x0 - 2, l.y0, l.y0 + l.h) > 100);
  CHECK(inked(p, l.x0, l.x0 + l.w, l.y0 - 40, l.y0 - 2) > 100);
  // The tick labels alone: right-aligned 8 pixels left of the area (the rotated axis label is
  // further left), and in the band 8 to 20 pixels above it (the axis label is above that).
  CHECK(inked(p, l.x0 - 25, l.x0 - 8, l.y0 - 6, l.y0 + l.h + 6) > 40);
  CHECK(inked(p, l.x0 - 6, l.x0 + l.w + 6, l.y0 - 20, l.y0 - 8) > 40);
  CHECK(inked(p, l.bar_x + l.bar_w + 2, l.width, l.y0, l.y0 + l.h) > 100);
  CHECK(pixel(p, l.x0 - 1, l.y0 + l.h / 2) == 0x000000u);
  // Nothing below the area for a y-down section; a map view (y up) has its x axis there.
  CHECK(inked(p, l.x0, l.x0 + l.w, l.y0 + l.h + 8, l.height) == 0);
  io::Image2D map = im;
  map.y_down = false;
  const io::ImageLayout lm = io::image_layout(map);
  io::write_image(f, map);
  const Picture q = decode(f);
  REQUIRE(q);
  CHECK(inked(q, lm.x0, lm.x0 + lm.w, lm.y0 + lm.h + 2, lm.height) > 100);
  CHECK(pixel(q, lm.x0, lm.y0 + lm.h - 1) == io::colour_at(io::Colormap::seismic, 1));  // row 0 at the bottom
  // A wrong size is refused with the numbers.
  io::Image2D bad = im;
  bad.values.pop_back();
  CHECK_THROWS_WITH(io::write_image(f, bad), Contains("8 values do not fill 3 x 3"));
}

TEST_CASE("image picture: compressed, far below the 260 KB of the stored pictures", "[unit]") {
  const fs::path d = fresh_dir("size");
  io::Image2D im;
  im.rows = 120, im.cols = 200;
  for (long long r = 0; r < im.rows; ++r)
    for (long long c = 0; c < im.cols; ++c)
      im.values.push_back(float(std::sin(0.05 * c) * std::exp(-0.01 * r) * std::cos(0.2 * r)));
  im.x = {"x", "m", 0, 10};
  im.y = {"depth z", "m", 0, 10};
  im.value_label = "p";
  const std::string f = (d / "wave.png").string();
  io::write_image(f, im);
  const io::ImageLayout l = io::image_layout(im);
  CHECK(l.w == 640);  // equal metres per pixel: 1990 m x 1190 m in at most 640 x 520
  CHECK(l.h == 383);
  INFO(fs::file_size(f) << " bytes");
  CHECK(fs::file_size(f) < 100 * 1024);
}

TEST_CASE("gather and slice pictures: offset axis, receiver numbers, planes and titles", "[unit]") {
  std::vector<io::Point3> rec;
  for (int r = 0; r < 5; ++r) rec.push_back({300.0 + 100 * r, 495, 20});
  std::vector<float> traces(5 * 4);
  for (int r = 0; r < 5; ++r)
    for (int n = 0; n < 4; ++n) traces[r * 4 + n] = float(10 * r + n);
  const io::Image2D g = io::gather_picture(traces, 5, 4, 0.002, rec, {550, 495, 10});
  CHECK(g.x.label == "offset");
  CHECK(g.x.start == Approx(-250));
  CHECK(g.x.step == Approx(100));
  CHECK(g.y.unit == "s");
  CHECK(g.y.start == Approx(0.002));    // sample n is at (n + 1) dt
  CHECK(g.values[2 * 5 + 3] == 32.0f);  // time sample 2 of receiver 3
  rec[2][1] += 60;                      // off the line: receiver numbers
  CHECK(io::gather_picture(traces, 5, 4, 0.002, rec, {550, 495, 10}).x.label == "receiver number");

  // v = 100 z + 10 y + x on a 4 x 3 x 2 grid (x, y, z).
  const std::array<long long, 3> n{4, 3, 2};
  std::vector<float> v;
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) v.push_back(float(100 * z + 10 * y + x));
  const io::Image2D xz = io::volume_slice(v.data(), n, {10, 20, 5}, {0, 0, 0}, 'y', 2);
  CHECK(xz.title == "x-z at y = 40 m");
  CHECK((xz.rows == 2 && xz.cols == 4 && xz.y_down));
  CHECK(xz.values[1 * 4 + 3] == 123.0f);
  const io::Image2D yz = io::volume_slice(v.data(), n, {10, 20, 5}, {0, 0, 0}, 'x', 1);
  CHECK(yz.x.label == "y");
  CHECK(yz.values[1 * 3 + 2] == 121.0f);
  const io::Image2D xy = io::volume_slice(v.data(), n, {10, 20, 5}, {0, 0, 0}, 'z', 1);
  CHECK(xy.title == "x-y at depth z = 5 m");
  CHECK(!xy.y_down);
  CHECK(xy.values[2 * 4 + 1] == 121.0f);
  CHECK_THROWS_WITH(io::volume_slice(v.data(), n, {10, 20, 5}, {0, 0, 0}, 'z', 2), Contains("outside 0..1"));
}

TEST_CASE("line plot: decodes to the panel size with the series' colour drawn", "[unit]") {
  const fs::path d = fresh_dir("lines");
  const std::string f = (d / "plot.png").string();
  io::LinePlot lp;
  lp.title = "tma, 800^3: GCells/s";
  lp.x_label = "z_block";
  lp.y_label = "GCells/s";
  lp.x_ticks = {"none", "64", "32"};
  lp.reference = 187;
  lp.reference_label = "roofline";
  io::Series s;
  s.label = "plain 1000 steps";
  s.y = {116, 150, std::nan("")};
  s.rgb[0] = 214, s.rgb[1] = 39, s.rgb[2] = 40;
  lp.series.push_back(s);
  io::write_line_plots(f, {lp, lp});
  const Picture p = decode(f);
  REQUIRE(p);
  CHECK(gdImageSX(p.get()) == 1200);
  CHECK(gdImageSY(p.get()) == 2 * 560);
  int red = 0;
  for (int y = 0; y < 1120; ++y)
    for (int x = 0; x < 1200; ++x) red += pixel(p, x, y) == 0xd62728u;
  CHECK(red > 500);  // a segment, two markers and a legend swatch per panel
  CHECK(fs::file_size(f) < 60 * 1024);
  CHECK_THROWS(io::write_line_plots((d / "none.png").string(), {}));
}

TEST_CASE("seisrtm plot draws every item of a run's and a migration's file and refuses bad ones", "[integration]") {
  const fs::path d = fresh_dir("cli");
  // configs/quickstart.yaml on a coarse grid: 60 x 34 x 60 cells of 30 x 30 x 10 m, 200 steps.
  const std::string sets =
      " --set grid.shape=[60,34,60] --set grid.spacing=[30,30,10] --set boundary.damping_width=6"
      " --set time.steps=200 --set output.snapshot_interval=50";
  const test::Result run = test::run_cli("run " + std::string(SEISRTM_SOURCE_DIR) + "/configs/quickstart.yaml" + sets +
                                         " --quiet --backend cpu --output " + d.string());
  INFO(run.output);
  REQUIRE(run.code == 0);
  const std::string h5 = (d / "quickstart.h5").string();
  // The run's own pictures decode and are compressed.
  for (const char* png :
       {"quickstart_gather_shot_0000.png", "quickstart_wavefield_shot_0000.png", "quickstart_model_vp.png"}) {
    INFO(png);
    REQUIRE(decode((d / png).string()));
    CHECK(fs::file_size(d / png) < 150 * 1024);
  }

  const test::Result list = test::run_cli("plot " + h5);
  INFO(list.output);
  CHECK(list.code == 0);
  CHECK_THAT(list.output, Contains("gather") && Contains("wavefield") && Contains("model"));

  struct Case {
    std::string args, file;
  };
  const std::vector<Case> good = {
      {"gather", "quickstart_plot_gather_shot_0000.png"},
      {"gather --cmap grey --clip 95 --output " + (d / "g.png").string(), "g.png"},
      {"wavefield", "quickstart_plot_wavefield_shot_0000_3_y_510m.png"},
      {"wavefield --snapshot 1 --slice z --at 300", "quickstart_plot_wavefield_shot_0000_1_z_300m.png"},
      {"model", "quickstart_plot_model_y_510m.png"},
      {"model --slice x --at 990", "quickstart_plot_model_x_990m.png"},
  };
  for (const auto& c : good) {
    const test::Result r = test::run_cli("plot " + h5 + " " + c.args);
    INFO(c.args << ": " << r.output);
    CHECK(r.code == 0);
    CHECK(decode((d / c.file).string()));
  }

  // Migrate the run's data (constant 1500 m/s) and draw the image items.
  const std::string mig = test::write_text(d / "migrate.yaml",
                                           "grid: {shape: [60, 34, 60], spacing: [30, 30, 10]}\n"
                                           "boundary: {damping_width: 6, free_surface: true}\n"
                                           "model: {vp: {type: constant, value: 1500}}\n"
                                           "output: {name: rtm}\n"
                                           "migration: {data: " +
                                               h5 + "}\n");
  const test::Result m = test::run_cli("migrate " + mig + " --quiet --backend cpu --output " + d.string());
  INFO(m.output);
  REQUIRE(m.code == 0);
  const std::string rtm = (d / "rtm.h5").string();
  for (const char* png : {"rtm_image_xz.png", "rtm_image_normalized_xz.png", "rtm_image_depth.png", "rtm_model_vp.png"})
    CHECK(decode((d / png).string()));
  for (const char* what : {"image", "image --slice z", "normalized", "correlation", "illumination", "model"}) {
    const test::Result r = test::run_cli("plot " + rtm + " " + what + " --output " + (d / "item.png").string());
    INFO(what << ": " << r.output);
    CHECK(r.code == 0);
    CHECK(decode((d / "item.png").string()));
    fs::remove(d / "item.png");
  }

  // Bad requests: one message, exit 1 (2 for a usage error), no picture written.
  struct Bad {
    std::string args, needle;
    int code;
  };
  const std::vector<Bad> bad = {
      {h5 + " image", "'image' is not in", 1},
      {h5 + " gather --shot 3", "has shots 0..0", 1},
      {h5 + " wavefield --snapshot 9", "has snapshots 0..3", 1},
      {h5 + " model --at 5000", "y runs from 0 to 990 m", 1},
      {h5 + " gather --clip 150", "a percentile in (0, 100]", 1},
      {h5 + " model --slice q", "--slice", 2},
      {h5 + " gather --cmap jet", "--cmap", 2},
      {rtm + " gather", "it holds:", 1},
      {(d / "absent.h5").string() + " gather", "does not exist", 1},
  };
  for (const auto& b : bad) {
    const std::size_t before = std::distance(fs::directory_iterator(d), fs::directory_iterator());
    const test::Result r = test::run_cli("plot " + b.args);
    INFO(b.args << ": " << r.output);
    CHECK(r.code == b.code);
    CHECK_THAT(r.output, Contains("seisrtm: error:") && Contains(b.needle));
    CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == std::ptrdiff_t(before));
  }
}

TEST_CASE("ticks: at least three, inside the range, increasing and evenly spaced over a sweep of ranges", "[unit]") {
  // Colour bars of about half of all clip values had a single "0": [-1.5, 1.5] with 2
  // intervals took step 2. Swept: symmetric ranges +/-c, [0, c] and odd [a, b] for c from 1e-6
  // to 1e6 in steps of 10^(1/37) (no 1-2-5 value lands on a round step), n from 1 to 12.
  long long cases = 0;
  for (int e = -6 * 37; e <= 6 * 37; ++e) {
    const double c = std::pow(10.0, e / 37.0);
    for (const auto& [lo, hi] : {std::pair{-c, c}, std::pair{0.0, c}, std::pair{-0.3 * c, 1.7 * c},
                                 std::pair{1.1 * c, 1.37 * c}, std::pair{-c, -0.01 * c}})
      for (int n = 1; n <= 12; ++n) {
        const io::Ticks t = io::nice_ticks(lo, hi, n);
        INFO("nice_ticks(" << lo << ", " << hi << ", " << n << "): " << t.values.size() << " ticks, step " << t.step);
        REQUIRE(t.values.size() >= 3);
        // The ends are included to 1e-9 of a step (nice_ticks' own allowance for rounding).
        CHECK(t.values.front() >= lo - 1e-9 * t.step);
        CHECK(t.values.back() <= hi + 1e-9 * t.step);
        // Each value is k * step rounded once: a difference is off by at most 2 ulps of the
        // largest |value|, 4 eps |v| with margin.
        const double big = std::max(std::abs(lo), std::abs(hi));
        for (size_t i = 1; i < t.values.size(); ++i) {
          CHECK(t.values[i] > t.values[i - 1]);
          CHECK(std::abs(t.values[i] - t.values[i - 1] - t.step) <= 4 * std::numeric_limits<double>::epsilon() * big);
        }
        ++cases;
      }
  }
  CHECK(cases == (12 * 37 + 1) * 5 * 12);
}

TEST_CASE("a picture that cannot be written says why", "[unit]") {
  const fs::path d = fresh_dir("unwritable");
  // Before: "cannot write picture '...'" and nothing more (ENOENT was not among the reasons given).
  CHECK_THROWS_WITH(io::write_image((d / "no" / "such" / "x.png").string(), known_image()),
                    Contains("cannot write picture") && Contains("No such file or directory"));
}

namespace {

// A result file as run writes one, in small: /model/vp [nz, ny, nx] = [4, 3, 5] (or `declared`,
// chunked and never written: a few KiB), /snapshots/shot_0000 [2, 4, 3, 5] and the root
// attribute spacing [x, y, z] (m).
std::string write_result(const fs::path& file, const std::array<double, 3>& spacing,
                         const std::vector<hsize_t>& declared = {}) {
  const hid_t f = H5Fcreate(file.string().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  auto put = [&](const char* name, const std::vector<hsize_t>& dims, bool write) {
    const hid_t s = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    const std::vector<hsize_t> chunk(dims.size(), 1);
    if (!write) H5Pset_chunk(p, static_cast<int>(dims.size()), chunk.data());
    const hid_t d = H5Dcreate2(f, name, H5T_IEEE_F32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
    REQUIRE(d >= 0);
    if (write) {
      size_t n = 1;
      for (hsize_t v : dims) n *= v;
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = 1500.0f + float(i);
      REQUIRE(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
    }
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
  };
  for (const char* g : {"model", "snapshots"}) H5Gclose(H5Gcreate2(f, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  put("model/vp", declared.empty() ? std::vector<hsize_t>{4, 3, 5} : declared, declared.empty());
  put("snapshots/shot_0000", {2, 4, 3, 5}, true);
  const hsize_t three = 3;
  const hid_t s = H5Screate_simple(1, &three, nullptr);
  const hid_t a = H5Acreate2(f, "spacing", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(H5Awrite(a, H5T_NATIVE_DOUBLE, spacing.data()) >= 0);
  H5Aclose(a);
  H5Sclose(s);
  H5Fclose(f);
  REQUIRE(fs::file_size(file) < 64 * 1024);
  return file.string();
}

}  // namespace

TEST_CASE("seisrtm plot refuses untrusted sizes, bad indices and spacings, and makes its output directory",
          "[integration]") {
  const fs::path d = fresh_dir("untrusted");
  const std::string good = write_result(d / "good.h5", {10, 10, 5});
  // A missing directory of --output is made, as run makes output.directory ("cannot write
  // picture" before).
  test::Result r = test::run_cli("plot " + good + " model --output " + (d / "new" / "sub" / "m.png").string());
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(decode((d / "new" / "sub" / "m.png").string()));
  r = test::run_cli("plot " + good + " wavefield --snapshot 0 --output " + (d / "w.png").string());
  CHECK(r.code == 0);

  struct Bad {
    std::string name, args;
    std::vector<std::string> needles;
  };
  // 20000^3 floats (32 TB) on any machine: std::bad_alloc before. 4 B x 8e12 read and 4 B x
  // 4e8 of a plane's picture: 29803.813 GiB.
  const std::string huge = write_result(d / "huge.h5", {10, 10, 5}, {20000, 20000, 20000});
  std::vector<Bad> bad = {
      {"huge",
       huge + " model",
       {"result file '" + huge + "', dataset 'model/vp' declares shape [20000, 20000, 20000]",
        "drawing it needs 29803.813 GiB", "is available (MemAvailable", "nothing was read"}},
      // A negative index drew the last snapshot.
      {"snapshot -5",
       good + " wavefield --snapshot -5",
       {"--snapshot -5: '" + good + "' /snapshots/shot_0000 has snapshots 0..1"}},
      {"snapshot -1", good + " wavefield --snapshot -1", {"--snapshot -1", "has snapshots 0..1"}},
  };
  // A NaN spacing was drawn, a zero or negative one blamed on --at.
  for (const double h : {std::nan(""), 0.0, -10.0}) {
    const std::string f = write_result(d / ("spacing" + std::to_string(bad.size()) + ".h5"), {10, h, 5});
    const std::string shown = std::isnan(h) ? "nan" : h == 0 ? "0" : "-10";
    for (const char* what : {" model", " wavefield"})
      bad.push_back({"spacing " + shown + what,
                     f + what,
                     {"result file '" + f + "': attribute 'spacing' = [10, " + shown + ", 5] m",
                      "must be a positive finite number of metres"}});
  }
  for (const auto& b : bad) {
    const auto before = std::distance(fs::directory_iterator(d), fs::directory_iterator());
    const test::Result e = test::run_cli("plot " + b.args + " --output " + (d / "bad.png").string());
    INFO(b.name << ": " << e.output);
    CHECK(e.code == 1);
    CHECK(std::count(e.output.begin(), e.output.end(), '\n') == 1);
    for (const auto& n : b.needles) CHECK_THAT(e.output, Contains("seisrtm: error:") && Contains(n));
    CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == before);
  }
}

TEST_CASE("seisrtm plot replaces only an earlier picture, never its input, and refuses --at nan and --clip 0",
          "[integration]") {
  const fs::path d = fresh_dir("replace");
  const std::string good = write_result(d / "good.h5", {10, 10, 5});
  const std::string other = write_result(d / "other.h5", {10, 10, 5});
  // Drawn onto itself: a file of its own, so that the other cases still have their input.
  const std::string victim = write_result(d / "victim.h5", {10, 10, 5});
  const fs::path yaml = d / "run.yaml";
  std::FILE* y = std::fopen(yaml.string().c_str(), "w");
  REQUIRE(y);
  std::fputs("grid: {shape: [4, 3, 5], spacing: 10}\n", y);
  std::fclose(y);
  auto head = [](const fs::path& f) {
    std::string s(8, '\0');
    std::FILE* h = std::fopen(f.string().c_str(), "rb");
    REQUIRE(h);
    s.resize(std::fread(s.data(), 1, s.size(), h));
    std::fclose(h);
    return s;
  };
  const std::string hdf5 = "\x89HDF\r\n\x1a\n";
  REQUIRE(head(good) == hdf5);
  const auto yaml_size = fs::file_size(yaml);

  // An earlier picture is replaced.
  const std::string png = (d / "m.png").string();
  for (int i = 0; i < 2; ++i) {
    const test::Result r = test::run_cli("plot " + good + " model --output " + png);
    INFO(r.output);
    CHECK(r.code == 0);
  }

  struct Bad {
    std::string name, args, needle;
  };
  // The input itself (here by another spelling of its path), another result file and a YAML
  // config were each replaced by the PNG, exit 0.
  const std::string same = (d / "." / "victim.h5").string();
  const std::vector<Bad> bad = {
      {"input", victim + " model --output " + same,
       "cannot write the picture to '" + same + "': it is the result file being drawn"},
      {"other result", good + " model --output " + other,
       "cannot write the picture to '" + other + "': it exists and is not a PNG picture"},
      {"yaml", good + " model --output " + yaml.string(),
       "cannot write the picture to '" + yaml.string() + "': it exists and is not a PNG picture"},
      // NaN was the marker of "not given": drawn through the source, exit 0.
      {"at nan", good + " model --at nan --output " + png,
       "--at nan: the slice's position must be a finite number of metres"},
      // 0 was the marker of "not given", though the message says (0, 100].
      {"clip 0", good + " model --clip 0 --output " + png, "--clip 0: a percentile in (0, 100]"},
      {"clip nan", good + " model --clip nan --output " + png, "--clip nan: a percentile in (0, 100]"},
  };
  for (const auto& b : bad) {
    const auto before = std::distance(fs::directory_iterator(d), fs::directory_iterator());
    const test::Result e = test::run_cli("plot " + b.args);
    INFO(b.name << ": " << e.output);
    CHECK(e.code == 1);
    CHECK(std::count(e.output.begin(), e.output.end(), '\n') == 1);
    CHECK_THAT(e.output, Contains("seisrtm: error: " + b.needle));
    CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == before);
  }
  CHECK(head(good) == hdf5);
  CHECK(head(other) == hdf5);
  CHECK(head(victim) == hdf5);
  CHECK(fs::file_size(yaml) == yaml_size);
}
