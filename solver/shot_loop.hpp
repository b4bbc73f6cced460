#pragma once
// The shot loop of run and migrate (DESIGN.md section 9): the shots to compute, in order, one
// after another in one process, handed out to the ranks under mpirun (cluster::ShotFarm, with
// its interrupt and stop protocol and its final result), or every shot over its z slab on every
// rank (solver.decomposition z, each chunk's verdict collective). A command supplies what a shot
// computes (ShotWork::compute) and what rank 0 does with a result (ShotWork::keep).
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solver/cluster.hpp"
#include "solver/problem.hpp"

namespace seisrtm {

struct ShotPlan {
  std::vector<long long> shots;  // the shots to compute, in the order they are handed out
  long long total = 0;           // the survey's shots: labels say "shot s+1/total"
  long long steps = 0;           // time steps of a pass (progress)
  double cells = 0;              // cells a step updates (progress)
  bool slabs = false;            // solver.decomposition z: every rank computes every shot
  bool quiet = false;            // no progress lines (the ranks other than 0 are always quiet)
  std::string directory;         // output.directory, named when a signal stops the job
};

// Every shot of the problem, in order, stepped as the problem says.
ShotPlan every_shot(const Problem& pb, bool quiet);

class PassProgress;

// Rank 0's view of the whole survey for the progress lines: the shots finished (any rank's), the
// time since the loop began and, from them, the time left.
struct SurveyClock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), last_done = start;
  long long total = 0, done = 0;
  void finished_one() { ++done, last_done = std::chrono::steady_clock::now(); }
  // "; survey: 2 of 5 shots done, about 3 min 20 s left" ("" before the first shot is done): the
  // shots left at the pace of those done, less the time since the last was done.
  std::string text() const;
};

// What a shot's computation tells the loop, and how it hands over its results.
class ShotSteps {
 public:
  ShotSteps(const ShotPlan& plan, cluster::ShotFarm* farm, const cluster::ShotFarm::Sink& keep, long long shot,
            double& seconds, const SurveyClock* clock = nullptr);
  ~ShotSteps();
  const std::string& label() const { return label_; }  // "shot s+1/N"
  bool slabs() const { return farm_ == nullptr; }
  // Rank 0: holds whole-grid volumes and keeps every shot's results.
  bool keeps() const { return cluster::rank() == 0; }
  // The shot's start (with the test suite's failure hook): decomposed, one verdict of every rank.
  void begin(const std::function<void()>& start, const std::string& where);
  // One chunk of steps: decomposed, followed by the verdict of every rank on a SharedFailure.
  void advance(const std::function<void()>& step, const std::string& where);
  // Between chunks: decomposed, the verdict of every rank; otherwise the signal check of the
  // farm (ShotFarm::check_interrupt) and rank 0 taking the other ranks' requests and results.
  void check(const std::string& where);
  // Near the shot's end: a worker asks for its next shot, to have the answer when this one ends.
  void nearly_done();
  // Progress lines of a pass ("" for a shot of one pass); their seconds are the loop's.
  void start_progress(const std::string& pass);
  void progress(const std::string& pass, long long done);
  void finish_progress();
  // A result of this shot: kept on rank 0, sent there by a worker of the farm, dropped by the
  // other ranks of a decomposed run (rank 0 gathers their part). data may be moved from.
  void send(cluster::ResultKind kind, long long index, std::vector<float>& data);

 private:
  const ShotPlan& plan_;
  cluster::ShotFarm* farm_;
  const cluster::ShotFarm::Sink& keep_;
  long long shot_;
  std::string label_;
  std::unique_ptr<PassProgress> progress_;
};

struct ShotWork {
  // Computes one shot on this rank; reports through `steps` and sends its results there. It ends
  // its progress (steps.finish_progress) itself: the loop adds no seconds after it returns.
  std::function<void(long long shot, ShotSteps& steps)> compute;
  // Rank 0: a result of a shot, its own (from_rank 0) or another rank's, data movable. A shot is
  // finished with its last result (ResultKind traces or illumination): the one place a finished
  // shot's result is handed over.
  cluster::ShotFarm::Sink keep;
  // Workers of a farm return once no shot is left (run, migrate) instead of joining rank 0 in
  // collectives after the loop.
  bool workers_end_when_done = false;
  // Rank 0 of a farm names its shot for any exception (migrate), not only for an Error (run).
  bool name_internal_errors = false;
};

class ShotLoop {
 public:
  ShotLoop(ShotPlan plan, ShotWork work);
  ShotLoop(const ShotLoop&) = delete;  // (its keep counts into its own clock)
  ShotLoop& operator=(const ShotLoop&) = delete;
  // Computes this rank's shots; rank 0 of a farm, then, takes the others' last results. Returns
  // the seconds of this rank's progress (time stepping).
  double run();
  // The signal check before a commit: of every rank of a farm (its workers may still report a
  // signal), of this process otherwise.
  void check_interrupt(const std::string& where);
  long long shots_by_other_ranks() const { return farm_.shots_done_by_others(); }

 private:
  double run_slabs();
  double run_farm();
  // Rank 0 of several, on its own shot's failure: the message names the rank and the shot
  // (ShotSteps::label, as the workers' failures name theirs).
  [[noreturn]] void fail_on_rank0(const std::string& shot, const std::string& what) const;
  ShotPlan plan_;
  ShotWork work_;
  cluster::ShotFarm farm_;
  SurveyClock clock_;
};

}  // namespace seisrtm
