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
#include <vector>

#include "solver/migration.hpp"
#include "validation/cpu_wave.hpp"

namespace seisrtm::validation {

// F: source time functions f [source point][step] (one per point of `src`) to traces
// [receiver][step] of pb.receivers, over pb.steps steps.
template <class Real>
std::vector<Real> model_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& f);

// F^T: traces r [receiver][step] to source time functions [source point][step].
template <class Real>
std::vector<Real> adjoint_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& r);

// The backward pass's adjoint field: steps chi backwards in time from chi^{N+1} = chi^{N+2} = 0,
// injecting data [receiver][step]; after step(n) the current level is chi^n (n = N .. 1).
template <class Real>
class AdjointField {
 public:
  AdjointField(const Problem& pb, const PointSet& receivers);
  void zero() { wave_.zero(); }
  // Makes chi^n from chi^{n+1}, chi^{n+2} and r^{n-1} (data sample n - 1, at t = n dt).
  void step(long long n, const Real* data);
  const Real* current() const { return wave_.current(); }
  // Weighted sum of the current level at a point.
  double sample(const PointSet& ps, long long point) const { return wave_.sample(ps, point); }

 private:
  const Problem& pb_;
  const PointSet& rec_;
  CpuWave<Real> wave_;
};

// The CPU migrator: source field forward with boundary saving (or snapshots), then backward
// reconstruction, adjoint receiver field and imaging, one shot at a time.
class CpuMigrator final : public Migrator {
 public:
  explicit CpuMigrator(const Problem& pb);
  std::string name() const override;
  void migrate_shot(long long shot, const float* data, float* image, float* illumination,
                    const Progress& progress) override;
  // For tests: p at time level n of the last backward pass's rebuilt source field is handed
  // to this callback (cells of the interior box valid).
  std::function<void(long long n, const float* source_field)> on_source_level;

 private:
  void image_level(long long n, const float* s, const float* r, float* image, float* illumination) const;

  const Problem& pb_;
  Box interior_, inner_;
  std::vector<long long> shell_;  // cells of interior_ not in inner_: the boundary store's cells
};

}  // namespace seisrtm::validation
