#include "io/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <pugixml.hpp>
#include <random>
#include <set>
#include <system_error>

#include "base/error.hpp"
#include "io/config.hpp"
#include "io/interrupt.hpp"
#include "io/segy.hpp"
#include "io/survey_file.hpp"

namespace seisrtm::io {

namespace fs = std::filesystem;

namespace {

// `.<pid>.<32 random bits>.partial`: unique to this process (the pid) and to this file among
// files of the same name on other hosts sharing the directory (the random part).
std::string temp_suffix() {
  static std::mt19937 bits{std::random_device{}()};
  char b[48];
  std::snprintf(b, sizeof b, ".%ld.%08x.partial", static_cast<long>(::getpid()), static_cast<unsigned>(bits()));
  return b;
}

std::string reason() {
  return write_failure_reason();
}

}  // namespace

std::string write_failure_reason() {
  const int e = errno;
  return e == EFBIG || e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == EACCES
             ? std::string(": ") + std::strerror(e)
             : std::string();
}

std::string shown_name(const std::string& path) {
  // <final>.<pid>.<hex>.partial -> <final>
  const std::string ext = ".partial";
  if (path.size() <= ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0) return path;
  std::string p = path.substr(0, path.size() - ext.size());
  for (int i = 0; i < 2; ++i) {
    const auto dot = p.rfind('.');
    if (dot == std::string::npos) return path;
    p.resize(dot);
  }
  return p;
}

PartialFile::PartialFile(std::string final_path, bool removed_on_signal)
    : final_(std::move(final_path)), temp_(final_ + temp_suffix()) {
  if (removed_on_signal) register_temporary(temp_);  // removed by a signal's handler at once (io/interrupt.hpp)
}

PartialFile::~PartialFile() {
  if (!committed_) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void PartialFile::check_replaceable() const {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(final_, ec)))
    throw Error("cannot replace '" + final_ + "': it is a directory (remove it or set output.name)");
}

void PartialFile::commit() {
  std::error_code ec;
  fs::rename(temp_, final_, ec);
  if (ec) throw Error("cannot rename '" + temp_ + "' to '" + final_ + "': " + ec.message());
  committed_ = true;
}

// No process of this id on this host, or one that has ended and was not waited for (a zombie,
// whose parent was killed too: `timeout -s KILL` leaves one where nothing reaps orphans).
bool process_gone(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) return false;
  return line.compare(line.rfind(')'), 3, ") Z") == 0;
}

int remove_dead_temporaries(const std::string& directory, const std::string& prefix, long only_pid) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory.empty() ? "." : directory, ec)) {
    const std::string n = e.path().filename().string();
    const std::string ext = ".partial";
    if (n.rfind(prefix, 0) != 0 || n.size() <= ext.size() || n.compare(n.size() - ext.size(), ext.size(), ext) != 0)
      continue;
    // <final>.<pid>.<random>.partial
    const std::string stem = n.substr(0, n.size() - ext.size());
    const auto random_dot = stem.rfind('.');
    const auto pid_dot = random_dot == std::string::npos ? std::string::npos : stem.rfind('.', random_dot - 1);
    if (pid_dot == std::string::npos) continue;
    long pid = 0;
    const char* first = stem.data() + pid_dot + 1;
    const auto [end, err] = std::from_chars(first, stem.data() + random_dot, pid);
    if (err != std::errc() || end != stem.data() + random_dot || pid <= 0) continue;
    if ((only_pid <= 0 || pid == only_pid) && process_gone(pid) && fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
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
  file_ = H5Handle(H5Fcreate(partial_.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file_.valid())
    throw Error("cannot create '" + path() + "' in output directory '" + directory +
                "' (is it writable? set output.directory or --output)");
}

std::string OutputFile::file_name() const {
  return fs::path(path()).filename().string();
}

void OutputFile::create_group(const std::string& name) {
  H5Handle g(H5Gcreate2(file_.get(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) throw Error("cannot create HDF5 group '" + name + "' in '" + path() + "'");
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
  H5Handle d(H5Dcreate2(file_.get(), name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
             H5Dclose);
  if (!d.valid()) throw Error("cannot create HDF5 dataset '" + name + "' in '" + path() + "'" + reason());
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
    throw Error("writing slab " + std::to_string(index) + " of '" + name + "' to '" + path() + "' failed" + reason());
}

void OutputFile::close() {
  if (!file_.valid()) return;
  H5QuietErrors quiet;
  const bool flushed = H5Fflush(file_.get(), H5F_SCOPE_LOCAL) >= 0;
  const std::string why = reason();
  const bool closed = H5Fclose(file_.release()) >= 0;
  if (!flushed || !closed) throw Error("writing '" + path() + "' failed" + (why.empty() ? reason() : why));
}

void OutputFile::commit() {
  close();
  partial_.commit();
}

bool in_output_set(const std::string& name, const std::string& f) {
  if (f == name + ".h5" || f == name + ".xmf" || f == name + "_image.sgy") return true;
  // The image gathers' SEG-Y files (migration.gathers with output.segy).
  if (f == name + "_gathers_offset.sgy" || f == name + "_gathers_angle.sgy") return true;
  // SEG-Y shot gathers (output.segy): <name>_shot_NNNN.sgy.
  const std::string sgy = name + "_shot_";
  if (f.size() > sgy.size() + 4 && f.compare(0, sgy.size(), sgy) == 0 && f.compare(f.size() - 4, 4, ".sgy") == 0 &&
      f.find_first_not_of("0123456789", sgy.size()) == f.size() - 4)
    return true;
  const std::string pre = name + "_", ext = ".png";
  if (f.size() <= pre.size() + ext.size() || f.compare(0, pre.size(), pre) != 0 ||
      f.compare(f.size() - ext.size(), ext.size(), ext) != 0)
    return false;
  const std::string kind = f.substr(pre.size(), f.size() - pre.size() - ext.size());
  for (const char* k :
       {"model_vp", "image_xz", "image_normalized_xz", "image_depth", "gathers_offset", "gathers_angle"})
    if (kind == k) return true;
  for (const std::string k : {"gather_shot_", "wavefield_shot_"})
    if (kind.size() > k.size() && kind.compare(0, k.size(), k) == 0 &&
        kind.find_first_not_of("0123456789", k.size()) == std::string::npos)
      return true;
  return false;
}

std::vector<InputFile> input_files(const Config& c) {
  std::vector<InputFile> v;
  auto add = [&](const std::string& path, const std::string& key) {
    std::error_code ec;
    if (!path.empty() && fs::exists(path, ec)) v.push_back({path, key});
  };
  add(c.source_file, "config file");
  const std::pair<const char*, const VolumeConfig*> volumes[] = {{"vp", &c.model.vp},
                                                                 {"epsilon", &c.model.epsilon},
                                                                 {"delta", &c.model.delta},
                                                                 {"theta", &c.model.theta},
                                                                 {"phi", &c.model.phi}};
  for (const auto& [name, vol] : volumes)
    if (vol->type == VolumeType::file) add(vol->file, std::string("model.") + name + ".file");
  if (c.sources.wavelet.type == WaveletType::file) add(c.sources.wavelet.file, "sources.wavelet.file");
  if (!c.migration) return v;
  const MigrationConfig& mc = *c.migration;
  if (!is_segy_path(mc.data)) {
    add(mc.data, "migration.data");
  } else {
    // A glob that matches nothing, or a missing file, is the reader's to report (segy_files
    // names it), after this check.
    std::vector<std::string> files;
    try {
      files = segy_files(mc.data);
    } catch (const Error&) {
    }
    for (const auto& f : files) add(f, "migration.data");
  }
  if (mc.wavelet && mc.wavelet->type == WaveletType::file) add(mc.wavelet->file, "migration.wavelet.file");
  return v;
}

void check_output_set(const std::string& directory, const std::string& name, const std::vector<InputFile>& inputs) {
  std::error_code ec;
  // No directory yet: no member to replace (ensure_directory reports a file in its place).
  if (!fs::is_directory(directory, ec)) return;
  const std::string fix = "set output.name or --output to another name or directory";
  for (const auto& e : fs::directory_iterator(directory, ec)) {
    const std::string f = e.path().filename().string();
    if (!in_output_set(name, f)) continue;
    // Which members a run writes depends on its shots and flags: a directory under any member's
    // name is refused now, not when the commit cannot rename over it after the whole run.
    if (fs::is_directory(fs::symlink_status(e.path(), ec)))
      throw Error("output file '" + e.path().string() + "' of the result set '" + name +
                  "' (output.name) is an existing directory, which the results cannot replace; remove it, or " + fix);
    for (const auto& in : inputs)
      if (fs::equivalent(e.path(), in.path, ec))
        throw Error(in.named_by + " '" + in.path + "' is '" + e.path().string() + "', a file of the result set '" +
                    name + "' (output.name) in '" + directory +
                    "' that this command replaces or removes when it writes its results: refused before any work; " +
                    fix);
  }
}

OutputSet::OutputSet(const std::string& directory, const std::string& name)
    : directory_(directory), name_(name), h5_(directory, name) {}

const std::string& OutputSet::add(const std::string& suffix) {
  others_.push_back(std::make_unique<PartialFile>((fs::path(directory_) / (name_ + suffix)).string()));
  return others_.back()->temp_path();
}

std::vector<std::string> OutputSet::others() const {
  std::vector<std::string> v;
  for (const auto& m : others_) v.push_back(m->final_path());
  return v;
}

void OutputSet::commit() {
  // From here on a signal leaves the temporaries to this commit; one that came before removed
  // them already, and the run stops here as at any check.
  committing = 1;
  check_interrupt("the commit of the output set", directory_);
  // Everything that can fail before a file of the previous set is touched.
  h5_.close();
  h5_.partial().check_replaceable();
  for (const auto& m : others_) m->check_replaceable();
  // Runs committing sets into one directory take turns (where the file system has flock;
  // elsewhere they still never mix bytes: each file is renamed whole).
  const int dir_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) ::flock(dir_fd, LOCK_EX);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);  // releases the lock
    }
  } unlock{dir_fd};
  std::set<std::string> mine{fs::path(h5_.path()).filename().string()};
  for (const auto& m : others_) mine.insert(fs::path(m->final_path()).filename().string());
  std::vector<fs::path> stale;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory_, ec)) {
    const std::string f = e.path().filename().string();
    if (in_output_set(name_, f) && !mine.count(f) && !e.is_directory(ec)) stale.push_back(e.path());
  }
  // The renames and removals: the HDF5 file last, so a new HDF5 file means a complete set.
  for (auto& m : others_) m->commit();
  for (const auto& p : stale)
    if (!fs::remove(p, ec) && ec)
      throw Error("cannot remove '" + p.string() + "' of the previous result set: " + ec.message());
  h5_.partial().commit();
  committing = 0;  // (its temporaries are gone: renamed)
}

namespace {

// The shortest text that reads back as the same double (12.5, 0.001, 10): spacings and times
// keep every digit, where "%f" turned 1e-7 into 0.000000.
std::string number_text(double v) {
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

// <DataItem Dimensions=.. Format="XML">text</DataItem> under `parent`.
void xml_item(pugi::xml_node parent, const std::string& dims, const std::string& text) {
  pugi::xml_node d = parent.append_child("DataItem");
  d.append_attribute("Dimensions") = dims.c_str();
  d.append_attribute("Format") = "XML";
  d.text() = text.c_str();
}

// <DataItem> reading float32 values of shape `dims` from `<h5>:<dataset>`.
void hdf_item(pugi::xml_node parent, const std::string& dims, const std::string& h5, const std::string& dataset) {
  pugi::xml_node d = parent.append_child("DataItem");
  d.append_attribute("Dimensions") = dims.c_str();
  d.append_attribute("NumberType") = "Float";
  d.append_attribute("Precision") = "4";
  d.append_attribute("Format") = "HDF";
  d.text() = (h5 + ":" + dataset).c_str();
}

}  // namespace

void write_xdmf(const std::string& path, const std::string& h5, const std::array<long long, 3>& n,
                const std::array<double, 3>& h, const std::vector<XdmfVolume>& volumes,
                const std::array<double, 3>& origin) {
  // 3DCoRectMesh lists dimensions and spacing slowest axis first: z y x.
  const std::string dims = std::to_string(n[2]) + " " + std::to_string(n[1]) + " " + std::to_string(n[0]);
  const std::string spacing = number_text(h[2]) + " " + number_text(h[1]) + " " + number_text(h[0]);
  const std::string corner = number_text(origin[2]) + " " + number_text(origin[1]) + " " + number_text(origin[0]);
  // The mesh of every grid: node (ix, iy, iz) at origin + (ix hx, iy hy, iz hz) m.
  auto mesh = [&](pugi::xml_node grid) {
    pugi::xml_node topo = grid.append_child("Topology");
    topo.append_attribute("TopologyType") = "3DCoRectMesh";
    topo.append_attribute("Dimensions") = dims.c_str();
    pugi::xml_node geo = grid.append_child("Geometry");
    geo.append_attribute("GeometryType") = "ORIGIN_DXDYDZ";
    xml_item(geo, "3", corner);
    xml_item(geo, "3", spacing);
  };
  auto attribute = [](pugi::xml_node grid, const std::string& name) {
    pugi::xml_node a = grid.append_child("Attribute");
    a.append_attribute("Name") = name.c_str();
    a.append_attribute("AttributeType") = "Scalar";
    a.append_attribute("Center") = "Node";
    return a;
  };
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  pugi::xml_node xdmf = doc.append_child("Xdmf");
  xdmf.append_attribute("Version") = "3.0";
  pugi::xml_node domain = xdmf.append_child("Domain");
  for (const auto& v : volumes) {
    pugi::xml_node grid = domain.append_child("Grid");
    grid.append_attribute("Name") = v.name.c_str();
    if (v.time_steps == 0) {
      grid.append_attribute("GridType") = "Uniform";
      mesh(grid);
      hdf_item(attribute(grid, v.name), dims, h5, v.dataset);
      continue;
    }
    // A temporal collection: step t is dataset <group>/KKKK [z, y, x] (survey_file.hpp). Not a
    // HyperSlab of one [time, z, y, x] dataset: ParaView's Xdmf3 readers load no array from that.
    grid.append_attribute("GridType") = "Collection";
    grid.append_attribute("CollectionType") = "Temporal";
    for (long long t = 0; t < v.time_steps; ++t) {
      pugi::xml_node step = grid.append_child("Grid");
      step.append_attribute("Name") = (v.name + "_" + std::to_string(t)).c_str();
      step.append_attribute("GridType") = "Uniform";
      step.append_child("Time").append_attribute("Value") = number_text(v.times[t]).c_str();
      mesh(step);
      hdf_item(attribute(step, "p"), dims, h5, v.dataset + "/" + snapshot_step_name(t));
    }
  }
  std::ofstream x(path);
  if (!x) throw Error("cannot write '" + shown_name(path) + "'" + reason());
  doc.save(x, "  ", pugi::format_default, pugi::encoding_utf8);
  x.close();  // flushes: a full disk shows here
  if (!x) throw Error("writing '" + shown_name(path) + "' failed" + reason());
}

}  // namespace seisrtm::io
