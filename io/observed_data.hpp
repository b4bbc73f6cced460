#pragma once
// Observed data for migration: the HDF5 file that `seisrtm run` writes (or any file with the
// same datasets). Everything is checked while reading; a message names the file, the dataset
// and what was expected.
#include <array>
#include <string>
#include <vector>

namespace seisrtm::io {

struct ObservedData {
  std::string file;
  double dt = 0;  // s; trace sample n is at t = (n + 1) dt
  long long shots = 0, receivers = 0, samples = 0;
  std::vector<float> traces;                              // [shot][receiver][sample]
  std::vector<std::array<double, 3>> source_positions;    // m, one per shot
  std::vector<std::array<double, 3>> receiver_positions;  // m, one per receiver (a spread a shot: shot 0's)
  std::vector<float> wavelet;                             // f(n dt), n = 0..; the source time function of the data
  // A spread a shot (/receivers/count): each shot's receivers, m; `receivers` is the largest
  // spread and a shot's traces are its first rows. Empty: one spread for every shot.
  std::vector<std::vector<std::array<double, 3>>> spreads;
};

// Reads /traces [shot, receiver, time], /sources/positions [shot, 3],
// /receivers/positions [receiver, 3] (a spread a shot: [shot, receiver, 3] beside
// /receivers/count [shot]), /sources/wavelet [time] and the root attribute dt (s).
// Without `with_traces` everything but the traces' values (their shape is read): what a
// memory plan needs before the bulk is read. Shapes are checked against each other before any
// value is read; with `max_bytes` > 0, a file whose declared shapes need more bytes than that
// to read is refused first (naming the shapes and the bytes).
ObservedData read_observed(const std::string& file, bool with_traces = true, double max_bytes = 0);

// Writes those datasets and the attribute (a minimal data file; `run` writes a fuller one).
void write_observed(const std::string& file, const ObservedData& d);

}  // namespace seisrtm::io
