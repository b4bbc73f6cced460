#pragma once
// The checkpoints of a checkpointed migration on the GPU (CheckpointPlan, solver/rtm_schedule.hpp):
// the full state of the source field at the first level of every segment but the last in time
// (its two levels of p, and of q for vti/tti: 2 or 4 volumes, bytes as stored, padding included,
// so a restored state steps exactly as the first pass did) in pinned host memory, and the replay
// field on the device that a segment's forward steps run in. The forward pass stages a checkpoint
// in the replay field (a device copy, 2 volumes at device bandwidth) and sends it down on a copy
// stream while its steps go on; the backward pass loads a checkpoint into the replay field
// before the segment's replay.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "solver/device_buffer.hpp"
#include "solver/device_wavefield.hpp"

namespace seisrtm {

class Checkpoints {
 public:
  // count checkpoints of the plan of `interval` and `coarse_interval` levels (CheckpointPlan), of
  // a field of volume_bytes a level (p, and q where anisotropic).
  Checkpoints(long long count, long long interval, long long coarse_interval, std::size_t volume_bytes,
              bool anisotropic, MemoryKind memory, std::string* warning);
  ~Checkpoints();
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  // Checkpoint k from w's two levels, after the work queued on `stream` so far. w may be the
  // replay field itself (a sweep of two levels keeps its own checkpoints): `stream` then waits
  // until they are down.
  void save(long long k, const DeviceWavefield& w, cudaStream_t stream);
  // Checkpoint k into the replay field (its newest level in p[cur], as w's was), on `stream`.
  void load(long long k, cudaStream_t stream);
  DeviceWavefield& field() { return replay_; }
  long long interval() const { return interval_; }
  long long coarse_interval() const { return coarse_interval_; }
  long long count() const { return count_; }
  std::size_t bytes() const { return static_cast<std::size_t>(count_) * per_checkpoint_ * volume_; }  // pinned
  static std::size_t host_bytes(long long count, std::size_t volume_bytes, bool anisotropic) {
    return static_cast<std::size_t>(count) * (anisotropic ? 4 : 2) * volume_bytes;
  }

 private:
  // The replay field's buffers in a checkpoint's order: p[0], p[1], then q[0], q[1].
  std::vector<DeviceBuffer*> buffers();
  long long count_, interval_, coarse_interval_;
  std::size_t volume_;
  int per_checkpoint_;  // volumes: 2 or 4
  char* host_ = nullptr;
  std::vector<int> newest_;  // the buffer of each checkpoint's newer level
  DeviceWavefield replay_;
  CudaStream copy_;
  CudaEvent staged_, sent_, loaded_;  // loaded_: the last load's copies from host_ are done
};

}  // namespace seisrtm
