// [unit] HDF5 readers and the picture encoder.
#include "tests/catch.hpp"

#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/config.hpp"
#include "io/hdf5_file.hpp"
#include "io/observed_data.hpp"
#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "io/png.hpp"
#include "solver/error.hpp"
#include "solver/problem.hpp"

using namespace seisrtm;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("seisrtm_test_io_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("model from HDF5: right shape loads, wrong shape and bad values are refused", "[unit]") {
  const fs::path d = temp_dir("model");
  const std::string f = (d / "model.h5").string();
  std::vector<float> v(4 * 3 * 5, 1500.0f);
  v[7] = 1700.0f;
  io::write_float_file(f, "vp", {4, 3, 5}, v);
  Config c = parse_config("grid: {shape: [5, 3, 4], spacing: 10}\ntime: {steps: 1}\nsources: {shots: [[0,0,0]]}\n"
                          "model: {vp: {type: file, file: '" + f + "'}}\n");
  Grid g;
  g.n = {5, 3, 4};
  g.h = {10, 10, 10};
  const auto vp = build_velocity(c, g);
  CHECK(vp[7] == 1700.0f);
  g.n = {3, 5, 4};
  CHECK_THROWS_WITH(build_velocity(c, g), Contains("shape [4, 3, 5]") && Contains("[4, 5, 3]"));
  g.n = {5, 3, 4};
  for (float bad : {0.0f, -10.0f, NAN}) {
    v[11] = bad;
    io::write_float_file(f, "vp", {4, 3, 5}, v);
    CHECK_THROWS_WITH(build_velocity(c, g), Contains("[z, y, x] = [0, 2, 1]") && Contains("> 0"));
  }
  c.model.dataset = "velocity";
  CHECK_THROWS_WITH(build_velocity(c, g), Contains("no dataset 'velocity'"));
  c.model.file = (d / "absent.h5").string();
  CHECK_THROWS_WITH(build_velocity(c, g), Contains("absent.h5") && Contains("does not exist"));
}

TEST_CASE("a partial file disappears unless committed", "[unit]") {
  const fs::path d = temp_dir("partial");
  {
    io::PartialFile pf((d / "a.txt").string());
    std::ofstream(pf.temp_path()) << "x";
  }
  CHECK(fs::is_empty(d));
  {
    io::PartialFile pf((d / "b.txt").string());
    std::ofstream(pf.temp_path()) << "x";
    pf.commit();
  }
  CHECK(fs::exists(d / "b.txt"));
  CHECK(!fs::exists(d / "b.txt.partial"));
}

TEST_CASE("PNG: signature, size fields and a stored-deflate body of the right length", "[unit]") {
  const fs::path d = temp_dir("png");
  const std::string f = (d / "x.png").string();
  std::vector<float> v = {-1, 0, 1, 0.5f, -0.5f, 0};
  io::write_png(f, v, 2, 3, io::Colormap::seismic, 1.0f, 2);
  std::ifstream in(f, std::ios::binary);
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(b.size() > 33);
  CHECK(b[1] == 'P');
  CHECK(b[2] == 'N');
  CHECK(b[3] == 'G');
  const auto be32 = [&](size_t o) { return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]; };
  CHECK(be32(16) == 6);  // width: 3 columns x scale 2
  CHECK(be32(20) == 4);  // height
  // IDAT holds zlib header (2) + one stored block header (5) + 4 rows of (1 + 6 * 3) + adler (4).
  CHECK(be32(33) == 2 + 5 + 4 * 19 + 4);
  CHECK(std::string(b.begin() + 37, b.begin() + 41) == "IDAT");
  // First pixel: -1 at full clip is pure blue.
  CHECK(b[41 + 7 + 1] == 0);
  CHECK(b[41 + 7 + 3] == 255);
}

TEST_CASE("line plot: a PNG of the panel size with the series' colour drawn", "[unit]") {
  const fs::path d = temp_dir("plot");
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
  CHECK(!fs::exists(f + ".partial"));
  std::ifstream in(f, std::ios::binary);
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(b.size() > 41);
  const auto be32 = [&](size_t o) { return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]; };
  const int w = be32(16), h = be32(20);
  CHECK(w == 1200);
  CHECK(h == 2 * 560);
  // Stored deflate blocks keep the pixels readable: count pixels of the series' colour.
  long long red = 0;
  for (size_t i = 41; i + 2 < b.size(); ++i)
    if (b[i] == 214 && b[i + 1] == 39 && b[i + 2] == 40) ++red;
  CHECK(red > 500);  // a line segment, three markers and a legend swatch per panel
  CHECK_THROWS(io::write_line_plots((d / "none.png").string(), {}));
}

TEST_CASE("wavelet from HDF5 is resampled from its dt attribute", "[unit]") {
  const fs::path d = temp_dir("wavelet");
  const std::string f = (d / "w.h5").string();
  // A ramp sampled every 2 ms: at the run's 1 ms, odd samples fall half-way between.
  std::vector<float> w = {0, 1, 2, 3, 4};
  io::write_float_file(f, "wavelet", {5}, w, 0.002);
  const Config c = parse_config(
      "grid: {shape: [11, 11, 11], spacing: 10}\ntime: {steps: 12, dt: 0.001}\nboundary: {damping_width: 2}\n"
      "sources: {wavelet: {type: file, file: '" + f + "'}, shots: [[50, 50, 50]]}\n");
  const Problem p = build_problem(c);
  REQUIRE(p.wavelet.size() == 12);
  CHECK(p.wavelet[0] == 0.0f);
  CHECK(p.wavelet[1] == Approx(0.5));
  CHECK(p.wavelet[8] == Approx(4.0));
  CHECK(p.wavelet[11] == 0.0f);  // past the end of the file: zero
}

namespace {
// A file of a few KiB whose float dataset `name` declares `dims`: chunked and never written, so
// the extent costs no disk and reading it would produce fill values (zeros) for all of it.
void write_declared(const std::string& file, const std::string& name, const std::vector<hsize_t>& dims) {
  const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t s = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  const std::vector<hsize_t> chunk(dims.size(), 1);
  H5Pset_chunk(p, static_cast<int>(dims.size()), chunk.data());
  const std::string parent = name.find('/') == std::string::npos ? "" : name.substr(0, name.find('/'));
  if (!parent.empty() && H5Lexists(f, parent.c_str(), H5P_DEFAULT) <= 0)
    H5Gclose(H5Gcreate2(f, parent.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  const hid_t d = H5Dcreate2(f, name.c_str(), H5T_IEEE_F32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
  REQUIRE(d >= 0);
  H5Dclose(d);
  H5Pclose(p);
  H5Sclose(s);
  H5Fclose(f);
  REQUIRE(fs::file_size(file) < 64 * 1024);
}
}  // namespace

TEST_CASE("files that declare huge datasets are refused from their metadata, before any value is read", "[unit]") {
  // Before: the model was read in full (10^12 values: std::bad_alloc) before its shape was
  // compared; a 5e7-sample wavelet was read and went through a DFT of 512 x 5e7 terms (minutes).
  const fs::path d = temp_dir("declared");
  const std::string model = (d / "model.h5").string(), wavelet = (d / "wavelet.h5").string();
  write_declared(model, "vp", {10000, 10000, 10000});
  write_declared(wavelet, "wavelet", {50000000});
  const std::string base = "grid: {shape: [5, 3, 4], spacing: 10}\ntime: {steps: 20}\nboundary: {damping_width: 0}\n"
                           "physics: {space_order: 2}\n";
  Config c = parse_config(base + "sources: {shots: [[20, 10, 10]]}\nmodel: {vp: {type: file, file: '" + model + "'}}\n");
  Grid g;
  g.n = {5, 3, 4};
  g.h = {10, 10, 10};
  CHECK_THROWS_WITH(build_velocity(c, g), Contains("model file '" + model + "'") &&
                                              Contains("declares shape [10000, 10000, 10000]") &&
                                              Contains("needs [nz, ny, nx] = [4, 3, 5]"));
  c = parse_config(base + "sources: {wavelet: {type: file, file: '" + wavelet + "'}, shots: [[20, 10, 10]]}\n");
  CHECK_THROWS_WITH(build_problem(c), Contains("wavelet file '" + wavelet + "'") && Contains("declares shape [50000000]") &&
                                          Contains("the run uses [21] samples") && Contains("at most [1048576]"));
  // Observed data: /traces declares 10^11 shots of one sample, and the positions agree with it.
  const std::string data = (d / "data.h5").string();
  write_declared(data, "traces", {100000000000ULL, 1, 1});
  {
    const hid_t f = H5Fopen(data.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    io::write_attribute(f, "dt", std::vector<double>{0.001});
    H5Fclose(f);
  }
  // (write_declared opens its own file; add the other datasets to the same one by hand.)
  {
    const hid_t f = H5Fopen(data.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    for (const char* grp : {"sources", "receivers"}) H5Gclose(H5Gcreate2(f, grp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    const hsize_t big[2] = {100000000000ULL, 3}, one[2] = {1, 3}, chunk[2] = {1, 3}, wn = 10;
    const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 2, chunk);
    const hid_t sb = H5Screate_simple(2, big, nullptr);
    H5Dclose(H5Dcreate2(f, "sources/positions", H5T_IEEE_F64LE, sb, H5P_DEFAULT, p, H5P_DEFAULT));
    H5Sclose(sb);
    H5Pclose(p);
    const std::vector<double> r{10, 10, 10};
    io::write_dataset(f, "receivers/positions", {one[0], one[1]}, r.data());
    const std::vector<float> w(wn, 1.0f);
    io::write_dataset(f, "sources/wavelet", {wn}, w.data());
    H5Fclose(f);
  }
  CHECK_THROWS_WITH(io::read_observed(data, false, 1e9),
                    Contains("data file '" + data + "'") && Contains("/traces declares shape [100000000000, 1, 1]") &&
                        Contains("of host memory but at most 0.931 GiB may be used"));
}
