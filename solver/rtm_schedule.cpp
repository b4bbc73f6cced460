#include "solver/rtm_schedule.hpp"

#include <algorithm>
#include <string>

#include "base/error.hpp"

namespace seisrtm {

RtmSchedule::Range RtmSchedule::saving_steps() const {
  return {0, std::max(0LL, steps_ - 2), 1};
}

RtmSchedule::Range RtmSchedule::leading() const {
  return {steps_, std::min(steps_, 2LL), -1};
}

RtmSchedule::Range RtmSchedule::rebuilding() const {
  return {steps_ - 2, std::max(0LL, steps_ - 2), -1};
}

void RtmSchedule::backward_level(long long n, Order order, const Backward& b) const {
  if (order == Order::receiver_first) b.receiver(n);
  b.source(n);
  if (imaged(n)) b.image(n);
  if (order == Order::image_then_receiver) b.receiver(n);
}

void RtmSchedule::backward(Order order, const Backward& b, const std::function<void(long long n)>& after) const {
  for (long long n = steps_; n >= 1; --n) {
    backward_level(n, order, b);
    after(n);
  }
}

// Levels N and N - 1 of the receiver field by plain steps; the source field's are the forward
// pass's last two. Level N is imaged with chi^{N+1} = 0 (its illumination counts) before
// chi^{N+1}'s buffer takes chi^{N-1}; level N - 1 is imaged by the first fused step, level 1 at
// the end.
void RtmSchedule::fused_backward(const Fused& f) const {
  f.receiver(steps_);
  f.source(steps_);
  if (imaged(steps_)) f.image(steps_);
  f.after(steps_);
  f.receiver(steps_ - 1);
  f.source(steps_ - 1);
  f.after(steps_ - 1);
  f.steps(rebuilding());
  if (imaged(1)) f.image(1);
}

CheckpointPlan::CheckpointPlan(long long steps, long long interval)
    : steps_(steps), k_(1), saved_(std::max(0LL, steps - 2)), segments_(0) {
  if (interval < 1)
    throw Error("CheckpointPlan: the checkpoint interval is " + std::to_string(interval) + ", not >= 1");
  k_ = std::max(1LL, std::min(interval, saved_));
  segments_ = (saved_ + k_ - 1) / k_;
}

CheckpointPlan::Segment CheckpointPlan::segment(long long j) const {
  const long long lo = 1 + (segments_ - 1 - j) * k_;
  return {lo, std::min(saved_, lo + k_ - 1)};
}

long long CheckpointPlan::segment_of(long long level) const {
  return segments_ - 1 - (level - 1) / k_;
}

bool CheckpointPlan::first_pass_saves(long long level) const {
  return level >= 1 && level <= saved_ && segment_of(level) == 0;
}

bool CheckpointPlan::checkpointed(long long level) const {
  return level >= 1 && level <= saved_ && (level - 1) % k_ == 0 && segment_of(level) > 0;
}

long long CheckpointPlan::replayed_before(long long n) const {
  if (n < 1 || n > saved_) return -1;
  const long long j = segment_of(n);
  return j > 0 && segment(j).hi == n ? j : -1;
}

RtmSchedule::Range CheckpointPlan::replay_steps(long long j) const {
  const Segment s = segment(j);
  return {s.lo, s.hi - s.lo, 1};
}

long long CheckpointPlan::replay_steps() const {
  long long n = 0;
  for (long long j = 1; j < segments_; ++j) n += replay_steps(j).count;
  return n;
}

double CheckpointPlan::bytes(double state_bytes, double shell_bytes) const {
  const long long states = checkpoints() + (checkpoints() > 0 ? 1 : 0);
  return double(states) * state_bytes + double(std::min(k_, saved_)) * shell_bytes;
}

long long auto_checkpoint_interval(long long steps, double state_bytes, double shell_bytes) {
  const long long saved = std::max(1LL, steps - 2);
  long long best = saved;
  double least = CheckpointPlan(steps, saved).bytes(state_bytes, shell_bytes);
  for (long long k = saved - 1; k >= 1; --k) {
    const double b = CheckpointPlan(steps, k).bytes(state_bytes, shell_bytes);
    if (b < least) least = b, best = k;
  }
  return best;
}

}  // namespace seisrtm
