#include "solver/migration.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>

#include "base/error.hpp"
#include "base/format.hpp"
#include "io/hdf5_file.hpp"
#include "io/interrupt.hpp"
#include "io/observed_data.hpp"
#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "io/segy.hpp"
#include "io/segy_cube.hpp"
#include "solver/cluster.hpp"
#include "solver/decomposition.hpp"
#include "solver/hooks.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/numerics.hpp"
#include "solver/shot_loop.hpp"
#include "solver/stack_parts.hpp"

namespace seisrtm {

namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

// Time of the largest |sample| of a wavelet sampled at dt from t = 0, s.
double peak_time(const std::vector<float>& w, double dt) {
  size_t k = 0;
  for (size_t i = 1; i < w.size(); ++i)
    if (std::abs(w[i]) > std::abs(w[k])) k = i;
  return k * dt;
}

}  // namespace

CellBox interior_box(const Problem& pb) {
  CellBox b;
  const int w = pb.config.boundary.damping_width;
  for (int a = 0; a < 3; ++a) {
    const bool low = !(a == 2 && pb.free_surface);
    b.lo[a] = low ? w : 0;
    b.hi[a] = pb.grid.n[a] - w;
  }
  return b;
}

void check_imaging_condition(const MigrationConfig& mc, Equation equation) {
  if (mc.imaging_condition != ImagingCondition::isic) return;
  if (equation != Equation::acoustic)
    throw Error(
        "config key 'migration.imaging_condition' isic is the acoustic equation's (1 / v^2 and the gradients "
        "of p); physics.equation " +
        to_text(equation) + " takes migration.imaging_condition: correlation");
  if (mc.mode != MigrationMode::boundary)
    throw Error(
        "config key 'migration.imaging_condition' isic takes the source field's time derivative from the levels the "
        "boundary mode rebuilds; use migration.mode: boundary");
  if (mc.gathers.enabled())
    throw Error(
        "config keys 'migration.imaging_condition' isic and 'migration.gathers': the gathers are cross-correlations; "
        "use migration.imaging_condition: correlation with them");
}

GatherLayout gather_layout(const Problem& pb) {
  if (!pb.config.migration || !pb.config.migration->gathers.enabled()) return {};
  const GathersConfig& gc = pb.config.migration->gathers;
  return gather_layout(pb.grid, interior_box(pb), gc.offsets, {gc.x_every, gc.y_every});
}

std::vector<double> gather_angles(const GathersConfig& gc) {
  std::vector<double> angles;
  const long long last = static_cast<long long>(std::floor(gc.max_angle / gc.angle_step * (1 + 1e-9)));
  for (long long i = 0; i <= last; ++i) angles.push_back(double(i) * gc.angle_step);
  return angles;
}

double gather_host_bytes(const Problem& pb) {
  const GatherLayout l = gather_layout(pb);
  if (l.values() == 0) return 0;
  const double angles = double(gather_angles(pb.config.migration->gathers).size());
  return 32.0 * double(l.values()) + 4.0 * double(l.locations()) * angles * double(l.nz);
}

CellBox rebuilt_box(const Problem& global, const Slab* slab) {
  CellBox b = interior_box(global);
  if (slab) {
    b.lo[2] = std::max(0LL, b.lo[2] - slab->lo);
    b.hi[2] = std::min(slab->planes(), b.hi[2] - slab->lo);
  }
  return b;
}

CellBox inner_box(const Problem& pb) {
  CellBox b = interior_box(pb);
  const int w = pb.config.boundary.damping_width;
  if (w == 0) return b;  // no damping: the whole grid runs backwards exactly
  for (int a = 0; a < 3; ++a) {
    const bool low = !(a == 2 && pb.free_surface);
    if (low) b.lo[a] += pb.radius;
    b.hi[a] -= pb.radius;
  }
  return b;
}

std::vector<float> extract_box(const Grid& g, const CellBox& b, const float* v) {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(b.cells()));
  for (long long iz = b.lo[2]; iz < b.hi[2]; ++iz)
    for (long long iy = b.lo[1]; iy < b.hi[1]; ++iy)
      out.insert(out.end(), v + g.index(b.lo[0], iy, iz), v + g.index(b.hi[0], iy, iz));
  return out;
}

double mute_weight(double t, double offset, double velocity, double t0, double taper) {
  const double cut = offset / velocity + t0;  // data kept from here on
  if (t >= cut) return 1;
  if (taper <= 0 || t <= cut - taper) return 0;
  return 0.5 * (1 - std::cos(std::numbers::pi * (t - (cut - taper)) / taper));
}

namespace {

// A SEG-Y file's wavelet: migration.wavelet sampled at the data's dt, as run samples
// sources.wavelet: f(n dt), n = 0..samples-1.
void set_segy_wavelet(const WaveletConfig& w, io::ObservedData& o) {
  if (w.type == WaveletType::ricker) {
    const double delay = w.delay ? *w.delay : 1.2 / w.peak_frequency;
    o.wavelet.resize(static_cast<size_t>(o.samples));
    for (long long n = 0; n < o.samples; ++n)
      o.wavelet[n] = static_cast<float>(ricker(n * o.dt, w.peak_frequency, delay));
  } else {
    const std::string named = "wavelet file '" + w.file + "' dataset '" + w.dataset + "'";
    // run's rule (wavelet_file_limit) with the data's record for the run's steps, from the
    // declared shape and dt before anything is read.
    const io::DeclaredDataset decl = io::declared_dataset(w.file, w.dataset);
    if (decl.dims.size() == 1) {
      const double fdt = std::isfinite(decl.dt) && decl.dt > 0 ? decl.dt : o.dt;
      if (fdt < wavelet_finest_dt(o.dt))
        throw Error(named + " has the attribute dt = " + fmt(fdt) + " s, finer than 1/1024 of the data's dt " +
                    fmt(o.dt) + " s: a mis-declared sample interval (migration.wavelet.file); nothing was read");
      const double used = std::ceil(double(o.samples) * o.dt / fdt) + 1;
      const double limit = wavelet_file_limit(used);
      if (double(decl.dims[0]) > limit)
        throw Error(named + " declares shape [" + std::to_string(decl.dims[0]) + "]; the data's record uses [" +
                    std::to_string(static_cast<long long>(used)) + "] samples (" + std::to_string(o.samples) +
                    " samples of " + fmt(o.dt) + " s / the file's dt " + fmt(fdt) + " s) and at most [" +
                    std::to_string(static_cast<long long>(limit)) +
                    "] are accepted (migration.wavelet.file); nothing was read");
    }
    double wdt = 0;
    auto raw = io::read_float1(w.file, w.dataset, &wdt);
    for (size_t i = 0; i < raw.size(); ++i)
      if (!std::isfinite(raw[i]))
        throw Error(named +
                    " (migration.wavelet) has a NaN or "
                    "infinite value at sample " +
                    std::to_string(i));
    if (!std::isfinite(wdt) || wdt < 0)
      throw Error(named + " has the attribute dt = " + fmt(wdt) +
                  "; it must be a positive sample interval in s (or absent: sampled at the data's dt) "
                  "(migration.wavelet.file)");
    // Without a dt attribute it is taken at the data's dt; else resampled (band-limited) to it.
    // At the data's dt it may not hold more samples than the same rule allows the file (a
    // 2^20-sample file at 1 s resampled to 1 ms would be 10^9 samples).
    const double resampled = std::ceil(double(raw.size()) * wdt / o.dt);
    const double resampled_limit = wavelet_file_limit(double(o.samples) + 1);
    if (wdt > 0 && resampled > resampled_limit)
      throw Error(named + " lasts " + fmt(double(raw.size()) * wdt) + " s (" + std::to_string(raw.size()) +
                  " samples of dt " + fmt(wdt) + " s): " + std::to_string(static_cast<long long>(resampled)) +
                  " samples at the data's dt " + fmt(o.dt) + " s, and at most " +
                  std::to_string(static_cast<long long>(resampled_limit)) +
                  " are accepted (migration.wavelet.file); check its attribute dt");
    o.wavelet = wdt > 0 && wdt != o.dt ? resample(raw.data(), static_cast<long long>(raw.size()), wdt, 0.0,
                                                  static_cast<long long>(resampled), o.dt, 0.0)
                                       : raw;
  }
}

void check_wavelet_not_zero(const MigrationConfig& mc, bool segy, const io::ObservedData& d) {
  if (std::all_of(d.wavelet.begin(), d.wavelet.end(), [](float v) { return v == 0.0f; }))
    throw Error(
        segy ? "config key 'migration.wavelet' is zero at every sample of the data's record (" +
                   std::to_string(d.samples) + " samples of " + fmt(d.dt) +
                   " s): the source field and the "
                   "image would be zero; give the source time function of the SEG-Y traces"
             : "data file '" + mc.data +
                   "': dataset '/sources/wavelet' is zero at every sample: the source "
                   "field and the image would be zero; the data file needs the source time function of its traces");
}

// Positions are checked here so that the message names the data file and the row (survey
// coordinates, as the file holds them).
void check_positions(const MigrationConfig& mc, const Grid& g, const io::ObservedData& d) {
  auto check = [&](const std::vector<std::array<double, 3>>& pos, const std::string& name) {
    for (size_t i = 0; i < pos.size(); ++i)
      for (int a = 0; a < 3; ++a)
        if (const double q = pos[i][a] - g.origin[a]; !(q >= 0 && q <= g.extent(a)))
          throw Error("data file '" + mc.data + "': " + name + " row " + std::to_string(i) + " = [" +
                      coordinate_text(pos[i][0]) + ", " + coordinate_text(pos[i][1]) + ", " +
                      coordinate_text(pos[i][2]) + "] m lies outside the migration grid: x in [" +
                      coordinate_text(g.origin[0]) + ", " + coordinate_text(g.origin[0] + g.extent(0)) + "], y in [" +
                      coordinate_text(g.origin[1]) + ", " + coordinate_text(g.origin[1] + g.extent(1)) + "], z in [" +
                      coordinate_text(g.origin[2]) + ", " + coordinate_text(g.origin[2] + g.extent(2)) +
                      "] m (grid.origin + (grid.shape - 1) x grid.spacing)");
  };
  check(d.source_positions, "/sources/positions");
  if (d.spreads.empty()) check(d.receiver_positions, "/receivers/positions");
  for (size_t s = 0; s < d.spreads.size(); ++s)
    check(d.spreads[s], "/receivers/positions of shot " + std::to_string(s) + ",");
}

// time.steps (auto: the data's record), checked, and migration.image_interval (auto: from f_max).
void set_steps(const MigrationConfig& mc, const io::ObservedData& d, bool steps_auto, MigrationInput& in) {
  Problem& p = in.problem;
  if (steps_auto) {
    const double steps = std::floor(d.samples * d.dt / p.dt + 1e-9);
    if (steps > 1e12)  // and before the cast, which would overflow
      throw Error("data file '" + mc.data + "' holds " + fmt(d.samples * d.dt) + " s of data: " + fmt(steps) +
                  " time steps of " + fmt(p.dt) + " s (the model's fastest speed, " + fmt(p.v_max) +
                  " m/s, sets dt); check the model's velocities and model.epsilon");
    p.steps = static_cast<long long>(steps);
    if (p.steps < 2)
      throw Error("data file '" + mc.data + "' holds " + fmt(d.samples * d.dt) +
                  " s of data, less than two "
                  "time steps of " +
                  fmt(p.dt) + " s: nothing to migrate");
  }
  p.config.time.steps = p.steps;
  if (p.steps < 2) throw Error("config key 'time.steps' must be >= 2 for a migration");
  if (mc.image_interval > p.steps)
    throw Error("config key 'migration.image_interval' = " + std::to_string(mc.image_interval) + " exceeds the " +
                std::to_string(p.steps) + " time steps: no level would be imaged; valid: 1 to " +
                std::to_string(p.steps) + " or auto");
  // The highest useful frequency of the data's wavelet (where its spectrum falls under 3.3% of
  // the peak, as for a Ricker at 2.5 f_peak).
  in.f_max = highest_useful_frequency(d.wavelet, d.dt, 0.033);
  if (mc.image_interval == 0) {
    // S R holds frequencies up to 2 f_max; summed every k steps, a component at frequency f
    // folds onto zero frequency only where f is a multiple of 1 / (k dt): with 1 / (k dt) >
    // 2 f_max none does, and the sum equals the every-step sum up to the band limit.
    const double limit = 1.0 / (2.0 * in.f_max * p.dt);
    p.config.migration->image_interval =
        std::clamp<long long>(static_cast<long long>(std::ceil(limit)) - 1, 1, p.steps);
  }
}

// Traces that are zero everywhere image nothing: a whole survey of them gives a zero image,
// a shot of them is dead. Both are said (single dead traces are common and not).
void warn_dead_shots(const MigrationConfig& mc, const io::ObservedData& d, Problem& p) {
  std::vector<long long> dead;
  const long long per_shot = d.receivers * d.samples;
  for (long long s = 0; s < d.shots; ++s) {
    const float* v = d.traces.data() + s * per_shot;
    if (std::all_of(v, v + per_shot, [](float x) { return x == 0.0f; })) dead.push_back(s);
  }
  if (static_cast<long long>(dead.size()) == d.shots)
    p.warnings.push_back("data file '" + mc.data + "': every trace of /traces is zero: the image will be zero");
  else if (!dead.empty()) {
    std::string list;
    for (size_t i = 0; i < dead.size() && i < 10; ++i) list += (i ? ", " : "") + std::to_string(dead[i]);
    p.warnings.push_back("data file '" + mc.data + "': " + std::to_string(dead.size()) + " of " +
                         std::to_string(d.shots) + " shots have all-zero traces (shot " + list +
                         (dead.size() > 10 ? ", ..." : "") + "): they add nothing to the image");
  }
}

void use_data_wavelet(const Config& c, const Grid& g, const io::ObservedData& d, MigrationInput& in) {
  Problem& p = in.problem;
  // The data's own source time function, at the migration's dt (f sampled from t = 0).
  p.wavelet = resample(d.wavelet.data(), static_cast<long long>(d.wavelet.size()), d.dt, 0.0, p.steps, p.dt, 0.0);
  // The sampling warning of build_problem used the config's default wavelet: redo it with the data's.
  std::erase_if(p.warnings, [](const std::string& w) { return w.rfind("too few points", 0) == 0; });
  const double f_max = in.f_max;
  const double h_max = std::max({g.h[0], g.h[1], g.h[2]});
  const double need = required_points_per_wavelength(c.physics.space_order);
  if (p.v_min / (f_max * h_max) < need)
    p.warnings.push_back("too few points per wavelength for the data's wavelet: v_min " + fmt(p.v_min) +
                         " m/s / (f_max " + fmt(f_max) + " Hz x h_max " + fmt(h_max) +
                         " m) = " + fmt(p.v_min / (f_max * h_max)) + "; space_order " +
                         std::to_string(c.physics.space_order) + " wants >= " + fmt(need));
  if (p.steps * p.dt > d.samples * d.dt * (1 + 1e-9))
    p.warnings.push_back("time.steps x dt = " + fmt(p.steps * p.dt) + " s exceeds the data's " + fmt(d.samples * d.dt) +
                         " s: the rest is taken as zero");
}

// The traces at the migration's dt, filtered and muted as migration says.
void prepare_traces(const MigrationConfig& mc, const io::ObservedData& d, MigrationInput& in) {
  Problem& p = in.problem;
  in.data_file = mc.data;
  in.data_dt = d.dt;
  in.data_samples = d.samples;
  const long long nrec = d.receivers, nt = p.steps;
  in.traces.resize(static_cast<size_t>(d.shots * nrec * nt));
  double t0 = 0, taper = 0;
  if (mc.mute.enabled) {
    const double tp = peak_time(d.wavelet, d.dt);
    t0 = mc.mute.t0 ? *mc.mute.t0 : 2 * tp;
    taper = mc.mute.taper ? *mc.mute.taper : 0.5 * tp;
  }
  // A spread a shot: the first shot's with receivers decides.
  const std::vector<std::array<double, 3>>* decide = &d.receiver_positions;
  for (const auto& spread : d.spreads)
    if (!spread.empty()) {
      decide = &spread;
      break;
    }
  in.data_filter = resolve_data_filter(mc.data_filter, *decide);
  long long muted = 0, padding = 0;  // padding: samples of rows beyond a shot's spread
  // Nothing may throw out of the parallel loop (that would terminate): the first exception
  // (e.g. bad_alloc) is kept and rethrown after it.
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic) reduction(+ : muted, padding)
  for (long long tr = 0; tr < d.shots * nrec; ++tr) {
    try {
      const long long s = tr / nrec, r = tr % nrec;
      // Sample n of a trace is at t = (n + 1) dt, for the data and for the migration.
      auto y = resample(d.traces.data() + tr * d.samples, d.samples, d.dt, d.dt, nt, p.dt, p.dt);
      if (in.data_filter != DataFilter::none) {
        // (-i w)^alpha: the correlation image of a wide areal aperture carries 1 / (-i w) (a
        // 90 degree rotation) from the sum over receivers, a line's half of it; the filter
        // undoes it with the reflection coefficient's sign (docs/ADJOINT.md).
        y = minus_i_omega_power(y.data(), nt, p.dt, in.data_filter == DataFilter::derivative ? 1.0 : 0.5);
      }
      // A spread a shot: the rows beyond the shot's receivers are zero and stay so.
      const std::vector<std::array<double, 3>>& spread =
          d.spreads.empty() ? d.receiver_positions : d.spreads[static_cast<size_t>(s)];
      if (r >= static_cast<long long>(spread.size())) {
        std::fill_n(in.traces.begin() + tr * nt, nt, 0.0f);
        padding += nt;
        continue;
      }
      if (mc.mute.enabled) {
        double off = 0;
        for (int a = 0; a < 3; ++a)
          off += (spread[r][a] - d.source_positions[s][a]) * (spread[r][a] - d.source_positions[s][a]);
        off = std::sqrt(off);
        for (long long n = 0; n < nt; ++n) {
          const double wgt = mute_weight((n + 1) * p.dt, off, mc.mute.velocity, t0, taper);
          if (wgt == 0) ++muted;
          y[n] = static_cast<float>(y[n] * wgt);
        }
      }
      std::copy(y.begin(), y.end(), in.traces.begin() + tr * nt);
    } catch (...) {
#pragma omp critical(seisrtm_prepare_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  // offset / velocity + t0 beyond the record on every trace: the image would be exactly zero.
  in.live_samples = static_cast<long long>(in.traces.size()) - padding;
  if (mc.mute.enabled && in.live_samples > 0 && muted == in.live_samples)
    throw Error("config key 'migration.mute' (velocity " + fmt(mc.mute.velocity) + " m/s, t0 " + fmt(t0) +
                " s) zeroes every sample of every trace: offset / velocity + t0 lies beyond the record of " +
                fmt(p.steps * p.dt) +
                " s on all of them and the image would be zero; raise migration.mute.velocity "
                "(m/s), lower migration.mute.t0 (s), or remove migration.mute");
  in.muted_samples = muted;
}

}  // namespace

MigrationInput prepare_migration(const Config& c, const MemoryCheck& check_memory) {
  if (!c.migration) throw Error("the config has no 'migration' section (migration.data names the data file)");
  const MigrationConfig& mc = *c.migration;
  check_imaging_condition(mc, c.physics.equation);
  // physics.equation vti and tti migrate on both backends (the GPU with separate backward kernels).
  // What the file declares is checked against the host memory before it is read.
  const double host_limit = kHostMemoryMargin * available_host_memory();
  // HDF5 as seisrtm run writes it, or SEG-Y (io/segy.hpp), whose wavelet is migration.wavelet
  // sampled at the data's dt, as run samples sources.wavelet: f(n dt), n = 0..samples-1.
  const bool segy = io::is_segy_path(mc.data);
  auto read_data = [&](bool with_traces) {
    if (!segy) return io::read_observed(mc.data, with_traces, host_limit);
    io::ObservedData o = io::read_segy(mc.data, mc.segy_headers, with_traces, host_limit);
    set_segy_wavelet(*mc.wavelet, o);
    return o;
  };
  io::ObservedData d = read_data(false);
  check_wavelet_not_zero(mc, segy, d);

  Config cc = c;
  cc.sources.shots = d.source_positions;
  cc.receivers.layout = d.spreads.empty() ? ReceiverLayout::list : ReceiverLayout::per_shot;
  cc.receivers.list = d.spreads.empty() ? d.receiver_positions : std::vector<std::array<double, 3>>{};
  cc.receivers.per_shot = d.spreads;
  cc.receivers.relative = false;
  const bool steps_auto = c.time.steps == 0;
  if (steps_auto) cc.time.steps = 1;  // resolved below, once dt is known
  const Grid g{cc.grid.shape, cc.grid.spacing, cc.grid.origin};
  check_positions(mc, g, d);

  if (mc.depth_slice && !(*mc.depth_slice >= g.origin[2] && *mc.depth_slice <= g.origin[2] + g.extent(2)))
    throw Error("config key 'migration.depth_slice' = " + fmt(*mc.depth_slice) + " m lies " +
                (*mc.depth_slice > g.origin[2] ? "below" : "above") + " the grid; valid: [" + fmt(g.origin[2]) + ", " +
                fmt(g.origin[2] + g.extent(2)) + "] m or auto");
  if (c.output.segy != SegyRevision::none)  // the image cube's header values, before any work
    (void)io::plan_segy_cube("output.segy", c.output.segy == SegyRevision::rev1 ? 1 : 2, g.n, g.h, g.origin);
  MigrationInput in;
  in.problem = build_problem(cc);
  // The config the outputs carry is the user's: the shots and receivers are the data's (in
  // /sources/positions and /receivers/positions), and a survey's lists would outgrow an HDF5
  // attribute (64 KiB in the default file format).
  in.problem.config.sources.shots = c.sources.shots;
  in.problem.config.receivers = c.receivers;
  Problem& p = in.problem;
  set_steps(mc, d, steps_auto, in);
  // Built with a provisional step count when steps are auto; migrate takes no snapshots.
  std::erase_if(p.warnings, [](const std::string& w) { return w.rfind("output.snapshot_interval", 0) == 0; });
  if (check_memory) check_memory(p, DataShape{mc.data, d.shots, d.receivers, d.samples, d.dt});
  d = read_data(true);
  warn_dead_shots(mc, d, p);

  use_data_wavelet(c, g, d, in);
  prepare_traces(mc, d, in);
  return in;
}

DataFilter resolve_data_filter(DataFilter key, const std::vector<std::array<double, 3>>& rec) {
  if (key != DataFilter::automatic) return key;
  if (rec.empty()) return DataFilter::none;
  double mx = 0, my = 0;
  for (const auto& r : rec) mx += r[0], my += r[1];
  mx /= rec.size();
  my /= rec.size();
  double cxx = 0, cyy = 0, cxy = 0;
  for (const auto& r : rec) {
    cxx += (r[0] - mx) * (r[0] - mx);
    cyy += (r[1] - my) * (r[1] - my);
    cxy += (r[0] - mx) * (r[1] - my);
  }
  // Eigenvalues of the 2 x 2 covariance: the spread's squared extents along its principal axes.
  const double mean = 0.5 * (cxx + cyy), dev = std::sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
  const double big = mean + dev, small = std::max(0.0, mean - dev);
  if (big <= 0) return DataFilter::none;
  return std::sqrt(small / big) >= 0.5 ? DataFilter::derivative : DataFilter::half_derivative;
}

std::string MigrationPlan::describe() const {
  std::string s = "migration plan: source field by " + to_text(mode) + ", store " + gib(store_bytes) + " per shot";
  s += ", volumes " + gib(volumes_bytes) + ", data " + gib(data_bytes) + ": " + gib(total_bytes) + " of host memory";
  if (available_bytes > 0) s += " (" + gib(available_bytes) + " available)";
  return s;
}

std::string DataShape::describe() const {
  return "data file '" + file + "' (" + std::to_string(shots) + (shots == 1 ? " shot x " : " shots x ") +
         std::to_string(receivers) + " receivers x " + std::to_string(samples) + " samples of " + fmt(dt) + " s)";
}

MigrationPlan plan_migration(const Problem& pb, const DataShape& data, double available) {
  const long long data_samples = data.samples;
  const MigrationConfig& mc = *pb.config.migration;
  MigrationPlan pl;
  pl.mode = mc.mode;
  const double cells = static_cast<double>(pb.grid.cells());
  pl.volume_bytes = 4 * cells;
  // Acoustic: vp; the source and receiver fields with their own model copy (3 each); the exact
  // stack (32 bytes a cell: 8 volumes) and the shot's image and illumination; the stack rounded
  // and the normalised and Laplacian images made at the end.
  pl.volumes_bytes = 19 * pl.volume_bytes + gather_host_bytes(pb);
  // The pseudo-acoustic pair (validation/cpu_tti.hpp) holds per field (source, receiver) 6
  // coefficient volumes and 8 padded ones (p and q at two levels, 4 first derivatives; a halo of
  // R cells per side); the problem holds vp, epsilon, delta (and theta, phi for tti); p of the
  // source field is copied to grid layout for snapshots: 1 more; stack and images as above: 12.
  if (pb.anisotropic()) {
    double padded = 4;
    for (int a = 0; a < 3; ++a) padded *= static_cast<double>(pb.grid.n[a] + 2 * pb.radius);
    const double model = pb.equation == Equation::tti ? 5 : 3;
    pl.volumes_bytes = (model + 2 * 6 + 1 + 12) * pl.volume_bytes + 2 * 8 * padded + gather_host_bytes(pb);
  }
  const double traces = double(pb.shot_count()) * pb.receivers.size();
  const double data_fixed = 4 * traces * data_samples, data_per_step = 4 * traces;  // as read; resampled
  pl.data_bytes = data_fixed + data_per_step * pb.steps;
  double per_step = 0;
  if (mc.mode == MigrationMode::boundary) {
    // The shell of every field the wave steps: p, or p and q for vti and tti (imaging reads p
    // only, so snapshots keep p alone).
    const double fields = pb.anisotropic() ? 2 : 1;
    per_step = 4.0 * fields * (interior_box(pb).cells() - inner_box(pb).cells());
    pl.store_bytes = per_step * pb.steps;
  } else {
    per_step = pl.volume_bytes / mc.image_interval;
    pl.store_bytes = pl.volume_bytes * (pb.steps / mc.image_interval);
  }
  pl.total_bytes = pl.volumes_bytes + pl.data_bytes + pl.store_bytes;
  pl.available_bytes = available;
  // 90% of the available memory: fixed parts + (store + resampled data) per step.
  const double spare = 0.9 * available - pl.volumes_bytes - data_fixed;
  pl.max_steps = spare > 0 ? static_cast<long long>(spare / (per_step + data_per_step)) : 0;
  if (available > 0 && pl.total_bytes > 0.9 * available) {
    std::string alt = mc.mode == MigrationMode::boundary
                          ? ""
                          : "; migration.mode: boundary needs far less, or raise migration.image_interval";
    // Fewer steps migrate only the start of the record (time.steps, auto = all of it): worth
    // saying only where at least the two steps a migration needs fit; else the volumes and the
    // data as read are too large by themselves.
    const std::string fix =
        pl.max_steps >= 2
            ? "at most about " + std::to_string(pl.max_steps) + " of its " + std::to_string(pb.steps) + " steps of " +
                  fmt(pb.dt) + " s fit: time.steps " + std::to_string(pl.max_steps) + " migrates " +
                  fmt(pl.max_steps * pb.dt) + " s (the data hold " + fmt(data.samples * data.dt) +
                  " s); or a coarser grid.shape"
            : "the volumes and the data as read (" + gib(pl.volumes_bytes + data_fixed) +
                  ") leave no room for the store of even 2 steps: a coarser grid.shape, or fewer shots or receivers "
                  "in the data";
    const double gathers = gather_host_bytes(pb);
    if (gathers > 0.5 * pl.total_bytes)  // the gathers are what does not fit: say so first
      throw Error(data.describe() + ": the migration needs " + gib(pl.total_bytes) + " of host memory, " +
                  gib(gathers) + " of it for the image gathers (" + std::to_string(gather_layout(pb).values()) +
                  " values, 36 bytes each), but " + gib(available) +
                  " is available; fewer gather locations (migration.gathers.x_every, y_every) or offsets "
                  "(migration.gathers.offsets)");
    throw Error(data.describe() + ": the migration needs " + gib(pl.total_bytes) + " of host memory (" +
                to_text(mc.mode) + " store " + gib(pl.store_bytes) + ", volumes " + gib(pl.volumes_bytes) +
                (gathers > 0 ? " with image gathers " + gib(gathers) : "") + ", data " + gib(pl.data_bytes) + ") but " +
                gib(available) + " is available; " + fix + alt);
  }
  return pl;
}

Images finish_images(const Problem& pb, std::vector<float> correlation, std::vector<float> illumination,
                     double epsilon) {
  Images im;
  const Grid& g = pb.grid;
  const size_t n = static_cast<size_t>(g.cells());
  const double top = illumination.empty() ? 0.0 : *std::max_element(illumination.begin(), illumination.end());
  im.normalized.assign(n, 0.0f);
  for (size_t i = 0; i < n; ++i)
    im.normalized[i] = top > 0 ? static_cast<float>(correlation[i] / (illumination[i] + epsilon * top)) : 0.0f;
  // -lap of the normalised image, second order (a 7-point stencil), in the interior only: it
  // keeps the reflectors (high vertical wavenumbers) and removes the smooth backscatter.
  im.laplacian.assign(n, 0.0f);
  const CellBox b = interior_box(pb);
  const long long sx = 1, sy = g.n[0], sz = g.n[0] * g.n[1];
  const double ih[3] = {1 / (g.h[0] * g.h[0]), 1 / (g.h[1] * g.h[1]), 1 / (g.h[2] * g.h[2])};
#pragma omp parallel for schedule(static)
  for (long long iz = b.lo[2] + 1; iz < b.hi[2] - 1; ++iz)
    for (long long iy = b.lo[1] + 1; iy < b.hi[1] - 1; ++iy)
      for (long long ix = b.lo[0] + 1; ix < b.hi[0] - 1; ++ix) {
        const long long i = g.index(ix, iy, iz);
        const float* v = im.normalized.data() + i;
        const double lap = ih[0] * (v[-sx] - 2.0 * v[0] + v[sx]) + ih[1] * (v[-sy] - 2.0 * v[0] + v[sy]) +
                           ih[2] * (v[-sz] - 2.0 * v[0] + v[sz]);
        im.laplacian[i] = static_cast<float>(-lap);
      }
  im.correlation = std::move(correlation);
  im.illumination = std::move(illumination);
  return im;
}

namespace {

// One shot of a migration on this rank: into zeroed volumes sent to rank 0 as the shot's
// result; on the other ranks of a decomposed run the calls are collective and their verdict
// comes every hundredth of the steps.
// A shot's volumes: image, illumination and (migration.gathers) the image gathers.
struct ShotVolumes {
  std::vector<float> image, illumination, gathers;
};

void migrate_one(const MigrationInput& in, Migrator& migrator, long long s, ShotSteps& st, ShotVolumes& v,
                 long long gather_values) {
  const Problem& pb = in.problem;
  const long long nrec = pb.max_receivers(), nt = pb.steps;  // the data's rows a shot
  const long long chunk = std::max(1LL, nt / 100);
  st.begin({}, st.label());
  auto report = [&](const std::string& p, long long done) {
    st.progress(p, done);
    const std::string where = st.label() + ", " + p + " pass, step " + std::to_string(done) + "/" + std::to_string(nt);
    // Every rank of a decomposed run reports the same steps: the verdict is collective.
    if (st.slabs()) {
      if (done % chunk == 0 || done == nt) st.check(where);
      return;
    }
    st.check(where);
    // The backward pass counts up to nt: near its end the next shot's number is asked for, to
    // arrive while this one ends.
    if (p == "backward" && 10 * done >= 9 * nt) st.nearly_done();
  };
  const float* data = in.traces.data() + s * nrec * nt;
  // A decomposed run's ranks other than 0 hold no whole-grid volume (SlabMigrator takes null).
  const bool whole = !st.slabs() || st.keeps();
  const long long n = whole ? pb.grid.cells() : 0;
  v.image.resize(static_cast<size_t>(n));
  v.illumination.resize(static_cast<size_t>(n));
  v.gathers.resize(static_cast<size_t>(whole ? gather_values : 0));
  float *im = v.image.data(), *il = v.illumination.data(), *ga = v.gathers.data();
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) im[i] = il[i] = 0.0f;
  std::fill(ga, ga + v.gathers.size(), 0.0f);
  migrator.gathers_into(v.gathers.empty() ? nullptr : ga);
  migrator.migrate_shot(s, data, whole ? im : nullptr, whole ? il : nullptr, report);
  migrator.gathers_into(nullptr);
  st.send(cluster::ResultKind::image, 0, v.image);
  if (gather_values > 0) st.send(cluster::ResultKind::gathers, 0, v.gathers);
  st.send(cluster::ResultKind::illumination, 0, v.illumination);
  st.finish_progress();  // (rank 0 adds the shot to the stack beside the next one)
}

}  // namespace

ExactStack stack_shots(const MigrationInput& in, Migrator& migrator, bool quiet, const std::vector<long long>& shots,
                       double& seconds, StackResume* resume) {
  const Problem& pb = in.problem;
  // Rank 0 adds every shot (its own and the other ranks'); a decomposed run's other ranks hold
  // no whole-grid volume (SlabMigrator takes null), a farm's workers send theirs. A resumed
  // migration starts from its journal's stack.
  const bool keeps = cluster::rank() == 0;
  const bool given = keeps && resume && resume->stack.cells() > 0;
  const long long gather_values = gather_layout(pb).values();
  ExactStack stack = given   ? std::move(resume->stack)
                     : keeps ? ExactStack(pb.grid.cells(), stack_exponents(pb, in.traces.data()), gather_values)
                             : ExactStack();
  std::vector<long long> in_stack = resume ? resume->shots : std::vector<long long>{};
  ResumeJournal* journal = keeps && resume ? resume->journal : nullptr;
  // Imaged every k steps, k times the sum estimates the sum over all steps (exactly, within
  // the band, for the k that image_interval auto picks): images do not depend on k.
  const float k = static_cast<float>(pb.config.migration->image_interval);
  // Every shot is imaged into zeroed volumes and added to the exact stack on rank 0 as it
  // arrives: the same bits whichever rank computed it and in whatever order (exact_stack.hpp).
  // The addition runs beside the next shot (a thread of its own: the GPU is not kept waiting),
  // one at a time; its volumes then come back for a later shot of this rank (no new pages).
  ShotVolumes shot;
  std::map<long long, ShotVolumes> waiting;  // rank 0: shots of which some volumes came
  ShotVolumes adding_now, spare;
  long long added = 0;       // (this run's: a resumed stack holds others)
  std::future<void> adding;  // (declared after what it reads: destroyed, so waited for, first)
  auto finish_adding = [&] {
    if (!adding.valid()) return;
    adding.get();  // rethrows the addition's Error
    ++added;
    spare = std::move(adding_now);
  };
  ShotWork work;
  work.compute = [&](long long s, ShotSteps& st) {
    if (shot.image.empty() && !spare.image.empty()) shot = std::move(spare);  // an earlier shot's, added by now
    migrate_one(in, migrator, s, st, shot, gather_values);
  };
  work.keep = [&](int, long long s, cluster::ResultKind kind, long long, std::vector<float>& data) {
    ShotVolumes& v = waiting[s];
    (kind == cluster::ResultKind::image     ? v.image
     : kind == cluster::ResultKind::gathers ? v.gathers
                                            : v.illumination) = std::move(data);
    if (v.image.empty() || v.illumination.empty() || (gather_values > 0 && v.gathers.empty())) return;
    finish_adding();
    adding_now = std::move(v);
    waiting.erase(s);
    const std::string label = "shot " + std::to_string(s + 1) + "/" + std::to_string(pb.shot_count()) + ": ";
    // Half the threads: the others keep the next shot's launches and copies on time.
    const int threads = std::max(1, omp_get_max_threads() / 2);
    // Then the journal, where it is due (ResumeJournal: at most 1/20 of the time goes to it).
    adding = std::async(std::launch::async, [&stack, &adding_now, &in_stack, journal, s, k, label, threads] {
      try {
        stack.add(adding_now.image.data(), adding_now.illumination.data(), k, threads,
                  adding_now.gathers.empty() ? nullptr : adding_now.gathers.data());
      } catch (const Error& e) {
        throw Error(label + e.what());
      }
      in_stack.push_back(s);
      if (journal && journal->due()) journal->save(stack, in_stack);
    });
  };
  work.name_internal_errors = true;
  work.workers_end_when_done = true;  // (rank 0 alone adds: nothing collective after the farm)
  ShotPlan plan = every_shot(pb, quiet);
  plan.shots = shots;
  ShotLoop loop(plan, std::move(work));
  seconds = loop.run();
  finish_adding();
  if (keeps && added != static_cast<long long>(shots.size()))
    throw Error("migration: " + std::to_string(static_cast<long long>(shots.size()) - added) +
                " shot image(s) missing at the end");
  return stack;
}

double stack_shots(const MigrationInput& in, Migrator& migrator, bool quiet, std::vector<float>& image,
                   std::vector<float>& illumination) {
  double seconds = 0;
  const ExactStack stack = stack_shots(in, migrator, quiet, all_shots(in.problem), seconds);
  image.assign(static_cast<size_t>(stack.cells()), 0.0f);
  illumination.assign(image.size(), 0.0f);
  stack.to_float(image.data(), illumination.data());
  return seconds;
}

namespace {

void check_finite(const Grid& g, const std::vector<float>& image, const std::vector<float>& illumination) {
  // A wavefield that blew up leaves NaN or Inf in the stack: refuse it, and the earlier set stays
  // (run stops at the first non-finite wavefield; a migrator's passes are not checked step by step).
  for (const std::vector<float>* v : {&image, &illumination}) {
    const auto bad = std::find_if(v->begin(), v->end(), [](float x) { return !std::isfinite(x); });
    if (bad != v->end())
      throw Error(std::string("the migrated ") + (v == &image ? "image" : "illumination") + " holds NaN or Inf (" +
                  fmt(*bad) + " at " + cell_text(g, static_cast<size_t>(bad - v->begin())) +
                  "): a wavefield became NaN or Inf; check time.dt, the model (vp, epsilon, delta, theta, phi) and "
                  "the data file; nothing was written");
  }
}

// The sources' and the receivers' survey positions (a spread a shot as seisrtm run writes it:
// [shot, receiver, 3], NaN beyond a shot's count).
void write_positions(io::OutputFile& out, const Problem& pb) {
  const Grid& g = pb.grid;
  const long long nrec = pb.max_receivers(), nshots = pb.shot_count();
  const hid_t root = out.root();
  out.create_group("sources");
  out.create_group("receivers");
  std::vector<double> pos;
  for (const auto& p : pb.shots) {
    const std::array<double, 3> s = g.survey(p.position[0]);
    pos.insert(pos.end(), s.begin(), s.end());
  }
  io::write_dataset(root, "sources/positions", {hsize_t(nshots), 3}, pos.data());
  io::describe_dataset(root, "sources/positions", "m", "source position [x, y, z]");
  io::attach_axes(root, "sources/positions", {"shot", "component"});
  pos.clear();
  if (!pb.varying_spread()) {
    for (const auto& r : g.survey(pb.receivers.position)) pos.insert(pos.end(), r.begin(), r.end());
    io::write_dataset(root, "receivers/positions", {hsize_t(nrec), 3}, pos.data());
    io::describe_dataset(root, "receivers/positions", "m", "receiver position [x, y, z]");
    io::attach_axes(root, "receivers/positions", {"receiver", "component"});
    return;
  }
  pos.assign(static_cast<size_t>(nshots * nrec * 3), std::nan(""));
  std::vector<long long> count;
  for (long long s = 0; s < nshots; ++s) {
    const std::vector<std::array<double, 3>> spread = g.survey(pb.receivers_of(s).position);
    for (size_t r = 0; r < spread.size(); ++r)
      std::copy(spread[r].begin(), spread[r].end(), pos.begin() + static_cast<std::ptrdiff_t>((s * nrec + r) * 3));
    count.push_back(static_cast<long long>(spread.size()));
  }
  io::write_dataset(root, "receivers/positions", {hsize_t(nshots), hsize_t(nrec), 3}, pos.data());
  io::describe_dataset(root, "receivers/positions", "m",
                       "receiver position [x, y, z] of each shot's spread (NaN beyond receivers/count)");
  io::attach_axes(root, "receivers/positions", {"shot", "receiver", "component"});
  io::write_dataset(root, "receivers/count", {hsize_t(nshots)}, count.data());
  io::describe_dataset(root, "receivers/count", "1", "receivers of each shot's spread");
  io::attach_axes(root, "receivers/count", {"shot"});
}

// The HDF5 file: its attributes, the image volumes, the model and the positions.
void write_volumes(io::OutputFile& out, const MigrationInput& in, const Images& im, const std::string& producer,
                   const std::string& migrator, double seconds) {
  const Problem& pb = in.problem;
  const Grid& g = pb.grid;
  const long long nrec = pb.max_receivers(), nshots = pb.shot_count();
  const hid_t root = out.root();
  write_run_attributes(root, pb, producer, migrator);
  io::write_attribute(root, "data_file", in.data_file);
  const bool isic = pb.config.migration->imaging_condition == ImagingCondition::isic;
  io::write_attribute(root, "imaging_condition", to_text(pb.config.migration->imaging_condition));
  io::write_attribute(root, "units",
                      std::string("lengths m, times s, velocities m/s; spacing, origin and shape are [x, y, z]; ") +
                          (isic ? "image/isic: sum over shots and time steps of (1 / v^2) dS/dt dR/dt - grad S . grad "
                                  "R (data units x source field units / m^2"
                                : "image/correlation: sum over shots and time steps of S R (data units x source "
                                  "field units") +
                          "; image_interval k times the sum over the imaging steps); image/illumination: "
                          "sum of S^2 (the same way); image/normalized: correlation / "
                          "(illumination + epsilon max illumination); image/laplacian: -lap(normalized) in 1/m^2; "
                          "each dataset has its own units attribute");
  io::write_attribute(root, "layout", "volumes are [z][y][x] (x fastest)");
  io::write_attribute(root, "stepping_seconds", seconds);
  io::write_grid_axes(root, g.n, g.h, g.origin);  // at the origin write_run_attributes wrote
  io::write_index_axis(root, "shot", nshots, "shot index");
  io::write_index_axis(root, "receiver", nrec, "receiver index");
  io::write_component_axis(root);
  const std::vector<hsize_t> n3{hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0])};
  auto volume = [&](const std::string& name, const float* v, const std::string& units, const std::string& long_name) {
    io::write_dataset(root, name, n3, v);
    io::describe_dataset(root, name, units, long_name);
    io::attach_axes(root, name, {"z", "y", "x"});
  };
  // S: the source field (p of the wavelet, a unit source); R: the receiver field (p of the data).
  out.create_group("image");
  // The raw image under its condition's name (migration.imaging_condition).
  if (isic)
    volume("image/isic", im.correlation.data(), "data units x source field units / m^2",
           "sum over shots and imaging steps of (1 / v^2) dS/dt dR/dt - grad S . grad R");
  else
    volume("image/correlation", im.correlation.data(), "data units x source field units",
           "sum over shots and imaging steps of S R");
  volume("image/illumination", im.illumination.data(), "source field units^2",
         "sum over shots and imaging steps of S^2");
  volume("image/normalized", im.normalized.data(),
         isic ? "data units / source field units / m^2" : "data units / source field units",
         std::string(isic ? "isic" : "correlation") + " / (illumination + epsilon max illumination)");
  volume("image/laplacian", im.laplacian.data(), "1/m^2 x image/normalized units", "-lap(normalized)");
  out.create_group("model");
  volume("model/vp", pb.vp.data(), "m/s", "P-wave velocity");
  write_positions(out, pb);
}

// The depth slice's z index: migration.depth_slice, or the depth with the strongest image.
long long depth_slice_index(const Problem& pb, const Images& im) {
  const MigrationConfig& mc = *pb.config.migration;
  const Grid& g = pb.grid;
  const CellBox b = interior_box(pb);
  long long iz = 0;
  if (mc.depth_slice) {
    iz = std::clamp<long long>(std::llround((*mc.depth_slice - g.origin[2]) / g.h[2]), 0, g.n[2] - 1);
  } else {  // the depth with the strongest image
    double best = -1;
    for (long long z = b.lo[2]; z < b.hi[2]; ++z) {
      double e = 0;
      for (long long i = z * g.n[0] * g.n[1]; i < (z + 1) * g.n[0] * g.n[1]; ++i) e += std::abs(im.laplacian[i]);
      if (e > best) best = e, iz = z;
    }
  }
  return iz;
}

void write_pictures(io::OutputSet& set, const Problem& pb, const Images& im, long long iy, long long iz) {
  const Config& c = pb.config;
  const Grid& g = pb.grid;
  // Images in grey (peaks black), clipped at the 99th percentile of |image| (stated in each
  // picture); the model in a sequential map from its minimum to its maximum.
  auto picture = [&](const std::string& suffix, const std::vector<float>& v, char normal, long long index,
                     const std::string& what, const std::string& label, const std::string& unit) {
    if (!c.output.pictures) return;
    io::Image2D p = io::volume_slice(v.data(), g.n, g.h, g.origin, normal, index);
    p.title = c.output.name + ": " + what + ", " + p.title;
    p.value_label = label, p.value_unit = unit;
    p.map = io::Colormap::grey;
    if (suffix == "model_vp") p.map = io::Colormap::viridis, p.symmetric = false, p.clip_percentile = 100;
    io::write_image(set.add("_" + suffix + ".png"), p);
  };
  picture("image_xz", im.laplacian, 'y', iy, "image", "-lap(normalised image)", "1/m^2");
  picture("image_normalized_xz", im.normalized, 'y', iy, "normalised image", "correlation / illumination", "");
  picture("image_depth", im.laplacian, 'z', iz, "image", "-lap(normalised image)", "1/m^2");
  picture("model_vp", pb.vp, 'y', iy, "migration model vp", "vp", "m/s");
}

// The image gathers (migration.gathers): /gathers/offset [y location][x location][offset][z] from
// the stack, /gathers/angle from them (offset_to_angle, a location at a time), their axes, and
// pictures of both at the location nearest the middle of the image.
void write_gathers(io::OutputSet& set, const Problem& pb, const ExactStack& stack) {
  const GatherLayout l = gather_layout(pb);
  if (l.values() == 0) return;
  const Grid& g = pb.grid;
  const GathersConfig& gc = pb.config.migration->gathers;
  const hid_t root = set.h5().root();
  std::vector<float> offset(static_cast<size_t>(l.values()));
  stack.gathers_to_float(offset.data());
  for (size_t i = 0; i < offset.size(); ++i)
    if (!std::isfinite(offset[i]))
      throw Error("the migrated image gathers hold NaN or Inf (value " + std::to_string(i) +
                  "): a wavefield became NaN or Inf; check time.dt, the model and the data file; nothing was written");
  const std::vector<double> angles = gather_angles(gc);
  const long long na = static_cast<long long>(angles.size());
  std::vector<float> angle(static_cast<size_t>(l.locations() * na * l.nz));
#pragma omp parallel for schedule(dynamic)
  for (long long j = 0; j < l.locations(); ++j) {
    const std::vector<float> a =
        offset_to_angle(offset.data() + j * l.offsets() * l.nz, l.offsets(), l.nz, g.h[0], g.h[2], angles);
    std::copy(a.begin(), a.end(), angle.begin() + j * na * l.nz);
  }
  std::vector<double> xs, ys, hs;
  for (long long ix : l.x) xs.push_back(g.origin[0] + double(ix) * g.h[0]);
  for (long long iy : l.y) ys.push_back(g.origin[1] + double(iy) * g.h[1]);
  for (long long h = -l.half_offsets; h <= l.half_offsets; ++h) hs.push_back(double(h) * g.h[0]);
  set.h5().create_group("gathers");
  io::write_axis(root, "gathers/x", xs, "m", "x of the gather locations");
  io::write_axis(root, "gathers/y", ys, "m", "y of the gather locations");
  io::write_axis(root, "gathers/h", hs, "m", "subsurface half-offset h along x");
  io::write_axis(root, "gathers/angle_deg", angles, "degrees", "reflection angle (half the opening angle)");
  const hsize_t nyl = l.y.size(), nxl = l.x.size();
  io::write_dataset(root, "gathers/offset", {nyl, nxl, hsize_t(l.offsets()), hsize_t(l.nz)}, offset.data());
  io::describe_dataset(root, "gathers/offset", "data units x source field units",
                       "subsurface-offset gathers: sum over shots and imaging steps of S(x - h) R(x + h)");
  io::attach_axes(root, "gathers/offset", {"gathers/y", "gathers/x", "gathers/h", "z"});
  io::write_dataset(root, "gathers/angle", {nyl, nxl, hsize_t(na), hsize_t(l.nz)}, angle.data());
  io::describe_dataset(root, "gathers/angle", "data units x source field units",
                       "angle gathers from the offset gathers (tan angle = -k_h / k_z, Sava and Fomel 2003)");
  io::attach_axes(root, "gathers/angle", {"gathers/y", "gathers/x", "gathers/angle_deg", "z"});
  // SEG-Y (output.segy): a gather a location on the image cube's plan; byte 37 the half-offset
  // (m) or the angle (degrees), rounded (docs/SEGY.md, "Image gathers").
  if (pb.config.output.segy != SegyRevision::none) {
    const int rev = pb.config.output.segy == SegyRevision::rev1 ? 1 : 2;
    const io::SegyCube plan = io::plan_segy_cube("output.segy", rev, g.n, g.h, g.origin);
    if (l.locations() * std::max(l.offsets(), na) > 2147483647LL)
      throw Error("output.segy: the image gathers' " + std::to_string(l.locations() * std::max(l.offsets(), na)) +
                  " traces exceed the 2147483647 a SEG-Y file can address; fewer gather locations");
    std::vector<long long> h_m, a_deg;
    for (double h : hs) h_m.push_back(std::llround(h));
    for (double a : angles) a_deg.push_back(std::llround(a));
    const std::string text = "seisrtm migrate: image gathers of " + pb.config.output.name +
                             ".h5 (/gathers), correlation units\nconfig: " + pb.config.source_file;
    io::write_segy_gathers(set.add("_gathers_offset.sgy"), plan, l.x, l.y, l.offsets(), h_m, offset.data(),
                           "subsurface-offset gathers, byte 37 = half-offset h (m)", text);
    io::write_segy_gathers(set.add("_gathers_angle.sgy"), plan, l.x, l.y, na, a_deg, angle.data(),
                           "angle gathers, byte 37 = angle (degrees)", text);
  }
  if (!pb.config.output.pictures) return;
  // The row of locations nearest the middle y of the image, every gather at its x.
  const long long jy = static_cast<long long>(nyl / 2);
  const std::string where = "y = " + fmt(ys[static_cast<size_t>(jy)]) + " m";
  auto panel = [&](const std::string& suffix, const float* v, long long cols, const std::string& what) {
    io::Image2D p = gather_panel(v, static_cast<long long>(nxl), cols, l.nz, xs, g.origin[2], g.h[2]);
    p.title = pb.config.output.name + ": " + what + " along x at " + where;
    io::write_image(set.add("_" + suffix + ".png"), p);
  };
  panel("gathers_offset", offset.data() + jy * static_cast<long long>(nxl) * l.offsets() * l.nz, l.offsets(),
        "offset gathers (h " + fmt(hs.front()) + ".." + fmt(hs.back()) + " m each)");
  panel("gathers_angle", angle.data() + jy * static_cast<long long>(nxl) * na * l.nz, na,
        "angle gathers (0.." + fmt(angles.back()) + " degrees each)");
}

}  // namespace

std::vector<long long> all_shots(const Problem& pb) {
  std::vector<long long> all(static_cast<size_t>(pb.shot_count()));
  for (size_t s = 0; s < all.size(); ++s) all[s] = static_cast<long long>(s);
  return all;
}

MigrationSummary migrate_survey(const MigrationInput& in, Migrator& migrator, const RunOptions& opt) {
  const Problem& pb = in.problem;
  const std::vector<long long> shots = opt.shots.empty() ? all_shots(pb) : opt.shots;
  MigrationSummary sum;
  // Rank 0: the journal of an interrupted run of this migration, if any (stack_parts.hpp): its
  // shots are in its stack and are not migrated again. Every rank takes the shots left.
  std::vector<long long> left;
  StackResume resume;
  std::optional<ResumeJournal> journal;
  std::optional<io::OutputSet> set;
  std::string error;
  if (cluster::rank() == 0) {
    try {
      // Every file of the migration is a member of this set, replaced together
      // (io/output_file.hpp); created first, so an unwritable directory fails now.
      set.emplace(pb.config.output.directory, pb.config.output.name);
      journal.emplace(
          (std::filesystem::path(pb.config.output.directory) / (pb.config.output.name + ".resume")).string(),
          stack_identity(in, migrator.name()));
      resume.journal = pb.config.output.resume ? &*journal : nullptr;  // (output.resume false: none)
      resume.stack = ExactStack(pb.grid.cells(), stack_exponents(pb, in.traces.data()), gather_layout(pb).values());
      if (resume.journal && journal->load(resume.stack, resume.shots)) {
        for (long long s : resume.shots)
          if (!std::binary_search(shots.begin(), shots.end(), s))
            throw Error("the resume journal '" + journal->path() + "' holds shot " + std::to_string(s) +
                        ", which this migration does not migrate (--shots): run it as it was, or remove the journal");
        if (!opt.quiet)
          std::fprintf(stderr, "seisrtm: resuming: %zu of the %zu shots are in the stack of %s\n", resume.shots.size(),
                       shots.size(), journal->path().c_str());
      }
      for (long long s : shots)
        if (std::find(resume.shots.begin(), resume.shots.end(), s) == resume.shots.end()) left.push_back(s);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  cluster::agree(error);  // (one process: throws it)
  cluster::broadcast_from_rank0(left);
  if (cluster::rank() > 0) {  // another rank of a shot-parallel migration: its shots go to rank 0
    stack_shots(in, migrator, true, left, sum.seconds);
    return sum;
  }
  const auto wall_start = std::chrono::steady_clock::now();
  const ExactStack stack = stack_shots(in, migrator, opt.quiet, left, sum.seconds, &resume);
  sum.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  // Several ranks: their passes overlap; the time of the migration is its wall time.
  if (cluster::size() > 1) sum.seconds = sum.wall_seconds;
  write_migration(*set, in, stack, shots, opt.producer, migrator.name(), sum);
  if (pb.config.output.resume) journal->remove();  // the outputs are whole: nothing is left to resume
  return sum;
}

void write_migration(io::OutputSet& set, const MigrationInput& in, const ExactStack& stack,
                     const std::vector<long long>& shots, const std::string& producer, const std::string& migrator,
                     MigrationSummary& sum) {
  namespace fs = std::filesystem;
  const Problem& pb = in.problem;
  const Config& c = pb.config;
  const MigrationConfig& mc = *c.migration;
  const Grid& g = pb.grid;
  const long long nshots = pb.shot_count();
  io::OutputFile& out = set.h5();
  std::vector<float> image(static_cast<size_t>(stack.cells())), illumination(image.size());
  stack.to_float(image.data(), illumination.data());
  check_finite(g, image, illumination);
  const Images im = finish_images(pb, std::move(image), std::move(illumination), mc.illumination_epsilon);

  write_volumes(out, in, im, producer, migrator, sum.seconds);
  // A part of the survey (migrate --shots, or a stack of parts short of every shot): the exact
  // sums and the shots in them, which `seisrtm stack` adds to the other parts'.
  if (static_cast<long long>(shots.size()) != nshots) write_stack_part(out.root(), in, stack, shots, migrator);

  // Pictures: x-z through the shots (at their mean y) and a depth slice.
  double ys = 0;
  for (const auto& p : pb.shots) ys += p.position[0][1];
  const long long iy = std::clamp<long long>(std::llround(ys / nshots / g.h[1]), 0, g.n[1] - 1);
  const long long iz = depth_slice_index(pb, im);
  sum.depth_slice = g.origin[2] + iz * g.h[2];
  io::write_attribute(out.root(), "depth_slice", std::vector<double>{sum.depth_slice});

  write_pictures(set, pb, im, iy, iz);
  write_gathers(set, pb, stack);
  // The Laplacian-filtered image as a SEG-Y cube for interpretation tools (output.segy; its
  // header values were checked by prepare_migration).
  if (c.output.segy != SegyRevision::none) {
    const int rev = c.output.segy == SegyRevision::rev1 ? 1 : 2;
    io::write_segy_cube(set.add("_image.sgy"), io::plan_segy_cube("output.segy", rev, g.n, g.h, g.origin),
                        im.laplacian.data(),
                        producer + "\nseisrtm migrate: the Laplacian-filtered image (image/laplacian of " +
                            c.output.name + ".h5), 1/m^2 x correlation units\nconfig: " + c.source_file);
  }

  io::write_xdmf(set.add(".xmf"), out.file_name(), g.n, g.h,
                 {{"/image/laplacian", "image_laplacian", 0, {}},
                  {"/image/normalized", "image_normalized", 0, {}},
                  mc.imaging_condition == ImagingCondition::isic
                      ? io::XdmfVolume{"/image/isic", "image_isic", 0, {}}
                      : io::XdmfVolume{"/image/correlation", "image_correlation", 0, {}},
                  {"/image/illumination", "illumination", 0, {}},
                  {"/model/vp", "vp", 0, {}}},
                 g.origin);
  cluster::settle_before_commit();  // (mpirun's SIGTERM may be on its way)
  io::check_interrupt("writing the image", c.output.directory);
  set.commit();
  sum.h5_path = out.path();
  for (const auto& f : set.others()) {
    if (fs::path(f).extension() == ".xmf")
      sum.xdmf_path = f;
    else if (f.size() >= 10 && f.compare(f.size() - 10, 10, "_image.sgy") == 0)
      sum.segy_path = f;
    else
      sum.pictures.push_back(f);  // (and the gathers' SEG-Y files)
  }
}

}  // namespace seisrtm
