// seisrtm bench: the compression versus z-blocking study (GTC 2024 talk S62192) on any GPU.
// For every kernel variant x z_block x memory kind one propagator is set up. After a warm-up,
// each timed run starts from zero wavefields with a point source, as a real run does, so the
// wavefields' compressibility evolves honestly; CUDA events time the stepping alone (not the
// trace copy-out between blocks). The step counts of the study are checkpoints of one run: a
// run of 1000 steps is the first 1000 steps of a run of 5000. Every run is repeated; tables give
// the median and the spread (max - min) / median.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "app/commands.hpp"
#include "io/output_file.hpp"
#include "io/plot.hpp"
#include "solver/bandwidth.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_info.hpp"
#include "base/error.hpp"
#include "solver/progress.hpp"

namespace seisrtm::app {

namespace {

constexpr double kBytesPerCell = 16;  // read p, p_prev, m; write p_next (fp32)

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) {
    x.erase(0, x.find_first_not_of(' '));
    x.erase(x.find_last_not_of(' ') + 1);
    if (!x.empty()) out.push_back(x);
  }
  return out;
}

long long positive(const std::string& token, const std::string& option, const std::string& valid) {
  try {
    size_t used = 0;
    const long long v = std::stoll(token, &used);
    if (used == token.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw Error("bench " + option + ": '" + token + "' is not valid; valid: " + valid);
}

std::string z_name(int z) { return z == 0 ? "none" : std::to_string(z); }

struct Axes {
  std::vector<std::string> variants, memories;
  std::vector<int> z_blocks;
  std::vector<long long> steps;  // ascending
  int repeat = 3;
  long long size = 800;
};

Axes resolve_axes(const BenchOptions& b, const GpuInfo& g) {
  Axes a;
  const bool q = b.quick;
  const std::string variants = !b.variants.empty() ? b.variants : g.tma ? "tma" : "smem";
  const std::string z = !b.z_blocks.empty() ? b.z_blocks : q ? "none,128,64,32" : "none,128,64,48,32";
  const std::string mem = !b.memories.empty() ? b.memories : "plain,compressible";
  const std::string steps = !b.steps.empty() ? b.steps : q ? "100,500,1000" : "100,1000,2000,5000";
  for (const auto& v : split(variants)) {
    if (v != "naive" && v != "smem" && v != "tma")
      throw Error("bench --variants: '" + v + "' is not a kernel; valid: naive, smem, tma");
    if (v == "tma" && !g.tma)
      throw Error("bench --variants: tma needs a Hopper GPU (compute capability 9.0); " + g.name + " is " +
                  std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor) + ": use naive,smem");
    a.variants.push_back(v);
  }
  for (const auto& t : split(z))
    a.z_blocks.push_back(t == "none" || t == "0"
                             ? 0
                             : static_cast<int>(positive(t, "--z-block", "none or planes per block, e.g. none,128,64,48,32")));
  for (const auto& m : split(mem)) {
    if (m != "plain" && m != "compressible")
      throw Error("bench --memory: '" + m + "' is not a memory kind; valid: plain, compressible");
    a.memories.push_back(m);
  }
  for (const auto& s : split(steps)) a.steps.push_back(positive(s, "--steps", "positive step counts, e.g. 100,1000"));
  std::sort(a.steps.begin(), a.steps.end());
  a.steps.erase(std::unique(a.steps.begin(), a.steps.end()), a.steps.end());
  if (a.variants.empty() || a.z_blocks.empty() || a.memories.empty() || a.steps.empty())
    throw Error("bench: every axis (--variants, --z-block, --memory, --steps) needs at least one value");
  a.repeat = b.repeat > 0 ? b.repeat : 3;
  if (b.repeat < 0) throw Error("bench --repeat must be >= 1");
  a.size = b.size > 0 ? b.size : q ? 512 : 800;
  if (b.size < 0) throw Error("bench --size must be a positive number of cells per axis");
  return a;
}

// The model and survey: the user's config, or a cube with a velocity gradient, a source at
// its centre and a receiver line near the top.
Config bench_config(const BenchOptions& b, const Axes& a) {
  std::vector<std::string> sets = b.overrides;
  sets.push_back("time.steps=" + std::to_string(a.steps.back()));
  if (b.space_order > 0) sets.push_back("physics.space_order=" + std::to_string(b.space_order));
  if (b.damping_width >= 0) sets.push_back("boundary.damping_width=" + std::to_string(b.damping_width));
  sets.push_back("physics.equation=" + b.equation);
  sets.push_back("output.snapshot_interval=0");  // bench writes no outputs of the run
  if (!b.config.empty()) {
    if (b.size > 0) sets.push_back("grid.shape=[" + std::to_string(a.size) + "," + std::to_string(a.size) + "," +
                                   std::to_string(a.size) + "]");
    return load_config(b.config, sets);
  }
  const long long n = a.size;
  const double h = 10.0, c = (n / 2) * h;
  std::ostringstream y;
  y << "grid: {shape: [" << n << ", " << n << ", " << n << "], spacing: " << h << "}\n"
    << "time: {steps: 1}\nphysics: {space_order: 8}\nboundary: {damping_width: 20}\n"
    << "model: {vp: {type: gradient, value: 1500, gradient: 0.25}}\n"
    << "sources: {wavelet: {peak_frequency: 10}, shots: [[" << c << ", " << c << ", " << c << "]]}\n"
    << "receivers: {line: {start: [" << 2 * h << ", " << c << ", 20], end: [" << (n - 3) * h << ", " << c
    << ", 20], count: " << std::max(2LL, n / 4) << "}}\n";
  return parse_config(y.str(), sets, "bench");
}

struct Cell {
  std::string variant, memory;
  int z_block = 0;
  long long steps = 0;
  bool compressible = false;     // the volumes really were compressible
  std::vector<double> seconds;   // per repeat
  std::size_t peak_bytes = 0, volume_bytes = 0;
  double median = 0, lo = 0, hi = 0;  // GCells/s
  double spread() const { return median > 0 ? (hi - lo) / median : 0; }
};

struct Copy {
  std::string memory, data;
  double bytes_per_second = 0;  // 0: not measured (no compressible memory here)
  bool compressible = false;
};

std::string today() {
  char d[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return d;
}

// The NVIDIA kernel module's version (e.g. 580.65.06), where the system shows it: the first
// word of its version line made of digits and dots with at least one dot.
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

// Writes `text` to `path` under a temporary name, renamed when complete.
void write_text(const std::string& path, const std::string& text) {
  io::PartialFile out(path);
  {
    std::ofstream f(out.temp_path());
    if (!f) throw Error("cannot write '" + path + "': check that its directory exists and is writable");
    f << text;
    f.close();  // flushes: a full disk shows here
    if (!f) throw Error("writing '" + path + "' failed" + io::write_failure_reason());
  }
  out.commit();
}

void check_writable(const std::string& path, const char* option) {
  if (path.empty()) return;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw Error(std::string("bench ") + option + ": directory '" + dir.string() + "' does not exist");
}

double gcells(const Problem& p, long long steps, double seconds) {
  return double(p.grid.cells()) * steps / seconds / 1e9;
}

// The bench --json schema: insertion-ordered, so a file reads in the order it was written.
using Json = nlohmann::ordered_json;

// Reads a file written by bench --json; one Error naming the file for what is not JSON.
Json read_json(const std::string& file) {
  errno = 0;
  std::ifstream in(file);
  if (!in)
    throw Error("bench --compare: cannot open '" + file + "'" +
                (errno ? ": " + std::string(std::strerror(errno)) : ""));
  try {
    return Json::parse(in);
  } catch (const Json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 9: ..."
    const std::string what = e.what();
    const auto cut = what.find("] ");
    throw Error("bench --compare: '" + file + "' is not valid JSON (" +
                (cut == std::string::npos ? what : what.substr(cut + 2)) +
                "); write it with bench --json");
  }
}

// The value of `key` in the object `obj` (called `where` in messages) of `file`, checked to be
// of the type `want` ("a number", "an integer", "a string") says.
const Json& field(const Json& obj, const std::string& where, const char* key, const char* want,
                  const std::string& file) {
  const auto it = obj.find(key);
  if (it == obj.end())
    throw Error("bench --compare: '" + file + "': " + where + " has no key '" + key +
                "'; write it with bench --json");
  const bool ok = std::string(want) == "a string"     ? it->is_string()
                  : std::string(want) == "an integer" ? it->is_number_integer()
                                                      : it->is_number();
  if (!ok)
    throw Error("bench --compare: '" + file + "': " + where + "." + key + " is " + it->dump() +
                ", not " + want);
  return *it;
}

// One measured cell of a bench --json file: what identifies it and its GCells/s.
struct JsonCell {
  std::string key;  // "tma z_block 32 plain 1000 steps"
  double median = 0, min = 0, max = 0;
};

std::vector<JsonCell> read_cells(const std::string& file) {
  const Json doc = read_json(file);
  const auto list = doc.is_object() ? doc.find("cells") : doc.end();
  if (!doc.is_object() || list == doc.end() || !list->is_array())
    throw Error("bench --compare: '" + file + "' has no 'cells' list; write it with bench --json");
  std::vector<JsonCell> cells;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& c = (*list)[i];
    const std::string where = "cells[" + std::to_string(i) + "]";
    if (!c.is_object())
      throw Error("bench --compare: '" + file + "': " + where + " is " + c.dump() +
                  ", not an object");
    JsonCell j;
    j.key = field(c, where, "variant", "a string", file).get<std::string>() + " z_block " +
            z_name(field(c, where, "z_block", "an integer", file).get<int>()) + " " +
            field(c, where, "memory", "a string", file).get<std::string>() + " " +
            std::to_string(field(c, where, "steps", "an integer", file).get<long long>()) +
            " steps";
    j.median = field(c, where, "gcells_median", "a number", file).get<double>();
    j.min = field(c, where, "gcells_min", "a number", file).get<double>();
    j.max = field(c, where, "gcells_max", "a number", file).get<double>();
    cells.push_back(j);
  }
  return cells;
}

int compare(const std::vector<std::string>& files) {
  if (files.size() != 2)
    throw Error("bench --compare takes two JSON files written by bench --json");
  const std::vector<JsonCell> first = read_cells(files[0]);
  std::map<std::string, JsonCell> second;
  for (const auto& c : read_cells(files[1])) second[c.key] = c;
  std::printf("%-40s %10s %10s %8s %10s\n", "cell", "run 1", "run 2", "diff", "spread");
  int matched = 0, disagree = 0;
  for (const auto& c : first) {
    const auto it = second.find(c.key);
    if (it == second.end()) continue;
    ++matched;
    const double a = c.median, b = it->second.median;
    const double allowed = std::max(c.max - c.min, it->second.max - it->second.min);
    const bool ok = std::abs(a - b) <= allowed;
    disagree += !ok;
    std::printf("%-40s %10.1f %10.1f %7.2f%% %9.2f%% %s\n", c.key.c_str(), a, b,
                100 * std::abs(a - b) / a, 100 * allowed / a, ok ? "ok" : "OUTSIDE");
  }
  if (matched == 0)
    throw Error("bench --compare: the two files share no cell (variant, z_block, memory, steps)");
  std::printf(
      "%d cells compared: %s (criterion: the medians differ by no more than the larger max - min "
      "spread of the two runs)\n",
      matched, disagree ? (std::to_string(disagree) + " outside the spread").c_str() : "all agree");
  return disagree ? 1 : 0;
}

}  // namespace

int cmd_bench(const BenchOptions& b) {
  if (!b.compare.empty()) return compare(b.compare);
  if (b.equation != "acoustic")
    throw Error("bench --equation: '" + b.equation + "' is not available yet; valid: acoustic");
  check_writable(b.csv, "--csv");
  check_writable(b.json, "--json");
  check_writable(b.plot, "--plot");
  const GpuInfo g = query_gpu();
  if (!g.present) throw Error("bench needs a CUDA GPU: " + g.reason);
  BenchOptions bb = b;
  if (b.rtm && b.steps.empty()) bb.steps = "1000";
  const Axes a = resolve_axes(bb, g);
  const Config cfg = bench_config(bb, a);
  if (b.rtm) {
    if (a.steps.size() != 1) throw Error("bench --rtm takes one step count (--steps 1000)");
    return bench_rtm(bb, cfg);
  }
  const Problem p = build_problem(cfg);
  for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());

  // Refuse what does not fit before anything is allocated.
  CudaOptions probe;
  probe.memory = MemoryKind::compressible;
  const DeviceFootprint need = device_footprint(p, probe);
  if (need.total > g.free_memory) {
    const double per_cell = double(need.volume) / p.grid.cells();
    const long long fits = static_cast<long long>(std::cbrt(0.9 * g.free_memory / (3 * per_cell)));
    throw Error("bench: the " + std::to_string(p.grid.n[0]) + " x " + std::to_string(p.grid.n[1]) + " x " +
                std::to_string(p.grid.n[2]) + " grid needs " + std::to_string(need.total >> 20) +
                " MiB of GPU memory (3 volumes of " + std::to_string(need.volume >> 20) + " MiB) but " + g.name +
                " has " + std::to_string(g.free_memory >> 20) + " MiB free; " +
                (b.config.empty() ? "use --size " + std::to_string(fits) + " or less"
                                  : "shrink grid.shape (with --set) to about " + std::to_string(fits) + "^3 cells"));
  }

  const std::string date = today();
  std::printf("seisrtm bench %s\n", SEISRTM_VERSION);
  std::printf("command: %s\n", b.command_line.c_str());
  std::printf("device: %s (cc %d.%d, %d SMs, %.0f MiB L2, %.1f GiB), driver %s (CUDA %d.%d), runtime %d.%d, %s\n",
              g.name.c_str(), g.cc_major, g.cc_minor, g.multiprocessors, g.l2_bytes / 1048576.0,
              g.total_memory / 1073741824.0, driver_release().c_str(), g.driver_version / 1000,
              g.driver_version % 1000 / 10, g.runtime_version / 1000, g.runtime_version % 1000 / 10, date.c_str());
  std::printf("problem: %lld x %lld x %lld cells, %s order %d, damping %lld cells, dt %.4g s, %s; %.0f B/cell/step "
              "(read p, p_prev, m; write p_next)\n",
              p.grid.n[0], p.grid.n[1], p.grid.n[2], cfg.physics.equation.c_str(), cfg.physics.space_order,
              static_cast<long long>(cfg.boundary.damping_width), p.dt,
              b.config.empty() ? "vp 1500 m/s + 0.25/s z, source at the centre" : b.config.c_str(), kBytesPerCell);

  // Copy bandwidth: plain and compressible memory, random and zero data.
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
  const double copy_plain = copies[0].bytes_per_second;
  const double roof = copy_plain / kBytesPerCell / 1e9;
  std::printf("roofline at %.0f B/cell from the plain random copy: %.1f GCells/s\n\n", kBytesPerCell, roof);
  std::fflush(stdout);

  // The measurements.
  struct Config3 {
    std::string variant, memory;
    int z_block;
  };
  std::vector<Config3> configs;
  for (const auto& v : a.variants)
    for (const auto& m : a.memories) {
      if (v == "naive") {
        configs.push_back({v, m, 0});  // naive has no z-blocking
        continue;
      }
      for (int z : a.z_blocks) configs.push_back({v, m, z});
    }
  const long long warm = std::min<long long>(50, a.steps.back());
  const long long per_config = warm + a.repeat * a.steps.back();
  Progress progress("bench", per_config * static_cast<long long>(configs.size()), double(p.grid.cells()), false);
  std::vector<Cell> cells;
  long long done = 0;
  for (size_t k = 0; k < configs.size(); ++k) {
    const Config3& c = configs[k];
    CudaOptions o;
    o.variant = c.variant == "naive" ? kernels::Variant::naive
                : c.variant == "smem" ? kernels::Variant::smem
                                      : kernels::Variant::tma;
    o.z_block = c.z_block;
    o.memory = c.memory == "compressible" ? MemoryKind::compressible : MemoryKind::plain;
    o.graphs = true;
    CudaPropagator prop(p, o);
    if (k == 0 || c.memory == "compressible")
      for (const auto& note : prop.notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", note.c_str());
    const std::string label = "bench [" + std::to_string(k + 1) + "/" + std::to_string(configs.size()) + "] " +
                              c.variant + " z_block " + z_name(c.z_block) + " " + c.memory;
    progress.set_label(label + " warm-up");
    prop.begin_shot(0);
    prop.advance(0, warm);  // graph capture, caches, clocks
    done += warm;
    progress.update(done);
    const size_t first = cells.size();
    for (long long s : a.steps) {
      Cell cell;
      cell.variant = c.variant;
      cell.memory = c.memory;
      cell.z_block = c.z_block;
      cell.steps = s;
      cell.compressible = prop.compressible();
      cells.push_back(cell);
    }
    for (int r = 0; r < a.repeat; ++r) {
      progress.set_label(label + " run " + std::to_string(r + 1) + "/" + std::to_string(a.repeat));
      prop.begin_shot(0);  // zero wavefields: compressibility starts where a real run starts
      long long n = 0;
      for (size_t i = 0; i < a.steps.size(); ++i) {
        while (n < a.steps[i]) {
          const long long chunk = std::min<long long>(500, a.steps[i] - n);
          prop.advance(n, chunk);
          n += chunk;
          progress.update(done + n);
        }
        cells[first + i].seconds.push_back(prop.stepping_seconds());
      }
      done += a.steps.back();
    }
    const auto dm = prop.device_memory();
    for (size_t i = first; i < cells.size(); ++i) {
      Cell& cell = cells[i];
      std::vector<double> rates;
      for (double sec : cell.seconds) rates.push_back(gcells(p, cell.steps, sec));
      std::sort(rates.begin(), rates.end());
      const size_t m = rates.size();
      cell.median = m % 2 ? rates[m / 2] : 0.5 * (rates[m / 2 - 1] + rates[m / 2]);
      cell.lo = rates.front();
      cell.hi = rates.back();
      cell.peak_bytes = dm.peak;
      cell.volume_bytes = dm.volume;
    }
  }
  progress.finish();

  // The talk-style table per variant: rows memory x steps, columns z_block.
  auto find = [&](const std::string& v, const std::string& m, int z, long long s) -> const Cell* {
    for (const auto& c : cells)
      if (c.variant == v && c.memory == m && c.z_block == (v == "naive" ? 0 : z) && c.steps == s) return &c;
    return nullptr;
  };
  std::printf("\nGCells/s, median of %d runs (+- spread: (max - min) / median); roofline %.1f GCells/s\n", a.repeat,
              roof);
  for (const auto& v : a.variants) {
    const std::vector<int> zs = v == "naive" ? std::vector<int>{0} : a.z_blocks;
    std::printf("\n%-6s %-13s %6s", v.c_str(), "memory", "steps");
    for (int z : zs) std::printf(" %16s", ("z_block " + z_name(z)).c_str());
    std::printf("\n");
    for (const auto& m : a.memories)
      for (long long s : a.steps) {
        std::printf("%-6s %-13s %6lld", "", m.c_str(), s);
        for (int z : zs)
          if (const Cell* c = find(v, m, z, s)) std::printf("   %6.1f +-%4.1f%%", c->median, 100 * c->spread());
        std::printf("\n");
      }
    if (a.memories.size() == 2)
      for (long long s : a.steps) {
        std::printf("%-6s %-13s %6lld", "", "compr./plain", s);
        for (int z : zs) {
          const Cell *pl = find(v, "plain", z, s), *co = find(v, "compressible", z, s);
          if (pl && co) std::printf(" %15.2fx", co->median / pl->median);
        }
        std::printf("\n");
      }
  }
  const Cell* best = &cells.front();
  for (const auto& c : cells)
    if (c.median > best->median) best = &c;
  std::printf("\nbest: %s z_block %s %s memory, %lld steps: %.1f GCells/s, %.0f GB/s effective, %.1f%% of the roofline\n",
              best->variant.c_str(), z_name(best->z_block).c_str(), best->memory.c_str(), best->steps, best->median,
              best->median * kBytesPerCell, 100 * best->median / roof);
  std::printf("reproduce: %s\n", b.command_line.c_str());

  // CSV and JSON with every figure.
  auto same_memory_copy = [&](const Cell& c) {
    for (const auto& cp : copies)
      if (cp.memory == c.memory && cp.data == "random" && cp.bytes_per_second > 0) return cp.bytes_per_second;
    return copy_plain;
  };
  if (!b.csv.empty()) {
    std::ostringstream csv;
    csv << "device,variant,z_block,memory,compressible,steps,repeats,gcells_median,gcells_min,gcells_max,spread,"
           "effective_gb_per_s,bytes_per_cell,fraction_of_copy,fraction_of_same_memory_copy,peak_device_bytes,"
           "volume_bytes,seconds\n";
    for (const auto& c : cells) {
      csv << '"' << g.name << "\"," << c.variant << "," << c.z_block << "," << c.memory << "," << c.compressible << ","
          << c.steps << "," << c.seconds.size() << "," << c.median << "," << c.lo << "," << c.hi << "," << c.spread()
          << "," << c.median * kBytesPerCell << "," << kBytesPerCell << "," << c.median * kBytesPerCell * 1e9 / copy_plain
          << "," << c.median * kBytesPerCell * 1e9 / same_memory_copy(c) << "," << c.peak_bytes << ","
          << c.volume_bytes << ",";
      for (size_t i = 0; i < c.seconds.size(); ++i) csv << (i ? ";" : "") << c.seconds[i];
      csv << "\n";
    }
    write_text(b.csv, csv.str());
  }
  if (!b.json.empty()) {
    Json j;
    j["tool"] = "seisrtm bench";
    j["version"] = SEISRTM_VERSION;
    j["date"] = date;
    j["command"] = b.command_line;
    j["device"] = {
        {"name", g.name},
        {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
        {"multiprocessors", g.multiprocessors},
        {"l2_bytes", g.l2_bytes},
        {"memory_bytes", g.total_memory},
        {"driver", driver_release()},
        {"driver_cuda", std::to_string(g.driver_version / 1000) + "." +
                            std::to_string(g.driver_version % 1000 / 10)},
        {"runtime_cuda", std::to_string(g.runtime_version / 1000) + "." +
                             std::to_string(g.runtime_version % 1000 / 10)}};
    j["configuration"] = {{"variants", a.variants},
                          {"z_blocks", a.z_blocks},
                          {"memories", a.memories},
                          {"steps", a.steps},
                          {"repeat", a.repeat},
                          {"warm_up_steps", warm},
                          {"bytes_per_cell", static_cast<int>(kBytesPerCell)},
                          {"cells", p.grid.cells()},
                          {"dt", p.dt},
                          {"config", to_yaml(cfg)}};
    Json& cp = j["copy_bandwidth"] = Json::array();
    for (const auto& c : copies)
      cp.push_back({{"memory", c.memory},
                    {"data", c.data},
                    {"bytes_per_second", c.bytes_per_second},
                    {"compressible", c.compressible}});
    j["roofline_gcells_per_s"] = roof;
    Json& list = j["cells"] = Json::array();
    for (const auto& c : cells)
      list.push_back(
          {{"variant", c.variant},
           {"z_block", c.z_block},
           {"memory", c.memory},
           {"compressible", c.compressible},
           {"steps", c.steps},
           {"seconds", c.seconds},
           {"gcells_median", c.median},
           {"gcells_min", c.lo},
           {"gcells_max", c.hi},
           {"spread", c.spread()},
           {"effective_gb_per_s", c.median * kBytesPerCell},
           {"fraction_of_copy", c.median * kBytesPerCell * 1e9 / copy_plain},
           {"fraction_of_same_memory_copy", c.median * kBytesPerCell * 1e9 / same_memory_copy(c)},
           {"peak_device_bytes", c.peak_bytes},
           {"volume_bytes", c.volume_bytes}});
    // Bytes that are not UTF-8 (a device name, the command line) become U+FFFD instead of
    // failing the write; NaN and Inf become null.
    write_text(b.json, j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  }
  if (!b.plot.empty()) {
    std::vector<io::LinePlot> panels;
    for (const auto& v : a.variants) {
      if (v == "naive") continue;  // one point: the tables say it
      io::LinePlot lp;
      char title[256];
      std::snprintf(title, sizeof title, "%s, %lld^3, order %d: GCells/s (median of %d) on %s", v.c_str(),
                    p.grid.n[0], cfg.physics.space_order, a.repeat, g.name.c_str());
      lp.title = title;
      lp.x_label = "z_block (planes per block)";
      lp.y_label = "GCells/s";
      for (int z : a.z_blocks) lp.x_ticks.push_back(z_name(z));
      lp.reference = roof;
      char rl[64];
      std::snprintf(rl, sizeof rl, "roofline %.0f (16 B/cell, plain copy)", roof);
      lp.reference_label = rl;
      for (size_t mi = 0; mi < a.memories.size(); ++mi)
        for (size_t si = 0; si < a.steps.size(); ++si) {
          io::Series s;
          s.label = a.memories[mi] + " " + std::to_string(a.steps[si]) + " steps";
          io::palette(static_cast<int>(si), s.rgb);
          s.dashed = a.memories[mi] == "compressible";
          for (int z : a.z_blocks) {
            const Cell* c = find(v, a.memories[mi], z, a.steps[si]);
            s.y.push_back(c ? c->median : NAN);
          }
          lp.series.push_back(s);
        }
      panels.push_back(lp);
    }
    if (!panels.empty()) io::write_line_plots(b.plot, panels);
  }
  for (const auto* f : {&b.csv, &b.json, &b.plot})
    if (!f->empty()) std::printf("wrote %s\n", f->c_str());
  return 0;
}

}  // namespace seisrtm::app
