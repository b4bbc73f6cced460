#include "io/survey_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "base/error.hpp"

namespace seisrtm::io {

std::string shot_name(long long shot) {
  char b[32];
  std::snprintf(b, sizeof b, "shot_%04lld", shot);
  return b;
}

void write_run_attributes(hid_t root, const RunAttributes& a) {
  write_attribute(root, "producer", a.producer);
  write_attribute(root, "backend", a.backend);
  write_attribute(root, "config", a.config);
  write_attribute(root, "spacing", std::vector<double>{a.h[0], a.h[1], a.h[2]});
  write_attribute(root, "origin", std::vector<double>{a.origin[0], a.origin[1], a.origin[2]});
  write_attribute(root, "shape", std::vector<long long>{a.n[0], a.n[1], a.n[2]});  // int64
  write_attribute(root, "dt", a.dt);
  write_attribute(root, "steps", a.steps);
}

std::string snapshot_step_name(long long k) {
  char b[32];
  std::snprintf(b, sizeof b, "%04lld", k);
  return b;
}

namespace {

// What /traces, the snapshots and the wavelet hold: p from the wavelet injected as a unit source.
constexpr const char* kFieldUnits = "same as sources/wavelet (pressure-like, unit source)";
const std::vector<std::string> kVolumeAxes{"z", "y", "x"};

// Units and long name of /model/<name> (vp, and epsilon, delta, theta, phi of vti and tti).
std::pair<std::string, std::string> model_description(const std::string& name) {
  if (name == "vp") return {"m/s", "P-wave velocity"};
  if (name == "theta") return {"degree", "tilt of the symmetry axis from vertical"};
  if (name == "phi") return {"degree", "azimuth of the symmetry axis"};
  return {"1", "Thomsen " + name};
}

// Dataset `view` [z][y][x]: a virtual dataset whose values are snapshot k of `source`
// [snapshot][z][y][x] in the same file ("."). ParaView's Xdmf3 readers load no HyperSlab
// DataItem; each snapshot as a dataset of its own is what every XDMF reader reads, and the
// view keeps one copy of the values, in the layout h5py users read.
void create_snapshot_view(OutputFile& out, const std::string& view, const std::string& source, long long k,
                          long long snapshots, const std::array<long long, 3>& n) {
  const hsize_t vdims[3] = {hsize_t(n[2]), hsize_t(n[1]), hsize_t(n[0])};
  const hsize_t sdims[4] = {hsize_t(snapshots), vdims[0], vdims[1], vdims[2]};
  const hsize_t start[4] = {hsize_t(k), 0, 0, 0}, count[4] = {1, vdims[0], vdims[1], vdims[2]};
  H5Handle vspace(H5Screate_simple(3, vdims, nullptr), H5Sclose);
  H5Handle sspace(H5Screate_simple(4, sdims, nullptr), H5Sclose);
  H5Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  bool ok = vspace.valid() && sspace.valid() && plist.valid() &&
            H5Sselect_hyperslab(sspace.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
            H5Pset_virtual(plist.get(), vspace.get(), ".", source.c_str(), sspace.get()) >= 0;
  if (ok) {
    H5Handle d(
        H5Dcreate2(out.root(), view.c_str(), H5T_IEEE_F32LE, vspace.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
        H5Dclose);
    ok = d.valid();
  }
  if (!ok) throw Error("cannot create HDF5 dataset '" + view + "' in '" + out.path() + "'" + write_failure_reason());
}

}  // namespace

SurveyFile::SurveyFile(OutputFile& out, const SurveyLayout& layout) : out_(out), layout_(layout) {
  const SurveyLayout& l = layout_;
  if (l.shots < 0 || l.receivers < 0 || l.steps < 0 || l.snapshot_interval < 0)
    throw Error("survey layout of '" + out_.path() + "' has a negative size");
  traces_ = l.traces && l.receivers > 0;
  snapshots_ = snapshot_count(l);
  for (long long k = 0; k < snapshots_; ++k) snapshot_times_.push_back((k + 1) * l.snapshot_interval * l.dt);

  const hid_t root = out_.root();
  write_grid_axes(root, l.n, l.h, l.origin);
  if (!l.shot_ids.empty() && static_cast<long long>(l.shot_ids.size()) != l.shots)
    throw Error("survey layout for '" + out_.path() + "': " + std::to_string(l.shot_ids.size()) + " shot indices for " +
                std::to_string(l.shots) + " shots");
  if (l.shot_ids.empty()) {
    write_index_axis(root, "shot", l.shots, "shot index");
  } else {
    write_dataset(root, "shot", {hsize_t(l.shots)}, l.shot_ids.data());
    make_axis(root, "shot", "", "shot index (of the survey: this file holds a part of it)");
  }
  if (l.receivers > 0) write_index_axis(root, "receiver", l.receivers, "receiver index");
  write_component_axis(root);
  // Sample n of a trace is p after step n + 1: t = (n + 1) dt.
  std::vector<double> time(l.steps);
  for (long long n = 0; n < l.steps; ++n) time[n] = (n + 1) * l.dt;
  write_axis(root, "time", time, "s", "time of the trace sample ((n + 1) dt)");

  if (traces_) {
    out_.create_chunked("traces", {hsize_t(l.shots), hsize_t(l.receivers), hsize_t(l.steps)});
    describe_dataset(root, "traces", kFieldUnits, "p at the receivers");
    attach_axes(root, "traces", {"shot", "receiver", "time"});
  }
  if (snapshots_ > 0) {
    out_.create_group("snapshots");
    write_axis(root, "snapshots/time", snapshot_times_, "s", "time of the snapshot");
    // Chunked datasets allocate their chunks when written: creating every shot's now costs
    // nothing until its snapshots arrive.
    out_.create_group("snapshot_steps");
    for (long long row = 0; row < l.shots; ++row) {
      const long long s = shot_id(l, row);
      const std::string source = "snapshots/" + shot_name(s), steps = "snapshot_steps/" + shot_name(s);
      out_.create_chunked(source, {hsize_t(snapshots_), hsize_t(l.n[2]), hsize_t(l.n[1]), hsize_t(l.n[0])});
      describe_dataset(root, source, kFieldUnits, "p of " + shot_name(s));
      attach_axes(root, source, {"snapshots/time", "z", "y", "x"});
      out_.create_group(steps);
      for (long long k = 0; k < snapshots_; ++k) {
        const std::string view = steps + "/" + snapshot_step_name(k);
        create_snapshot_view(out_, view, "/" + source, k, snapshots_, l.n);
        // No axes: each attachment adds an entry to the REFERENCE_LIST attribute of /x, /y and /z,
        // 16 B each (a reference and a dimension index), and an attribute of the file's default
        // format holds at most 64 KiB (about 4000 entries), which shots x snapshots views would pass. Their values have
        // axes on the source.
        describe_dataset(root, view, kFieldUnits,
                         "p of " + shot_name(s) + " at snapshots/time[" + std::to_string(k) + "]");
      }
    }
  }
}

void SurveyFile::write_attributes(const RunAttributes& a) {
  const hid_t root = out_.root();
  write_run_attributes(root, a);
  write_attribute(root, "units",
                  "lengths m, times s, velocities m/s, angles (model/theta, model/phi) degrees; spacing, origin and "
                  "shape are [x, y, z]; each dataset has its own units attribute");
  write_attribute(root, "layout",
                  "volumes are [z][y][x] (x fastest); traces are [shot][receiver][time]; "
                  "snapshots/shot_NNNN are [time][z][y][x]; snapshot_steps/shot_NNNN/KKKK are [z][y][x] views of their "
                  "snapshot KKKK (HDF5 virtual datasets)");
}

void SurveyFile::write_model(const float* vp) {
  if (!layout_.model) return;
  const auto& n = layout_.n;
  out_.create_group("model");
  write_dataset(out_.root(), "model/vp", {hsize_t(n[2]), hsize_t(n[1]), hsize_t(n[0])}, vp);
  const auto [units, long_name] = model_description("vp");
  describe_dataset(out_.root(), "model/vp", units, long_name);
  attach_axes(out_.root(), "model/vp", kVolumeAxes);
  model_volumes_.push_back("vp");
}

void SurveyFile::write_model_volume(const std::string& name, const float* values) {
  if (!layout_.model) return;
  const auto& n = layout_.n;
  write_dataset(out_.root(), "model/" + name, {hsize_t(n[2]), hsize_t(n[1]), hsize_t(n[0])}, values);
  const auto [units, long_name] = model_description(name);
  describe_dataset(out_.root(), "model/" + name, units, long_name);
  attach_axes(out_.root(), "model/" + name, kVolumeAxes);
  model_volumes_.push_back(name);
}

void SurveyFile::write_geometry(const float* wavelet, const std::vector<std::array<double, 3>>& sources,
                                const std::vector<std::array<double, 3>>& receivers) {
  const SurveyLayout& l = layout_;
  if (static_cast<long long>(sources.size()) != l.shots ||
      static_cast<long long>(receivers.size()) != (l.varying ? 0 : l.receivers))
    throw Error("survey geometry for '" + out_.path() + "': " + std::to_string(sources.size()) + " sources and " +
                std::to_string(receivers.size()) + " receivers, but the layout has " + std::to_string(l.shots) +
                " and " + std::to_string(l.receivers));
  const hid_t root = out_.root();
  out_.create_group("sources");
  out_.create_group("receivers");
  // The wavelet is f(n dt), n = 0..: one dt before the trace sample of the same index.
  std::vector<double> wavelet_time(l.steps);
  for (long long n = 0; n < l.steps; ++n) wavelet_time[n] = n * l.dt;
  write_axis(root, "sources/wavelet_time", wavelet_time, "s", "time of the wavelet sample (n dt)");
  write_dataset(root, "sources/wavelet", {hsize_t(l.steps)}, wavelet);
  describe_dataset(root, "sources/wavelet", "arbitrary (traces and snapshots are in its units)",
                   "source time function");
  attach_axes(root, "sources/wavelet", {"sources/wavelet_time"});
  std::vector<double> pos;
  for (const auto& s : sources) pos.insert(pos.end(), s.begin(), s.end());
  write_dataset(root, "sources/positions", {hsize_t(l.shots), 3}, pos.data());
  describe_dataset(root, "sources/positions", "m", "source position [x, y, z]");
  attach_axes(root, "sources/positions", {"shot", "component"});
  std::vector<long long> record;
  for (long long row = 0; row < l.shots; ++row) record.push_back(l.first_record + shot_id(l, row));
  write_dataset(root, "sources/record", {hsize_t(l.shots)}, record.data());
  describe_dataset(root, "sources/record", "1", "field record number (sources.first_record + shot; SEG-Y bytes 9)");
  attach_axes(root, "sources/record", {"shot"});
  pos.clear();
  for (const auto& r : receivers) pos.insert(pos.end(), r.begin(), r.end());
  if (l.receivers > 0 && !l.varying) {
    write_dataset(root, "receivers/positions", {hsize_t(l.receivers), 3}, pos.data());
    describe_dataset(root, "receivers/positions", "m", "receiver position [x, y, z]");
    attach_axes(root, "receivers/positions", {"receiver", "component"});
  }
}

void SurveyFile::write_spreads(const std::vector<std::vector<std::array<double, 3>>>& spreads) {
  const SurveyLayout& l = layout_;
  if (!l.varying || static_cast<long long>(spreads.size()) != l.shots)
    throw Error("survey spreads for '" + out_.path() + "': " + std::to_string(spreads.size()) + " spreads for " +
                std::to_string(l.shots) + " shots" + (l.varying ? "" : " in a layout of one spread for every shot"));
  const hid_t root = out_.root();
  std::vector<double> pos(static_cast<size_t>(l.shots * l.receivers * 3), std::nan(""));
  std::vector<long long> count;
  for (long long s = 0; s < l.shots; ++s) {
    const auto& spread = spreads[static_cast<size_t>(s)];
    if (static_cast<long long>(spread.size()) > l.receivers)
      throw Error("survey spreads for '" + out_.path() + "': shot " + std::to_string(s) + " has " +
                  std::to_string(spread.size()) + " receivers, the layout at most " + std::to_string(l.receivers));
    for (size_t r = 0; r < spread.size(); ++r)
      for (int a = 0; a < 3; ++a)
        pos[static_cast<size_t>((s * l.receivers + static_cast<long long>(r)) * 3 + a)] = spread[r][a];
    count.push_back(static_cast<long long>(spread.size()));
  }
  if (l.receivers > 0) {
    write_dataset(root, "receivers/positions", {hsize_t(l.shots), hsize_t(l.receivers), 3}, pos.data());
    describe_dataset(root, "receivers/positions", "m",
                     "receiver position [x, y, z] of each shot's spread (NaN beyond receivers/count)");
    attach_axes(root, "receivers/positions", {"shot", "receiver", "component"});
  }
  write_dataset(root, "receivers/count", {hsize_t(l.shots)}, count.data());
  describe_dataset(root, "receivers/count", "1", "receivers of each shot's spread (the first rows of its traces)");
  attach_axes(root, "receivers/count", {"shot"});
}

void SurveyFile::write_traces(long long shot, const float* gather) {
  if (!traces_) return;
  const auto& ids = layout_.shot_ids;
  const auto row = ids.empty() ? shot : std::lower_bound(ids.begin(), ids.end(), shot) - ids.begin();
  if (row < 0 || row >= layout_.shots || shot_id(layout_, row) != shot)
    throw Error("internal: shot " + std::to_string(shot) + " is not one of '" + out_.path() + "'");
  out_.write_slab("traces", hsize_t(row), gather);
}

void SurveyFile::write_snapshot(long long shot, long long k, const float* p) {
  out_.write_slab("snapshots/" + shot_name(shot), hsize_t(k), p);
}

void SurveyFile::write_stepping_seconds(double seconds) {
  write_attribute(out_.root(), "stepping_seconds", seconds);
}

std::vector<XdmfVolume> SurveyFile::xdmf_volumes() const {
  std::vector<XdmfVolume> vols;
  for (const auto& name : model_volumes_) vols.push_back({"/model/" + name, name, 0, {}});
  for (long long row = 0; row < layout_.shots && snapshots_ > 0; ++row) {
    const std::string s = shot_name(shot_id(layout_, row));
    vols.push_back({"/snapshot_steps/" + s, "p_" + s, snapshots_, snapshot_times_});
  }
  return vols;
}

}  // namespace seisrtm::io
