#pragma once
// A slab's step beside its halo exchange (solver/decomposition.hpp), shared by CudaPropagator
// and CudaMigrator. The own planes in three parts: the edge planes the neighbours receive
// (part 0 [own0, top), part 2 [bottom, own1)) and the interior (part 1 [top, bottom), whose
// stencils read no halo plane). On a high-priority stream, once `start` has happened: the
// edges' work, then the NCCL exchange; on the main stream at the same time the interior's; then
// the main stream waits for the halos. NCCL's kernels on a high-priority stream take SMs as the
// interior's blocks retire instead of queueing behind all of them; on the normal stream the
// exchange ends with the interior and is exposed (docs/BENCHMARKS.md, "Several GPUs").
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "solver/decomposition.hpp"
#include "solver/device_buffer.hpp"

namespace seisrtm {

class DeviceHalo;

class SlabOverlap {
 public:
  // The exchange is there for a slab of several (slab.ranks > 1); one slab is the whole grid.
  explicit SlabOverlap(const Slab& slab);
  ~SlabOverlap();
  // Collective: the NCCL communicator (no-op for one slab).
  void connect();
  bool has_exchange() const { return halo_ != nullptr; }
  // Whether each step exchanges (a slab of several, connected).
  bool connected() const;
  int lo(int part) const { return lo_[part]; }
  int hi(int part) const { return hi_[part]; }
  // The split points of cells sorted by padded index at the part boundaries: part k's cells
  // are [split[k], split[k + 1]). plane: cells a plane.
  template <class T>
  void split(const T* cells, long long count, long long plane, T* split) const;
  // An event recorded now on `main`, for a step to start from.
  cudaEvent_t ready(cudaStream_t main);
  // One step: edges(halo stream) and the exchange of `count` fields (planes `plane` floats
  // apart) once `start` has happened; interior(main) meanwhile; main then waits for the halos.
  void step(cudaStream_t main, cudaEvent_t start, const std::function<void(cudaStream_t)>& edges, float* const* fields,
            int count, long long plane, const std::function<void(cudaStream_t)>& interior);
  // After the main stream is synchronised (every recorded span complete): adds up the
  // exchanges' spans so far.
  void flush();
  void reset_seconds() { seconds_ = 0; }
  double seconds() const { return seconds_; }

 private:
  std::unique_ptr<DeviceHalo> halo_;
  int lo_[3] = {0, 0, 0}, hi_[3] = {0, 0, 0};
  CudaStream halo_stream_{true};
  CudaEvent main_ready_, halo_done_;
  // The exchange's span on the halo stream, per step since the last flush.
  std::vector<std::unique_ptr<CudaEvent>> span_begin_, span_end_;
  size_t spans_ = 0;
  double seconds_ = 0;
};

template <class T>
void SlabOverlap::split(const T* cells, long long count, long long plane, T* split) const {
  auto first_at = [&](long long z) {
    return static_cast<T>(std::lower_bound(cells, cells + count, z * plane,
                                           [](T cell, long long v) { return static_cast<long long>(cell) < v; }) -
                          cells);
  };
  split[0] = 0;
  split[1] = first_at(hi_[0]);
  split[2] = first_at(hi_[1]);
  split[3] = static_cast<T>(count);
}

}  // namespace seisrtm
