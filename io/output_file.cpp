#include "io/output_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "solver/error.hpp"

namespace seisrtm::io {

namespace fs = std::filesystem;

PartialFile::PartialFile(std::string final_path)
    : final_(std::move(final_path)), temp_(final_ + ".partial") {}

PartialFile::~PartialFile() {
  if (!committed_) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void PartialFile::commit() {
  std::error_code ec;
  fs::rename(temp_, final_, ec);
  if (ec) throw Error("cannot rename '" + temp_ + "' to '" + final_ + "': " + ec.message());
  committed_ = true;
}

void ensure_directory(const std::string& directory) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory))
    throw Error("output directory '" + directory + "' cannot be created or is not a directory" +
                (ec ? ": " + ec.message() : std::string()) +
                " (set output.directory or --output to a writable directory)");
}

OutputFile::OutputFile(const std::string& directory, const std::string& name)
    : partial_((fs::path(directory) / (name + ".h5")).string()) {
  ensure_directory(directory);
  H5QuietErrors quiet;
  file_ = H5Handle(H5Fcreate(partial_.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   H5Fclose);
  if (!file_.valid())
    throw Error("cannot create '" + partial_.temp_path() + "' in output directory '" + directory +
                "' (is it writable? set output.directory or --output)");
}

std::string OutputFile::file_name() const { return fs::path(path()).filename().string(); }

void OutputFile::create_group(const std::string& name) {
  H5Handle g(H5Gcreate2(file_.get(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) throw Error("cannot create HDF5 group '" + name + "' in '" + partial_.temp_path() + "'");
}

void OutputFile::create_chunked(const std::string& name, const std::vector<hsize_t>& dims) {
  H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  H5Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  // One chunk per slab along the first axis (capped at ~4 MiB by splitting the second axis).
  std::vector<hsize_t> chunk(dims);
  chunk[0] = 1;
  hsize_t bytes = 4;
  for (size_t i = 1; i < dims.size(); ++i) bytes *= dims[i];
  while (bytes > (4u << 20) && chunk.size() > 1 && chunk[1] > 1) {
    chunk[1] = (chunk[1] + 1) / 2;
    bytes /= 2;
  }
  H5Pset_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data());
  H5Handle d(H5Dcreate2(file_.get(), name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                        plist.get(), H5P_DEFAULT),
             H5Dclose);
  if (!d.valid()) throw Error("cannot create HDF5 dataset '" + name + "'");
}

void OutputFile::write_slab(const std::string& name, hsize_t index, const float* data) {
  H5Handle d(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  H5Handle fspace(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(fspace.get());
  std::vector<hsize_t> dims(rank), start(rank, 0), count;
  H5Sget_simple_extent_dims(fspace.get(), dims.data(), nullptr);
  start[0] = index;
  count = dims;
  count[0] = 1;
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  H5Handle mspace(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
  if (H5Dwrite(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), H5P_DEFAULT, data) < 0)
    throw Error("writing slab " + std::to_string(index) + " of '" + name + "' failed (disk full?)");
}

void OutputFile::commit() {
  file_ = H5Handle();  // close before the rename
  partial_.commit();
}

void write_xdmf(const std::string& path, const std::string& h5, const std::array<long long, 3>& n,
                const std::array<double, 3>& h, const std::vector<XdmfVolume>& volumes) {
  PartialFile pf(path);
  {
    std::ofstream x(pf.temp_path());
    if (!x) throw Error("cannot write '" + pf.temp_path() + "'");
    // 3DCoRectMesh lists dimensions and spacing slowest axis first: z y x.
    const std::string dims = std::to_string(n[2]) + " " + std::to_string(n[1]) + " " + std::to_string(n[0]);
    auto topo = [&] {
      return "<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" + dims + "\"/>\n"
             "<Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
             "<DataItem Dimensions=\"3\" Format=\"XML\">0 0 0</DataItem>\n"
             "<DataItem Dimensions=\"3\" Format=\"XML\">" + std::to_string(h[2]) + " " +
             std::to_string(h[1]) + " " + std::to_string(h[0]) + "</DataItem>\n</Geometry>\n";
    };
    x << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n<Domain>\n";
    for (const auto& v : volumes) {
      if (v.time_steps == 0) {
        x << "<Grid Name=\"" << v.name << "\" GridType=\"Uniform\">\n" << topo()
          << "<Attribute Name=\"" << v.name << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
          << "<DataItem Dimensions=\"" << dims << "\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">"
          << h5 << ":" << v.dataset << "</DataItem>\n</Attribute>\n</Grid>\n";
        continue;
      }
      x << "<Grid Name=\"" << v.name << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
      for (long long t = 0; t < v.time_steps; ++t) {
        x << "<Grid Name=\"" << v.name << "_" << t << "\" GridType=\"Uniform\">\n"
          << "<Time Value=\"" << v.times[t] << "\"/>\n" << topo()
          << "<Attribute Name=\"p\" AttributeType=\"Scalar\" Center=\"Node\">\n"
          << "<DataItem ItemType=\"HyperSlab\" Dimensions=\"" << dims << "\" Type=\"HyperSlab\">\n"
          << "<DataItem Dimensions=\"3 4\" Format=\"XML\">" << t << " 0 0 0 1 1 1 1 1 " << dims
          << "</DataItem>\n"
          << "<DataItem Dimensions=\"" << v.time_steps << " " << dims
          << "\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" << h5 << ":" << v.dataset
          << "</DataItem>\n</DataItem>\n</Attribute>\n</Grid>\n";
      }
      x << "</Grid>\n";
    }
    x << "</Domain>\n</Xdmf>\n";
    if (!x) throw Error("writing '" + pf.temp_path() + "' failed");
  }
  pf.commit();
}

}  // namespace seisrtm::io
