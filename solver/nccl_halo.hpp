#pragma once
// The halo exchange of a z slab on the GPU (solver/decomposition.hpp): NCCL send/recv straight
// from and into the wavefield volumes (the Open MPI of the GPU machines is not CUDA-aware at run
// time; DESIGN.md section 9). NCCL is loaded when a decomposed GPU run starts (libnccl.so.2), so
// the binary needs it only for that.
#include <cuda_runtime.h>

#include <memory>

#include "solver/decomposition.hpp"

namespace seisrtm {

class DeviceHalo {
 public:
  // Loads NCCL; throws Error when it is not there. Not collective.
  explicit DeviceHalo(const Slab& slab);
  ~DeviceHalo();
  // Collective over all ranks, on the current device: the communicator (rank 0's id via MPI).
  void connect();
  bool connected() const;
  // In `stream`: for each of `count` fields (pointers to the slab's plane 0, planes `plane`
  // floats apart) sends the first and last `halo` own planes to the neighbours and receives
  // theirs into the halo planes.
  void exchange(float* const* fields, int count, long long plane, cudaStream_t stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seisrtm
