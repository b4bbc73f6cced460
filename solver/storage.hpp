#pragma once
// Half-precision storage (solver.storage fp16; kernels/acoustic.hpp, Storage): the scales of the
// stored values, shared by the CUDA backend and the CPU emulation (validation/half.hpp), so both
// store the same values. A field is stored as s times a binary16 value, s a power of two chosen
// per shot so that one step's largest injection lands at 2^kHalfPeakExponent: the quickstart's
// largest value then stays 8 times below the half's largest, 65504 (the study in
// tests/test_storage.cpp), while the small amplitudes keep 11 significant bits down to
// 2^-14 s (below that the halves are subnormal: fixed steps of 2^-24 s). The model m = v^2 dt^2 is
// stored as s_m times a half, s_m the power of two at or below its largest value.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "solver/problem.hpp"

namespace seisrtm {

inline constexpr int kHalfPeakExponent = 8;

// The power of two s with value / s in [1, 2): a scale for storing values of magnitude up to
// `value` as halves.
inline float power_of_two_below(float value) {
  const uint32_t u = std::bit_cast<uint32_t>(value) & 0x7f800000u;
  return std::bit_cast<float>(u == 0 ? 0x00800000u : u);
}

// The scale of a field stored in halves: the power of two that puts `peak` (one step's largest
// injection into the field) in [2^e, 2^(e+1)), e = peak_exponent. `field` names it in the error
// for a field that injects nothing.
float half_field_scale(double peak, int peak_exponent, const std::string& field);

// max |v[i]| over n values (0 for none).
double largest_magnitude(const float* v, std::size_t n);
// One step's largest injection of point set `ps` with amplitude `value` (the wavelet's peak over
// the cell volume): max |m / (1 + s) w value| over its entries, m = v^2 dt^2 in float (the
// model's value before any half rounding), s the damping sum at the cell.
double injection_peak(const Problem& pb, const PointSet& ps, double value);

// The scale of shot `shot`'s source field: the wavelet's largest injection (its peak over the
// cell volume) at 2^peak_exponent. `field` names it in the error for a source that injects
// nothing.
float source_field_scale(const Problem& pb, long long shot, int peak_exponent, const std::string& field);
// An fp16 boundary store's scale for every shot (migration.store_precision fp16): each shot's
// source field scale from `global`, the whole grid's problem, so that every slab of a
// decomposition scales by the same (a slab's own part of the source may be empty); none unless
// the store is fp16.
std::vector<float> store_scales(const Problem& global, int peak_exponent);
// The scale of a migration's receiver field: the data's (receivers x steps samples) largest
// injection at 2^peak_exponent; 1 for a shot without data (dead or muted: it images nothing, so
// any scale serves).
float data_field_scale(const Problem& pb, const float* data, int peak_exponent);

}  // namespace seisrtm
