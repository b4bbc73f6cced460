#pragma once
// Device pieces shared by the acoustic variants. They take indices from the caller.
#include "kernels/acoustic.hpp"

namespace seisrtm::kernels::detail {

// The leapfrog update with the damping term (DESIGN.md section 3). Outside the damping zone
// s = 0 and the division is skipped: (1 - 0) and / (1 + 0) are exact, so both branches give
// the same bits there.
__device__ __forceinline__ float leapfrog(float p, float p_prev, float m, float lap, float s) {
  if (s == 0.0f) return 2.0f * p - p_prev + m * lap;
  return (2.0f * p - (1.0f - s) * p_prev + m * lap) / (1.0f + s);
}

// p at (ix, iy, iz) of the column (ix, iy) inside the x-y plane, with the z boundary
// conditions: zero below the grid, zero or the odd image above it.
__device__ __forceinline__ float column_value(const AcousticArgs& a, int ix, int iy, int iz) {
  if (iz >= a.nz) return 0.0f;
  if (iz < 0) return a.free_surface ? -a.p[(long long)(-iz) * a.sz + (long long)iy * a.sy + ix] : 0.0f;
  return a.p[(long long)iz * a.sz + (long long)iy * a.sy + ix];
}

__device__ __forceinline__ float damping(const AcousticArgs& a, int ix, int iy, int iz) {
  return a.damp_x[ix] + (a.damp_y[iy] + a.damp_z[iz]);
}

// Writes the new value, enforcing p = 0 on a free surface.
__device__ __forceinline__ void store(const AcousticArgs& a, long long i, int iz, float v) {
  a.pn[i] = (a.free_surface && iz == 0) ? 0.0f : v;
}

}  // namespace seisrtm::kernels::detail
