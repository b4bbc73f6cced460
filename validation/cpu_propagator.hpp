#pragma once
// The CPU reference propagator: plain loops and OpenMP, written apart from the GPU kernels so
// that agreement between the two means something. Also the CPU backend of `seisrtm run`.
#include <vector>

#include "solver/propagator.hpp"

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
  template <int Radius>
  void step(long long n);

  const Problem& problem_;
  std::vector<float> m_;       // v^2 dt^2 (m^2)
  std::vector<float> p_, pp_;  // p^n and p^{n-1}; the step writes p^{n+1} over p^{n-1}
  std::vector<float> traces_;  // [receiver][step]
  long long shot_ = 0;
};

}  // namespace seisrtm::validation
