// seisrtm bench: kernel variants x z_block x memory kind x step count on one grid, each cell
// timed from zero wavefields with a source (as a real run starts), against the copy bandwidth
// measured in the same process.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "app/commands.hpp"
#include "solver/bandwidth.hpp"
#include "solver/cuda_propagator.hpp"
#include "solver/device_info.hpp"
#include "solver/error.hpp"

namespace seisrtm::app {

namespace {
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}
}  // namespace

int cmd_bench(const BenchOptions& b) {
  const GpuInfo g = query_gpu();
  if (!g.present) throw Error("bench needs a GPU: " + g.reason);
  const long long n = b.size;
  std::ostringstream yaml;
  const double c = (n / 2) * 10.0;
  yaml << "grid: {shape: [" << n << ", " << n << ", " << n << "], spacing: 10}\n"
       << "time: {steps: 1}\nphysics: {space_order: " << b.space_order << "}\n"
       << "boundary: {damping_width: " << b.damping_width << "}\nmodel: {vp: 2000}\n"
       << "sources: {wavelet: {peak_frequency: 15}, shots: [[" << c << ", " << c << ", " << c << "]]}\n";
  long long max_steps = 1;
  for (const auto& s : split(b.steps)) max_steps = std::max(max_steps, std::stoll(s));
  const Config cfg = parse_config(yaml.str(), {"time.steps=" + std::to_string(max_steps)}, "bench");
  const Problem p = build_problem(cfg);
  const double bytes_per_cell = 16;  // read p, p_prev, m; write p_next (fp32)

  std::printf("seisrtm bench on %s (%d SMs, %.0f MB L2), driver %d.%d, %s\n", g.name.c_str(), g.multiprocessors,
              g.l2_bytes / 1e6, g.driver_version / 1000, g.driver_version % 1000 / 10,
              [] { char d[32]; std::time_t t = std::time(nullptr); std::strftime(d, sizeof d, "%Y-%m-%d", std::gmtime(&t)); return std::string(d); }().c_str());
  std::printf("grid %lld^3, space order %d, damping width %d, %.0f bytes/cell/step\n", n, b.space_order,
              b.damping_width, bytes_per_cell);
  const std::size_t copy_bytes = std::size_t(2) << 30;
  const CopyBandwidth copy = measure_copy_bandwidth(copy_bytes, MemoryKind::plain, true);
  const double roof = copy.bytes_per_second / bytes_per_cell / 1e9;
  std::printf("copy bandwidth (plain, random data, 2 GiB, read+write): %.2f TB/s -> roofline %.1f GCells/s\n",
              copy.bytes_per_second / 1e12, roof);

  std::ofstream csv;
  if (!b.csv.empty()) {
    csv.open(b.csv);
    csv << "device,variant,z_block,memory,steps,seconds,gcells_per_s,effective_tb_per_s,fraction_of_copy,"
           "peak_device_bytes,volume_bytes\n";
  }
  struct Row {
    std::string variant, memory;
    int zb;
    long long steps;
    double gcells;
  };
  std::vector<Row> rows;
  for (const auto& v : split(b.variants))
    for (const auto& zs : split(b.z_blocks))
      for (const auto& mem : split(b.memories)) {
        const int zb = std::stoi(zs);
        if (v == "naive" && zb != 0) continue;
        CudaOptions o;
        o.variant = v == "naive" ? kernels::Variant::naive : v == "smem" ? kernels::Variant::smem : kernels::Variant::tma;
        o.z_block = zb;
        o.memory = mem == "compressible" ? MemoryKind::compressible : MemoryKind::plain;
        o.graphs = true;
        CudaPropagator prop(p, o);
        for (const auto& note : prop.notes()) std::fprintf(stderr, "seisrtm: warning: %s\n", note.c_str());
        prop.begin_shot(0);
        prop.advance(0, 10);  // warm-up (graph capture, caches); then start again from zero
        for (const auto& ss : split(b.steps)) {
          const long long steps = std::stoll(ss);
          prop.begin_shot(0);
          const auto t0 = std::chrono::steady_clock::now();
          prop.advance(0, steps);  // ends synchronised
          const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const double gc = double(p.grid.cells()) * steps / sec / 1e9;
          rows.push_back({v, mem, zb, steps, gc});
          const auto dm = prop.device_memory();
          std::printf("  %-6s z_block %4d  %-12s %6lld steps: %8.3f s  %7.1f GCells/s  %5.2f TB/s  %5.1f%% of copy"
                      "  device memory %.2f volumes\n",
                      v.c_str(), zb, mem.c_str(), steps, sec, gc, gc * bytes_per_cell / 1e3, 100 * gc / roof,
                      double(dm.peak) / dm.volume);
          std::fflush(stdout);
          if (csv)
            csv << g.name << "," << v << "," << zb << "," << mem << "," << steps << "," << sec << "," << gc << ","
                << gc * bytes_per_cell / 1e3 << "," << gc / roof << "," << dm.peak << "," << dm.volume << "\n";
        }
      }
  double naive = 0;
  for (const auto& r : rows)
    if (r.variant == "naive" && r.memory == "plain") naive = std::max(naive, r.gcells);
  std::printf("\nsummary (GCells/s; roofline %.1f at %.2f TB/s copy):\n", roof, copy.bytes_per_second / 1e12);
  for (const auto& r : rows)
    std::printf("  %-6s z_block %4d %-12s %6lld steps %7.1f GCells/s  %5.1f%% of roofline%s\n", r.variant.c_str(),
                r.zb, r.memory.c_str(), r.steps, r.gcells, 100 * r.gcells / roof,
                naive > 0 ? ("  " + std::to_string(r.gcells / naive).substr(0, 4) + "x naive").c_str() : "");
  return 0;
}

}  // namespace seisrtm::app
