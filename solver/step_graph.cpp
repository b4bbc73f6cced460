#include "solver/step_graph.hpp"

#include "kernels/cuda_check.hpp"
#include "solver/device_buffer.hpp"

namespace seisrtm {

void StepGraph::run(const RtmSchedule::Range& r, long long period, const std::function<void(long long, bool)>& body,
                    const std::function<void(long long)>& after, const std::function<void()>& on_launch) const {
  CudaGraphExec g;
  long long n = r.first, left = r.count;
  const int dir = r.dir;
  bool direct_first = true;  // one step outside capture first: it sets the kernels' attributes
  while (left > 0) {
    if (graphs && !direct_first && period <= kMaxGraphSteps && left >= period) {
      if (!g.valid()) {
        cudaGraph_t graph = nullptr;
        SEISRTM_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (long long k = 0; k < period; ++k) body(n + k * dir, false);
        SEISRTM_CUDA(cudaStreamEndCapture(stream, &graph));
        g = CudaGraphExec(graph);
      }
      on_launch();
      g.launch(stream);
      for (long long k = 0; k < period; ++k) after(n + k * dir);
      n += period * dir;
      left -= period;
    } else {
      body(n, true);
      after(n);
      n += dir;
      --left;
      direct_first = false;
    }
  }
}

const CudaGraphExec& PairGraphs::at(int c, cudaStream_t stream, const std::function<void(int)>& two_steps,
                                    const std::function<void()>& captured) {
  if (!graph_[c].valid()) {
    cudaGraph_t g = nullptr;
    SEISRTM_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    two_steps(c);
    SEISRTM_CUDA(cudaStreamEndCapture(stream, &g));
    graph_[c] = CudaGraphExec(g);
    captured();
  }
  return graph_[c];
}

void PairGraphs::reset() {
  graph_[0] = CudaGraphExec();
  graph_[1] = CudaGraphExec();
}

}  // namespace seisrtm
