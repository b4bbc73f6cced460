#pragma once
// CUDA-event timing of a migration's phases (CudaMigrator::breakdown).
#include <array>
#include <memory>
#include <vector>

#include "kernels/cuda_check.hpp"
#include "solver/device_buffer.hpp"

namespace seisrtm {

// Times the phases of the passes with CUDA events: the time between two marks belongs to the
// earlier mark's phase. Read back at each flush (after the stream is synchronised), so the
// event pool stays as small as the marks between two progress reports.
class PhaseTimer {
 public:
  enum Phase { forward_step, store, receiver_step, source_step, fused_step, image, separate_steps, replay, kCount };
  static constexpr const char* kNames[kCount] = {"forward step + source (+ gather in graphs)",
                                                 "boundary store (gather)",
                                                 "receiver step + data",
                                                 "source step + shell (scatter)",
                                                 "fused step + data + shell",
                                                 "imaging",
                                                 "separate steps: receiver, source, shell, imaging (graphs)",
                                                 "replay: checkpoint, forward steps and gather"};
  void mark(int phase, cudaStream_t st) {
    if (used_ == pool_.size()) pool_.push_back(std::make_unique<CudaEvent>());
    SEISRTM_CUDA(cudaEventRecord(pool_[used_]->get(), st));
    phases_.push_back(phase);
    ++used_;
  }
  // After a synchronisation: closes the last phase and adds up the intervals.
  void flush(cudaStream_t st) {
    if (used_ == 0) return;
    mark(kCount, st);
    SEISRTM_CUDA(cudaEventSynchronize(pool_[used_ - 1]->get()));
    for (size_t k = 0; k + 1 < used_; ++k) {
      float ms = 0;
      SEISRTM_CUDA(cudaEventElapsedTime(&ms, pool_[k]->get(), pool_[k + 1]->get()));
      seconds_[phases_[k]] += ms * 1e-3;
    }
    used_ = 0;
    phases_.clear();
  }
  const std::array<double, kCount>& seconds() const { return seconds_; }

 private:
  std::vector<std::unique_ptr<CudaEvent>> pool_;
  std::vector<int> phases_;
  size_t used_ = 0;
  std::array<double, kCount> seconds_{};
};

}  // namespace seisrtm
