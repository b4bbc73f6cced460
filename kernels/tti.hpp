#pragma once
// Launch interface of the TTI (and VTI) pseudo-acoustic time step (DESIGN.md section 3; the
// equations and the CPU reference: validation/cpu_tti.hpp). One step advances p and q together:
//
//   p^{n+1} = [2 p - (1 - s) p^{n-1} + m (a H0 p + b Hz q)] / (1 + s)
//   q^{n+1} = [2 q - (1 - s) q^{n-1} + m (b H0 p + Hz q)] / (1 + s)
//
// with m = vp^2 dt^2, a = 1 + 2 epsilon, b = sqrt(1 + 2 delta), the symmetry axis
// n = (sin th cos ph, sin th sin ph, cos th) computed in the kernel from the angles, p = q = 0
// outside the grid and, with a free surface, p = q = 0 at z = 0 and the odd image above it.
// The model volumes hold m, a and b rather than vp, epsilon and delta (the same count, and the
// square root leaves the inner loop); theta and phi stay angles (radians), as DESIGN.md asks.
//
// Memory movement per cell per step in fp32: read p, p_prev, q, q_prev, m, a, b, theta, phi and
// write p_next, q_next (over p_prev, q_prev): 11 values, 44 bytes (tti); vti (theta = phi = 0)
// reads no angles: 36 bytes.
#include <cuda_runtime.h>

#include "kernels/acoustic.hpp"

namespace seisrtm::kernels {

// T: the stored type (float, or __half for fp16 storage: the fields hold p / s and q / s, the
// model volumes their values over their own scales, multiplied back as they are read).
template <class T>
struct TtiArgsT {
  const T* p = nullptr;                      // p^n
  T* pn = nullptr;                           // p^{n-1} on entry, p^{n+1} on exit
  const T* q = nullptr;                      // q^n
  T* qn = nullptr;                           // q^{n-1} on entry, q^{n+1} on exit
  const T* m = nullptr;                      // vp^2 dt^2
  const T* a = nullptr;                      // 1 + 2 epsilon
  const T* b = nullptr;                      // sqrt(1 + 2 delta)
  const T *theta = nullptr, *phi = nullptr;  // radians; null for vti
  const float* damp_x = nullptr;             // sigma dt / 2 per index (1D), as acoustic
  const float* damp_y = nullptr;
  const float* damp_z = nullptr;
  int nx = 0, ny = 0, nz = 0;
  long long sy = 0, sz = 0;                                                         // strides in elements
  float cx[kMaxRadius + 1] = {}, cy[kMaxRadius + 1] = {}, cz[kMaxRadius + 1] = {};  // c_k / h^2 (1/m^2)
  float dx[kMaxRadius + 1] = {}, dy[kMaxRadius + 1] = {}, dz[kMaxRadius + 1] = {};  // a_k / h, k >= 1 (1/m)
  int free_surface = 0;
  // Planes this launch computes, [z_lo, z_end()); the boundary conditions still refer to
  // [0, nz). A slab of a z decomposition computes its edge planes and its interior apart.
  int z_lo = 0, z_hi = -1;  // z_hi < 0: up to nz
  __host__ __device__ int z_end() const { return z_hi < 0 ? nz : z_hi; }
  // fp16 storage: the model volumes' scales (powers of two; unused in fp32).
  float m_scale = 1, a_scale = 1, b_scale = 1, theta_scale = 1, phi_scale = 1;
  // The tma kernel's launch order (rows of tiles of BY rows; kernels/tti_tma.cu): its tiles go in
  // chunks of chunk_rows tile rows and each chunk runs its z blocks in turn. -1 the policy
  // (tti_chunk_rows_policy): chunks of the most whole rows the resident blocks cover, for every
  // z_block (acoustic's policy keeps whole layers beyond 32 planes); 0 whole layers.
  int chunk_rows = -1;
  // L2 eviction priority of the tma kernel's loads in fp32 (fp16 ignores it): 0 none; 1 the
  // per-cell volumes, read once a step, evict-first; 2 as 1, and p and q evict-last. The forward
  // propagator sets it by tma_l2_hint_policy; the migration's steps leave it 0.
  int l2_hint = 0;
};
using TtiArgs = TtiArgsT<float>;
using TtiArgsHalf = TtiArgsT<__half>;

// The tma launch order's chunk by the policy (TtiArgsT::chunk_rows -1), in tile rows of tiles_x
// tiles: the most whole rows that `resident` blocks cover, at least one. A chunk no larger than
// the resident blocks starts z block k + 1 of a tile shortly before z block k ends, so the 2R
// planes of p and q they share are still in L2; a larger one starts it after. Hence the rows the
// resident blocks cover rather than the fewest rows that hold them all (132 resident blocks, 25
// tiles a row: 5 rows, not 6), a little faster for tti and vti in fp32 and fp16
// (docs/BENCHMARKS.md, "TTI and VTI").
constexpr int tti_chunk_rows_policy(int resident, int tiles_x) {
  return resident / tiles_x > 1 ? resident / tiles_x : 1;
}

// The tma variant's block: BX x BY threads, one column each; the p and q tiles carry R halo
// cells on every side (corners included: the xy mixed derivative needs them). BY is 16 rows
// below order 16 (the 2R halo rows of D_x for d_xy cost half of what they cost with 8 rows) and
// 8 at order 16, where 16 rows' stages would not fit in shared memory.
struct TtiTmaPolicy {
  static constexpr int kBlockX = 32;
  static constexpr int kLookahead = 2;  // planes of p and q in flight beyond the R + 1 in use
  // Stages of two planes of the per-cell volumes (one barrier and one load a volume for two
  // planes). Three: faster than two, and than four stages of one plane (docs/BENCHMARKS.md, "TTI
  // and VTI").
  static constexpr int kFieldPairs = 3;
  static constexpr int kFieldDepth = 2;  // planes a load of a per-cell volume (the centre box's depth)
};
constexpr int tti_block_y(int radius) {
  return radius >= 8 ? 8 : 16;
}
constexpr int tti_halo_x(int radius, int element_bytes = 4) {
  return tma_halo_x(radius, element_bytes);  // the box's x start on a 16-byte boundary
}
constexpr int tti_tile_width(int radius, int element_bytes = 4) {
  return (TtiTmaPolicy::kBlockX + tti_halo_x(radius, element_bytes) + radius + 7) / 8 * 8;
}
constexpr int tti_tile_height(int radius) {
  return tti_block_y(radius) + 2 * radius;
}
std::array<int, 3> tti_halo_box(int radius, int element_bytes = 4);
std::array<int, 3> tti_center_box(int radius);

// Tensor maps of the tma variant: p and q of level n with the halo box; p_prev, q_prev and the
// model volumes with the centre box. theta and phi unused (null) for vti.
struct TtiMaps {
  const void *p = nullptr, *q = nullptr;
  const void *p_prev = nullptr, *q_prev = nullptr;
  const void *m = nullptr, *a = nullptr, *b = nullptr, *theta = nullptr, *phi = nullptr;
};

// Runs one step (variant naive or tma; radius 1, 2, 4 or 8). tilted: tti (false: vti, no angle
// volumes and no mixed derivatives). z_block as acoustic (0 = the whole column); naive ignores it.
void launch_tti_step(const TtiArgs& args, bool tilted, Variant variant, int radius, int z_block, const TtiMaps& maps,
                     cudaStream_t stream);
// fp16 storage (naive and tma; the maps over halves, tti_halo_box(radius, 2)).
void launch_tti_step(const TtiArgsHalf& args, bool tilted, Variant variant, int radius, int z_block,
                     const TtiMaps& maps, cudaStream_t stream);

}  // namespace seisrtm::kernels
