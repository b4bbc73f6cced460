#include "validation/cpu_migration.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "base/error.hpp"
#include "solver/hooks.hpp"
#include "solver/rtm_schedule.hpp"
#include "validation/cpu_halo.hpp"
#include "validation/half.hpp"
#include "validation/norms.hpp"

namespace seisrtm::validation {

namespace {

// The operations the passes need from a wave pair, overloaded for the acoustic field (CpuWave:
// one field, grid layout) and the pseudo-acoustic pair (CpuTti: p and q, padded layout), so that
// modelling, the receiver field, the boundary store and imaging below are written once.

Box whole(const Problem& pb) {
  return Box{{0, 0, 0}, pb.grid.n};
}

// The source term of a step, f the source time function's sample: m w f / (V (1 + s)) into the
// cells of `box` (between update and finish), into p and q for the pair.
template <class Real>
void inject_source(CpuWave<Real>& w, const Problem& pb, const PointSet& src, long long k, double f, const Box& box) {
  w.inject(src, k, f / pb.cell_volume(), box);
}
template <class Real>
void inject_source(CpuTti<Real>& w, const Problem&, const PointSet& src, long long k, double f, const Box& box) {
  w.inject(src, k, f, box);  // CpuTti divides by V itself
}

// The data term of a receiver-field step: m w r / (1 + s), R^T r without the source's 1 / V
// (docs/ADJOINT.md); into p and q for the pair, the way its source enters.
template <class Real>
void inject_data(CpuWave<Real>& w, const Problem&, const PointSet& rec, long long r, double value) {
  w.inject(rec, r, value);
}
template <class Real>
void inject_data(CpuTti<Real>& w, const Problem& pb, const PointSet& rec, long long r, double value) {
  w.inject(rec, r, value * pb.cell_volume());
}

// One step of the receiver field: chi^n from chi^{n+1}, chi^{n+2} and data sample n - 1 (at
// t = n dt) of `data` [receiver][step] at the receivers `rec` (the shot's spread).
template <class Wave, class Real>
void receiver_step(Wave& w, const Problem& pb, const PointSet& rec, long long n, const Real* data) {
  w.update();
  for (long long r = 0; r < rec.size(); ++r) inject_data(w, pb, rec, r, double(data[r * pb.steps + n - 1]));
  w.finish();
}

// The boundary store: the fields a pair steps (p; p and q), their values at the store's cells
// in the pair's layout, saved from the current level and restored into the new one.
template <class Real>
int fields(const CpuWave<Real>&) {
  return 1;
}
template <class Real>
int fields(const CpuTti<Real>&) {
  return 2;
}
template <class Real>
std::vector<long long> storage_index(const CpuWave<Real>&, const Grid&, const std::vector<long long>& cells) {
  return cells;
}
template <class Real>
std::vector<long long> storage_index(const CpuTti<Real>& w, const Grid& g, const std::vector<long long>& cells) {
  std::vector<long long> out(cells.size());
  for (size_t k = 0; k < cells.size(); ++k) {
    const long long c = cells[k];
    out[k] = w.padded_index(c % g.n[0], (c / g.n[0]) % g.n[1], c / (g.n[0] * g.n[1]));
  }
  return out;
}
// The store's element (migration.store_precision) in the float passes: bf16 as the GPU's
// __float2bfloat16_rn and back; fp16 as __float2half_rn of the value over the shot's field scale
// (a power of two: the division and the product back are exact) and back. The double passes
// store doubles.
struct StoreRounding {
  StorePrecision precision = StorePrecision::fp32;
  float scale = 1;
  template <class Real>
  Real operator()(Real v) const {
    if constexpr (std::is_same_v<Real, float>) {
      if (precision == StorePrecision::bf16) return round_to_bfloat16(v);
      if (precision == StorePrecision::fp16) return round_to_half(v / scale) * scale;
    }
    return v;
  }
};
template <class Real>
void save_shell(const CpuWave<Real>& w, const std::vector<long long>& at, Real* slot, const StoreRounding& r) {
  const Real* p = w.current();
  for (size_t k = 0; k < at.size(); ++k) slot[k] = r(p[at[k]]);
}
template <class Real>
void save_shell(const CpuTti<Real>& w, const std::vector<long long>& at, Real* slot, const StoreRounding& r) {
  const Real *p = w.p_current(), *q = w.q_current();
  const size_t ns = at.size();
  for (size_t k = 0; k < ns; ++k) slot[k] = r(p[at[k]]);
  for (size_t k = 0; k < ns; ++k) slot[ns + k] = r(q[at[k]]);
}
template <class Real>
void restore_shell(CpuWave<Real>& w, const std::vector<long long>& at, const Real* slot) {
  Real* p = w.previous();
  for (size_t k = 0; k < at.size(); ++k) p[at[k]] = slot[k];
}
template <class Real>
void restore_shell(CpuTti<Real>& w, const std::vector<long long>& at, const Real* slot) {
  Real *p = w.p_previous(), *q = w.q_previous();
  const size_t ns = at.size();
  for (size_t k = 0; k < ns; ++k) p[at[k]] = slot[k];
  for (size_t k = 0; k < ns; ++k) q[at[k]] = slot[ns + k];
}

// A checkpoint (migration.reconstruction: checkpoint): the full state a pair steps from, the two
// levels of each field in the pair's layout, halos included (a slab's as its last exchange left
// them), so that steps from a restored state repeat the first pass's bit for bit. Acoustic: 2
// volumes of the grid; the pair: 4 padded volumes.
template <class Real>
size_t level_cells(const CpuWave<Real>&, const Problem& pb) {
  return static_cast<size_t>(pb.grid.cells());
}
template <class Real>
size_t level_cells(const CpuTti<Real>& w, const Problem& pb) {
  return static_cast<size_t>(w.padded_stride(2) * (pb.grid.n[2] + 2 * pb.radius));
}
template <class Real>
std::vector<Real*> levels(CpuWave<Real>& w) {
  return {w.current(), w.previous()};
}
template <class Real>
std::vector<Real*> levels(CpuTti<Real>& w) {
  return {w.p_data(), w.p_previous(), w.q_data(), w.q_previous()};
}
template <class Wave, class Real>
void save_state(Wave& w, size_t cells, Real* to) {
  for (Real* l : levels(w)) to = std::copy(l, l + cells, to);
}
template <class Wave, class Real>
void restore_state(Wave& w, size_t cells, const Real* from) {
  for (Real* l : levels(w)) {
    std::copy(from, from + cells, l);
    from += cells;
  }
}

// Where a field keeps p: grid cell (ix, iy, iz) is data[base + ix + iy sy + iz sz].
template <class Real>
struct FieldView {
  const Real* data = nullptr;
  long long base = 0, sy = 0, sz = 0;
  const Real* row(long long iy, long long iz) const { return data + base + iy * sy + iz * sz; }
};
template <class Real>
FieldView<Real> grid_view(const Grid& g, const Real* v) {
  return {v, 0, g.n[0], g.n[0] * g.n[1]};
}
template <class Real>
FieldView<Real> view(const CpuWave<Real>& w, const Grid& g) {
  return grid_view(g, w.current());
}
template <class Real>
FieldView<Real> view(const CpuTti<Real>& w, const Grid&) {
  return {w.p_current(), w.padded_index(0, 0, 0), w.padded_stride(1), w.padded_stride(2)};
}
// The current p in grid layout: the acoustic field as it is, the pair's copied into `buffer`.
template <class Real>
const Real* grid_p(const CpuWave<Real>& w, const Grid&, std::vector<Real>&) {
  return w.current();
}
template <class Real>
const Real* grid_p(const CpuTti<Real>& w, const Grid& g, std::vector<Real>& buffer) {
  buffer.resize(static_cast<size_t>(g.cells()));
  if constexpr (std::is_same_v<Real, float>) {
    w.p_field(buffer.data());
  } else {
    const std::vector<double> p = w.p_field();
    std::copy(p.begin(), p.end(), buffer.begin());
  }
  return buffer.data();
}

// I += S R, illumination += S^2 over the cells of `box` (image and illumination in grid layout).
template <class Real>
void image_level(const Grid& g, const Box& box, const FieldView<Real>& s, const FieldView<Real>& r, Real* image,
                 Real* illumination) {
#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz)
    for (long long iy = box.lo[1]; iy < box.hi[1]; ++iy) {
      const long long row = g.index(0, iy, iz);
      const Real* sr = s.row(iy, iz);
      const Real* rr = r.row(iy, iz);
#pragma omp simd
      for (long long ix = box.lo[0]; ix < box.hi[0]; ++ix) {
        image[row + ix] += sr[ix] * rr[ix];
        illumination[row + ix] += sr[ix] * sr[ix];
      }
    }
}

// The inverse-scattering imaging condition (Whitmore and Crawley 2012) on an imaging level n:
//   image += (1 / v^2) (p^{n+1} - p^n) (chi^{n+2} - chi^{n+1}) / dt^2 - grad p^n . grad chi^{n+1},
// each time derivative half a level after its field's imaging level, so that the pairing of p^n
// with chi^{n+1} holds for them too; the gradients by centred differences over two cells (a
// component zero where a neighbour lies outside `valid`). For waves that run the same way (the
// backscatter of a sharp contrast, and the transmitted waves) the two terms cancel; for a
// reflection (S down, R up) they add: 2 (1 - cos(opening angle)) / 2 of the correlation's
// weight. illumination += S^2 as for the correlation (the normalised image's denominator).
template <class Real>
void isic_level(const Grid& g, const Box& box, const Box& valid, const FieldView<Real>& s,
                const FieldView<Real>& s_next, const FieldView<Real>& r, const FieldView<Real>& r_next, const float* vp,
                double dt, Real* image, Real* illumination) {
  const Real cx = Real(0.25 / (g.h[0] * g.h[0])), cy = Real(0.25 / (g.h[1] * g.h[1])),
             cz = Real(0.25 / (g.h[2] * g.h[2]));
#pragma omp parallel for collapse(2) schedule(static)
  for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz)
    for (long long iy = box.lo[1]; iy < box.hi[1]; ++iy) {
      const long long row = g.index(0, iy, iz);
      const Real *s0 = s.row(iy, iz), *s1 = s_next.row(iy, iz), *r0 = r.row(iy, iz), *r1 = r_next.row(iy, iz);
      // Neighbours only inside `valid` (the interior the backward pass rebuilds; outside it the
      // source field keeps the forward pass's last levels).
      const bool y_in = iy > valid.lo[1] && iy + 1 < valid.hi[1], z_in = iz > valid.lo[2] && iz + 1 < valid.hi[2];
      const Real *sym = y_in ? s.row(iy - 1, iz) : nullptr, *syp = y_in ? s.row(iy + 1, iz) : nullptr;
      const Real *rym = y_in ? r.row(iy - 1, iz) : nullptr, *ryp = y_in ? r.row(iy + 1, iz) : nullptr;
      const Real *szm = z_in ? s.row(iy, iz - 1) : nullptr, *szp = z_in ? s.row(iy, iz + 1) : nullptr;
      const Real *rzm = z_in ? r.row(iy, iz - 1) : nullptr, *rzp = z_in ? r.row(iy, iz + 1) : nullptr;
      for (long long ix = box.lo[0]; ix < box.hi[0]; ++ix) {
        const double v = vp[row + ix];
        const Real time = Real(1.0 / (v * v * dt * dt)) * (s1[ix] - s0[ix]) * (r1[ix] - r0[ix]);
        Real grad = 0;
        if (ix > valid.lo[0] && ix + 1 < valid.hi[0])
          grad += cx * (s0[ix + 1] - s0[ix - 1]) * (r0[ix + 1] - r0[ix - 1]);
        if (y_in) grad += cy * (syp[ix] - sym[ix]) * (ryp[ix] - rym[ix]);
        if (z_in) grad += cz * (szp[ix] - szm[ix]) * (rzp[ix] - rzm[ix]);
        image[row + ix] += time - grad;
        illumination[row + ix] += s0[ix] * s0[ix];
      }
    }
}

template <class Wave, class Real>
std::vector<Real> model_with(const Problem& pb, const PointSet& src, const std::vector<Real>& f) {
  const long long nt = pb.steps, nrec = pb.receivers.size();
  const Box all = whole(pb);
  Wave w(pb);
  std::vector<Real> d(static_cast<size_t>(nrec * nt));
  for (long long n = 0; n < nt; ++n) {
    w.update();
    for (long long k = 0; k < src.size(); ++k) inject_source(w, pb, src, k, double(f[k * nt + n]), all);
    w.finish();
    for (long long r = 0; r < nrec; ++r) d[r * nt + n] = static_cast<Real>(w.sample(pb.receivers, r));
  }
  return d;
}

template <class Wave, class Real>
std::vector<Real> adjoint_with(const Problem& pb, const PointSet& src, const std::vector<Real>& r) {
  const long long nt = pb.steps;
  Wave chi(pb);
  std::vector<Real> f(static_cast<size_t>(src.size() * nt));
  for (long long n = nt; n >= 1; --n) {
    receiver_step(chi, pb, pb.receivers, n, r.data());
    // (F^T r)^{n-1} = S chi^n / V
    for (long long k = 0; k < src.size(); ++k)
      f[k * nt + n - 1] = static_cast<Real>(chi.sample(src, k) / pb.cell_volume());
  }
  return f;
}

}  // namespace

template <class Real>
std::vector<Real> model_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& f) {
  return pb.anisotropic() ? model_with<CpuTti<Real>>(pb, src, f) : model_with<CpuWave<Real>>(pb, src, f);
}

template <class Real>
std::vector<Real> adjoint_traces(const Problem& pb, const PointSet& src, const std::vector<Real>& r) {
  return pb.anisotropic() ? adjoint_with<CpuTti<Real>>(pb, src, r) : adjoint_with<CpuWave<Real>>(pb, src, r);
}

void isic_image_level(const Grid& g, const CellBox& box, const CellBox& valid, const float* s, const float* s_next,
                      const float* r, const float* r_next, const float* vp, double dt, float* image,
                      float* illumination) {
  isic_level(g, box, valid, grid_view(g, s), grid_view(g, s_next), grid_view(g, r), grid_view(g, r_next), vp, dt, image,
             illumination);
}

template std::vector<float> model_traces<float>(const Problem&, const PointSet&, const std::vector<float>&);
template std::vector<double> model_traces<double>(const Problem&, const PointSet&, const std::vector<double>&);
template std::vector<float> adjoint_traces<float>(const Problem&, const PointSet&, const std::vector<float>&);
template std::vector<double> adjoint_traces<double>(const Problem&, const PointSet&, const std::vector<double>&);

CpuMigrator::CpuMigrator(const Problem& pb)
    : pb_(pb), interior_(interior_box(pb)), inner_(inner_box(pb)), gathers_layout_(gather_layout(pb)) {
  if (!pb.config.migration) throw Error("CpuMigrator needs a migration config");
  if (pb.config.migration->image_interval < 1)
    throw Error("migration.image_interval is not resolved (auto is resolved by prepare_migration)");
  if (inner_.cells() == 0)
    throw Error("config key 'grid.shape' leaves no interior to migrate: the damping zone (boundary.damping_width " +
                std::to_string(pb.config.boundary.damping_width) + ") and the stencil radius fill the grid");
  find_shell();
  check_reconstruction(*pb.config.migration);
  check_imaging_condition(*pb.config.migration, pb.equation);
  rebuilt_ = rebuilt_box(pb);
  store_scales_ = store_scales(pb, kHalfPeakExponent);
}

CpuMigrator::CpuMigrator(const Problem& slab_pb, const Slab& slab, const Problem& global) : pb_(slab_pb), slab_(slab) {
  if (!global.config.migration || global.config.migration->image_interval < 1)
    throw Error("CpuMigrator needs a resolved migration config");
  if (inner_box(global).cells() == 0)
    throw Error("config key 'grid.shape' leaves no interior to migrate: the damping zone (boundary.damping_width " +
                std::to_string(global.config.boundary.damping_width) + ") and the stencil radius fill the grid");
  gathers_layout_ = gather_layout(global);
  interior_ = slab_box(interior_box(global), slab);
  inner_ = slab_box(inner_box(global), slab);
  find_shell();
  check_reconstruction(*global.config.migration);
  check_imaging_condition(*global.config.migration, global.equation);
  rebuilt_ = rebuilt_box(global, &slab);
  store_scales_ = store_scales(global, kHalfPeakExponent);
}

void CpuMigrator::check_reconstruction(const MigrationConfig& mc) {
  if (mc.reconstruction == Reconstruction::checkpoint && mc.mode != MigrationMode::boundary)
    throw Error(
        "config key 'migration.reconstruction' checkpoint rebuilds the source field from the boundary shells; with "
        "migration.mode " +
        to_text(mc.mode) + " use auto or store, or migration.mode: boundary");
  if (mc.checkpoint_interval < 0)
    throw Error("config key 'migration.checkpoint_interval' must be >= 1 level or auto, got " +
                std::to_string(mc.checkpoint_interval));
  if (mc.coarse_checkpoint_interval < 0)
    throw Error("config key 'migration.coarse_checkpoint_interval' must be >= 1 level or auto, got " +
                std::to_string(mc.coarse_checkpoint_interval));
}

void CpuMigrator::find_shell() {
  const Grid& g = pb_.grid;
  for (long long iz = interior_.lo[2]; iz < interior_.hi[2]; ++iz)
    for (long long iy = interior_.lo[1]; iy < interior_.hi[1]; ++iy)
      for (long long ix = interior_.lo[0]; ix < interior_.hi[0]; ++ix) {
        const bool inner = ix >= inner_.lo[0] && ix < inner_.hi[0] && iy >= inner_.lo[1] && iy < inner_.hi[1] &&
                           iz >= inner_.lo[2] && iz < inner_.hi[2];
        if (!inner) shell_.push_back(g.index(ix, iy, iz));
      }
}

std::string CpuMigrator::name() const {
  return std::string("cpu") + (pb_.anisotropic() ? " " + to_text(pb_.equation) : "") + " (" +
         std::to_string(omp_get_max_threads()) + " OpenMP threads" +
         (half_peak_exponent_ ? ", fp16 storage emulated" : "") + ")";
}

void CpuMigrator::store_as_half(int peak_exponent) {
  if (pb_.anisotropic()) throw Error("half-precision storage is emulated for the acoustic equation only");
  half_peak_exponent_ = peak_exponent;
}

void CpuMigrator::migrate_shot(long long shot, const float* data, float* image, float* illumination,
                               const Progress& progress) {
  if (pb_.anisotropic())
    migrate_with<CpuTti<float>>(shot, data, image, illumination, progress);
  else
    migrate_with<CpuWave<float>>(shot, data, image, illumination, progress);
}

void CpuMigrator::migrate_shot(long long shot, const double* data, double* image, double* illumination) {
  if (slab_ || half_peak_exponent_) throw Error("CpuMigrator: the double passes run on the whole grid in double");
  const Progress quiet = [](const std::string&, long long) {};
  if (pb_.anisotropic())
    migrate_with<CpuTti<double>>(shot, data, image, illumination, quiet);
  else
    migrate_with<CpuWave<double>>(shot, data, image, illumination, quiet);
}

template <class Wave, class Real>
void CpuMigrator::migrate_with(long long shot, const Real* data, Real* image, Real* illumination,
                               const Progress& progress) {
  const MigrationConfig& mc = *pb_.config.migration;
  const Grid& g = pb_.grid;
  const long long nt = pb_.steps, every = mc.image_interval;
  const bool boundary = mc.mode == MigrationMode::boundary;
  const PointSet& src = pb_.shots[shot];
  const Box all = whole(pb_);
  constexpr bool single = std::is_same_v<Real, float>;
  const RtmSchedule schedule(nt, every);
  // The float passes' store element; fp16 over the shot's source-field scale (the GPU's).
  const StoreRounding rounding{mc.store_precision, single && mc.store_precision == StorePrecision::fp16
                                                       ? store_scales_.at(static_cast<size_t>(shot))
                                                       : 1.0f};

  // Forward: p^{n+1} from p^n, p^{n-1}; keep the shell of levels 1..N-2, of every field the
  // pair steps (boundary), or p at every imaging level (snapshots: imaging reads p only).
  progress("forward", 0);
  Wave s(pb_);
  Wave r(pb_);
  if constexpr (std::is_same_v<Wave, CpuWave<float>>) {
    if (half_peak_exponent_) {
      const int e = *half_peak_exponent_;
      s.store_as_half(source_field_scale(pb_, shot, e, "the source"), true, HalfFields::levels);
      r.store_as_half(data_field_scale(pb_, data, e), true, HalfFields::levels);
    }
  }
  auto exchange = [&](Wave& w) {
    if constexpr (single) {
      if (slab_) exchange_halos(w, pb_, *slab_);
    }
  };
  const std::vector<long long> at = storage_index(s, g, shell_);
  const size_t per_level = fields(s) * shell_.size();
  // checkpoint: the store holds one segment's shells (K slots), the checkpoints the full state at
  // the levels the plan names (solver/rtm_schedule.hpp, CheckpointPlan: one level, or two with
  // migration.coarse_checkpoint_interval; auto is one level here); store (auto): every saved
  // level's shell, slot level - 1.
  const bool checkpoint = boundary && mc.reconstruction == Reconstruction::checkpoint;
  const size_t state_cells = level_cells(s, pb_), state_size = levels(s).size() * state_cells;
  const long long interval =
      !checkpoint ? std::max(1LL, nt - 2)
      : mc.checkpoint_interval > 0
          ? mc.checkpoint_interval
          : auto_checkpoint_interval(nt, double(state_size * sizeof(Real)), double(per_level * sizeof(Real)));
  const CheckpointPlan plan(nt, interval, checkpoint ? mc.coarse_checkpoint_interval : 0);
  const CheckpointPlan::Sweep first = plan.first_pass();
  const size_t slots = !boundary    ? 0
                       : checkpoint ? static_cast<size_t>(plan.interval())
                                    : static_cast<size_t>(std::max(0LL, nt - 2));
  auto slot = [&](long long level) { return static_cast<size_t>(checkpoint ? plan.slot(level) : level - 1); };
  std::vector<Real> store(per_level * slots);
  std::vector<Real> checkpoints(checkpoint ? state_size * static_cast<size_t>(plan.checkpoints()) : 0);
  std::vector<std::vector<Real>> snapshots(boundary ? 0 : static_cast<size_t>(nt / every + 1));
  std::vector<Real> buffer;  // p of the pair in grid layout
  // Forward step n of a source field: level n + 1 from n, n - 1 (the first pass's and a replay's).
  auto forward_step = [&](Wave& w, long long n) {
    w.update();
    for (long long k = 0; k < src.size(); ++k) inject_source(w, pb_, src, k, double(pb_.wavelet[n]), all);
    w.finish();
    exchange(w);
  };
  for (long long n = 0; n < nt; ++n) {
    forward_step(s, n);
    const long long level = n + 1;
    if (checkpoint) {
      if (const long long c = plan.checkpoint_after(first, level); c >= 0)
        save_state(s, state_cells, checkpoints.data() + c * state_size);
    }
    if (boundary && schedule.saved(level)) {
      if (!checkpoint || level >= first.shells_from)
        save_shell(s, at, store.data() + slot(level) * per_level, rounding);
    } else if (!boundary && level % every == 0) {
      const Real* p = grid_p(s, g, buffer);
      snapshots[level / every].assign(p, p + g.cells());
    }
    progress("forward", n + 1);
  }

  // Backward, n = N .. 1: the source field p^n, rebuilt in reverse (boundary) or taken from the
  // snapshots; on imaging levels I += p^n chi^{n+1} (the receiver field still holds chi^{n+1}:
  // zero at n = N); then the receiver field's step to chi^n from the time-reversed data.
  // p^n pairs with chi^{n+1}: the data sample n - 1 enters chi^n and was recorded from p^n, and
  // the gradient of the data misfit with respect to m = v^2 dt^2 is
  //   m^2 g = sum_n chi^{n+1} (p^{n+1} - 2 p^n + p^{n-1}) = C(+1) - 2 C(0) + C(-1),
  //   C(j) = sum_n p^n chi^{n+1+j}   (docs/ADJOINT.md, "Imaging"),
  // centred on C(0); p^n chi^n is C(-1), a depth bias of about v dt / 2.
  //
  // checkpoint: before the rebuild of the last level of a segment other than the first pass's,
  // a sweep restores a checkpoint into a third wave (the backward source field keeps its levels)
  // and re-runs forward steps from there, saving the checkpoints on its way (two levels) and the
  // segment's shells into the store.
  // Progress: the backward pass still counts to N, the replay steps counted in with the levels:
  // done = N (levels + replay steps done) / (N + replay steps).
  const long long work = nt + (checkpoint ? plan.replay_steps() : 0);
  long long worked = 0;
  auto advance = [&] {
    ++worked;
    progress("backward", static_cast<long long>(static_cast<long double>(nt) * worked / work));
  };
  std::optional<Wave> replay;
  auto sweep = [&](const CheckpointPlan::Sweep& w) {
    if (!replay) {
      replay.emplace(pb_);
      if constexpr (std::is_same_v<Wave, CpuWave<float>>) {
        if (half_peak_exponent_)
          replay->store_as_half(source_field_scale(pb_, shot, *half_peak_exponent_, "the source"), true,
                                HalfFields::levels);
      }
    }
    restore_state(*replay, state_cells, checkpoints.data() + plan.checkpoint_slot(w.from) * state_size);
    if (w.shells_from == w.from) save_shell(*replay, at, store.data() + slot(w.from) * per_level, rounding);
    const RtmSchedule::Range steps = w.steps();
    for (long long k = 0, n = steps.first; k < steps.count; ++k, n += steps.dir) {
      forward_step(*replay, n);
      const long long level = n + 1;
      if (const long long c = plan.checkpoint_after(w, level); c >= 0)
        save_state(*replay, state_cells, checkpoints.data() + c * state_size);
      if (level >= w.shells_from) save_shell(*replay, at, store.data() + slot(level) * per_level, rounding);
      advance();
    }
  };
  progress("backward", 0);
  const Real* sn = nullptr;  // p^n in grid layout, for the callback
  FieldView<Real> sv;
  RtmSchedule::Backward b;
  b.source = [&](long long n) {
    sn = nullptr;
    sv = {};
    if (boundary) {
      if (n == nt - 1) {
        s.swap_levels();  // the last two levels are p^N, p^{N-1}: start from them
      } else if (schedule.rebuilt(n)) {
        // p^n = 2 p^{n+1} - p^{n+2} + m (L p^{n+1} + S^T f^{n+1} / V) where s = 0, i.e. the
        // forward step n + 1 solved for its oldest level (for the pair, both fields with their
        // operator); the shell comes from the store.
        if (checkpoint) {
          if (const CheckpointPlan::Sweep w = plan.sweep_before(n); w.to > 0) sweep(w);
        }
        s.update(inner_);
        for (long long k = 0; k < src.size(); ++k) inject_source(s, pb_, src, k, double(pb_.wavelet[n + 1]), inner_);
        restore_shell(s, at, store.data() + slot(n) * per_level);
        s.finish();
        exchange(s);
      }
      sv = view(s, g);
      if (single && on_source_level) sn = grid_p(s, g, buffer);
    } else if (schedule.imaged(n)) {
      sn = snapshots[n / every].data();
      sv = grid_view(g, sn);
    }
  };
  const bool isic = mc.imaging_condition == ImagingCondition::isic;
  b.image = [&](long long) {
    if constexpr (std::is_same_v<Wave, CpuWave<Real>>) {
      if (isic) {  // (acoustic, boundary: the constructor refuses the rest)
        isic_level(g, interior_, rebuilt_, sv, grid_view(g, static_cast<const Real*>(s.previous())), view(r, g),
                   grid_view(g, static_cast<const Real*>(r.previous())), pb_.vp.data(), pb_.dt, image, illumination);
        return;  // (gathers: refused with isic)
      }
    }
    image_level(g, interior_, sv, view(r, g), image, illumination);
    if constexpr (single) {
      if (gathers_) {
        const FieldView<Real> rv = view(r, g);
        add_offset_gathers(
            gathers_layout_, interior_, [&](long long iy, long long iz) { return sv.row(iy, iz); },
            [&](long long iy, long long iz) { return rv.row(iy, iz); }, gathers_, slab_ ? slab_->lo : 0);
      }
    }
  };
  b.receiver = [&](long long n) {
    if constexpr (single) {
      if (sn && on_source_level) on_source_level(n, sn);
    }
    receiver_step(r, pb_, pb_.receivers_of(shot), n, data);
    exchange(r);
  };
  schedule.backward(RtmSchedule::Order::image_then_receiver, b, [&](long long) { advance(); });
}

}  // namespace seisrtm::validation
