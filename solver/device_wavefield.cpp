#include "solver/device_wavefield.hpp"

#include <cuda_fp16.h>

#include <vector>

#include "kernels/acoustic.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/tti.hpp"
#include "solver/tensor_map.hpp"

namespace seisrtm {

void DeviceWavefield::clear(cudaStream_t stream) const {
  for (int c = 0; c < 2; ++c) {
    for (const auto* b : {&p[c], &q[c]})
      if (b->bytes() > 0) SEISRTM_CUDA(cudaMemsetAsync(b->as<void>(), 0, b->bytes(), stream));
  }
}

void encode_acoustic_maps(const DeviceBuffer (&p)[2], const VolumeDims& d, int radius, int eb, CUtensorMap (&halo)[2],
                          CUtensorMap* center) {
  for (int c = 0; c < 2; ++c) {
    encode_volume_map(&halo[c], p[c].as<void>(), d.nxp, d.ny, d.nz, kernels::tma_box(radius, eb), eb);
    encode_volume_map(&center[c], p[c].as<void>(), d.nxp, d.ny, d.nz, kernels::tma_center_box(), eb);
  }
}

void encode_tti_maps(const DeviceBuffer (&p)[2], const DeviceBuffer (&q)[2], const VolumeDims& d, int radius, int eb,
                     CUtensorMap (&halo)[2][2], CUtensorMap (&center)[2][2]) {
  for (int c = 0; c < 2; ++c) {
    const DeviceBuffer* v[2] = {&p[c], &q[c]};
    for (int k = 0; k < 2; ++k) {
      encode_volume_map(&halo[k][c], v[k]->as<void>(), d.nxp, d.ny, d.nz, kernels::tti_halo_box(radius, eb), eb);
      encode_volume_map(&center[k][c], v[k]->as<void>(), d.nxp, d.ny, d.nz, kernels::tti_center_box(radius), eb);
    }
  }
}

void encode_tti_model_maps(const DeviceBuffer& m, const TtiVolumes& v, bool tilted, const VolumeDims& d, int radius,
                           int eb, CUtensorMap (&maps)[5]) {
  const DeviceBuffer* vols[5] = {&m, &v.a, &v.b, &v.theta, &v.phi};
  for (int k = 0; k < (tilted ? 5 : 3); ++k)
    encode_volume_map(&maps[k], vols[k]->as<void>(), d.nxp, d.ny, d.nz, kernels::tti_center_box(radius), eb);
}

kernels::TtiMaps tti_step_maps(const CUtensorMap (&halo)[2][2], const CUtensorMap (&center)[2][2],
                               const CUtensorMap (&model)[5], int c) {
  return {&halo[0][c], &halo[1][c], &center[0][1 - c], &center[1][1 - c], &model[0],
          &model[1],   &model[2],   &model[3],         &model[4]};
}

void DeviceWavefield::encode_acoustic_maps(const VolumeDims& d, int radius, int eb, bool with_fused,
                                           kernels::FusedShape shape) {
  seisrtm::encode_acoustic_maps(p, d, radius, eb, halo, center);
  if (with_fused)
    for (int c = 0; c < 2; ++c)
      encode_volume_map(&fused[c], p[c].as<void>(), d.nxp, d.ny, d.nz, kernels::fused_box(radius, shape, eb), eb);
}

void DeviceWavefield::encode_tti_maps(const VolumeDims& d, int radius) {
  seisrtm::encode_tti_maps(p, q, d, radius, 4, tti_halo, tti_center);
}

void download_volume(const DeviceBuffer& b, float* out, const VolumeDims& d, bool half, float scale,
                     cudaStream_t stream) {
  if (half && scale > 0) {
    std::vector<__half> h(static_cast<size_t>(d.nxp * d.ny * d.nz));
    SEISRTM_CUDA(cudaMemcpyAsync(h.data(), b.as<void>(), h.size() * sizeof(__half), cudaMemcpyDeviceToHost, stream));
    SEISRTM_CUDA(cudaStreamSynchronize(stream));
    for (long long k = 0; k < d.ny * d.nz; ++k)
      for (long long x = 0; x < d.nx; ++x) out[k * d.nx + x] = __half2float(h[k * d.nxp + x]) * scale;
    return;
  }
  SEISRTM_CUDA(cudaMemcpy2DAsync(out, d.nx * sizeof(float), b.as<float>(), d.nxp * sizeof(float), d.nx * sizeof(float),
                                 d.ny * d.nz, cudaMemcpyDeviceToHost, stream));
  SEISRTM_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace seisrtm
