#include "solver/shot_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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
  PassProgress(std::string label, long long steps, double cells, bool quiet, double& seconds, const SurveyClock* clock)
      : label_(std::move(label)), steps_(steps), cells_(cells), quiet_(quiet), seconds_(seconds), clock_(clock) {}
  void start(const std::string& pass) {
    if (progress_ && pass == pass_) return;
    finish();
    pass_ = pass;
    progress_ = std::make_unique<Progress>(pass.empty() ? label_ : label_ + " " + pass, steps_, cells_, quiet_);
    if (clock_) progress_->set_suffix([c = clock_] { return c->text(); });
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
  const SurveyClock* clock_;
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

std::string SurveyClock::text() const {
  if (done <= 0 || done >= total) return "";
  using seconds = std::chrono::duration<double>;
  const double per_shot = seconds(last_done - start).count() / double(done);
  const double since = seconds(std::chrono::steady_clock::now() - last_done).count();
  const long long left = std::llround(std::max(0.0, per_shot * double(total - done) - since));
  char t[96];
  if (left >= 3600)
    std::snprintf(t, sizeof t, "%lld h %lld min", left / 3600, left % 3600 / 60);
  else if (left >= 60)
    std::snprintf(t, sizeof t, "%lld min %lld s", left / 60, left % 60);
  else
    std::snprintf(t, sizeof t, "%lld s", left);
  return "; survey: " + std::to_string(done) + " of " + std::to_string(total) + " shots done, about " + t + " left";
}

ShotSteps::ShotSteps(const ShotPlan& plan, cluster::ShotFarm* farm, const cluster::ShotFarm::Sink& keep, long long shot,
                     double& seconds, const SurveyClock* clock)
    : plan_(plan),
      farm_(farm),
      keep_(keep),
      shot_(shot),
      label_("shot " + std::to_string(shot + 1) + "/" + std::to_string(plan.total)),
      progress_(
          std::make_unique<PassProgress>(label_, plan.steps, plan.cells, plan.quiet || !keeps(), seconds, clock)) {}

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
  // A shot is finished with its last result (traces or illumination): counted for the survey's
  // time left (rank 0 keeps every rank's results).
  clock_.total = static_cast<long long>(plan_.shots.size());
  work_.keep = [keep = std::move(work_.keep), this](int from, long long s, cluster::ResultKind kind, long long index,
                                                    std::vector<float>& data) {
    if (keep) keep(from, s, kind, index, data);
    if (kind == cluster::ResultKind::traces || kind == cluster::ResultKind::illumination) clock_.finished_one();
  };
}

double ShotLoop::run() {
  return plan_.slabs ? run_slabs() : run_farm();
}

double ShotLoop::run_slabs() {
  // Every rank computes every shot, in order: the same collective calls on every rank.
  double seconds = 0;
  for (const long long s : plan_.shots) {
    ShotSteps steps(plan_, nullptr, work_.keep, s, seconds, &clock_);
    work_.compute(s, steps);
  }
  return seconds;
}

double ShotLoop::run_farm() {
  double seconds = 0;
  // The farm hands out positions in plan_.shots.
  for (long long i = farm_.next(); i >= 0; i = farm_.next()) {
    const long long s = plan_.shots[static_cast<size_t>(i)];
    ShotSteps steps(plan_, &farm_, work_.keep, s, seconds, &clock_);
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
