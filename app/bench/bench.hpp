#pragma once
// The pieces of seisrtm bench (app/cmd_bench.cpp) that its parts share: the study's axes, what
// one measured cell and one copy-bandwidth reference hold, and one function per part:
// measure.cpp (the copy bandwidth and the study), report.cpp (the console), files.cpp (CSV and
// JSON), plot.cpp (the PNG panels), compare.cpp (--compare). Internal to app/.
#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_clocks.hpp"
#include "solver/problem.hpp"

namespace seisrtm::app::bench {

// Bytes a step must move per cell: acoustic reads p, p_prev, m and writes p_next (16 in fp32, 8
// in fp16 storage); vti and tti (fp32 only) read p, p_prev, q, q_prev and the model volumes (m,
// a, b; tti also theta, phi) and write p_next and q_next (36; 44): kernels/tti.hpp.
inline double bytes_per_cell(const Problem& p, const std::string& storage = "fp32") {
  const double fp32 = p.equation == Equation::tti ? 44 : p.equation == Equation::vti ? 36 : 16;
  return storage == "fp16" ? fp32 / 2 : fp32;
}
// Bytes a backward level must move per cell (acoustic), imaging every k-th level: the fused step
// reads S^{n+1}, S^{n+2}, chi^{n+1}, chi^{n+2} and m and writes S^n and chi^n (28 B in fp32, 14 in
// fp16 storage), and on imaging levels reads and writes the image and the illumination (16 B,
// float); the separate kernels step each field alone (2 x 16, 2 x 8) and image in their own kernel,
// which reads both fields again (8 B, 4) besides the 16 (kernels/rtm_fused.cu, kernels/rtm.cu).
inline double backward_bytes_per_cell(bool fused, bool half, long long k) {
  const double fields = half ? 2 : 4, imaging = 16 + (fused ? 0 : 2 * fields);
  return (fused ? 7 : 8) * fields + imaging / double(std::max(1LL, k));
}

// The median of `v` (the mean of the two middle values for an even count; 0 for none).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size();
  return m == 0 ? 0.0 : m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

// The gather counts bench --rtm migrates with: none, then `gathers` offsets where asked.
inline std::vector<long long> rtm_gather_counts(long long gathers) {
  return gathers > 0 ? std::vector<long long>{0, gathers} : std::vector<long long>{0};
}

// A variant's name with its storage where that is not fp32 ("tma", "tma fp16").
inline std::string series_name(const std::string& variant, const std::string& storage) {
  return storage == "fp32" ? variant : variant + " " + storage;
}

// The items of a comma-separated option, spaces trimmed, empty ones dropped.
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) {
    x.erase(0, x.find_first_not_of(' '));
    x.erase(x.find_last_not_of(' ') + 1);
    if (!x.empty()) out.push_back(x);
  }
  return out;
}

inline std::string z_name(int z) {
  return z == 0 ? "none" : std::to_string(z);
}

// The study's axes, resolved from the options and the GPU (defaults filled in, values checked).
struct Axes {
  std::vector<std::string> variants, memories;
  std::vector<std::string> storages = {"fp32"};  // solver.storage: fp32, fp16 (acoustic)
  std::vector<int> z_blocks;
  std::vector<long long> steps;  // ascending
  int repeat = 3;
  long long size = 800;
};

// What a study runs on: the options as given, the tma kernels' tuning (its flags; unset: the
// policy's), the device, the axes, the config and its problem.
struct Setup {
  const BenchOptions& options;
  const TmaTuning& tuning;
  const GpuInfo& gpu;
  const Axes& axes;
  const Config& config;
  const Problem& problem;
};

// One measured cell: variant x memory x z_block x steps.
struct Cell {
  std::string variant, memory;
  std::string storage = "fp32";
  std::string kernel;  // the propagator's description: variant, launch shape, memory, device
  int z_block = 0;
  long long steps = 0;
  bool compressible = false;    // the volumes really were compressible
  std::vector<double> seconds;  // per repeat
  std::size_t peak_bytes = 0, volume_bytes = 0;
  double median = 0, lo = 0, hi = 0;  // GCells/s
  ClockSummary clocks;                // over its timed runs (no samples where NVML cannot be read)
  double spread() const { return median > 0 ? (hi - lo) / median : 0; }
};

// One copy-bandwidth reference: memory kind x data.
struct Copy {
  std::string memory, data;
  double bytes_per_second = 0;  // 0: not measured (no compressible memory here)
  bool compressible = false;
};

// Everything a study measured.
struct Results {
  std::string date;          // UTC, ISO 8601
  std::vector<Copy> copies;  // plain random first
  double copy_plain = 0;     // B/s: the plain memory copy of random data
  double roof = 0;           // GCells/s at bytes_per_cell and copy_plain, fp32 storage
  double roof_for(const Problem& p, const std::string& storage) const {
    return copy_plain / bytes_per_cell(p, storage) / 1e9;
  }
  long long warm = 0;  // warm-up steps per configuration, not timed
  std::vector<Cell> cells;
};

// measure.cpp
// The UTC date and time now, ISO 8601.
std::string today();
// The NVIDIA kernel module's version (e.g. 580.65.06); empty where the system does not show it.
std::string driver_release();
// Copy bandwidth of plain and compressible memory with random and zero data, each line printed
// as it is measured; compressible memory is left unmeasured where the GPU has none.
std::vector<Copy> measure_copies(const GpuInfo& g);
// Warm-up steps before the timed runs of each configuration.
long long warm_up_steps(const Axes& a);
// The study: every configuration of the axes, its step counts timed `a.repeat` times each.
std::vector<Cell> measure_cells(const Setup& s, long long warm);

// report.cpp
// The run's header: version, command, device and problem.
void print_header(const Setup& s, const std::string& date);
// The table per variant (rows memory x steps, columns z_block), the best cell and the command.
void print_tables(const Setup& s, const Results& r);
// The cell of variant v, memory m, z_block z (ignored for naive) and s steps; null if not measured.
const Cell* find_cell(const std::vector<Cell>& cells, const std::string& v, const std::string& m, int z, long long s,
                      const std::string& storage = "fp32");

// files.cpp
void write_csv(const Setup& s, const Results& r);
void write_json(const Setup& s, const Results& r);
// One measured cell of a bench --json file: what identifies it and its GCells/s.
struct JsonCell {
  std::string key;     // "tma z_block 32 plain 1000 steps"
  std::string kernel;  // the kernel's description (launch shape included); empty in older files
  double median = 0, min = 0, max = 0;
  double sm_mhz = 0, held_by_power = 0;  // the clocks over its runs (sm_mhz 0: not in the file)
};
// The cells of a file written by bench --json; one Error naming the file (and the key) for what
// is not such a file.
std::vector<JsonCell> read_cells(const std::string& file);

// plot.cpp
// GCells/s against z_block, one panel per variant with z-blocking, to options.plot.
void write_plot(const Setup& s, const Results& r);

// compare.cpp
// bench --compare: 0 where the two files agree within their spread, 1 where they do not.
int compare(const std::vector<std::string>& files);

}  // namespace seisrtm::app::bench
