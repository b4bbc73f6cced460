#pragma once
// Steps of a pass replayed as CUDA graphs: body(n) for n = first, first + dir, ... (count of
// them), then after(n) for each, as graphs of `period` steps where graphs are on, else step by
// step. body launches only, with its time index from a level counter in device memory; where
// the buffers' parity and everything else body reads repeat with `period`, the graph captured
// at the first group replays for every later one.
#include <cuda_runtime.h>

#include <functional>

#include "solver/device_buffer.hpp"
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

// The forward backend's graphs: the buffers have period 2, so two steps (A->B, B->A) form one
// graph; a graph per starting buffer covers an odd step count in between. Time-dependent inputs
// come from the device step counter, so the same graph replays for every pair of steps until
// the inputs it captured change (reset: a new shot's source arrays).
class PairGraphs {
 public:
  // The graph of two steps from buffer c, captured on `stream` from two_steps(c) the first time
  // (then captured() runs, after the instantiation).
  const CudaGraphExec& at(int c, cudaStream_t stream, const std::function<void(int)>& two_steps,
                          const std::function<void()>& captured);
  void reset();

 private:
  CudaGraphExec graph_[2];
};

}  // namespace seisrtm
