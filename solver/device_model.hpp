#pragma once
// The model a migration steps its fields over, on the device: m = v^2 dt^2 (fp32, or fp16
// over model_scale), the damping profiles, the vti/tti volumes besides m, and their tma maps.
#include <cuda.h>

#include "solver/cuda_propagator.hpp"
#include "solver/device_buffer.hpp"

namespace seisrtm {

struct DeviceModel {
  DeviceBuffer m, damp[3];
  TtiVolumes tti;                      // vti/tti: 1 + 2 eps, sqrt(1 + 2 delta), angles
  float model_scale = 1;               // fp16: the power of two m is stored divided by
  float tti_scales[4] = {1, 1, 1, 1};  // fp16 vti/tti: those of a, b, theta, phi
  CUtensorMap tmap_m{};                // acoustic tma: m in the block's own box
  CUtensorMap tti_maps[5]{};           // vti/tti tma: m, a, b, theta, phi
};

}  // namespace seisrtm
