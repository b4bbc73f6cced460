#pragma once
// Subsurface-offset image gathers on the device (solver/image_gathers.hpp has the definition):
// g += S(x - h) R(x + h) at the gather locations, for every offset and depth of the imaged box,
// on an imaging level. The device layout is [y location][z][x location][offset], offsets
// fastest: the threads of a warp read neighbouring cells of one row of S and of R and add into
// neighbouring values (8 bytes of read-modify-write a value and level; the rows come from L2).
#include <cuda_runtime.h>

namespace seisrtm::kernels {

struct GatherArgs {
  int x_first = 0, x_step = 1, nxl = 0;  // the locations' x cells: x_first + j x_step, j < nxl
  int y_first = 0, y_step = 1, nyl = 0;
  int half = 0;                              // H: offsets -H..H
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // the imaged box
  int nz = 0;                                // depth samples of the layout (the grid's)
  long long sy = 0, sz = 0;                  // the fields' row and plane strides (padded layout)
};

// g (the device layout above) += s r at the offsets whose both cells lie inside the box.
void launch_offset_gathers(const float* s, const float* r, float* g, const GatherArgs& a, cudaStream_t stream);

}  // namespace seisrtm::kernels
