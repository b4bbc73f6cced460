#pragma once
// Common-image gathers for velocity analysis (docs/guide/migrate.md "Image gathers").
//
// Subsurface-offset gathers: at chosen (x, y) locations, for horizontal offsets h = -H..H cells
// along x,
//   I(x, y, h, z) = sum over the imaging levels of S(x - h, y, z) R(x + h, y, z),
// S the source field and R the receiver field of the same pairing as the image (p^n with
// chi^{n+1}, solver/rtm_schedule.hpp). In the true velocity the energy focuses at h = 0.
//
// Angle gathers from them (Sava and Fomel 2003): per location the 2D Fourier transform over
// (h, z), the wavenumbers sampled along tan(gamma) = -k_h / k_z, and the inverse transform over
// z. In the true velocity a reflector lies at one depth at every angle.
#include <array>
#include <string>
#include <vector>

#include "io/plot.hpp"
#include "solver/grid.hpp"

namespace seisrtm {

// Where and how many: the locations are every x_every-th x cell from x_first and every
// y_every-th y cell from y_first inside the imaged box; values [y location][x location][h][z].
struct GatherLayout {
  long long half_offsets = 0;   // H
  std::vector<long long> x, y;  // the locations' cells
  long long nz = 0;             // depth samples: the grid's
  long long offsets() const { return 2 * half_offsets + 1; }
  long long locations() const { return static_cast<long long>(x.size() * y.size()); }
  long long values() const { return locations() * offsets() * nz; }
  // Index of (location (ix_loc, iy_loc), offset h in -H..H, depth z).
  long long at(long long iy_loc, long long ix_loc, long long h, long long z) const {
    return ((iy_loc * static_cast<long long>(x.size()) + ix_loc) * offsets() + (h + half_offsets)) * nz + z;
  }
};

// The layout over `box` (the imaged cells) of grid `g`: every `every[0]`-th x and `every[1]`-th
// y cell of the box, starting at its first, with offsets -H..H.
GatherLayout gather_layout(const Grid& g, const CellBox& box, long long half_offsets, std::array<long long, 2> every);

// Adds one imaging level: out[at(...)] += S(x - h) R(x + h) for every location, offset and z of
// `box` where both x - h and x + h lie inside `box` along x. `s_row(iy, iz)` and `r_row(iy, iz)`
// give the fields' rows (x contiguous, indexed by the grid's x cell). A z slab's box and rows are
// in its own z: its plane iz is the layout's iz + z_shift.
template <class Real, class SRow, class RRow>
void add_offset_gathers(const GatherLayout& l, const CellBox& box, SRow s_row, RRow r_row, Real* out,
                        long long z_shift = 0) {
  const long long nxl = static_cast<long long>(l.x.size()), nyl = static_cast<long long>(l.y.size());
#pragma omp parallel for collapse(2) schedule(static)
  for (long long jy = 0; jy < nyl; ++jy)
    for (long long jx = 0; jx < nxl; ++jx) {
      const long long iy = l.y[static_cast<size_t>(jy)], ix = l.x[static_cast<size_t>(jx)];
      for (long long h = -l.half_offsets; h <= l.half_offsets; ++h) {
        if (ix - h < box.lo[0] || ix - h >= box.hi[0] || ix + h < box.lo[0] || ix + h >= box.hi[0]) continue;
        Real* o = out + l.at(jy, jx, h, z_shift);
        for (long long iz = box.lo[2]; iz < box.hi[2]; ++iz) o[iz] += s_row(iy, iz)[ix - h] * r_row(iy, iz)[ix + h];
      }
    }
}

// Adds gathers held in the device's layout [y location][z][x location][offset]
// (kernels/image_gathers.hpp) to `out`, in the layout's own [y location][x location][offset][z]:
// of the device layout's `planes` depths those in [z_lo, z_hi), depth z into the layout's
// z + z_shift (the whole grid: {nz, 0, nz, 0}; a z slab: its own planes, in its coordinates).
struct DevicePlanes {
  long long planes = 0, z_lo = 0, z_hi = 0, z_shift = 0;
};
void add_from_device_layout(const GatherLayout& l, const float* device, float* out, const DevicePlanes& p);

// One location's angle gather from its offset gather `g` [h][z] (2H + 1 offsets of dh m, nz
// depths of dz m): [angle][z] at `angles_deg` (degrees, |angle| < 90).
std::vector<float> offset_to_angle(const float* g, long long offsets, long long nz, double dh, double dz,
                                   const std::vector<double>& angles_deg);

// The picture of a row of gathers along x, each drawn at its location: `g` holds `locations`
// gathers of `cols` traces of `nz` depths ([location][trace][z]) at x = x[j] m; each gather spans
// its share of the x axis (the locations' spacing, less a gap of a trace), its traces across it.
// Each trace is shown as -d2/dz2 of its values (the image's Laplacian filter, so that the
// reflectors' moveout stands out of the smooth background). depth: z0 + k dz.
io::Image2D gather_panel(const float* g, long long locations, long long cols, long long nz,
                         const std::vector<double>& x, double z0, double dz);

}  // namespace seisrtm
