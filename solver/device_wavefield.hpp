#pragma once
// One wavefield of a migration on the device: two levels of p (and of q for vti/tti) in the
// padded layout (rows of nxp elements), the tma maps of each level, and which buffer holds the
// newest level.
#include <cuda.h>
#include <cuda_runtime.h>

#include "kernels/rtm.hpp"
#include "kernels/tti.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_buffer.hpp"

namespace seisrtm {

// The sizes of a padded volume: nx cells a row padded to nxp elements, ny rows, nz planes.
struct VolumeDims {
  long long nx = 0, ny = 0, nz = 0, nxp = 0;
};

struct DeviceWavefield {
  DeviceBuffer p[2], q[2];                           // q: vti/tti only
  CUtensorMap halo[2]{}, center[2]{};                // acoustic tma: p in the halo box and the block's own box
  CUtensorMap fused[2]{};                            // the fused backward step's halo boxes
  CUtensorMap tti_halo[2][2]{}, tti_center[2][2]{};  // vti/tti tma: [p, q][buffer]
  int cur = 0;                                       // the newest level is in p[cur] (and q[cur])

  // q of buffer c, null for the acoustic field.
  const DeviceBuffer* q_at(int c) const { return q[c].bytes() > 0 ? &q[c] : nullptr; }
  void flip() { cur = 1 - cur; }
  // Zeroes both levels (p and q).
  void clear(cudaStream_t stream) const;
  // The acoustic tma maps of both levels (element_bytes 4, or 2 in fp16), with the fused
  // step's halo box when fused.
  void encode_acoustic_maps(const VolumeDims& d, int radius, int element_bytes, bool fused, kernels::FusedShape shape);
  // The vti/tti tma maps of both levels of p and q (the forward backend's).
  void encode_tti_maps(const VolumeDims& d, int radius);
};

// Tensor maps of the tma kernels over level pairs, shared by CudaPropagator and the migrator's
// fields (element_bytes 4, or 2 in fp16 storage). Acoustic: p[c] in the halo box and in the
// block's own box.
void encode_acoustic_maps(const DeviceBuffer (&p)[2], const VolumeDims& d, int radius, int element_bytes,
                          CUtensorMap (&halo)[2], CUtensorMap* center);
// vti/tti: [p, q][buffer] in the halo box and the centre box.
void encode_tti_maps(const DeviceBuffer (&p)[2], const DeviceBuffer (&q)[2], const VolumeDims& d, int radius,
                     int element_bytes, CUtensorMap (&halo)[2][2], CUtensorMap (&center)[2][2]);
// vti/tti model maps: m, a, b, and for tti theta and phi, in the centre box.
void encode_tti_model_maps(const DeviceBuffer& m, const TtiVolumes& v, bool tilted, const VolumeDims& d, int radius,
                           int element_bytes, CUtensorMap (&maps)[5]);
// The maps of the vti/tti step from buffer c (p, q in the halo box; their previous levels and
// the model in the centre box).
kernels::TtiMaps tti_step_maps(const CUtensorMap (&halo)[2][2], const CUtensorMap (&center)[2][2],
                               const CUtensorMap (&model)[5], int c);

// A field level (half: stored as __half, times scale) or an image volume as floats in the
// unpadded layout; synchronises the stream.
void download_volume(const DeviceBuffer& b, float* out, const VolumeDims& d, bool half, float scale,
                     cudaStream_t stream);

}  // namespace seisrtm
