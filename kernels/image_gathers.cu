#include "kernels/cuda_check.hpp"
#include "kernels/image_gathers.hpp"

namespace seisrtm::kernels {

namespace {

// One thread a (location, offset) of a row: blockIdx.y the depth inside the box, blockIdx.z the
// y location. The product rounded before the sum (no fused multiply-add), as the CPU reference
// adds it: the same bits a level.
__global__ void offset_gathers_kernel(const float* s, const float* r, float* g, GatherArgs a) {
  const int offsets = 2 * a.half + 1;
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= a.nxl * offsets) return;
  const int jx = k / offsets, h = k - jx * offsets - a.half;
  const int iz = a.lo[2] + static_cast<int>(blockIdx.y), jy = static_cast<int>(blockIdx.z);
  const int ix = a.x_first + jx * a.x_step, iy = a.y_first + jy * a.y_step;
  if (ix - h < a.lo[0] || ix - h >= a.hi[0] || ix + h < a.lo[0] || ix + h >= a.hi[0]) return;
  const long long row = iz * a.sz + iy * a.sy;
  float& o = g[((static_cast<long long>(jy) * a.nz + iz) * a.nxl + jx) * offsets + (h + a.half)];
  o = __fadd_rn(o, __fmul_rn(s[row + ix - h], r[row + ix + h]));
}

}  // namespace

void launch_offset_gathers(const float* s, const float* r, float* g, const GatherArgs& a, cudaStream_t stream) {
  if (a.nxl == 0 || a.nyl == 0 || a.hi[2] <= a.lo[2]) return;
  const int per_row = a.nxl * (2 * a.half + 1);
  const dim3 block(128), grid((per_row + 127) / 128, a.hi[2] - a.lo[2], a.nyl);
  offset_gathers_kernel<<<grid, block, 0, stream>>>(s, r, g, a);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace seisrtm::kernels
