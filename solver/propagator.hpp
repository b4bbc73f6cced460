#pragma once
// The one interface every backend implements. Time stepping (DESIGN.md section 3):
//   p^{n+1} = [2 p^n - (1 - s) p^{n-1} + m (L p^n + sum_src w f(n dt) / (hx hy hz))] / (1 + s)
// with m = v^2 dt^2, s = (sigma_x + sigma_y + sigma_z) dt / 2 the damping, p = 0 outside the
// grid and, with a free surface, p = 0 at z = 0 and p(-z) = -p(z) in the halo.
// Step n makes p at t = (n + 1) dt; receivers record it as trace sample n.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solver/problem.hpp"

namespace seisrtm {

class Propagator {
 public:
  virtual ~Propagator() = default;
  virtual std::string name() const = 0;
  // Zeroes the wavefields and selects the shot's source.
  virtual void begin_shot(long long shot) = 0;
  // Runs steps [first, first + count) of the current shot.
  virtual void advance(long long first, long long count) = 0;
  // Copies p at the latest time level into out (grid.cells() floats, x fastest).
  virtual void wavefield(float* out) = 0;
  // Copies the current shot's traces, [receiver][step], into out.
  virtual void traces(float* out) = 0;
  // Snapshots without stalling the time loop: request_wavefield() takes p at the latest time
  // level; receive_wavefield() delivers it later (backends that copy asynchronously override).
  // The default takes the copy at once.
  virtual void request_wavefield(long long cells) {
    held_.resize(static_cast<size_t>(cells));
    wavefield(held_.data());
  }
  virtual void receive_wavefield(float* out) { std::copy(held_.begin(), held_.end(), out); }
  // Messages for the user (e.g. a fallback from compressible to plain memory).
  virtual std::vector<std::string> notes() const { return {}; }
  // Device memory this run has taken at its peak so far, and one wavefield volume, in bytes
  // (both 0 for host backends).
  struct DeviceMemory {
    std::size_t peak = 0, volume = 0;
  };
  virtual DeviceMemory device_memory() const { return {}; }

 private:
  std::vector<float> held_;
};

using PropagatorFactory = std::function<std::unique_ptr<Propagator>(const Problem&)>;

}  // namespace seisrtm
