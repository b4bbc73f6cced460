#pragma once
// The checkpoints of a checkpointed migration on the GPU (CheckpointPlan, solver/rtm_schedule.hpp):
// the full state of the source field at the levels the plan names (its two levels of p, and of q
// for vti/tti: 2 or 4 volumes, bytes as stored, padding included, so a restored state steps
// exactly as the first pass did), in pinned host memory or, beyond host_count of them, in files
// of a directory; and the replay field on the device that a sweep's forward steps run in. A
// checkpoint from the source field is staged in the replay field (a device copy, 2 volumes at
// device bandwidth) and sent down on a copy stream while the steps go on; one to a file goes
// down into a pinned bounce state, which a writer thread writes out while the steps go on. A
// load before a sweep reads a file into the bounce state first (the host waits for the read).
#include <cuda_runtime.h>

#include <cstddef>
#include <future>
#include <string>
#include <vector>

#include "solver/device_buffer.hpp"
#include "solver/device_wavefield.hpp"

namespace seisrtm {

class Checkpoints {
 public:
  // count checkpoints of the plan of `interval` and `coarse_interval` levels (CheckpointPlan), of
  // a field of volume_bytes a level (p, and q where anisotropic); the first host_count in pinned
  // host memory, the others in files under `directory`.
  Checkpoints(long long count, long long interval, long long coarse_interval, std::size_t volume_bytes,
              bool anisotropic, MemoryKind memory, std::string* warning, long long host_count,
              const std::string& directory);
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
  long long on_disk() const { return count_ - host_count_; }
  std::size_t bytes() const { return static_cast<std::size_t>(host_count_) * state_bytes(); }  // pinned
  std::size_t state_bytes() const { return static_cast<std::size_t>(per_checkpoint_) * volume_; }
  static std::size_t host_bytes(long long count, std::size_t volume_bytes, bool anisotropic) {
    return static_cast<std::size_t>(count) * (anisotropic ? 4 : 2) * volume_bytes;
  }

 private:
  // The replay field's buffers in a checkpoint's order: p[0], p[1], then q[0], q[1].
  std::vector<DeviceBuffer*> buffers();
  // Where checkpoint k's bytes go down to: its pinned slot, or the bounce state for a file.
  char* host_at(long long k);
  std::string file(long long k) const;
  void finish_write();  // the writer's last file is complete (throws its error)
  long long count_, interval_, coarse_interval_, host_count_;
  std::size_t volume_;
  int per_checkpoint_;  // volumes: 2 or 4
  char* host_ = nullptr;
  char* bounce_ = nullptr;  // one state: a file's way up and down
  std::string directory_;
  std::future<void> writer_;
  std::vector<int> newest_;  // the buffer of each checkpoint's newer level
  DeviceWavefield replay_;
  CudaStream copy_;
  CudaEvent staged_, sent_, loaded_;  // loaded_: the last load's copies from host_ or bounce_ are done
};

}  // namespace seisrtm
