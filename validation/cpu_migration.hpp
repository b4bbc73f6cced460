#pragma once
// Reverse-time migration on the CPU reference backend (docs/ADJOINT.md has the derivation).
//
// Modelling F maps source time functions to receiver traces:
//   p^{n+1} = P [2 p^n - (1 - s) p^{n-1} + m (L p^n + S^T f^n / V)] / (1 + s),  d^n = R p^{n+1}
// (P zeroes the plane z = 0 under a free surface, V = hx hy hz, S and R the interpolation
// weights of sources and receivers). Its exact adjoint F^T, written for the scaled adjoint
// variable chi = m P lambda / (1 + s), is the same recursion run with the time-reversed data
// injected through R^T:
//   chi^{n} = P [2 chi^{n+1} - (1 - s) chi^{n+2} + m (L chi^{n+1} + R^T r^{n-1})] / (1 + s),
// and (F^T r)^n = S chi^{n+1} / V. The receiver wavefield of migration is chi.
//
// physics.equation vti and tti: the wave is the pseudo-acoustic pair p, q of
// validation/cpu_tti.hpp, the source enters p and q, d^n = R p^{n+1}. The receiver field F' is
// the same recursion as chi with the TTI step, the data entering p and q (scaled as R^T r above)
// and F' r read on p. The TTI operator with variable coefficients is not symmetric, so F' is not
// F^T (docs/ADJOINT.md, "vti and tti", has the dot-product figures); at epsilon = delta = 0 it is.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "solver/decomposition.hpp"
#include "solver/migration.hpp"
#include "validation/cpu_tti.hpp"
#include "validation/cpu_wave.hpp"

namespace seisrtm::validation {

// F: source time functions f [source point][step] (one per point of `src`) to traces
// [receiver][step] of pb.receivers, over pb.steps steps; acoustic, vti or tti as pb.equation.
template <class Real>
std::vector<Real> model_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& f);

// What migration back-propagates with: traces r [receiver][step] to source time functions
// [source point][step]. F^T for acoustic; F' (above) for vti and tti.
template <class Real>
std::vector<Real> adjoint_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& r);

// The inverse-scattering imaging condition of one imaging level k, fields in the grid layout:
// image += (1 / v^2) (s_next - s) (r_next - r) / dt^2 - grad s . grad r over `box`, a gradient
// component zero where a neighbour lies outside `valid`; illumination += s^2. s: p^k, s_next:
// p^{k+1}, r: chi^{k+1}, r_next: chi^{k+2}. What the migrator runs; exposed for the device's test.
void isic_image_level(const Grid& g, const CellBox& box, const CellBox& valid, const float* s, const float* s_next,
                      const float* r, const float* r_next, const float* vp, double dt, float* image,
                      float* illumination);

// The CPU migrator: source field forward with boundary saving (or snapshots), then backward
// reconstruction, receiver field and imaging, one shot at a time; acoustic, vti or tti. With
// migration.reconstruction checkpoint the store holds one segment's shells, replayed segment by
// segment from checkpoints of the full state (solver/rtm_schedule.hpp, CheckpointPlan): the same
// image bit for bit.
class CpuMigrator final : public Migrator {
 public:
  explicit CpuMigrator(const Problem& pb);
  // One slab of a z decomposition (solver/decomposition.hpp, SlabMigrator): `slab_pb` is the
  // slab's problem (its receivers: the entries on its own planes), `global` the whole grid's,
  // whose interior and inner boxes it images and rebuilds on its own planes; the halos of every
  // field are exchanged (MPI) after each step.
  CpuMigrator(const Problem& slab_pb, const Slab& slab, const Problem& global);
  std::string name() const override;
  void migrate_shot(long long shot, const float* data, float* image, float* illumination,
                    const Progress& progress) override;
  // The same passes in double on the whole grid (no slab, no half storage): the gradient test's
  // exact path. data [receiver][step]; image and illumination are added to.
  void migrate_shot(long long shot, const double* data, double* image, double* illumination);
  // Half-precision storage emulated (acoustic only; tests/test_storage.cpp): the source and the
  // receiver fields keep their levels in binary16 (CpuWave::store_as_half, HalfFields::levels),
  // each scaled so that one step's largest injection (the source at the wavelet's peak; the
  // data's largest sample) lies in [2^e, 2^(e+1)), e = peak_exponent; the model as well.
  void store_as_half(int peak_exponent);
  // For tests: p at time level n of the last backward pass's rebuilt source field is handed
  // to this callback (cells of the interior box valid).
  std::function<void(long long n, const float* source_field)> on_source_level;

 private:
  // The passes of one shot over a wave pair: CpuWave<Real> (acoustic) or CpuTti<Real>.
  template <class Wave, class Real>
  void migrate_with(long long shot, const Real* data, Real* image, Real* illumination, const Progress& progress);

  void find_shell();
  // migration.reconstruction checkpoint needs migration.mode boundary.
  static void check_reconstruction(const MigrationConfig& mc);
  const Problem& pb_;
  Box interior_, inner_;
  Box rebuilt_;  // where the backward pass's source field is rebuilt: the whole interior, in this grid's z
  std::optional<Slab> slab_;
  std::vector<long long> shell_;  // cells of interior_ not in inner_: the boundary store's cells
  std::optional<int> half_peak_exponent_;
  std::vector<float> store_scales_;  // an fp16 store's, per shot (solver/storage.hpp)
  GatherLayout gathers_layout_;      // migration.gathers (the whole grid's; a slab adds its own planes)
};

}  // namespace seisrtm::validation
