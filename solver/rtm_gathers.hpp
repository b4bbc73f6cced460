#pragma once
// The image gathers of a migration on the device (migration.gathers; kernels/image_gathers.hpp):
// a shot's subsurface-offset gathers accumulated on its imaging levels beside the image, then
// added to the host's in the layout of solver/image_gathers.hpp.
#include <cuda_runtime.h>

#include "kernels/image_gathers.hpp"
#include "solver/device_buffer.hpp"
#include "solver/device_wavefield.hpp"
#include "solver/image_gathers.hpp"

namespace seisrtm {

class RtmGathers {
 public:
  RtmGathers() = default;
  ~RtmGathers();
  RtmGathers(const RtmGathers&) = delete;
  RtmGathers& operator=(const RtmGathers&) = delete;
  // Device bytes of `l`'s gathers over `planes` depths (4 a value): the grid's, or a z slab's.
  static std::size_t bytes(const GatherLayout& l, long long planes) {
    return static_cast<std::size_t>(l.locations() * l.offsets() * planes) * sizeof(float);
  }
  // `l` over the imaged box `interior` of fields of dims `d` (a z slab's: its planes, plane z the
  // layout's z + z_shift); an empty layout: none (every call a no-op).
  void allocate(const GatherLayout& l, const CellBox& interior, const VolumeDims& d, long long z_shift = 0);
  bool active() const { return layout_.values() > 0; }
  void clear(cudaStream_t stream) const;
  // One imaging level: p^n in s, chi^{n+1} in r (fp32 fields).
  void add(const DeviceBuffer& s, const DeviceBuffer& r, cudaStream_t stream) const;
  // The shot's gathers added to `host` ([y location][x location][offset][z] of the whole grid;
  // through a pinned copy of the device's).
  void add_to(float* host, cudaStream_t stream);

 private:
  GatherLayout layout_;
  DevicePlanes planes_;  // the device's depths and those of the box, and their shift into the layout
  kernels::GatherArgs args_;
  DeviceBuffer values_;
  float* pinned_ = nullptr;
};

}  // namespace seisrtm
