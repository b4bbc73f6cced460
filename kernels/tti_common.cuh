#pragma once
// Device pieces shared by the TTI variants: the symmetry axis from the angles, the rotated
// operators from the six second derivatives, and the update of both fields. The arithmetic and
// its order follow validation/cpu_tti.cpp term by term, so the variants differ from the CPU
// reference by rounding (and fused multiply-adds) only.
#include "kernels/acoustic_common.cuh"
#include "kernels/tti.hpp"

namespace seisrtm::kernels::detail {

// The six second derivatives of one field at one cell (1/m^2 x field).
struct Hessian {
  float xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;
};

struct Axis {
  float x = 0, y = 0, z = 1;
};

// A model value as float: fp16 storage multiplies the half by its volume's scale.
template <class T>
__device__ __forceinline__ float model_value(const T* v, long long i, float scale) {
  if constexpr (sizeof(T) == 2) return to_float(v[i]) * scale;
  (void)scale;
  return to_float(v[i]);
}

template <bool Tilted, class T>
__device__ __forceinline__ Axis symmetry_axis(const TtiArgsT<T>& a, long long i) {
  Axis n;
  if constexpr (Tilted) {
    float st, ct, sp, cp;
    sincosf(model_value(a.theta, i, a.theta_scale), &st, &ct);
    sincosf(model_value(a.phi, i, a.phi_scale), &sp, &cp);
    n.x = st * cp;
    n.y = st * sp;
    n.z = ct;
  }
  return n;
}
// The tma variant's: the hardware approximations (__sincosf: absolute error <= 2^-21.41 for
// |x| <= pi, a few float eps; validation/tolerance.hpp), a few instructions instead of the ~40
// of sincosf with its range reduction, in a kernel whose issue rate bounds it. Angles beyond
// pi lose accuracy there: the host stores theta and phi reduced to [-pi, pi].
template <bool Tilted>
__device__ __forceinline__ Axis symmetry_axis(float theta, float phi) {
  Axis n;
  if constexpr (Tilted) {
    float st, ct, sp, cp;
    __sincosf(theta, &st, &ct);
    __sincosf(phi, &sp, &cp);
    n.x = st * cp;
    n.y = st * sp;
    n.z = ct;
  }
  return n;
}

// H0 f = sum_a (1 - n_a^2) d_aa f - 2 (nx ny dxy + nx nz dxz + ny nz dyz) f. VTI (n = z): dxx + dyy,
// the same value the general form gives with n = (0, 0, 1) exactly.
template <bool Tilted>
__device__ __forceinline__ float h0(const Hessian& d, const Axis& n) {
  if constexpr (!Tilted) return d.xx + d.yy;
  return ((1.0f - n.x * n.x) * d.xx + (1.0f - n.y * n.y) * d.yy + (1.0f - n.z * n.z) * d.zz) -
         2.0f * (n.x * n.y * d.xy + n.x * n.z * d.xz + n.y * n.z * d.yz);
}
// Hz f = sum_a n_a^2 d_aa f + 2 (nx ny dxy + nx nz dxz + ny nz dyz) f. VTI: dzz.
template <bool Tilted>
__device__ __forceinline__ float hz(const Hessian& d, const Axis& n) {
  if constexpr (!Tilted) return d.zz;
  return (n.x * n.x * d.xx + n.y * n.y * d.yy + n.z * n.z * d.zz) +
         2.0f * (n.x * n.y * d.xy + n.x * n.z * d.xz + n.y * n.z * d.yz);
}

// The new levels of p and q at one cell (iz: its plane, for the free surface).
struct TtiCell {
  float p, p_prev, q, q_prev, m, a, b, s;
};
// Outside the damping zone (s = 0) and off a free surface: leapfrog's undamped form for both
// fields under one test (the same bits as tti_update there).
__device__ __forceinline__ void tti_update_undamped(const TtiCell& c, float h0p, float hzq, float* p_out,
                                                    float* q_out) {
  *p_out = leapfrog_undamped(c.p, c.p_prev, c.m, c.a * h0p + c.b * hzq);
  *q_out = leapfrog_undamped(c.q, c.q_prev, c.m, c.b * h0p + hzq);
}
__device__ __forceinline__ void tti_update(const TtiCell& c, float h0p, float hzq, int iz, int free_surface,
                                           float* p_out, float* q_out) {
  const float np = leapfrog(c.p, c.p_prev, c.m, c.a * h0p + c.b * hzq, c.s);
  const float nq = leapfrog(c.q, c.q_prev, c.m, c.b * h0p + hzq, c.s);
  const bool surface = free_surface && iz == 0;  // p = q = 0 on a free surface
  *p_out = surface ? 0.0f : np;
  *q_out = surface ? 0.0f : nq;
}

}  // namespace seisrtm::kernels::detail
