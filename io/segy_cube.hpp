#pragma once
// A depth volume (the migrated image) as a post-stack SEG-Y cube, the layout interpretation
// tools read (segyio.tools.cube, OpendTect, Petrel): one trace per (x, y) column with its
// samples along z, inline = y index + 1 (bytes 189), crossline = x index + 1 (bytes 193),
// sorted inline slowest and crossline fastest; CDP x, y (181, 185) are the column's survey
// coordinates with the coordinate scalar (71) that io/segy.cpp picks for positions. The header
// byte map and the depth units are in docs/SEGY.md ("The image as a SEG-Y cube").
#include <array>
#include <string>
#include <vector>

namespace seisrtm::io {

// What a cube writes, fixed before the data exist: the scalars and the rounded header values.
struct SegyCube {
  int revision = 1;                       // 1 or 2
  std::array<long long, 3> n{0, 0, 0};    // cells x, y, z
  std::array<double, 3> h{0, 0, 0};       // m
  std::array<double, 3> origin{0, 0, 0};  // m, survey coordinates of cell (0, 0, 0)
  int coordinate_scalar = 1;              // byte 71: -100 = cm
  int interval = 0;                       // bytes 3217 and 117: h[2] in mm (metres x 1000)
  int first_depth = 0;                    // byte 109: origin[2] scaled by `depth_scalar`
  int depth_scalar = 1;                   // byte 215: scales the first depth (both revisions)
};

// Checks a cube before any work and picks its scalars; throws Error naming `what` (the config
// key or option that asked for the cube) and what would be valid: nz within the 16-bit sample
// count (32767 rev 1, 65535 rev 2), nx x ny traces within 2^31 - 1, h[2] x 1000 from 1 to that
// count (the depth interval in mm), origin[2] within the 16-bit delay field once scaled by byte
// 215, x and y within the 32-bit position fields.
SegyCube plan_segy_cube(const std::string& what, int revision, std::array<long long, 3> n, std::array<double, 3> h,
                        std::array<double, 3> origin);

// Writes `volume` ([z][y][x], x fastest, n[0] x n[1] x n[2] floats) at `path` (a member's
// temporary path: the caller's output set renames it): textual header (the lines of `textual`,
// '\n'-separated, first, then the byte map), binary header, nx x ny traces of nz IEEE floats
// (format 5, big-endian), the samples bit for bit. Every write is checked, the flush included;
// a failure throws Error naming the final file.
void write_segy_cube(const std::string& path, const SegyCube& cube, const float* volume, const std::string& textual);

// Image gathers on the cube's plan `c` (the grid's: its scalars, depth interval and first depth):
// one gather a location (x_cells[i], y_cells[j]), its `traces_each` traces of c.n[2] depths in
// order, gathers [y location][x location][trace][z]; offsets: byte 37 of each trace of a gather
// (m, rounded; empty: 0). docs/SEGY.md "Image gathers".
void write_segy_gathers(const std::string& path, const SegyCube& c, const std::vector<long long>& x_cells,
                        const std::vector<long long>& y_cells, long long traces_each,
                        const std::vector<long long>& offsets, const float* gathers, const std::string& what,
                        const std::string& textual);

// A post-stack SEG-Y cube read back as a volume (a model from an interpretation tool): its
// geometry from the headers, inline (189) and crossline (193) numbers, CDP x and y (181, 185)
// with the coordinate scalar (71), the depth step from the sample interval in mm (3217, the
// convention write_segy_cube and the tools use) and the first depth from the delay (109, scaled
// by 215 where set). The cube must be regular and axis-aligned: every (inline, crossline) pair
// of the two ranges once, x along the crosslines and y along the inlines at even steps; IEEE
// (5) or IBM (1) floats. Throws Error naming the file and what is wrong.
struct CubeVolume {
  std::array<long long, 3> n{0, 0, 0};    // x (crosslines), y (inlines), z (samples)
  std::array<double, 3> h{0, 0, 0};       // m
  std::array<double, 3> origin{0, 0, 0};  // m, survey coordinates of the first sample of the first trace
  std::vector<float> data;                // [z][y][x], x fastest
};
// host_limit: bytes the volume may take (0: no limit); a larger cube is refused before reading.
CubeVolume read_segy_cube(const std::string& path, double host_limit = 0);

// plan_segy_cube and write_segy_cube in one.
void write_segy_cube(const std::string& path, const float* volume, std::array<long long, 3> n, std::array<double, 3> h,
                     std::array<double, 3> origin, int revision, const std::string& textual);

}  // namespace seisrtm::io
