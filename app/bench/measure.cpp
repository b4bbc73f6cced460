// seisrtm bench, the measurement. For every kernel variant x z_block x memory kind one propagator
// is set up. After a warm-up, each timed run starts from zero wavefields with a point source, as a
// real run does, so the wavefields' compressibility evolves honestly; CUDA events time the
// stepping alone (not the trace copy-out between blocks). The step counts of the study are
// checkpoints of one run: a run of 1000 steps is the first 1000 steps of a run of 5000. Every run
// is repeated; a cell keeps the median and the range of its rates.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "app/bench/bench.hpp"
#include "solver/bandwidth.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/progress.hpp"

namespace seisrtm::app::bench {

namespace {

double gcells(const Problem& p, long long steps, double seconds) {
  return double(p.grid.cells()) * steps / seconds / 1e9;
}

}  // namespace

std::string today() {
  char d[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return d;
}

// The first word of /proc/driver/nvidia/version's line made of digits and dots with at least one
// dot.
std::string driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  std::istringstream words(line);
  for (std::string w; words >> w;)
    if (w.find('.') != std::string::npos && w.find_first_not_of("0123456789.") == std::string::npos &&
        std::isdigit(static_cast<unsigned char>(w[0])))
      return w;
  return "";
}

std::vector<Copy> measure_copies(const GpuInfo& g) {
  std::vector<Copy> copies;
  const std::size_t copy_bytes = std::min<std::size_t>(std::size_t(2) << 30, g.free_memory / 4 / (2 << 20) * (2 << 20));
  for (const char* mem : {"plain", "compressible"})
    for (const char* data : {"random", "zeros"}) {
      Copy c;
      c.memory = mem;
      c.data = data;
      const MemoryKind kind = std::string(mem) == "plain" ? MemoryKind::plain : MemoryKind::compressible;
      if (kind == MemoryKind::compressible && !g.compression) {
        copies.push_back(c);
        continue;
      }
      const CopyBandwidth bw = measure_copy_bandwidth(copy_bytes, kind, std::string(data) == "random");
      c.bytes_per_second = bw.bytes_per_second;
      c.compressible = bw.compressible;
      copies.push_back(c);
      std::printf("copy bandwidth, %-12s memory, %-6s data: %.2f TB/s%s\n", mem, data, bw.bytes_per_second / 1e12,
                  kind == MemoryKind::compressible && !bw.compressible ? " (fell back to plain)" : "");
    }
  return copies;
}

long long warm_up_steps(const Axes& a) {
  return std::min<long long>(50, a.steps.back());
}

std::vector<Cell> measure_cells(const Setup& s, long long warm) {
  const Axes& a = s.axes;
  const Problem& p = s.problem;
  struct Config3 {
    std::string variant, memory;
    int z_block;
    std::string storage;
  };
  std::vector<Config3> configs;
  for (const auto& sto : a.storages)
    for (const auto& v : a.variants)
      for (const auto& m : a.memories) {
        if (v == "naive") {
          configs.push_back({v, m, 0, sto});  // naive has no z-blocking
          continue;
        }
        for (int z : a.z_blocks) configs.push_back({v, m, z, sto});
      }
  const long long per_config = warm + a.repeat * a.steps.back();
  const ClockSampler sampler(0);
  if (!sampler.active()) std::printf("clocks: not sampled: %s\n", sampler.reason().c_str());
  Progress progress("bench", per_config * static_cast<long long>(configs.size()), double(p.grid.cells()), false);
  std::vector<Cell> cells;
  long long done = 0;
  for (size_t k = 0; k < configs.size(); ++k) {
    const Config3& c = configs[k];
    CudaOptions o;
    o.variant = c.variant == "naive"  ? kernels::Variant::naive
                : c.variant == "smem" ? kernels::Variant::smem
                                      : kernels::Variant::tma;
    o.z_block = c.z_block;
    o.memory = c.memory == "compressible" ? MemoryKind::compressible : MemoryKind::plain;
    o.storage = c.storage == "fp16" ? kernels::Storage::fp16 : kernels::Storage::fp32;
    o.graphs = true;
    o.tuning = s.tuning;
    CudaPropagator prop(p, o);
    if (k == 0 || c.memory == "compressible")
      for (const auto& note : prop.notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", note.c_str());
    const std::string label = "bench [" + std::to_string(k + 1) + "/" + std::to_string(configs.size()) + "] " +
                              series_name(c.variant, c.storage) + " z_block " + z_name(c.z_block) + " " + c.memory;
    progress.set_label(label + " warm-up");
    prop.begin_shot(0);
    prop.advance(0, warm);  // graph capture, caches, clocks
    done += warm;
    progress.update(done);
    const size_t first = cells.size();
    std::vector<std::vector<ClockSummary>> spans(a.steps.size());  // a run's span to each step count
    for (long long st : a.steps) {
      Cell cell;
      cell.variant = c.variant;
      cell.memory = c.memory;
      cell.storage = c.storage;
      cell.z_block = c.z_block;
      cell.steps = st;
      cell.compressible = prop.compressible();
      cell.kernel = prop.name();
      cells.push_back(cell);
    }
    for (int r = 0; r < a.repeat; ++r) {
      progress.set_label(label + " run " + std::to_string(r + 1) + "/" + std::to_string(a.repeat));
      prop.begin_shot(0);  // zero wavefields: compressibility starts where a real run starts
      const SampleClock::time_point started = SampleClock::now();
      long long n = 0;
      for (size_t i = 0; i < a.steps.size(); ++i) {
        while (n < a.steps[i]) {
          const long long chunk = std::min<long long>(500, a.steps[i] - n);
          prop.advance(n, chunk);
          n += chunk;
          progress.update(done + n);
        }
        cells[first + i].seconds.push_back(prop.stepping_seconds());  // advance returned after the end event
        spans[i].push_back(sampler.between(started, SampleClock::now()));
      }
      done += a.steps.back();
    }
    const auto dm = prop.device_memory();
    for (size_t i = first; i < cells.size(); ++i) {
      Cell& cell = cells[i];
      std::vector<double> rates;
      for (double sec : cell.seconds) rates.push_back(gcells(p, cell.steps, sec));
      cell.median = median(rates);
      cell.lo = *std::min_element(rates.begin(), rates.end());
      cell.hi = *std::max_element(rates.begin(), rates.end());
      cell.peak_bytes = dm.peak;
      cell.volume_bytes = dm.volume;
      cell.clocks = combine_clocks(spans[i - first]);
    }
  }
  progress.finish();
  return cells;
}

}  // namespace seisrtm::app::bench
