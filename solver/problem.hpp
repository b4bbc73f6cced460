#pragma once
// Everything a propagator needs, derived once from a Config: the grid, the model, the time
// step, the stencil, the damping profiles, the wavelet and the source/receiver geometry.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "solver/geometry.hpp"
#include "solver/grid.hpp"

namespace seisrtm {

struct Problem {
  Config config;
  Grid grid;
  int radius = 4;     // space_order / 2
  double dt = 0;      // s
  double dt_max = 0;  // s, largest stable dt
  long long steps = 0;
  // m/s. v_min: the smallest vp, for vti and tti the vertical P speed (no faster than the
  // horizontal one where epsilon >= 0), used for points per wavelength. v_max: the fastest wave,
  // which sets dt_max and the damping; for vti and tti the largest vp sqrt(max(1, 1 + 2 eps)).
  double v_min = 0, v_max = 0;
  std::vector<float> vp;                   // m/s, [nz][ny][nx]
  Equation equation = Equation::acoustic;  // physics.equation
  // vti and tti only (empty for acoustic): per node, [nz][ny][nx] like vp. epsilon and delta
  // dimensionless with delta <= epsilon everywhere (after clamping); theta (tilt) and phi
  // (azimuth) in RADIANS (tti only; empty for vti).
  std::vector<float> epsilon, delta, theta, phi;
  long long clamped_cells = 0;  // cells where model.clamp_delta set delta to epsilon
  // Second-derivative weights per axis, c_k / h_axis^2 for k = 0..R (1/m^2).
  std::array<std::vector<double>, 3> d2;
  // Damping per axis, sigma(i) dt / 2 (dimensionless); the cell's value is the sum of the three.
  std::array<std::vector<float>, 3> damping;
  bool free_surface = false;
  std::vector<float> wavelet;   // source time function f(n dt), n = 0..steps-1
  std::vector<PointSet> shots;  // source points per shot (one point each)
  // The spread of every shot; with a spread a shot (receivers.relative, receivers.per_shot),
  // shot 0's, and shot_receivers holds each shot's (empty otherwise): receivers_of(shot).
  PointSet receivers;
  std::vector<PointSet> shot_receivers;
  std::vector<std::string> warnings;

  bool anisotropic() const { return equation != Equation::acoustic; }
  long long shot_count() const { return static_cast<long long>(shots.size()); }
  bool varying_spread() const { return !shot_receivers.empty(); }
  const PointSet& receivers_of(long long shot) const {
    return shot_receivers.empty() ? receivers : shot_receivers[static_cast<size_t>(shot)];
  }
  long long max_receivers() const {
    long long n = receivers.size();
    for (const PointSet& r : shot_receivers) n = std::max(n, r.size());
    return n;
  }
  double cell_volume() const { return grid.h[0] * grid.h[1] * grid.h[2]; }
};

// Builds and checks the problem. Throws seisrtm::Error naming the key or file at fault.
// c's positions are survey coordinates (grid.origin); the problem's points are relative to cell 0
// and its config is c.
Problem build_problem(const Config& c);
// c with every position relative to cell 0: survey coordinates less grid.origin (the shots, the
// receivers, the model volumes' layer tops and bodies, a gradient's value at cell 0's depth,
// migration.depth_slice).
Config local_positions(const Config& c);

// Builds the velocity volume of the config's model section (throws on a bad model file).
std::vector<float> build_velocity(const Config& c, const Grid& g);

// Builds one anisotropy volume of the model section, `name` = epsilon, delta, theta or phi, in
// the config's units (theta and phi in degrees): a node carries the arithmetic mean of the
// parameter over its cell (vp's sampling rule with the identity in place of 1/v^2). Throws on a
// bad model file; the ranges (1 + 2 epsilon > 0, delta <= epsilon) are build_problem's to check.
std::vector<float> build_anisotropy(const Config& c, const Grid& g, const std::string& name);

// Cell i of a volume (x fastest) as "[z, y, x] = [iz, iy, ix]", for messages.
std::string cell_text(const Grid& g, size_t i);

// Damping profile of one axis: sigma dt / 2 per cell, quadratic in depth into the zone, with
// sigma_max = 3 v_max ln(1/R) / (W h) so that a normal-incidence round trip through the zone
// attenuates by R. `low`/`high` say whether each end of the axis has a zone.
std::vector<float> damping_profile(long long n, int width, double h, double v_max, double dt, double reflection,
                                   bool low, bool high);

}  // namespace seisrtm
