#pragma once
// Forward modelling of a survey: shots one after another, traces and snapshots to HDF5, an
// XDMF sidecar and pictures, all under temporary names until the run completes.
#include <hdf5.h>

#include <string>
#include <vector>

#include "solver/problem.hpp"
#include "solver/propagator.hpp"

namespace seisrtm {

struct RunOptions {
  bool quiet = false;
  std::string producer;          // program name and version, stored in the file
  std::vector<long long> shots;  // --shots: the shots of this part of the survey (empty: all)
};

struct RunSummary {
  std::string h5_path, xdmf_path;
  std::vector<std::string> pictures;
  long long shots = 0;  // computed by this command (a resumed run: those its journal did not hold)
  double seconds = 0;   // time stepping only, all shots
  double gcells_per_second = 0;
  long long shots_by_other_ranks = 0;  // shot-parallel runs (cluster.hpp): seconds is then the wall time
  double wall_seconds = 0;             // the shots from the first to the last, everything included
};

// The root attributes every result file carries: producer, backend, config (resolved YAML),
// spacing, origin, shape (int64), all [x, y, z], dt and steps (io::write_run_attributes; the
// survey's own file writes them through io::SurveyFile, migrate's through this).
void write_run_attributes(hid_t root, const Problem& pb, const std::string& producer, const std::string& backend);

RunSummary run_survey(const Problem& problem, Propagator& propagator, const RunOptions& options);

}  // namespace seisrtm
