#include "solver/shot_loop.hpp"

#include <exception>

#include "base/error.hpp"
#include "io/interrupt.hpp"
#include "solver/decomposition.hpp"
#include "solver/progress.hpp"

namespace seisrtm {

// A shot's passes as progress lines, one per pass ("forward", "backward"; "" for one pass), their
// seconds added to `seconds`.
class PassProgress {
 public:
  PassProgress(std::string label, long long steps, double cells, bool quiet, double& seconds)
      : label_(std::move(label)), steps_(steps), cells_(cells), quiet_(quiet), seconds_(seconds) {}
  void start(const std::string& pass) {
    if (progress_ && pass == pass_) return;
    finish();
    pass_ = pass;
    progress_ = std::make_unique<Progress>(pass.empty() ? label_ : label_ + " " + pass, steps_, cells_, quiet_);
  }
  void update(const std::string& pass, long long done) {
    start(pass);
    progress_->update(done);
  }
  void finish() {
    if (!progress_) return;
    progress_->finish();
    seconds_ += progress_->seconds();
    progress_.reset();
  }

 private:
  std::string label_, pass_;
  long long steps_;
  double cells_;
  bool quiet_;
  double& seconds_;
  std::unique_ptr<Progress> progress_;
};

ShotPlan every_shot(const Problem& pb, bool quiet) {
  ShotPlan plan;
  plan.total = pb.shot_count();
  for (long long s = 0; s < plan.total; ++s) plan.shots.push_back(s);
  plan.steps = pb.steps;
  plan.cells = double(pb.grid.cells());
  plan.slabs = pb.config.solver.decomposition == Decomposition::z;
  plan.quiet = quiet;
  plan.directory = pb.config.output.directory;
  return plan;
}

ShotSteps::ShotSteps(const ShotPlan& plan, cluster::ShotFarm* farm, const cluster::ShotFarm::Sink& keep, long long shot,
                     double& seconds)
    : plan_(plan),
      farm_(farm),
      keep_(keep),
      shot_(shot),
      label_("shot " + std::to_string(shot + 1) + "/" + std::to_string(plan.total)),
      progress_(std::make_unique<PassProgress>(label_, plan.steps, plan.cells, plan.quiet || !keeps(), seconds)) {}

ShotSteps::~ShotSteps() = default;

void ShotSteps::begin(const std::function<void()>& start, const std::string& where) {
  auto begin = [&] {
    cluster::inject_test_failure(shot_);
    if (start) start();
  };
  if (slabs())
    agreed_step(begin, shot_, plan_.total, where, plan_.directory);
  else
    begin();
}

void ShotSteps::advance(const std::function<void()>& step, const std::string& where) {
  if (slabs())
    agreed_step<SharedFailure>(step, shot_, plan_.total, where, plan_.directory);
  else
    step();
}

void ShotSteps::check(const std::string& where) {
  if (slabs()) return slab_verdict("", shot_, plan_.total, where, plan_.directory);
  farm_->check_interrupt(where, plan_.directory);
  farm_->serve(keep_);
}

void ShotSteps::nearly_done() {
  if (farm_) farm_->ask();
}

void ShotSteps::start_progress(const std::string& pass) {
  progress_->start(pass);
}
void ShotSteps::progress(const std::string& pass, long long done) {
  progress_->update(pass, done);
}
void ShotSteps::finish_progress() {
  progress_->finish();
}

void ShotSteps::send(cluster::ResultKind kind, long long index, std::vector<float>& data) {
  if (keeps())
    keep_(0, shot_, kind, index, data);
  else if (farm_)
    farm_->send(shot_, kind, index, data.data(), data.size());
}

ShotLoop::ShotLoop(ShotPlan plan, ShotWork work)
    : plan_(std::move(plan)), work_(std::move(work)), farm_(static_cast<long long>(plan_.shots.size())) {
  if (work_.workers_end_when_done) farm_.workers_end_when_done();
  if (work_.window > 0) farm_.limit_ahead(work_.window, work_.completed);
}

double ShotLoop::run() {
  return plan_.slabs ? run_slabs() : run_farm();
}

double ShotLoop::run_slabs() {
  // Every rank computes every shot, in order: the same collective calls on every rank.
  double seconds = 0;
  for (const long long s : plan_.shots) {
    ShotSteps steps(plan_, nullptr, work_.keep, s, seconds);
    work_.compute(s, steps);
  }
  return seconds;
}

double ShotLoop::run_farm() {
  const auto idle = [&] { farm_.check_interrupt("waiting for the other ranks' shots", plan_.directory); };
  double seconds = 0;
  // The farm hands out positions in plan_.shots.
  for (long long i = farm_.next(work_.keep, idle); i >= 0; i = farm_.next(work_.keep, idle)) {
    const long long s = plan_.shots[static_cast<size_t>(i)];
    ShotSteps steps(plan_, &farm_, work_.keep, s, seconds);
    try {
      work_.compute(s, steps);
    } catch (const cluster::RankFailed&) {
      throw;  // another rank's shot, named in the message
    } catch (const io::Interrupted& e) {
      // Rank 0 owns the files: it removes the temporaries and ends the job.
      if (farm_.coordinator()) throw;
      farm_.fail(steps.label(), std::string("interrupted by ") + io::signal_name(e.signal()));
    } catch (const Error& e) {
      if (!farm_.coordinator()) farm_.fail(steps.label(), e.what());
      if (cluster::size() == 1) throw;  // alone, the message as it was
      fail_on_rank0(steps.label(), e.what());
    } catch (const std::exception& e) {
      if (!farm_.coordinator()) farm_.fail(steps.label(), e.what());
      if (cluster::size() == 1 || !work_.name_internal_errors) throw;
      fail_on_rank0(steps.label(), e.what());
    }
  }
  farm_.drain(work_.keep, [&] { farm_.check_interrupt("the other ranks' last shots", plan_.directory); });
  return seconds;
}

void ShotLoop::fail_on_rank0(const std::string& shot, const std::string& what) const {
  throw Error("rank 0 failed on " + shot + ": " + what);
}

void ShotLoop::check_interrupt(const std::string& where) {
  if (plan_.slabs)
    io::check_interrupt(where, plan_.directory);
  else
    farm_.check_interrupt(where, plan_.directory);
}

}  // namespace seisrtm
