#pragma once
// A wavefield pair on the CPU (two time levels over one model) and the operations every CPU
// pass is built from: a leapfrog step over a box, point injection, point sampling. Forward
// modelling, the adjoint receiver field and the reversed source field of migration all use it.
// Real is float (reference and CPU backend) or double (the adjoint test's exact path).
#include <vector>

#include "solver/problem.hpp"
#include "validation/cpu_stencil.hpp"
#include "validation/half.hpp"

namespace seisrtm::validation {

// The stencil description of a problem (weights, damping, free surface).
Stencil make_stencil(const Problem& pb);

template <class Real>
class CpuWave {
 public:
  explicit CpuWave(const Problem& pb);
  // p^n = p^{n-1} = 0.
  void zero();
  // prev <- [2 cur - (1 - s) prev + m L cur] / (1 + s) over `box` (prev then holds the new level).
  void update(const Box& box);
  void update() { update(stencil_.whole()); }
  // prev[cells of point] += m w value / (1 + s): the injection of the step being made
  // (call between update and finish). Only cells inside `box` when given.
  void inject(const PointSet& ps, long long point, double value) { inject(ps, point, value, stencil_.whole()); }
  void inject(const PointSet& ps, long long point, double value, const Box& box);
  // Free-surface zeroing of plane z = 0 of the new level, then the new level becomes current.
  void finish();
  // Weighted sum of the current level at a point.
  double sample(const PointSet& ps, long long point) const;
  // Half-precision storage emulated (validation/half.hpp; float only): the model is rounded to
  // binary16 (scaled by the power of two below its largest value; once) unless `model` is false,
  // and from now on the levels stored hold what `fields` keeps in 16 bits: field_scale (a power
  // of two) times binary16 values (increments: field_scale / 4). The arithmetic stays in Real,
  // as a GPU kernel that loads halves, computes in float and stores halves.
  void store_as_half(float field_scale, bool model, HalfFields fields, HalfFormat format = HalfFormat::binary16);
  float half_scale() const { return half_scale_; }  // 0: Real storage
  // m += eps dm at every cell (m = v^2 dt^2, m^2): the gradient test's perturbed model, in Real
  // (a perturbation of vp in float would be rounded to float's 6e-8).
  void perturb_model(const std::vector<double>& dm, double eps) {
    for (size_t i = 0; i < m_.size(); ++i) m_[i] = static_cast<Real>(double(m_[i]) + eps * dm[i]);
  }
  // Swaps the two levels without stepping (the backward pass starts from the last two levels).
  void swap_levels() { p_.swap(pp_); }

  Real* current() { return p_.data(); }
  const Real* current() const { return p_.data(); }
  Real* current_data() { return p_.data(); }  // a slab's halo exchange writes its halo planes
  Real* previous() { return pp_.data(); }
  const Real* previous() const { return pp_.data(); }
  const Real* m() const { return m_.data(); }
  const Stencil& stencil() const { return stencil_; }

 private:
  double scale(long long cell) const;  // m / (1 + s) at a cell

  const Problem& pb_;
  Stencil stencil_;
  std::vector<Real> m_;                        // v^2 dt^2 (m^2)
  std::vector<Real> p_, pp_;                   // current and previous level
  float half_scale_ = 0;                       // store_as_half's field scale; 0: Real storage
  HalfFields half_fields_ = HalfFields::none;  // store_as_half's scheme
  HalfFormat half_format_ = HalfFormat::binary16;
  bool model_half_ = false;  // the model was rounded (once)
};

extern template class CpuWave<float>;
extern template class CpuWave<double>;

}  // namespace seisrtm::validation
