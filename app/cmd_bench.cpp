// seisrtm bench: the compression versus z-blocking study (GTC 2024 talk S62192) on any GPU, or
// with --rtm one RTM shot against one forward run (cmd_bench_rtm.cpp), or with --compare two
// earlier runs side by side. This file checks the options and resolves the study's axes and
// model; the parts live in app/bench/: measure (the copy bandwidth and the study), report (the
// console tables), files (CSV and JSON), plot (PNG) and compare.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/bench/bench.hpp"
#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "solver/capabilities.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_info.hpp"

namespace seisrtm::app {

namespace {

using bench::Axes;

// --equation, checked by cmd_bench before anything else asks for it.
Equation bench_equation(const BenchOptions& b) {
  if (const auto e = from_text<Equation>(b.equation)) return *e;
  throw Error("bench --equation: '" + b.equation + "' is not an equation; valid: acoustic, vti, tti");
}

using bench::split;

long long positive(const std::string& token, const std::string& option, const std::string& valid) {
  try {
    size_t used = 0;
    const long long v = std::stoll(token, &used);
    if (used == token.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw Error("bench " + option + ": '" + token + "' is not valid; valid: " + valid);
}

// --z-block's planes per block (0 = none), at most 2^20 as solver.z_block (io/config.cpp).
std::vector<int> z_block_list(const std::string& z) {
  std::vector<int> out;
  for (const auto& t : split(z)) {
    const char* valid = "none or planes per block up to 1048576, e.g. none,128,64,48,32";
    const long long planes = t == "none" || t == "0" ? 0 : positive(t, "--z-block", valid);
    if (planes > 1 << 20) throw Error("bench --z-block: '" + t + "' is not valid; valid: " + std::string(valid));
    out.push_back(static_cast<int>(planes));
  }
  return out;
}

Axes resolve_axes(const BenchOptions& b, const GpuInfo& g) {
  Axes a;
  const bool q = b.quick;
  // Without TMA: smem for acoustic, naive for vti/tti (which have no smem variant).
  const std::string variants = !b.variants.empty()                       ? b.variants
                               : g.tma                                   ? "tma"
                               : bench_equation(b) == Equation::acoustic ? "smem"
                                                                         : "naive";
  const std::string z = !b.z_blocks.empty() ? b.z_blocks : q ? "none,128,64,32" : "none,128,64,48,32";
  const std::string mem = !b.memories.empty() ? b.memories : "plain,compressible";
  const std::string steps = !b.steps.empty() ? b.steps : q ? "100,500,1000" : "100,1000,2000,5000";
  for (const auto& v : split(variants)) {
    if (v != "naive" && v != "smem" && v != "tma")
      throw Error("bench --variants: '" + v + "' is not a kernel; valid: naive, smem, tma");
    const std::string why = cannot_implement({variant_named(v), bench_equation(b)}, &g);
    if (!why.empty()) throw Error("bench --variants: " + why);
    a.variants.push_back(v);
  }
  a.z_blocks = z_block_list(z);
  for (const auto& m : split(mem)) {
    if (m != "plain" && m != "compressible")
      throw Error("bench --memory: '" + m + "' is not a memory kind; valid: plain, compressible");
    a.memories.push_back(m);
  }
  if (!b.storages.empty()) {
    a.storages.clear();
    for (const auto& st : split(b.storages)) {
      if (st != "fp32" && st != "fp16")
        throw Error("bench --storage: '" + st + "' is not a storage; valid: fp32, fp16");
      for (const auto& v : a.variants) {
        const std::string why = cannot_implement(
            {variant_named(v), bench_equation(b), st == "fp16" ? kernels::Storage::fp16 : kernels::Storage::fp32}, &g);
        if (!why.empty()) throw Error("bench --storage " + st + " with --variants " + v + ": " + why);
      }
      if (std::find(a.storages.begin(), a.storages.end(), st) == a.storages.end()) a.storages.push_back(st);
    }
  }
  for (const auto& s : split(steps)) a.steps.push_back(positive(s, "--steps", "positive step counts, e.g. 100,1000"));
  std::sort(a.steps.begin(), a.steps.end());
  a.steps.erase(std::unique(a.steps.begin(), a.steps.end()), a.steps.end());
  if (a.variants.empty() || a.z_blocks.empty() || a.memories.empty() || a.steps.empty() || a.storages.empty())
    throw Error("bench: every axis (--variants, --z-block, --memory, --storage, --steps) needs at least one value");
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
    if (b.size > 0)
      sets.push_back("grid.shape=[" + std::to_string(a.size) + "," + std::to_string(a.size) + "," +
                     std::to_string(a.size) + "]");
    return load_config(b.config, sets);
  }
  const long long n = a.size;
  const double h = 10.0, c = (n / 2) * h;
  std::ostringstream y;
  y << "grid: {shape: [" << n << ", " << n << ", " << n << "], spacing: " << h << "}\n"
    << "time: {steps: 1}\nphysics: {space_order: 8}\nboundary: {damping_width: 20}\n"
    << "model: {vp: {type: gradient, value: 1500, gradient: 0.25}";
  // vti and tti: anisotropy that changes with depth (as vp does), epsilon 0.10 to 0.26 and delta
  // 0.05 to 0.13 at 800 cells, the axis tilting from 10 to 50 degrees at an azimuth of 30.
  if (bench_equation(b) != Equation::acoustic)
    y << ", epsilon: {type: gradient, value: 0.1, gradient: 0.00002}, delta: {type: gradient, value: 0.05, "
         "gradient: 0.00001}";
  if (bench_equation(b) == Equation::tti) y << ", theta: {type: gradient, value: 10, gradient: 0.005}, phi: 30";
  y << "}\n"
    << "sources: {wavelet: {peak_frequency: 10}, shots: [[" << c << ", " << c << ", " << c << "]]}\n"
    << "receivers: {line: {start: [" << 2 * h << ", " << c << ", 20], end: [" << (n - 3) * h << ", " << c
    << ", 20], count: " << std::max(2LL, n / 4) << "}}\n";
  return parse_config(y.str(), sets, "bench");
}

// The tuning flags tune kernels the run has: a flag the run would ignore is refused, so an A/B
// never compares two runs of the same kernel under two names.
void check_tuning(const BenchOptions& b, const TmaTuning& t) {
  if (t.fused_shape && !b.rtm) throw Error("bench --fused-shape: the fused backward step runs in bench --rtm only");
  if (t.fused_shape && bench_equation(b) != Equation::acoustic)
    throw Error("bench --fused-shape: the fused backward step is acoustic; " + b.equation +
                " migrates with the separate kernels");
  if (t.shape && bench_equation(b) != Equation::acoustic)
    throw Error("bench --tma-shape: the thread shapes are the acoustic tma kernel's; " + b.equation +
                "'s tma kernel has one");
  const std::vector<std::string> v = split(b.variants);
  if (!b.rtm && !v.empty() && std::find(v.begin(), v.end(), "tma") == v.end())
    for (const char* flag :
         {t.shape ? "--tma-shape" : "", t.chunk_rows ? "--chunk-rows" : "", t.l2_hint ? "--l2-hint" : ""})
      if (*flag)
        throw Error(std::string("bench ") + flag + " tunes the tma kernels; --variants " + b.variants +
                    " has none (add tma)");
}

void check_writable(const std::string& path, const char* option) {
  if (path.empty()) return;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw Error(std::string("bench ") + option + ": directory '" + dir.string() + "' does not exist");
}

}  // namespace

int cmd_bench(const BenchOptions& b, const TmaTuning& t) {
  if (!b.compare.empty()) return bench::compare(b.compare);
  (void)bench_equation(b);  // a bad --equation said first
  check_tuning(b, t);
  for (const auto& [set, flag] :
       {std::pair{b.longest, "--longest"}, std::pair{b.checkpoint_interval > 0, "--checkpoint-interval"},
        std::pair{b.coarse_checkpoint_interval > 0, "--coarse-checkpoint-interval"},
        std::pair{!b.backwards.empty(), "--backward"}, std::pair{b.gathers > 0, "--gathers"},
        std::pair{b.isic, "--isic"}, std::pair{!b.checkpoint_directory.empty(), "--checkpoint-directory"}})
    if (set && !b.rtm) throw Error(std::string("bench ") + flag + " is an option of bench --rtm");
  if (b.isic && bench_equation(b) != Equation::acoustic)
    throw Error(
        "bench --isic: migration.imaging_condition isic is the acoustic equation's; drop --isic or use "
        "--equation acoustic");
  for (const auto& v : split(b.variants))  // said before the GPU is asked for
    if (v == "smem" || v == "naive" || v == "tma")
      if (const std::string why = cannot_implement({variant_named(v), bench_equation(b)}, nullptr); !why.empty())
        throw Error("bench --variants: " + why);
  if (b.rtm) check_rtm_storages(b, split(b.storages));  // --storage's; solver.storage's again in bench_rtm
  (void)z_block_list(b.z_blocks);                       // bad --z-block said before the GPU is asked for
  check_writable(b.csv, "--csv");
  check_writable(b.json, "--json");
  check_writable(b.plot, "--plot");
  const GpuInfo g = query_gpu();
  if (!g.present) throw Error("bench needs a CUDA GPU: " + g.reason);
  BenchOptions bb = b;
  if (b.rtm && b.steps.empty()) bb.steps = "1000";
  Axes a = resolve_axes(bb, g);
  const Config cfg = bench_config(bb, a);
  // Without --storage, the config's solver.storage (e.g. --set solver.storage=fp16) is the axis.
  if (b.storages.empty()) a.storages = {to_text(cfg.solver.storage)};
  if (b.rtm) {
    if (a.steps.size() != 1) throw Error("bench --rtm takes one step count (--steps 1000)");
    return bench_rtm(bb, cfg, t, a.storages);
  }
  const Problem p = build_problem(cfg);
  for (const auto& w : p.warnings) std::fprintf(stderr, "seisrtm: warning: %s\n", w.c_str());

  // Refuse what does not fit before anything is allocated.
  CudaOptions probe;  // the largest storage on the axis
  probe.memory = MemoryKind::compressible;
  probe.storage = std::find(a.storages.begin(), a.storages.end(), "fp32") != a.storages.end() ? kernels::Storage::fp32
                                                                                              : kernels::Storage::fp16;
  const DeviceFootprint need = device_footprint(p, probe);
  if (need.total > g.free_memory) {
    const double per_cell = double(need.volume) / p.grid.cells();
    const int volumes = device_volumes(p, probe);
    const long long fits = static_cast<long long>(std::cbrt(0.9 * g.free_memory / (volumes * per_cell)));
    throw Error("bench: the " + std::to_string(p.grid.n[0]) + " x " + std::to_string(p.grid.n[1]) + " x " +
                std::to_string(p.grid.n[2]) + " grid needs " + std::to_string(need.total >> 20) +
                " MiB of GPU memory (" + std::to_string(volumes) + " volumes of " + std::to_string(need.volume >> 20) +
                " MiB) but " + g.name + " has " + std::to_string(g.free_memory >> 20) + " MiB free; " +
                (b.config.empty() ? "use --size " + std::to_string(fits) + " or less"
                                  : "shrink grid.shape (with --set) to about " + std::to_string(fits) + "^3 cells"));
  }

  const bench::Setup s{b, t, g, a, cfg, p};
  bench::Results r;
  r.date = bench::today();
  bench::print_header(s, r.date);

  // Copy bandwidth: plain and compressible memory, random and zero data.
  r.copies = bench::measure_copies(g);
  r.copy_plain = r.copies[0].bytes_per_second;
  r.roof = r.copy_plain / bench::bytes_per_cell(p) / 1e9;
  std::printf("roofline at %.0f B/cell from the plain random copy: %.1f GCells/s\n\n", bench::bytes_per_cell(p),
              r.roof);
  std::fflush(stdout);

  r.warm = bench::warm_up_steps(a);
  r.cells = bench::measure_cells(s, r.warm);
  bench::print_tables(s, r);
  if (!b.csv.empty()) bench::write_csv(s, r);
  if (!b.json.empty()) bench::write_json(s, r);
  if (!b.plot.empty()) bench::write_plot(s, r);
  for (const auto* f : {&b.csv, &b.json, &b.plot})
    if (!f->empty()) std::printf("wrote %s\n", f->c_str());
  return 0;
}

}  // namespace seisrtm::app
