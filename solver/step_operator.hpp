#pragma once
// The step of a field over its model (the forward backend's and the migration's fields): acoustic (fp32 or
// fp16 storage), vti/tti (fp32, or fp16 for the forward backend: the same arguments and maps),
// and the fused backward step (acoustic tma: one launch steps both fields and images).
#include <cuda_runtime.h>

#include "kernels/acoustic.hpp"
#include "kernels/rtm.hpp"
#include "kernels/tti.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_model.hpp"
#include "solver/device_wavefield.hpp"

namespace seisrtm {

class StepOperator {
 public:
  // [z_lo, z_hi): the planes a step computes (a slab's own planes; z_hi -1: all).
  StepOperator(const Problem& pb, const CudaOptions& opt, long long nxp, const DeviceModel& model, bool half, int z_lo,
               int z_hi);
  // The tma kernels' settings for the fields' memory kind (tma_shape_for and the rest).
  void tune(bool compressible);
  // The forward backend's settings: the acoustic shape, and the launch order and L2 hints of
  // acoustic and vti/tti alike (the migration's vti/tti steps leave those at their defaults).
  void tune_forward(bool compressible);
  // One step of field w from buffer c over planes [lo, hi) in stream `on`: buffer 1 - c
  // receives the new level (p, and q for vti/tti).
  void step(const DeviceWavefield& w, int c, int lo, int hi, cudaStream_t on) const;
  void step(const DeviceWavefield& w, int c, cudaStream_t on) const { step(w, c, z_lo_, z_hi_, on); }
  // The fp32 acoustic step arguments of field w from buffer c (the fused step's halves).
  kernels::AcousticArgs args(const DeviceWavefield& w, int c) const;
  // The same in fp16 storage (halves of the fields and the model, the model's scale).
  kernels::AcousticArgsHalf half_args(const DeviceWavefield& w, int c) const;
  // The fused backward step of both fields from their buffers s.cur and r.cur over planes
  // [lo, hi), with fa's image, box and scales (fa.s and fa.r are filled here: fp32, or the
  // halves of fp16 storage).
  void fused(const kernels::FusedArgs& fa, const DeviceWavefield& s, const DeviceWavefield& r, int lo, int hi,
             cudaStream_t on) const;
  void fused(const kernels::FusedArgs& fa, const DeviceWavefield& s, const DeviceWavefield& r, cudaStream_t on) const {
    fused(fa, s, r, z_lo_, z_hi_, on);
  }
  kernels::TmaShape shape() const { return shape_; }
  kernels::FusedShape fused_shape() const { return fused_shape_; }
  int chunk_rows() const { return chunk_rows_; }
  int l2_hint() const { return l2_hint_; }

 private:
  void tti_step(const DeviceWavefield& w, int c, int lo, int hi, cudaStream_t on) const;
  // vti/tti in fp16: tti_base_'s weights and sizes with the halves and the model's scales.
  kernels::TtiArgsHalf half_tti_args(const DeviceWavefield& w, int c) const;
  const Problem& pb_;
  const CudaOptions& opt_;
  long long nxp_;
  const DeviceModel& model_;
  bool half_, anisotropic_, tilted_;
  int z_lo_, z_hi_;
  kernels::TtiArgs tti_base_;  // weights, damping and sizes of the vti/tti step
  kernels::FusedShape fused_shape_ = kernels::FusedShape::compact;
  kernels::TmaShape shape_ = kernels::TmaShape::rows2;  // the forward tma kernel's (tma_shape_for)
  int chunk_rows_ = -1;                                 // and its launch order (tma_chunk_rows)
  int l2_hint_ = 0;                                     // and its loads' L2 hints (tma_l2_hint)
};

}  // namespace seisrtm
