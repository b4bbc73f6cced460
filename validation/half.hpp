#pragma once
// Half-precision (IEEE binary16) storage emulated in float: the CPU reference for storing the
// wavefields and the model in 16 bits with the arithmetic in float. A stored value is
// the float the GPU's __float2half_rn and __half2float give back: rounded to 11 significant bits
// (ties to even), to multiples of 2^-24 below the smallest normal half 2^-14, to +-Inf at and
// beyond 65520 (the largest half is 65504).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "solver/storage.hpp"

namespace seisrtm::validation {

using seisrtm::half_field_scale;
using seisrtm::power_of_two_below;

inline float round_to_half(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t sign = u & 0x80000000u;
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return x;  // Inf, NaN
  const int e = static_cast<int>(a >> 23) - 127;
  if (e < -25) return std::bit_cast<float>(sign);  // below half the smallest subnormal: zero
  if (e == -25) {  // [2^-25, 2^-24): zero at exactly 2^-25 (the tie goes to the even zero), else 2^-24
    const uint32_t r = (a & 0x007fffffu) == 0 ? 0u : 0x33800000u;
    return std::bit_cast<float>(sign | r);
  }
  // Bits of the float's 23-bit mantissa below the half's precision at this exponent: 13 for a
  // normal half, more in the subnormal range (fixed quantum 2^-24).
  const int k = 13 + (e < -14 ? -14 - e : 0);
  const uint32_t unit = 1u << k, rem = a & (unit - 1);
  a -= rem;
  if (rem > unit / 2 || (rem == unit / 2 && (a & unit) != 0)) a += unit;  // carries into the exponent
  if (a > 0x477fe000u) a = 0x7f800000u;                                   // above 65504: overflow
  return std::bit_cast<float>(sign | a);
}

// Round a float to the nearest bfloat16 value (8 significant bits, float's exponent range; ties
// to even), returned as a float; NaN stays NaN, values beyond the largest bfloat16 become +-Inf.
inline float round_to_bfloat16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;  // NaN
  const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  return std::bit_cast<float>(r);
}

// The 16-bit formats a study can store in: IEEE binary16 (11 significant bits, range 2^-24 ..
// 65504) or bfloat16 (8 significant bits, float's range).
enum class HalfFormat { binary16, bfloat16 };

// A value stored as `scale` (a power of two) times a 16-bit value.
inline float store_half(float x, float scale, HalfFormat format = HalfFormat::binary16) {
  return scale * (format == HalfFormat::binary16 ? round_to_half(x / scale) : round_to_bfloat16(x / scale));
}

// Refuses a field scale that is not a positive power of two (the stored values would not be
// the scaled halves a kernel keeps).
inline void check_field_scale(float field_scale) {
  if (!(field_scale > 0) || power_of_two_below(field_scale) != field_scale)
    throw Error("half-precision storage: the field scale " + std::to_string(field_scale) +
                " is not a positive power of two");
}

// A model volume stored in 16 bits: its values as the power of two at or below its largest
// magnitude times 16-bit values.
template <class Vec>
void store_volume_half(Vec& v, HalfFormat format = HalfFormat::binary16) {
  float largest = 0;
  for (float x : v) largest = std::max(largest, std::abs(x));
  const float sc = power_of_two_below(largest > 0 ? largest : 1.0f);
  for (auto& x : v) x = store_half(x, sc, format);
}

// What a half-storage scheme keeps in 16 bits of the two time levels of a leapfrog field:
//   levels:     p^n and p^{n-1} (the fp32 kernels' layout: 8 bytes a cell a step with the model);
//               a rounding error e of a new level is a velocity kick e / dt, so it grows to an
//               oscillation of about e / (w dt), w the angular frequency;
//   increments: p^n and d^n = p^n - p^{n-1} (each with its own scale; p^{n-1} = p^n - d^n is
//               formed in float): the rounding of p is no kick, that of d is of the small
//               increment (d ~ w dt p); 10 bytes a cell a step (p read and written to another
//               buffer, d read and written in place, the model read).
enum class HalfFields { none, levels, increments };

}  // namespace seisrtm::validation
