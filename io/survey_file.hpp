#pragma once
// The HDF5 layout of a forward-modelling run's result file (README "Output"), in one place:
//
//   /traces                     [shot, receiver, time]  float32, chunked one shot a chunk
//   /time                       [time]                  float64, s; sample n at t = (n + 1) dt
//   /snapshots/shot_NNNN        [time, z, y, x]         float32, chunked one snapshot a chunk
//   /snapshots/time             [time]                  float64, s, the snapshots' times
//   /snapshot_steps/shot_NNNN/KKKK  [z, y, x]           float32, snapshot KKKK of shot_NNNN: a
//                               virtual dataset (HDF5 >= 1.10) over /snapshots/shot_NNNN, no copy
//   /model/vp                   [z, y, x]               float32, m/s
//   /sources/positions          [shot, component]       float64, m, [x, y, z]
//   /receivers/positions        [receiver, component]   float64, m, [x, y, z]
//   /sources/wavelet            [wavelet_time]          float32, f(n dt)
//   /sources/wavelet_time       [wavelet_time]          float64, s, n dt
//   /x, /y, /z                  [x], [y], [z]           float64, m, origin + i h: the cells' positions
//   /shot, /receiver            [shot], [receiver]      int64, 0..n-1
//   /component                  [component]             int64, 0 x, 1 y, 2 z
//   attributes of /             see write_attributes
//
// Each 1D axis above is an HDF5 dimension scale attached to the dimensions of its name (the
// bracketed names), so netCDF-4 readers (xarray with h5netcdf) name the dimensions and give
// their coordinates; every dataset carries `units` and `long_name`.
//
// The writer knows nothing of the solver: it is given sizes and plain arrays. The constructor
// creates the datasets the time loop fills (traces and snapshots) and the axes, so the shapes are
// fixed before any stepping; the write_* calls fill them and the static parts.
#include <hdf5.h>

#include <array>
#include <string>
#include <vector>

#include "io/output_file.hpp"

namespace seisrtm::io {

// Sizes of a survey's result file.
struct SurveyLayout {
  long long shots = 0;
  long long receivers = 0;
  long long steps = 0;                    // time samples per trace
  double dt = 0;                          // s
  std::array<long long, 3> n{0, 0, 0};    // cells [x, y, z]
  std::array<double, 3> h{0, 0, 0};       // m [x, y, z]
  long long snapshot_interval = 0;        // steps between snapshots; 0 = none
  bool traces = true;                     // /traces (only with receivers)
  bool model = true;                      // /model/vp
  std::array<double, 3> origin{0, 0, 0};  // m [x, y, z], the survey coordinates of cell (0, 0, 0)
  // A spread a shot: `receivers` is the largest; /traces holds each shot's receivers first, the
  // rest of its rows zero, and /receivers/positions is [shot, receiver, 3] (NaN beyond a shot's
  // count) beside /receivers/count [shot].
  bool varying = false;
  long long first_record = 1;  // /sources/record: first_record + shot
  // A part of a survey (run --shots): the survey's indices of the file's `shots`, ascending; the
  // file's rows are these shots, /shot holds them and every name and record number follows them.
  // Empty: the shots 0..shots-1.
  std::vector<long long> shot_ids;
};

// The survey's index of the file's row `row` (layout.shot_ids).
inline long long shot_id(const SurveyLayout& l, long long row) {
  return l.shot_ids.empty() ? row : l.shot_ids[static_cast<size_t>(row)];
}
// Snapshots a run of this layout stores: one every snapshot_interval steps.
inline long long snapshot_count(const SurveyLayout& l) {
  return l.snapshot_interval > 0 ? l.steps / l.snapshot_interval : 0;
}

// The root attributes every result file carries (run and migrate alike).
struct RunAttributes {
  std::string producer;                 // program name and version
  std::string backend;                  // propagator name
  std::string config;                   // resolved YAML
  std::array<long long, 3> n{0, 0, 0};  // cells [x, y, z]
  std::array<double, 3> h{0, 0, 0};     // m [x, y, z]
  double dt = 0;                        // s
  long long steps = 0;
  std::array<double, 3> origin{0, 0, 0};  // m [x, y, z], the survey coordinates of cell (0, 0, 0)
};

// Writes producer, backend, config, spacing, origin (float64, m), shape (int64), all [x, y, z],
// dt (a scalar float64, s) and steps to `root`.
void write_run_attributes(hid_t root, const RunAttributes& a);

// `shot_NNNN`, the name of a shot's members (datasets, pictures, SEG-Y files).
std::string shot_name(long long shot);
// `KKKK`, the name of snapshot k's view in /snapshot_steps/shot_NNNN.
std::string snapshot_step_name(long long k);

class SurveyFile {
 public:
  // Creates /traces (when traces are kept and there are receivers), /snapshots, /snapshots/time,
  // one /snapshots/shot_NNNN per shot and its views /snapshot_steps/shot_NNNN/KKKK (when there
  // are snapshots) in `out`.
  SurveyFile(OutputFile& out, const SurveyLayout& layout);

  // Snapshots per shot: the steps that are multiples of snapshot_interval, the last included.
  long long snapshots() const { return snapshots_; }
  // s, one per snapshot: (k + 1) snapshot_interval dt.
  const std::vector<double>& snapshot_times() const { return snapshot_times_; }
  bool has_traces() const { return traces_; }

  // The run attributes, `units` and `layout`.
  void write_attributes(const RunAttributes& a);
  // /model/vp from `vp` [z][y][x] (x fastest), m/s; nothing when the layout has no model.
  void write_model(const float* vp);
  // /model/<name> [z][y][x] for the anisotropy of vti and tti (epsilon, delta; theta and phi in
  // degrees); nothing when the layout has no model.
  void write_model_volume(const std::string& name, const float* values);
  // /time, /sources/wavelet (`wavelet`: steps values), /sources/positions (one [x, y, z] per
  // shot of the file, m) and /receivers/positions (one per receiver, m; absent without receivers).
  // A varying layout: `receivers` is empty and write_spreads writes them.
  void write_geometry(const float* wavelet, const std::vector<std::array<double, 3>>& sources,
                      const std::vector<std::array<double, 3>>& receivers);
  // A varying layout's spreads, one a shot of the file (m, survey coordinates).
  void write_spreads(const std::vector<std::vector<std::array<double, 3>>>& spreads);
  // One shot's gather, [receiver][time]; nothing when the layout has no traces. `shot` here and
  // below: the survey's index (shot_id).
  void write_traces(long long shot, const float* gather);
  // Snapshot k (0-based) of a shot, p on the grid [z][y][x].
  void write_snapshot(long long shot, long long k, const float* p);
  // Root attribute `stepping_seconds`: the time stepping of all shots, s.
  void write_stepping_seconds(double seconds);

  // What the XDMF sidecar shows: the model and each shot's snapshots as a time series.
  std::vector<XdmfVolume> xdmf_volumes() const;

 private:
  OutputFile& out_;
  SurveyLayout layout_;
  bool traces_ = false;
  long long snapshots_ = 0;
  std::vector<double> snapshot_times_;
  std::vector<std::string> model_volumes_;  // written under /model, for the XDMF sidecar
};

}  // namespace seisrtm::io
