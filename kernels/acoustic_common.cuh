#pragma once
// Device pieces shared by the acoustic variants. They take indices from the caller.
#include "kernels/acoustic.hpp"

namespace seisrtm::kernels::detail {

// A stored value as float, and a float stored (fp16: rounded to nearest even, as
// validation::round_to_half emulates).
__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(__half v) {
  return __half2float(v);
}
template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

// The leapfrog update with the damping term (DESIGN.md section 3). Outside the damping zone
// s = 0 and the division is skipped: (1 - 0) and / (1 + 0) are exact, so both branches give
// the same bits there.
__device__ __forceinline__ float leapfrog_undamped(float p, float p_prev, float m, float lap) {
  return 2.0f * p - p_prev + m * lap;
}
// A zero numerator (a wavefield the wave has not reached yet: the damping zone through most of a
// run) returns itself, the bits of 0 / (1 + s); the division's operand check sends zeros to its
// slow path, a subroutine of about 35 instructions, which every division of such a cell takes
// (a visible share of the tma kernels' instructions and stalls; docs/BENCHMARKS.md, "Forward
// acoustic").
__device__ __forceinline__ float leapfrog(float p, float p_prev, float m, float lap, float s) {
  if (s == 0.0f) return leapfrog_undamped(p, p_prev, m, lap);
  const float num = 2.0f * p - (1.0f - s) * p_prev + m * lap;
  if (num == 0.0f) return num;
  return num / (1.0f + s);
}

// p at (ix, iy, iz) of the column (ix, iy) inside the x-y plane, with the z boundary
// conditions: zero below the grid, zero or the odd image above it.
template <class T>
__device__ __forceinline__ float column_value(const AcousticArgsT<T>& a, int ix, int iy, int iz) {
  if (iz >= a.nz) return 0.0f;
  if (iz < 0) return a.free_surface ? -to_float(a.p[(long long)(-iz) * a.sz + (long long)iy * a.sy + ix]) : 0.0f;
  return to_float(a.p[(long long)iz * a.sz + (long long)iy * a.sy + ix]);
}

template <class T>
__device__ __forceinline__ float damping(const AcousticArgsT<T>& a, int ix, int iy, int iz) {
  return a.damp_x[ix] + (a.damp_y[iy] + a.damp_z[iz]);
}

// Writes the new value, enforcing p = 0 on a free surface.
template <class T>
__device__ __forceinline__ void store(const AcousticArgsT<T>& a, long long i, int iz, float v) {
  a.pn[i] = from_float<T>((a.free_surface && iz == 0) ? 0.0f : v);
}

}  // namespace seisrtm::kernels::detail
