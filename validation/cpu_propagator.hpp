#pragma once
// The CPU reference propagator: plain loops and OpenMP (validation/cpu_stencil), written apart
// from the GPU kernels so that agreement between the two means something. Also the CPU backend
// of `seisrtm run`.
#include <optional>
#include <vector>

#include "solver/decomposition.hpp"
#include "solver/propagator.hpp"
#include "validation/cpu_tti.hpp"
#include "validation/cpu_wave.hpp"

namespace seisrtm::validation {

class CpuPropagator final : public Propagator {
 public:
  explicit CpuPropagator(const Problem& problem);
  // One slab of a z decomposition (solver/decomposition.hpp): `problem` is the slab's; the halo
  // planes are exchanged with the neighbours (MPI) after every step's injection.
  CpuPropagator(const Problem& problem, const Slab& slab);
  std::string name() const override;
  void begin_shot(long long shot) override;
  void advance(long long first, long long count) override;
  void wavefield(float* out) override;
  void traces(float* out) override;
  // Half-precision storage emulated from the next begin_shot on (tests/test_storage.cpp; vti/tti:
  // levels in binary16 only): the model rounded to binary16, and every stored level to
  // field_scale times a binary16 value, field_scale the power of two that puts one step's largest
  // injection of the shot (its source term at the wavelet's peak, injection_peak of
  // solver/storage.hpp, which the CUDA backend uses too) in [2^e, 2^(e+1)),
  // e = peak_exponent.
  // model false: the model stays in float; fields: the levels' scheme (CpuWave::store_as_half).
  void store_as_half(int peak_exponent, bool model = true, HalfFields fields = HalfFields::levels,
                     HalfFormat format = HalfFormat::binary16);
  float half_scale() const { return wave_ ? wave_->half_scale() : tti_ ? tti_->half_scale() : 0.0f; }

 private:
  std::optional<int> half_peak_exponent_;
  bool half_model_ = true;
  HalfFields half_fields_ = HalfFields::levels;
  HalfFormat half_format_ = HalfFormat::binary16;
  const Problem& problem_;
  // One of the two: the acoustic field, or p and q of vti/tti (physics.equation).
  std::optional<CpuWave<float>> wave_;
  std::optional<CpuTti<float>> tti_;
  std::vector<float> traces_;  // [receiver][step]
  long long shot_ = 0;
  std::optional<Slab> slab_;
  // One step of a slab: the stencil and sources over `boxes` (its own planes), the exchange, the
  // receivers.
  void step_slab(long long n, const std::vector<Box>& boxes);
};

}  // namespace seisrtm::validation
