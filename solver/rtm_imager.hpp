#pragma once
// The image of a migration on the device: image += p chi and illumination += p^2 inside the
// interior box (floats, padded layout), a shot's volumes added to the host's or kept as the
// stack of several shots. With the inverse-scattering condition (kernels/image_isic.hpp) the
// image takes its terms instead, from two more volumes: 1 / (v^2 dt^2) and the receiver field's
// change dR of the coming imaging level.
#include <cuda_runtime.h>

#include "kernels/image_isic.hpp"
#include "kernels/rtm.hpp"
#include "solver/device_buffer.hpp"
#include "solver/device_wavefield.hpp"
#include "solver/migration.hpp"

namespace seisrtm {

class RtmImager {
 public:
  RtmImager() = default;
  ~RtmImager();
  RtmImager(const RtmImager&) = delete;
  RtmImager& operator=(const RtmImager&) = delete;
  // bytes: one volume's; interior: the box imaged.
  void allocate(std::size_t bytes, const CellBox& interior, const VolumeDims& d);
  // migration.imaging_condition isic: w = 1 / (v^2 dt^2) (the padded layout, fp32 fields), the
  // grid spacing h and the cells the gradients may read (`valid`: the rebuilt interior, in a z
  // slab's coordinates for a slab); allocates dR beside it.
  void use_isic(DeviceBuffer w, const double h[3], const CellBox& valid);
  bool isic() const { return weight_.bytes() > 0; }
  // isic: dR = chi^{k+2} - chi^{k+1} for imaging level k, before the receiver step that makes chi^k
  // overwrites chi^{k+2} (newer: chi^{k+2}, older: chi^{k+1}).
  void keep_receiver_change(const DeviceBuffer& newer, const DeviceBuffer& older, cudaStream_t stream) const;
  // Zeroes both volumes.
  void clear(cudaStream_t stream) const;
  // The box of the shot's field scales (fp16: the fields hold s / s_scale, r / r_scale).
  void set_scales(float s_scale, float r_scale) { box_.s_scale = s_scale, box_.r_scale = r_scale; }
  // p^n (in s) with chi^{n+1} (in r), halves when half; isic: also p^{n+1} (s_next) and the dR
  // kept for level n.
  void image(const DeviceBuffer& s, const DeviceBuffer& s_next, const DeviceBuffer& r, bool half,
             cudaStream_t stream) const;
  // The fused step's image pointers and box.
  void fused_args(kernels::FusedArgs& fa) const;
  // The stack: the volumes keep every shot's image between begin_stack and take_stack.
  bool stacking() const { return stack_; }
  void set_stacking(bool on) { stack_ = on; }
  // The volumes as floats in the unpadded layout.
  void download(float* image, float* illumination, cudaStream_t stream) const;
  // The shot's volumes added to the host's (through a pinned volume: copies at the link's speed,
  // where pageable memory is many times slower; docs/BENCHMARKS.md, "RTM").
  void add_to(float* image, float* illumination, cudaStream_t stream);

 private:
  DeviceBuffer image_, illumination_;
  DeviceBuffer weight_, receiver_change_;  // isic: w and dR
  kernels::ImageBox box_;
  kernels::IsicArgs isic_;  // isic: the box's copy, the valid box, 1 / (4 h^2) an axis
  VolumeDims dims_;
  bool stack_ = false;
  float* pinned_ = nullptr;
};

}  // namespace seisrtm
