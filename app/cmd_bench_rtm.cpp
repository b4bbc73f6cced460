// seisrtm bench --rtm: one RTM shot against one forward run of the same shot on the GPU (what
// an RTM costs in forward runs, docs/BENCHMARKS.md, "RTM"). For each storage (solver.storage or --storage) and memory
// kind: a forward run timed with CUDA events (its traces become the observed data), then one migration of that shot per
// backward path (fused step and separate kernels), with image_interval auto. Reported: the wall time of each pass, the
// GPU time by phase (CUDA events around each kernel group), and the ratios to the forward run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "app/bench/bench.hpp"
#include "app/commands.hpp"
#include "app/tuning.hpp"
#include "base/error.hpp"
#include "io/observed_data.hpp"
#include "solver/bandwidth.hpp"
#include "solver/cuda_migration.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_clocks.hpp"
#include "solver/device_info.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/migration.hpp"

namespace seisrtm::app {

namespace {

// The values of a comma-separated list of enum texts (`fallback` when empty); a value outside them
// is refused naming the flag and the valid values.
template <class E>
std::vector<E> enum_list(const std::string& list, const char* flag, E fallback) {
  std::vector<E> out;
  for (const std::string& item : bench::split(list)) {
    const std::optional<E> e = from_text<E>(item);
    if (!e) {
      std::string valid;
      for (const char* n : enum_names(E{})) valid += (valid.empty() ? "" : ", ") + std::string(n);
      throw Error(std::string("bench ") + flag + ": '" + item + "' is not one of " + valid);
    }
    out.push_back(*e);
  }
  if (out.empty()) out.push_back(fallback);
  return out;
}

// --memory: a comma-separated list; both kinds when not given.
std::vector<std::string> memory_kinds(const BenchOptions& b) {
  return b.memories.empty() ? std::vector<std::string>{"plain", "compressible"} : [&] {
    std::vector<std::string> v;
    std::stringstream ss(b.memories);
    for (std::string t; std::getline(ss, t, ',');) v.push_back(t);
    return v;
  }();
}

// The forward run: stepping time from CUDA events (returned, s); its traces are the data,
// written to `data_file`. `clocks` receives the clocks' summary over its stepping.
double forward_run(const Config& c, const TmaTuning& t, const std::string& data_file, const ClockSampler& sampler,
                   ClockSummary& clocks) {
  const Problem fp = build_problem(c);
  CudaPropagator prop(fp, gpu_options(c, t));
  prop.begin_shot(0);
  const SampleClock::time_point t0 = SampleClock::now();
  prop.advance(0, fp.steps);
  const double forward = prop.stepping_seconds();  // advance returned after its last steps' end event
  clocks = sampler.between(t0, SampleClock::now());
  io::ObservedData d;
  d.dt = fp.dt;
  d.shots = 1;
  d.receivers = fp.receivers.size();
  d.samples = fp.steps;
  d.traces.resize(static_cast<size_t>(d.receivers * d.samples));
  prop.traces(d.traces.data());
  d.source_positions = {fp.shots[0].position[0]};
  d.receiver_positions = fp.receivers.position;
  d.wavelet = fp.wavelet;
  io::write_observed(data_file, d);
  return forward;
}

// "X GCells/s, B B a cell, P% of the copy bandwidth" of `seconds` for `cell_steps`.
std::string rate_text(double cell_steps, double seconds, double bytes, double copy) {
  char s[96];
  const double cells_per_s = cell_steps / seconds;
  std::snprintf(s, sizeof s, "%.1f GCells/s, %.1f B a cell, %.0f%% of the copy bandwidth", cells_per_s / 1e9, bytes,
                100.0 * cells_per_s * bytes / copy);
  return s;
}

// The reconstruction as the migrator's name gives it: "boundary store ..." up to the device's name.
std::string store_text(const std::string& name) {
  const auto at = name.find("boundary store "), end = name.rfind(", on ");
  return at == std::string::npos ? "boundary store ?" : name.substr(at, end > at ? end - at : std::string::npos);
}

// One migration of the shot in `data_file` on one backward path, printed as a row against the
// forward run's `forward` s.
void bench_migration(const Config& c, const TmaTuning& t, bool fused, const std::string& data_file, double forward,
                     Reconstruction how, StorePrecision precision, long long gathers, bool isic, double copy,
                     const BenchOptions& b, const ClockSampler& sampler) {
  Config mc = c;
  mc.sources.shots.clear();
  mc.receivers.layout = ReceiverLayout::none;
  MigrationConfig m;
  m.data = data_file;
  m.fused = fused ? FusedStep::on : FusedStep::off;
  m.reconstruction = how;
  m.store_precision = precision;
  m.checkpoint_interval = b.checkpoint_interval;
  m.coarse_checkpoint_interval = b.coarse_checkpoint_interval;
  if (!b.checkpoint_directory.empty()) {
    m.checkpoint_location = CheckpointLocation::disk;
    m.checkpoint_directory = b.checkpoint_directory;
  }
  if (gathers > 0) m.gathers = GathersConfig{gathers, 10, 1, 60, 2};
  if (isic) m.imaging_condition = ImagingCondition::isic;
  mc.migration = m;
  const MigrationInput in = prepare_migration(mc);
  CudaMigrator mig(in.problem, gpu_options(mc, t));
  std::vector<float> image(static_cast<size_t>(in.problem.grid.cells()), 0.0f), illum(image.size(), 0.0f);
  // The shot's gathers come back to the host at the end of its backward pass, as in a survey.
  std::vector<float> gathered(static_cast<size_t>(gather_layout(in.problem).values()), 0.0f);
  if (!gathered.empty()) mig.gathers_into(gathered.data());
  using clock = std::chrono::steady_clock;
  clock::time_point t0 = clock::now(), t_back = t0;
  bool back = false;
  // As a survey runs it: the stack stays on the device and comes back once at the end.
  mig.begin_stack();
  mig.migrate_shot(0, in.traces.data(), nullptr, nullptr, [&](const std::string& pass, long long) {
    if (pass == "backward" && !back) {
      back = true;
      t_back = clock::now();
    }
  });
  const clock::time_point t1 = clock::now();
  mig.take_stack(image.data(), illum.data());
  const double copy_back = std::chrono::duration<double>(clock::now() - t1).count();
  const double fwd = std::chrono::duration<double>(t_back - t0).count();
  const double bwd = std::chrono::duration<double>(t1 - t_back).count();
  double gpu = 0;
  std::string phases;
  for (const auto& [name, sec] : mig.breakdown()) {
    gpu += sec;
    char s[96];
    std::snprintf(s, sizeof s, "%s%s %.3f", phases.empty() ? "" : "; ", name.c_str(), sec);
    phases += s;
  }
  std::string backward = fused ? "fused" : "separate";
  const std::string n = mig.name(), tag = "fused backward step (";
  if (const auto at = n.find(tag); fused && at != std::string::npos) {
    const auto from = at + tag.size();
    backward.append(1, '-').append(n, from, n.find(')', from) - from);  // the shape's name
  }
  if (gathers > 0) backward += "+gathers";
  if (isic) backward += "+isic";
  // The passes' rates against the copy bandwidth: the forward run's step, and the backward pass's
  // levels where their bytes are counted (acoustic, from the store: no replays, gathers or isic).
  const Problem& p = in.problem;
  const long long k = p.config.migration->image_interval;
  const bool half = c.solver.storage == SolverStorage::fp16;
  const double cell_steps = double(p.grid.cells()) * double(p.steps);
  std::string rates =
      "forward run " + rate_text(cell_steps, forward, bench::bytes_per_cell(p, to_text(c.solver.storage)), copy);
  if (p.equation == Equation::acoustic && gathers == 0 && !isic && n.find("checkpoint") == std::string::npos)
    rates +=
        "; backward pass " + rate_text(cell_steps, bwd, bench::backward_bytes_per_cell(mig.fused(), half, k), copy);
  if (sampler.active())
    rates += "; clocks of the forward pass: " + sampler.between(t0, t_back).text() +
             "; of the backward pass: " + sampler.between(t_back, t1).text();
  std::printf(
      "%-12s %-7s %-20s %9.3f %9.3f %9.3f %9.3f %7.2f %9.3f %7.2f  %s (imaging every %lld steps; %s; device memory "
      "at its peak %.3f GiB; the stack's copy-back, once a survey: %.3f s; %s)\n",
      mig.name().find("compressible") != std::string::npos ? "compressible" : "plain",
      to_text(c.solver.storage).c_str(), backward.c_str(), forward, fwd, bwd, fwd + bwd, (fwd + bwd) / forward, gpu,
      gpu / forward, phases.c_str(), k, store_text(n).c_str(), mig.device_memory().peak / 1073741824.0, copy_back,
      rates.c_str());
  std::fflush(stdout);
}

// --longest: for each plan (the store on the device or in pinned host memory; checkpoints in one
// level or in two where one does not fit) and store element, the longest record the migration's
// memory plan (choose_reconstruction, what migrate and the migrator take) admits on this GPU's
// free memory and this host's, by bisection over the step count (the plan's bytes grow with it).
int longest_records(const BenchOptions& b, const Config& base) {
  const GpuInfo g = query_gpu();
  if (!g.present) throw Error("bench --rtm --longest needs a GPU (its free memory): " + g.reason);
  Config c = base;
  c.solver.kernel = SolverKernel::tma;
  MigrationConfig m;
  m.data = "unused.h5";
  m.image_interval = 10;  // boundary mode: the plan does not depend on it
  c.migration = m;
  Problem p = build_problem(c);
  const CudaOptions o = cuda_options(p.config);
  std::printf(
      "seisrtm bench --rtm --longest %s\ncommand: %s\ndevice: %s, %.3f GiB free of %.3f GiB; host: %.3f GiB "
      "available\ngrid %lld x %lld x %lld, order %d, %s, dt %.4g s\n",
      SEISRTM_VERSION, b.command_line.c_str(), g.name.c_str(), g.free_memory / 1073741824.0,
      g.total_memory / 1073741824.0, available_host_memory() / 1073741824.0, p.grid.n[0], p.grid.n[1], p.grid.n[2],
      2 * p.radius, to_text(p.equation).c_str(), p.dt);
  std::printf("%-26s %-5s %9s %9s %8s  %s\n", "plan", "store", "steps", "record s", "fwd/lvl", "at the longest");
  struct Plan {
    const char* name;
    Reconstruction how;
    StoreLocation where;
    long long coarse;  // 1: one level of checkpoints; 0: auto (two where one does not fit)
  };
  const Plan plans[] = {{"store on the device", Reconstruction::store, StoreLocation::device, 0},
                        {"store in pinned host memory", Reconstruction::store, StoreLocation::host, 0},
                        {"checkpoints, one level", Reconstruction::checkpoint, StoreLocation::automatic, 1},
                        {"checkpoints, two levels", Reconstruction::checkpoint, StoreLocation::automatic, 0}};
  constexpr long long kMost = 200000;  // 200 s at 1 ms
  for (const Plan& plan : plans)
    for (const StorePrecision precision : {StorePrecision::fp32, StorePrecision::bf16, StorePrecision::fp16}) {
      p.config.migration->reconstruction = plan.how;
      p.config.migration->store = plan.where;
      p.config.migration->coarse_checkpoint_interval = plan.coarse;
      p.config.migration->store_precision = precision;
      auto admits = [&](long long steps, ReconstructionChoice* out) {
        p.steps = steps;
        const MigrationFootprint fp = migration_footprint(p, o);
        try {
          const ReconstructionChoice r = choose_reconstruction(p, p, o, nullptr, fp, g.free_memory, g.total_memory);
          if (out) *out = r;
          return true;
        } catch (const Error&) {
          return false;
        }
      };
      long long lo = 2, hi = kMost + 1;  // admits(lo); !admits(hi)
      if (!admits(lo, nullptr)) lo = 0;
      if (admits(kMost, nullptr)) lo = kMost;
      while (lo > 0 && lo < kMost && hi - lo > 1) {
        const long long mid = lo + (hi - lo) / 2;
        (admits(mid, nullptr) ? lo : hi) = mid;
      }
      ReconstructionChoice r;
      if (lo > 0) admits(lo, &r);
      p.steps = std::max(lo, 2LL);
      const MigrationFootprint fp = migration_footprint(p, o);
      std::printf("%-26s %-5s %8s%lld %9.2f %8.2f  %s\n", plan.name, to_text(precision).c_str(),
                  lo >= kMost ? ">=" : "", lo, lo * p.dt, lo > 0 ? 1.0 + double(r.checkpoints.replay_steps) / lo : 0.0,
                  lo > 0 ? r.describe(fp).c_str() : "nothing fits");
    }
  std::printf(
      "fwd/lvl: forward steps a level of the record costs the source field (1: the store; checkpoints "
      "add their replays)\n");
  return 0;
}

}  // namespace

void check_rtm_storages(const BenchOptions& b, const std::vector<std::string>& storages) {
  if (b.longest && !b.storages.empty())
    throw Error(
        "bench --rtm --longest plans the config's solver.storage; use --set solver.storage=fp16, not --storage");
  if (std::find(storages.begin(), storages.end(), "fp16") == storages.end()) return;
  if (b.gathers > 0 || b.isic)
    throw Error(std::string("bench --rtm ") + (b.isic ? "--isic" : "--gathers") +
                " needs fp32 storage (it reads float fields); drop fp16 from --storage");
  if (enum_list(b.store_precisions, "--store-precision", StorePrecision::fp32) !=
      std::vector<StorePrecision>{StorePrecision::fp32})
    throw Error(
        "bench --rtm --store-precision: bf16 and fp16 stores are for fp32 storage (fp16 storage stores its "
        "halves); drop fp16 from --storage or bf16 and fp16 from --store-precision");
}

int bench_rtm(const BenchOptions& b, const Config& base, const TmaTuning& t, const std::vector<std::string>& storages) {
  check_rtm_storages(b, storages);
  if (b.longest) return longest_records(b, base);
  const GpuInfo g = query_gpu();
  const ClockSampler sampler(base.solver.device);  // the device the runs take
  const std::vector<std::string> memories = memory_kinds(b);
  const std::vector<Reconstruction> hows = enum_list(b.reconstructions, "--reconstruction", Reconstruction::automatic);
  const std::vector<StorePrecision> precisions =
      enum_list(b.store_precisions, "--store-precision", StorePrecision::fp32);
  std::vector<bool> paths;
  for (const std::string& p : bench::split(b.backwards.empty() ? "fused,separate" : b.backwards)) {
    if (p != "fused" && p != "separate")
      throw Error("bench --backward: '" + p + "' is not a backward path; valid: fused, separate");
    paths.push_back(p == "fused");
  }
  const int runs = b.repeat > 0 ? b.repeat : 1;
  std::printf("seisrtm bench --rtm %s\ncommand: %s\ndevice: %s\ntuning: %s\n", SEISRTM_VERSION, b.command_line.c_str(),
              g.name.c_str(), tuning_text(t).c_str());
  // The copy bandwidth the rows' rates are measured against (plain memory, random data: as bench's
  // roofline), in the same run.
  const std::size_t copy_bytes = std::min<std::size_t>(std::size_t(2) << 30, g.free_memory / 4 / (2 << 20) * (2 << 20));
  const double copy = measure_copy_bandwidth(copy_bytes, MemoryKind::plain, true).bytes_per_second;
  std::printf("copy bandwidth, plain memory, random data: %.2f TB/s\n", copy / 1e12);
  if (sampler.active())
    std::printf("clocks: sampled every %lld ms through NVML\n", static_cast<long long>(sampler.period().count()));
  else
    std::printf("clocks: not sampled: %s\n", sampler.reason().c_str());
  std::printf("%-12s %-7s %-20s %9s %9s %9s %9s %7s %9s %7s  %s\n", "memory", "storage", "backward", "forward",
              "rtm fwd", "rtm bwd", "rtm", "ratio", "rtm GPU", "ratio", "GPU seconds by phase");
  const std::string data_file =
      (std::filesystem::temp_directory_path() / ("seisrtm_bench_rtm_" + std::to_string(::getpid()) + ".h5")).string();
  for (const auto& mem : memories)
    if (mem != "plain" && mem != "compressible")
      throw Error("bench --memory: '" + mem + "' is not a memory kind; valid: plain, compressible");
  // The shot's data file goes with the command, whatever ends it.
  struct RemoveOnExit {
    std::string path;
    ~RemoveOnExit() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_data{data_file};
  for (const auto& storage : storages)
    for (const auto& mem : memories) {
      Config c = base;
      c.solver.memory = *from_text<SolverMemory>(mem);
      c.solver.storage = *from_text<SolverStorage>(storage);
      c.solver.kernel = SolverKernel::tma;
      // --repeat runs of the forward run (the rows take their median) and of each migration (a row each).
      std::vector<double> forwards;
      for (int r = 0; r < runs; ++r) {
        ClockSummary clocks;
        forwards.push_back(forward_run(c, t, data_file, sampler, clocks));
        if (sampler.active())
          std::printf("%-12s %-7s forward run %d of %d: %.3f s; %s\n", mem.c_str(), storage.c_str(), r + 1, runs,
                      forwards.back(), clocks.text().c_str());
      }
      const double forward = bench::median(forwards);
      for (const Reconstruction how : hows)
        for (const StorePrecision precision : precisions)
          for (const bool fused : paths) {
            if (fused && c.physics.equation != Equation::acoustic) continue;  // vti/tti: the separate path only
            for (int r = 0; r < runs; ++r) {
              for (const long long g : bench::rtm_gather_counts(b.gathers))
                bench_migration(c, t, fused, data_file, forward, how, precision, g, false, copy, b, sampler);
              if (b.isic) bench_migration(c, t, fused, data_file, forward, how, precision, 0, true, copy, b, sampler);
            }
          }
      std::filesystem::remove(data_file);
    }
  std::printf(
      "forward: one forward run's stepping (CUDA events; the median of --repeat runs); rtm fwd / rtm bwd: wall time of "
      "the migration's "
      "passes; rtm GPU: the sum of the GPU phases%s%s\n",
      b.gathers > 0 ? "; +gathers: with image gathers (offsets -H..H at every 10th x and every y; their copy to the "
                      "host in rtm bwd)"
                    : "",
      b.isic ? "; +isic: migration.imaging_condition isic (its kernel on imaging levels, and dR kept before the "
               "receiver step of each)"
             : "");
  return 0;
}

}  // namespace seisrtm::app
