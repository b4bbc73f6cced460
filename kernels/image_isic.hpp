#pragma once
// The inverse-scattering imaging condition on the device (migration.imaging_condition: isic;
// validation/cpu_migration.cpp, isic_level, is the reference): on an imaging level k,
//   image += w (p^{k+1} - p^k) dR - grad p^k . grad chi^{k+1},  illumination += (p^k)^2,
// with w = 1 / (v^2 dt^2) and dR = chi^{k+2} - chi^{k+1}, saved before the receiver step that
// overwrites chi^{k+2} (launch_difference). Each product and sum rounded as the reference rounds
// it (no fused multiply-add): the same bits a level from the same fields.
#include <cuda_runtime.h>

#include "kernels/rtm.hpp"

namespace seisrtm::kernels {

struct IsicArgs {
  ImageBox box;  // the imaged box and the strides
  // The cells whose values the gradients may read: a component is zero where a neighbour lies
  // outside (the rebuilt interior; a z slab's box is its own planes, its neighbours' planes valid).
  int valid_lo[3] = {0, 0, 0}, valid_hi[3] = {0, 0, 0};
  float cx = 0, cy = 0, cz = 0;  // 1 / (4 h^2) an axis: centred differences over two cells
};

// d = newer - older inside the box (outside it d is not written).
void launch_difference(const float* newer, const float* older, float* d, const ImageBox& box, cudaStream_t stream);
// s: p^k, s_next: p^{k+1}, r: chi^{k+1}, dr: chi^{k+2} - chi^{k+1}, w: 1 / (v^2 dt^2).
void launch_isic(const float* s, const float* s_next, const float* r, const float* dr, const float* w, float* image,
                 float* illumination, const IsicArgs& a, cudaStream_t stream);

}  // namespace seisrtm::kernels
