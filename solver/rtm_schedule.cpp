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

CheckpointPlan::CheckpointPlan(long long steps, long long interval, long long coarse_interval)
    : steps_(steps), k_(1), k1_(1), saved_(std::max(0LL, steps - 2)), segments_(0) {
  if (interval < 1)
    throw Error("CheckpointPlan: the checkpoint interval is " + std::to_string(interval) + ", not >= 1");
  k_ = std::max(1LL, std::min(interval, saved_));
  segments_ = (saved_ + k_ - 1) / k_;
  // m segments a group; one level where m < 2 or one group would hold them all (the same plan).
  const long long m = std::max(1LL, coarse_interval / k_);
  k1_ = m < 2 || m >= segments_ ? k_ : m * k_;
  if (segments_ == 0) return;
  const long long groups = (saved_ + k1_ - 1) / k1_;
  // Every group's first level but where that is segment 0's (the last group, of one segment).
  coarse_slots_ = groups - (1 + (groups - 1) * k1_ == segment(0).lo ? 1 : 0);
  fine_slots_ = std::max(0LL, std::max(last_in_group(0), last_in_group(groups - 1)) - 1);
}

long long CheckpointPlan::last_in_group(long long g) const {
  const long long len = std::min(saved_, (g + 1) * k1_) - g * k1_;
  return (len - 1) / k_;
}

CheckpointPlan::Segment CheckpointPlan::segment(long long j) const {
  const long long lo = 1 + (segments_ - 1 - j) * k_;
  return {lo, std::min(saved_, lo + k_ - 1)};
}

long long CheckpointPlan::segment_of(long long level) const {
  return segments_ - 1 - (level - 1) / k_;
}

CheckpointPlan::Sweep CheckpointPlan::first_pass() const {
  return {0, saved_, segments_ > 0 ? segment(0).lo : 1};
}

CheckpointPlan::Sweep CheckpointPlan::sweep_before(long long n) const {
  if (n < 1 || n > saved_) return {};
  const long long j = segment_of(n);
  const Segment seg = segment(j);
  if (j == 0 || seg.hi != n) return {};
  const long long g = group_of(seg.lo), i = ((seg.lo - 1) % k1_) / k_;
  // A group's last segment: swept from the group's checkpoint; the others from their own.
  const long long from = i > 0 && i == last_in_group(g) ? 1 + g * k1_ : seg.lo;
  return {from, seg.hi, seg.lo};
}

long long CheckpointPlan::checkpoint_slot(long long level) const {
  if (level < 1 || level > saved_ || (level - 1) % k_ != 0 || level == segment(0).lo) return -1;
  const long long g = group_of(level), i = ((level - 1) % k1_) / k_;
  if (i == 0) return g;
  return i < last_in_group(g) ? coarse_slots_ + i - 1 : -1;
}

long long CheckpointPlan::checkpoint_after(const Sweep& w, long long level) const {
  if (level <= w.from || level >= w.shells_from) return -1;
  const long long slot = checkpoint_slot(level);
  if (slot < 0) return -1;
  // Group checkpoints on the first pass's way; a group's others only by the sweep over that group.
  const bool group_first = (level - 1) % k1_ == 0;
  return group_first || group_of(level) == group_of(w.shells_from) ? slot : -1;
}

long long CheckpointPlan::replay_steps() const {
  long long n = 0;
  for (long long j = 1; j < segments_; ++j) n += sweep_before(segment(j).hi).steps().count;
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

long long auto_coarse_interval(long long steps, long long interval) {
  const CheckpointPlan one(steps, interval);
  long long best = one.interval(), fewest = one.checkpoints(), replays = -1;
  for (long long m = 2; m < one.segments(); ++m) {
    const CheckpointPlan two(steps, one.interval(), m * one.interval());
    if (two.checkpoints() > fewest) continue;
    const long long r = two.replay_steps();
    if (two.checkpoints() < fewest || (replays >= 0 && r < replays)) {
      best = two.coarse_interval();
      fewest = two.checkpoints();
      replays = r;
    }
  }
  return best;
}

}  // namespace seisrtm
