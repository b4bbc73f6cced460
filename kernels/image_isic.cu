#include "kernels/cuda_check.hpp"
#include "kernels/image_isic.hpp"

namespace seisrtm::kernels {

namespace {

__global__ void difference_kernel(const float* newer, const float* older, float* d, ImageBox b) {
  const int ix = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
  const int iz = b.lo[2] + blockIdx.z;
  if (ix >= b.hi[0] || iy >= b.hi[1]) return;
  const long long i = iz * b.sz + iy * b.sy + ix;
  d[i] = __fsub_rn(newer[i], older[i]);
}

// One thread a column (x, y) of the box marching down z: p^k and chi^{k+1} of the planes above,
// at and below in registers, the x and y neighbours from L1 (the block's rows) and L2. Bytes a
// cell: 7 volumes read, 2 written (36), each field read once from memory.
__global__ void isic_kernel(const float* s, const float* s1, const float* r, const float* dr, const float* w,
                            float* image, float* illum, IsicArgs a) {
  const ImageBox& b = a.box;
  const int ix = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
  if (ix >= b.hi[0] || iy >= b.hi[1]) return;
  // A gradient component is zero where a neighbour lies outside `valid` (as the reference's).
  const int* vl = a.valid_lo;
  const int* vh = a.valid_hi;
  const bool x_in = ix > vl[0] && ix + 1 < vh[0], y_in = iy > vl[1] && iy + 1 < vh[1];
  long long i = b.lo[2] * b.sz + iy * b.sy + ix;
  const bool first_above = b.lo[2] > vl[2];
  float s_above = first_above ? s[i - b.sz] : 0.0f, r_above = first_above ? r[i - b.sz] : 0.0f;
  float s_here = s[i], r_here = r[i];
  for (int iz = b.lo[2]; iz < b.hi[2]; ++iz, i += b.sz) {
    const bool below = iz + 1 < vh[2];
    const float s_below = below ? s[i + b.sz] : 0.0f, r_below = below ? r[i + b.sz] : 0.0f;
    const float time = __fmul_rn(__fmul_rn(w[i], __fsub_rn(s1[i], s_here)), dr[i]);
    float grad = 0;
    if (x_in)
      grad = __fadd_rn(grad, __fmul_rn(__fmul_rn(a.cx, __fsub_rn(s[i + 1], s[i - 1])), __fsub_rn(r[i + 1], r[i - 1])));
    if (y_in)
      grad = __fadd_rn(
          grad, __fmul_rn(__fmul_rn(a.cy, __fsub_rn(s[i + b.sy], s[i - b.sy])), __fsub_rn(r[i + b.sy], r[i - b.sy])));
    if (iz > vl[2] && below)
      grad = __fadd_rn(grad, __fmul_rn(__fmul_rn(a.cz, __fsub_rn(s_below, s_above)), __fsub_rn(r_below, r_above)));
    image[i] = __fadd_rn(image[i], __fsub_rn(time, grad));
    illum[i] = __fadd_rn(illum[i], __fmul_rn(s_here, s_here));
    s_above = s_here, r_above = r_here, s_here = s_below, r_here = r_below;
  }
}

}  // namespace

void launch_difference(const float* newer, const float* older, float* d, const ImageBox& b, cudaStream_t stream) {
  const int nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1];
  if (nx <= 0 || ny <= 0 || b.hi[2] <= b.lo[2]) return;
  const dim3 block(32, 8, 1), grid((nx + 31) / 32, (ny + 7) / 8, b.hi[2] - b.lo[2]);
  difference_kernel<<<grid, block, 0, stream>>>(newer, older, d, b);
  SEISRTM_CUDA_LAUNCHED();
}

void launch_isic(const float* s, const float* s_next, const float* r, const float* dr, const float* w, float* image,
                 float* illumination, const IsicArgs& a, cudaStream_t stream) {
  const ImageBox& b = a.box;
  const int nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1];
  if (nx <= 0 || ny <= 0 || b.hi[2] <= b.lo[2]) return;
  const dim3 block(32, 8, 1), grid((nx + 31) / 32, (ny + 7) / 8, 1);
  isic_kernel<<<grid, block, 0, stream>>>(s, s_next, r, dr, w, image, illumination, a);
  SEISRTM_CUDA_LAUNCHED();
}

}  // namespace seisrtm::kernels
