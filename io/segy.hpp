#pragma once
// SEG-Y (rev 1 and rev 2) through segyio's C API: `run` writes each shot gather as one file
// (output.segy), `migrate` reads observed data from SEG-Y (migration.data). The header byte map
// is in docs/SEGY.md. Samples are IEEE floats (format 5), big-endian; a trace holds t = 0 (zero:
// the wavefield starts at rest) and then the run's samples, so sample k is at t = k dt with no
// delay, the SEG-Y convention, and the project's sample n (t = (n + 1) dt) is SEG-Y sample n + 1.
// The binary and trace headers hold dt rounded to the nearest microsecond; the exact dt (s) is
// in the textual header (and, in rev 2, in the extended sample interval, a double in us), and
// the reader takes it from there when it agrees with the rounded one.
#include <array>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/observed_data.hpp"

namespace seisrtm::io {

// What every file of a run shares.
struct SegyRun {
  int revision = 1;         // 1 or 2
  std::string producer;     // "seisrtm <version>"
  std::string config_file;  // the YAML file (for the textual header)
  std::array<long long, 3> shape{0, 0, 0};
  std::array<double, 3> spacing{0, 0, 0};  // m
  std::array<double, 3> origin{0, 0, 0};   // m, survey coordinates of cell (0, 0, 0) (grid.origin)
  double dt = 0;                           // s, exact
  long long steps = 0;                     // samples a trace in the run (SEG-Y: steps + 1)
  long long shots = 0;
  long long first_record = 1;  // field record number of shot 0 (sources.first_record)
  std::string wavelet;         // a line describing the source wavelet
  int coordinate_scalar = 1;   // SEG-Y scalar for x, y (byte 71): -100 = cm
  int elevation_scalar = 1;    // for depths and elevations (byte 69)
};

// Checks what can be checked before a run (dt within the 16-bit microsecond field, samples
// within the 16-bit count, receivers present) and picks the scalars: the coarsest of 1, -10,
// -100, -1000, -10000 that holds every position exactly, else the finest whose values fit 32
// bits. Throws Error naming output.segy.
SegyRun plan_segy(int revision, double dt, long long steps, const std::vector<std::array<double, 3>>& sources,
                  const std::vector<std::array<double, 3>>& receivers);

// Writes shot `shot` (0-based; field record number shot + 1) at `path` (a member's temporary
// path): traces [receiver][sample], `steps` samples each. Every write is checked, the flush
// included; a failure throws Error naming the final file.
void write_segy_shot(const std::string& path, const SegyRun& run, long long shot, const std::array<double, 3>& source,
                     const std::vector<std::array<double, 3>>& receivers, const float* traces);

// True when `data` names SEG-Y (ends in .sgy or .segy, any case; it may be a glob pattern).
bool is_segy_path(const std::string& data);
// The files a SEG-Y migration.data names: the file itself, or the glob's matches sorted by name.
std::vector<std::string> segy_files(const std::string& data);

// Observed data from SEG-Y: every file of `data`, traces grouped into shots by the field record
// number (headers.shot), in order of first appearance; every shot must have the receivers of
// the first in the same order. Geometry from the trace headers (positions: value x scalar;
// z = source depth - surface elevation at the source, and -elevation at the receiver), dt as
// above, formats 1 (IBM float, converted) and 5 (IEEE float), either byte order (rev 2's byte
// order constant). The wavelet is left empty (SEG-Y carries none). Without `with_traces` the
// headers only; with max_bytes > 0 data that need more bytes than that are refused first.
// Bad SEG-Y (truncated, unsupported format, inconsistent geometry) throws one Error naming the
// file, the trace (1-based), the header bytes and what would be valid.
ObservedData read_segy(const std::string& data, const SegyHeaderConfig& headers, bool with_traces = true,
                       double max_bytes = 0);

// Largest samples a trace of a revision can hold (32767 for rev 1, 65535 for rev 2).
long long segy_max_samples(int revision);
// True when `byte` (1-based) starts a standard trace header field; the list for messages.
bool is_segy_trace_field(int byte);
std::string segy_trace_fields_text();

}  // namespace seisrtm::io
