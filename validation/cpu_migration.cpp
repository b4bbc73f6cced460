#include "validation/cpu_migration.hpp"

#include <omp.h>

#include "base/error.hpp"

namespace seisrtm::validation {

template <class Real>
std::vector<Real> model_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& f) {
  const long long nt = pb.steps, nrec = pb.receivers.size();
  CpuWave<Real> w(pb);
  std::vector<Real> d(static_cast<size_t>(nrec * nt));
  for (long long n = 0; n < nt; ++n) {
    w.update();
    for (long long k = 0; k < src.size(); ++k) w.inject(src, k, double(f[k * nt + n]) / pb.cell_volume());
    w.finish();
    for (long long r = 0; r < nrec; ++r) d[r * nt + n] = static_cast<Real>(w.sample(pb.receivers, r));
  }
  return d;
}

template <class Real>
AdjointField<Real>::AdjointField(const Problem& pb, const PointSet& receivers) : pb_(pb), rec_(receivers), wave_(pb) {}

template <class Real>
void AdjointField<Real>::step(long long n, const Real* data) {
  // chi^n = P [2 chi^{n+1} - (1 - s) chi^{n+2} + m (L chi^{n+1} + R^T r^{n-1})] / (1 + s)
  wave_.update();
  for (long long r = 0; r < rec_.size(); ++r) wave_.inject(rec_, r, double(data[r * pb_.steps + n - 1]));
  wave_.finish();
}

template <class Real>
std::vector<Real> adjoint_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& r) {
  const long long nt = pb.steps;
  AdjointField<Real> chi(pb, pb.receivers);
  std::vector<Real> f(static_cast<size_t>(src.size() * nt));
  for (long long n = nt; n >= 1; --n) {
    chi.step(n, r.data());
    // (F^T r)^{n-1} = S chi^n / V
    for (long long k = 0; k < src.size(); ++k)
      f[k * nt + n - 1] = static_cast<Real>(chi.sample(src, k) / pb.cell_volume());
  }
  return f;
}

template std::vector<float> model_traces<float>(const Problem&, const PointSet&, const std::vector<float>&);
template std::vector<double> model_traces<double>(const Problem&, const PointSet&, const std::vector<double>&);
template std::vector<float> adjoint_traces<float>(const Problem&, const PointSet&, const std::vector<float>&);
template std::vector<double> adjoint_traces<double>(const Problem&, const PointSet&, const std::vector<double>&);
template class AdjointField<float>;
template class AdjointField<double>;

CpuMigrator::CpuMigrator(const Problem& pb) : pb_(pb), interior_(interior_box(pb)), inner_(inner_box(pb)) {
  if (!pb.config.migration) throw Error("CpuMigrator needs a migration config");
  if (pb.config.migration->image_interval < 1)
    throw Error("migration.image_interval is not resolved (auto is resolved by prepare_migration)");
  if (inner_.cells() == 0)
    throw Error("config key 'grid.shape' leaves no interior to migrate: the damping zone (boundary.damping_width " +
                std::to_string(pb.config.boundary.damping_width) + ") and the stencil radius fill the grid");
  const Grid& g = pb.grid;
  for (long long iz = interior_.lo[2]; iz < interior_.hi[2]; ++iz)
    for (long long iy = interior_.lo[1]; iy < interior_.hi[1]; ++iy)
      for (long long ix = interior_.lo[0]; ix < interior_.hi[0]; ++ix) {
        const bool inner = ix >= inner_.lo[0] && ix < inner_.hi[0] && iy >= inner_.lo[1] && iy < inner_.hi[1] &&
                           iz >= inner_.lo[2] && iz < inner_.hi[2];
        if (!inner) shell_.push_back(g.index(ix, iy, iz));
      }
}

std::string CpuMigrator::name() const {
  return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
}

void CpuMigrator::image_level(long long, const float* s, const float* r, float* image, float* illumination) const {
  const Grid& g = pb_.grid;
#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = interior_.lo[2]; iz < interior_.hi[2]; ++iz)
    for (long long iy = interior_.lo[1]; iy < interior_.hi[1]; ++iy) {
      const long long row = g.index(0, iy, iz);
#pragma omp simd
      for (long long ix = interior_.lo[0]; ix < interior_.hi[0]; ++ix) {
        image[row + ix] += s[row + ix] * r[row + ix];
        illumination[row + ix] += s[row + ix] * s[row + ix];
      }
    }
}

void CpuMigrator::migrate_shot(long long shot, const float* data, float* image, float* illumination,
                               const Progress& progress) {
  const MigrationConfig& mc = *pb_.config.migration;
  const long long nt = pb_.steps, every = mc.image_interval;
  const bool boundary = mc.mode == "boundary";
  const PointSet& src = pb_.shots[shot];
  const size_t ns = shell_.size(), cells = static_cast<size_t>(pb_.grid.cells());
  const double volume = pb_.cell_volume();
  auto source_term = [&](long long n) { return double(pb_.wavelet[n]) / volume; };

  // Forward: p^{n+1} from p^n, p^{n-1}; keep the shell of levels 1..N-2 (boundary) or every
  // imaging level (snapshots).
  progress("forward", 0);
  CpuWave<float> s(pb_);
  std::vector<float> store(boundary ? ns * static_cast<size_t>(std::max(0LL, nt - 2)) : 0);
  std::vector<std::vector<float>> snapshots(boundary ? 0 : static_cast<size_t>(nt / every + 1));
  for (long long n = 0; n < nt; ++n) {
    s.update();
    for (long long k = 0; k < src.size(); ++k) s.inject(src, k, source_term(n));
    s.finish();
    const long long level = n + 1;
    if (boundary && level <= nt - 2) {
      float* slot = store.data() + (level - 1) * ns;
      const float* p = s.current();
      for (size_t k = 0; k < ns; ++k) slot[k] = p[shell_[k]];
    } else if (!boundary && level % every == 0) {
      snapshots[level / every].assign(s.current(), s.current() + cells);
    }
    progress("forward", n + 1);
  }

  // Backward: chi^n from the time-reversed data; the source field p^n rebuilt in reverse
  // (boundary) or taken from the snapshots; image every `every` levels.
  AdjointField<float> r(pb_, pb_.receivers);
  progress("backward", 0);
  for (long long n = nt; n >= 1; --n) {
    r.step(n, data);
    const float* sn = nullptr;
    if (boundary) {
      if (n == nt - 1) {
        s.swap_levels();  // the last two levels are p^N, p^{N-1}: start from them
      } else if (n < nt - 1) {
        // p^n = 2 p^{n+1} - p^{n+2} + m (L p^{n+1} + S^T f^{n+1} / V) where s = 0, i.e. the
        // forward step n + 1 solved for its oldest level; the shell comes from the store.
        s.update(inner_);
        for (long long k = 0; k < src.size(); ++k) s.inject(src, k, source_term(n + 1), inner_);
        float* p = s.previous();
        const float* slot = store.data() + (n - 1) * ns;
        for (size_t k = 0; k < ns; ++k) p[shell_[k]] = slot[k];
        s.finish();
      }
      sn = s.current();
    } else if (n % every == 0) {
      sn = snapshots[n / every].data();
    }
    if (n % every == 0) image_level(n, sn, r.current(), image, illumination);
    if (sn && on_source_level) on_source_level(n, sn);
    progress("backward", nt - n + 1);
  }
}

}  // namespace seisrtm::validation
