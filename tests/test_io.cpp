// [unit] HDF5 readers and the XDMF sidecar (the pictures: test_plot.cpp).
#include <hdf5.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <pugixml.hpp>
#include <sstream>

#include "base/error.hpp"
#include "io/config.hpp"
#include "io/hdf5_file.hpp"
#include "io/observed_data.hpp"
#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "solver/problem.hpp"
#include "tests/catch.hpp"

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
  Config c = parse_config(
      "grid: {shape: [5, 3, 4], spacing: 10}\ntime: {steps: 1}\nsources: {shots: [[0,0,0]]}\n"
      "model: {vp: {type: file, file: '" +
      f + "'}}\n");
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
  c.model.vp.dataset = "velocity";
  CHECK_THROWS_WITH(build_velocity(c, g), Contains("no dataset 'velocity'"));
  c.model.vp.file = (d / "absent.h5").string();
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

TEST_CASE("wavelet from HDF5 is resampled from its dt attribute", "[unit]") {
  const fs::path d = temp_dir("wavelet");
  const std::string f = (d / "w.h5").string();
  // A ramp sampled every 2 ms: at the run's 1 ms, odd samples fall half-way between.
  std::vector<float> w = {0, 1, 2, 3, 4};
  io::write_float_file(f, "wavelet", {5}, w, 0.002);
  const Config c = parse_config(
      "grid: {shape: [11, 11, 11], spacing: 10}\ntime: {steps: 12, dt: 0.001}\nboundary: {damping_width: 2}\n"
      // The 5-sample ramp reaches 250 Hz, beyond what the grid holds: resampling is tested, not physics.
      "checks: {physical_ranges: false}\n"
      "sources: {wavelet: {type: file, file: '" +
      f + "'}, shots: [[50, 50, 50]]}\n");
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
  const std::string base =
      "grid: {shape: [5, 3, 4], spacing: 10}\ntime: {steps: 20}\nboundary: {damping_width: 0}\n"
      "physics: {space_order: 2}\n";
  Config c =
      parse_config(base + "sources: {shots: [[20, 10, 10]]}\nmodel: {vp: {type: file, file: '" + model + "'}}\n");
  Grid g;
  g.n = {5, 3, 4};
  g.h = {10, 10, 10};
  CHECK_THROWS_WITH(build_velocity(c, g), Contains("model file '" + model + "'") &&
                                              Contains("declares shape [10000, 10000, 10000]") &&
                                              Contains("needs [nz, ny, nx] = [4, 3, 5]"));
  c = parse_config(base + "sources: {wavelet: {type: file, file: '" + wavelet + "'}, shots: [[20, 10, 10]]}\n");
  CHECK_THROWS_WITH(build_problem(c), Contains("wavelet file '" + wavelet + "'") &&
                                          Contains("declares shape [50000000]") &&
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
    for (const char* grp : {"sources", "receivers"})
      H5Gclose(H5Gcreate2(f, grp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
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

namespace {
// The dimensions of an HDF5 dataset as XDMF writes them ("2 4 3 5"); "" when it is not there.
std::string h5_dims(const std::string& file, const std::string& dataset) {
  io::H5QuietErrors quiet;
  io::H5Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) return "";
  io::H5Handle d(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) return "";
  io::H5Handle s(H5Dget_space(d.get()), H5Sclose);
  std::vector<hsize_t> dims(H5Sget_simple_extent_ndims(s.get()));
  H5Sget_simple_extent_dims(s.get(), dims.data(), nullptr);
  std::string text;
  for (hsize_t v : dims) {  // appended piecewise: "x" + a temporary makes GCC 12 warn (-Wrestrict) falsely
    if (!text.empty()) text += ' ';
    text += std::to_string(v);
  }
  return text;
}

std::vector<double> numbers(const char* text) {
  std::istringstream in(text);
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}
}  // namespace

TEST_CASE("XDMF: pugixml reads back the mesh, times and HDF5 paths; names with & < \" are escaped", "[unit]") {
  // Before (string concatenation): these names made the file malformed, pugixml refused it
  // ("Error parsing attribute value" at the '<').
  const fs::path d = temp_dir("xdmf");
  const std::string name = "run&<\"1", vp_name = "v&p<\"", snap = "/snapshot_steps&<0";
  const std::array<long long, 3> n{5, 3, 4};  // x y z
  const std::array<double, 3> h{10, 12.5, 0.1};
  const std::vector<double> times{0.0015, 0.003};
  {
    io::OutputSet set(d.string(), name);
    const hid_t root = set.h5().root();
    set.h5().create_group("/model");
    io::write_dataset(root, "/model/vp", {4, 3, 5}, std::vector<float>(60, 1500.0f).data());
    set.h5().create_group(snap);  // a time series: one dataset a step, KKKK (survey_file.hpp)
    for (const char* step : {"/0000", "/0001"})
      io::write_dataset(root, snap + step, {4, 3, 5}, std::vector<float>(60, 0.0f).data());
    io::write_xdmf(set.add(".xmf"), set.h5().file_name(), n, h,
                   {{"/model/vp", vp_name, 0, {}}, {snap, "p&<", 2, times}});
    set.commit();
  }
  const std::string xmf = (d / (name + ".xmf")).string(), h5 = (d / (name + ".h5")).string();
  std::ifstream raw(xmf);
  const std::string text((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Contains(">run&amp;&lt;\"1.h5:/model/vp<") && Contains("Name=\"v&amp;p&lt;&quot;\""));

  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_file(xmf.c_str());
  INFO(parsed.description() << " at offset " << parsed.offset << " of " << text);
  REQUIRE(parsed);
  const pugi::xml_node domain = doc.child("Xdmf").child("Domain");
  CHECK(std::string(doc.child("Xdmf").attribute("Version").value()) == "3.0");
  // Every grid's mesh: z y x dimensions and spacing, origin 0.
  auto check_mesh = [&](pugi::xml_node grid) {
    const pugi::xml_node topo = grid.child("Topology");
    CHECK(std::string(topo.attribute("TopologyType").value()) == "3DCoRectMesh");
    CHECK(std::string(topo.attribute("Dimensions").value()) == "4 3 5");
    const pugi::xml_node geo = grid.child("Geometry");
    CHECK(std::string(geo.attribute("GeometryType").value()) == "ORIGIN_DXDYDZ");
    const pugi::xml_node origin = geo.child("DataItem"), spacing = origin.next_sibling("DataItem");
    CHECK(numbers(origin.child_value()) == std::vector<double>{0, 0, 0});
    CHECK(numbers(spacing.child_value()) == std::vector<double>{0.1, 12.5, 10});  // exact: round-trip text
  };
  // An HDF DataItem: its file (beside the .xmf) holds the dataset with the stated dimensions.
  auto check_hdf = [&](pugi::xml_node item, const std::string& dataset, const std::string& dims) {
    CHECK(std::string(item.attribute("Format").value()) == "HDF");
    CHECK(std::string(item.attribute("NumberType").value()) == "Float");
    CHECK(std::string(item.attribute("Dimensions").value()) == dims);
    const std::string ref = item.child_value();
    const auto colon = ref.rfind(':');
    REQUIRE(colon != std::string::npos);
    CHECK(ref.substr(0, colon) == name + ".h5");
    CHECK(ref.substr(colon + 1) == dataset);
    CHECK(h5_dims((d / ref.substr(0, colon)).string(), ref.substr(colon + 1)) == dims);
  };

  const pugi::xml_node model = domain.child("Grid");
  CHECK(std::string(model.attribute("Name").value()) == vp_name);
  CHECK(std::string(model.attribute("GridType").value()) == "Uniform");
  check_mesh(model);
  CHECK(std::string(model.child("Attribute").attribute("Name").value()) == vp_name);
  CHECK(std::string(model.child("Attribute").attribute("Center").value()) == "Node");
  check_hdf(model.child("Attribute").child("DataItem"), "/model/vp", "4 3 5");

  const pugi::xml_node series = model.next_sibling("Grid");
  CHECK(std::string(series.attribute("Name").value()) == "p&<");
  CHECK(std::string(series.attribute("GridType").value()) == "Collection");
  CHECK(std::string(series.attribute("CollectionType").value()) == "Temporal");
  int t = 0;
  for (pugi::xml_node step : series.children("Grid")) {
    INFO("time step " << t);
    REQUIRE(t < 2);
    CHECK(std::string(step.attribute("Name").value()) == "p&<_" + std::to_string(t));
    CHECK(step.child("Time").attribute("Value").as_double() == times[t]);
    check_mesh(step);
    // A plain HDF item a step (ParaView's Xdmf3 readers load no HyperSlab item).
    const pugi::xml_node item = step.child("Attribute").child("DataItem");
    CHECK(!item.attribute("ItemType"));
    check_hdf(item, snap + "/000" + std::to_string(t), "4 3 5");
    ++t;
  }
  CHECK(t == 2);
  CHECK(!series.next_sibling("Grid"));
}

TEST_CASE("a wavelet file's dt attribute that is not one number is refused naming file and attribute", "[unit]") {
  const fs::path d = temp_dir("wavelet_dt_form");
  const std::vector<float> w = {0, 1, 2, 3, 4};
  // A string dt was ignored (the samples taken at the run's dt); two values were read into one
  // double past its end.
  for (const std::string form : {"string", "two values"}) {
    INFO(form);
    const std::string f = (d / (form == "string" ? "s.h5" : "two.h5")).string();
    io::write_float_file(f, "wavelet", {5}, w);
    {
      io::H5Handle file(H5Fopen(f.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
      io::H5Handle ds(H5Dopen2(file.get(), "wavelet", H5P_DEFAULT), H5Dclose);
      REQUIRE(ds.valid());
      if (form == "string")
        io::write_attribute(ds.get(), "dt", std::string("x"));
      else
        io::write_attribute(ds.get(), "dt", std::vector<double>{0.001, 0.002});
    }
    const Config c = parse_config(
        "grid: {shape: [11, 11, 11], spacing: 10}\ntime: {steps: 12, dt: 0.001}\nboundary: {damping_width: 2}\n"
        "checks: {physical_ranges: false}\n"
        "sources: {wavelet: {type: file, file: '" +
        f + "'}, shots: [[50, 50, 50]]}\n");
    CHECK_THROWS_WITH(build_problem(c), Contains("HDF5 file '" + f + "': the attribute 'dt' of dataset 'wavelet' " +
                                                 (form == "string" ? "holds a string" : "holds 2 values")) &&
                                            Contains("it must be one number, the sample interval in s"));
  }
}
