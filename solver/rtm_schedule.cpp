#include "solver/rtm_schedule.hpp"

#include <algorithm>

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

}  // namespace seisrtm
