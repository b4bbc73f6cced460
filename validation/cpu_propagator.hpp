#pragma once
// The CPU reference propagator: plain loops and OpenMP (validation/cpu_stencil), written apart
// from the GPU kernels so that agreement between the two means something. Also the CPU backend
// of `seisrtm run`.
#include <vector>

#include "solver/propagator.hpp"
#include "validation/cpu_wave.hpp"

namespace seisrtm::validation {

class CpuPropagator final : public Propagator {
 public:
  explicit CpuPropagator(const Problem& problem);
  std::string name() const override;
  void begin_shot(long long shot) override;
  void advance(long long first, long long count) override;
  void wavefield(float* out) override;
  void traces(float* out) override;

 private:
  const Problem& problem_;
  CpuWave<float> wave_;
  std::vector<float> traces_;  // [receiver][step]
  long long shot_ = 0;
};

}  // namespace seisrtm::validation
