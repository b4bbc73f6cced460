// [integration] The XDMF sidecar of a run with snapshots, read as an XDMF reader does (pugixml
// and the HDF5 C API, no code of seisrtm's): every attribute is a plain HDF DataItem (ParaView's
// Xdmf3 readers, the ones its OpenDataFile picks for .xmf, load no array from a HyperSlab item)
// whose reference names a dataset of the mesh's dimensions holding what h5py users read from
// /snapshots/shot_NNNN [snapshot][z][y][x]. Debian's python3-vtk9 has no Xdmf3 reader and
// python3-paraview pulls in some 190 packages, so CI checks the file's structure and references.
#include <hdf5.h>

#include <filesystem>
#include <pugixml.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/catch.hpp"
#include "tests/cli_util.hpp"
#include "tests/fixtures.hpp"

namespace fs = std::filesystem;

namespace {

// Dimensions of dataset `name` of `file`, slowest first, as XDMF writes them ("nz ny nx"); ""
// when there is no such dataset.
std::string dims_of(const std::string& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  std::string text;
  if (H5Lexists(f, name.c_str(), H5P_DEFAULT) > 0) {
    const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    const hid_t s = H5Dget_space(d);
    std::vector<hsize_t> dims(static_cast<size_t>(H5Sget_simple_extent_ndims(s)));
    H5Sget_simple_extent_dims(s, dims.data(), nullptr);
    for (const hsize_t n : dims) {
      if (!text.empty()) text.push_back(' ');
      text.append(std::to_string(n));
    }
    H5Sclose(s);
    H5Dclose(d);
  }
  H5Fclose(f);
  return text;
}

}  // namespace

TEST_CASE("XDMF of a run with snapshots: plain HDF items an Xdmf3 reader loads, the values h5py reads",
          "[integration]") {
  const fs::path d = seisrtm::test::fresh_dir("seisrtm_test_xdmf_", "snapshots");
  const std::string cfg = seisrtm::test::write_text(
      d / "survey.yaml", seisrtm::test::small_survey(
                             {{"time", "{steps: 60}"},
                              {"sources", "{wavelet: {peak_frequency: 15}, shots: [[150, 150, 100], [120, 150, 100]]}"},
                              {"output", "{name: small, snapshot_interval: 20, pictures: false}"},
                              {"solver", "{backend: cpu}"}}));
  const seisrtm::test::Result r = seisrtm::test::run_cli("run " + cfg + " --quiet --output " + (d / "out").string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string h5 = (d / "out" / "small.h5").string();
  pugi::xml_document doc;
  REQUIRE(doc.load_file((d / "out" / "small.xmf").c_str()));
  CHECK(doc.select_nodes("//DataItem[@ItemType]").empty());  // no HyperSlab, no Function
  const std::vector<float> times = seisrtm::test::read_dataset(h5, "snapshots/time");
  REQUIRE(times.size() == 3);  // 60 steps, one every 20
  int series = 0, steps = 0;
  for (const pugi::xml_node grid : doc.child("Xdmf").child("Domain").children("Grid")) {
    const bool temporal = std::string(grid.attribute("GridType").value()) == "Collection";
    std::vector<pugi::xml_node> uniform;
    if (temporal)
      for (const pugi::xml_node g : grid.children("Grid")) uniform.push_back(g);
    else
      uniform.push_back(grid);
    const std::string name = grid.attribute("Name").value();
    for (size_t k = 0; k < uniform.size(); ++k) {
      INFO(name << " step " << k);
      const std::string mesh = uniform[k].child("Topology").attribute("Dimensions").value();
      CHECK(mesh == "28 30 32");  // z y x
      const pugi::xml_node item = uniform[k].child("Attribute").child("DataItem");
      CHECK(std::string(item.attribute("Format").value()) == "HDF");
      CHECK(std::string(item.attribute("Dimensions").value()) == mesh);
      const std::string ref = item.child_value();
      const auto colon = ref.rfind(':');
      REQUIRE(colon != std::string::npos);
      CHECK(ref.substr(0, colon) == "small.h5");  // beside the .xmf
      const std::string dataset = ref.substr(colon + 1);
      CHECK(dims_of(h5, dataset) == mesh);  // a dataset of the mesh's shape, not a 4D one
      if (!temporal) continue;
      // Snapshot k of the shot this series shows: the same values as /snapshots/shot_NNNN[k].
      REQUIRE(name.rfind("p_", 0) == 0);
      const std::string shot = name.substr(2);
      CHECK(dims_of(h5, "snapshots/" + shot) == "3 " + mesh);
      const std::vector<float> all = seisrtm::test::read_dataset(h5, "snapshots/" + shot);
      const std::vector<float> step = seisrtm::test::read_dataset(h5, dataset);
      REQUIRE(step.size() * 3 == all.size());
      CHECK(std::vector<float>(all.begin() + k * step.size(), all.begin() + (k + 1) * step.size()) == step);
      CHECK(uniform[k].child("Time").attribute("Value").as_double() == Approx(times[k]).epsilon(1e-6));
      ++steps;
    }
    series += temporal;
  }
  CHECK(series == 2);
  CHECK(steps == 6);
}
