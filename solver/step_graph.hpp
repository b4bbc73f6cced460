#pragma once
// Steps of a pass replayed as CUDA graphs: body(n) for n = first, first + dir, ... (count of
// them), then after(n) for each, as graphs of `period` steps where graphs are on, else step by
// step. body launches only, with its time index from a level counter in device memory; where
// the buffers' parity and everything else body reads repeat with `period`, the graph captured
// at the first group replays for every later one.
#include <cuda_runtime.h>

#include <functional>

#include "solver/rtm_schedule.hpp"

namespace seisrtm {

struct StepGraph {
  cudaStream_t stream = nullptr;
  bool graphs = false;
  // A period beyond this many steps (a large image_interval) runs step by step: such a graph
  // would be captured for a replay or two and hold the interrupt check for its whole length.
  static constexpr long long kMaxGraphSteps = 64;
  // body(n, direct): direct is false while captured. on_launch: before each graph launch (its
  // steps time as one phase).
  void run(const RtmSchedule::Range& r, long long period, const std::function<void(long long, bool)>& body,
           const std::function<void(long long)>& after, const std::function<void()>& on_launch) const;
};

}  // namespace seisrtm
