#include "solver/memory_estimate.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "base/error.hpp"
#include "base/format.hpp"
#include "solver/cluster.hpp"
#include "solver/geometry.hpp"
#include "solver/hooks.hpp"
#include "solver/run_journal.hpp"

namespace seisrtm {

namespace {

double receiver_count(const ReceiverConfig& r) {
  if (r.layout == ReceiverLayout::line) return double(r.line.count);
  if (r.layout == ReceiverLayout::grid) return double(r.grid.count[0]) * double(r.grid.count[1]);
  if (r.layout == ReceiverLayout::list) return double(r.list.size());
  if (r.layout == ReceiverLayout::per_shot) {  // the buffers follow the largest spread
    double most = 0;
    for (const auto& spread : r.per_shot) most = std::max(most, double(spread.size()));
    return most;
  }
  return 0;
}

// Cells a point touches (PointSet::add): 1, 2^3, or the Hicks window of 2 kHicksRadius a side.
double points_per_receiver(Interpolation method) {
  if (method == Interpolation::nearest) return 1;
  if (method == Interpolation::trilinear) return 8;
  const double side = 2.0 * kHicksRadius;
  return side * side * side;
}

}  // namespace

HostMemoryEstimate estimate_host_memory(const Config& c, SolverBackend backend) {
  // Everything in double: the products of a bad config may not fit 64-bit integers.
  HostMemoryEstimate e;
  e.backend = to_text(backend);
  const bool cuda = backend == SolverBackend::cuda;
  e.cells = double(c.grid.shape[0]) * double(c.grid.shape[1]) * double(c.grid.shape[2]);
  e.receivers = receiver_count(c.receivers);
  e.steps = double(c.time.steps);
  const double volume = 4 * e.cells;  // one float volume
  e.model = volume;
  // vti, tti: the anisotropy volumes of the Problem, built one after another next to vp.
  const Equation equation = c.physics.equation;
  e.anisotropy = (equation == Equation::tti ? 4 : equation == Equation::vti ? 2 : 0) * volume;
  if (c.model.vp.smoothing > 0) e.smoothing = 2 * volume;
  // PointSet: a cell index (8 B) and a weight (4 B) per touched cell, copied once more for the
  // upload (cuda); its position, offset and the list it was made from: 64 B a receiver.
  e.geometry = e.receivers * (64 + points_per_receiver(c.receivers.interpolation) * 12 * (cuda ? 2 : 1));
  e.geometry += 12 * e.steps;  // the wavelet (float) and the survey's time axis (double)
  if (!c.migration) {
    // cpu, acoustic: m, p^n, p^{n-1}. cpu, vti and tti: p, p_prev, q, q_prev, 6 per-cell
    // coefficients and 4 first-derivative scratch fields: 14 float volumes, counted as 15 for the
    // R-cell halos of the padded ones.
    // cuda: one padded volume on the host, through which the model is staged for the upload one
    // volume at a time (vp for acoustic; the TTI kernel's model volumes likewise, in turn; its
    // fields are zeroed on the device and need no host copy).
    e.wavefields = cuda ? volume : (e.anisotropy > 0 ? 15 : 3) * volume;
    const bool snapshots = c.output.snapshot_interval > 0;
    e.volumes = (snapshots || c.output.pictures ? volume : 0) + (cuda && snapshots ? volume : 0);
    const double copies = 2 + (c.output.pictures && e.receivers > 0 ? 1 : 0);
    e.traces = copies * 4 * e.receivers * e.steps;
    // The journal's pieces being written beside the stepping (solver/run_journal.hpp): a volume
    // each with snapshots or pictures, a gather each otherwise.
    if (cluster::rank() == 0)
      e.journal = (RunJournal::kPending + 1) * (snapshots || c.output.pictures ? volume : 4 * e.receivers * e.steps);
  }
  if (!c.migration && c.solver.decomposition == Decomposition::z && cluster::size() > 1) {
    // Every rank builds the whole grid's model, then copies its slab (at most nz / ranks + 1 own
    // planes and the halos: solver/decomposition.hpp) and steps the slab only; every rank on this
    // node does at once.
    const double nz = double(c.grid.shape[2]), ranks = cluster::size();
    const double halo = std::max(c.physics.space_order / 2, kHicksRadius);
    const double share = std::min(1.0, (std::ceil(nz / ranks) + 2 * halo) / nz);
    e.slab_model = share * (e.model + e.anisotropy);
    e.wavefields *= share;
    e.ranks_on_node = cluster::local_size();
  }
  const double build = e.model + e.anisotropy + e.smoothing + e.geometry;
  const double run =
      e.model + e.anisotropy + e.slab_model + e.wavefields + e.volumes + e.traces + e.journal + e.geometry;
  e.total = e.ranks_on_node * std::max(build, run);
  return e;
}

std::string HostMemoryEstimate::describe() const {
  std::string s = gib(total) + " of host memory (";
  if (ranks_on_node > 1) s += std::to_string(ranks_on_node) + " ranks on this node, each: ";
  s += backend + " backend: model " + gib(model);
  if (slab_model > 0) s += ", its slab's copy " + gib(slab_model);
  if (anisotropy > 0) s += ", anisotropy " + gib(anisotropy);
  if (smoothing > 0) s += ", smoothing " + gib(smoothing);
  if (wavefields > 0) s += ", wavefields " + gib(wavefields);
  if (volumes > 0) s += ", picture and snapshot copies " + gib(volumes);
  if (traces > 0) s += ", traces " + gib(traces);
  if (journal > 0) s += ", resume journal's buffers " + gib(journal);
  return s + ", geometry and wavelet " + gib(geometry) + ")";
}

void check_host_memory(const HostMemoryEstimate& e, const Config& c, double available, const std::string& source) {
  if (available <= 0 || e.total <= kHostMemoryMargin * available) return;
  // The key to change: the one behind the largest part.
  const double grid_part = e.model + e.anisotropy + e.smoothing + e.wavefields + e.volumes;
  // A migration's receivers come from its data file, not from a receivers key.
  const std::string rec_key = c.migration ? "the receivers of migration.data '" + c.migration->data + "'"
                              : c.receivers.layout == ReceiverLayout::none ? "the receiver count"
                              : c.receivers.layout == ReceiverLayout::list
                                  ? "receivers.list"
                                  : "receivers." + to_text(c.receivers.layout) + ".count";
  std::string fix;
  if (grid_part >= e.traces && grid_part >= e.geometry)
    fix = "shrink grid.shape (" + std::to_string(static_cast<long long>(e.cells)) + " cells)";
  else if (e.traces >= e.geometry)
    fix = "lower time.steps (" + std::to_string(static_cast<long long>(e.steps)) + ") or " + rec_key + " (" +
          std::to_string(static_cast<long long>(e.receivers)) + " receivers): traces take 4 B a receiver a step" +
          (c.output.pictures ? ", held three times (output.pictures: false saves one)" : ", held twice");
  else
    fix = "lower " + rec_key + " (" + std::to_string(static_cast<long long>(e.receivers)) + " receivers, " +
          to_text(c.receivers.interpolation) + " interpolation) or time.steps (" +
          std::to_string(static_cast<long long>(e.steps)) + ")";
  throw Error("the run needs " + e.describe() + " but " + gib(available) + " is available (" + source +
              "; a run may use " + std::to_string(static_cast<int>(kHostMemoryMargin * 100)) + "% of it): " + fix);
}

namespace {

// The first line of a file, trimmed of its newline; empty when it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  return line;
}

// A byte count as the cgroup files write it (decimal); nullopt for anything else ("max").
std::optional<double> byte_count(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stod(text);
}

// The value of `key` in a memory.stat file ("key value" lines); 0 when absent.
double stat_value(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string k;
  double v = 0;
  while (f >> k >> v)
    if (k == key) return v;
  return 0;
}

// v1 writes "no limit" as PAGE_COUNTER_MAX pages, 2^63 less a page (9223372036854771712 with 4 KiB
// pages). Any limit from 2^62 bytes (4 EiB, beyond every machine) up is taken as none.
constexpr double kNoLimit = 4611686018427387904.0;  // 2^62

// One hierarchy: from `dir` (the process's cgroup under its mount) up to `mount`, the smallest
// limit - (usage - reclaimable file cache). The inactive file pages are left out of the usage as
// docker stats and the kubelet's working set do: page cache of files written earlier fills a
// cgroup up to its limit and is reclaimed on demand, as MemAvailable counts it too.
void walk(const std::filesystem::path& mount, const std::string& cgroup, const char* limit_file, const char* usage_file,
          const char* inactive_key, AvailableMemory& best) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(mount, ec)) return;
  fs::path rel = fs::path(cgroup).relative_path();
  for (;;) {
    const fs::path dir = mount / rel;
    const std::string limit_path = (dir / limit_file).string();
    if (const auto limit = byte_count(first_line(limit_path)); limit && *limit < kNoLimit) {
      const double usage = byte_count(first_line((dir / usage_file).string())).value_or(0);
      const double inactive = stat_value((dir / "memory.stat").string(), inactive_key);
      const double used = std::max(0.0, usage - inactive);
      const double room = std::max(0.0, *limit - used);
      if (room < best.bytes)
        best = {room, "cgroup limit " + limit_path + " " + gib(*limit) + " less " + gib(used) + " in use"};
    }
    if (rel.empty()) break;
    rel = rel.parent_path();
  }
}

}  // namespace

AvailableMemory cgroup_headroom(const std::string& root, const std::string& proc_self_cgroup) {
  AvailableMemory best{std::numeric_limits<double>::infinity(), ""};
  // /proc/self/cgroup: "hierarchy-id:controllers:path"; v2 is "0::path", v1 lists "memory" among
  // the controllers of its line.
  std::istringstream lines(proc_self_cgroup);
  std::optional<std::string> v2, v1;
  for (std::string line; std::getline(lines, line);) {
    const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.substr(0, a) == "0" && controllers.empty()) v2 = path;
    std::istringstream cs(controllers);
    for (std::string ctl; std::getline(cs, ctl, ',');)
      if (ctl == "memory") v1 = path;
  }
  const std::filesystem::path r(root);
  if (v2) {
    walk(r, *v2, "memory.max", "memory.current", "inactive_file", best);
    walk(r / "unified", *v2, "memory.max", "memory.current", "inactive_file", best);
  }
  if (v1) walk(r / "memory", *v1, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file", best);
  return best;
}

AvailableMemory rlimit_headroom(double limit_bytes, double in_use_bytes, const std::string& limit_name,
                                const std::string& usage_name) {
  if (!(limit_bytes >= 0) || limit_bytes >= kNoLimit) return {std::numeric_limits<double>::infinity(), ""};
  const double used = std::max(0.0, in_use_bytes);
  return {std::max(0.0, limit_bytes - used),
          limit_name + " " + gib(limit_bytes) + " less " + gib(used) + " in use (" + usage_name + ")"};
}

namespace {

// The value of `key` ("VmSize:") in /proc/self/status, in bytes (the file gives kB); 0 when absent.
double proc_status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.compare(0, key.size(), key) == 0) return std::strtod(line.c_str() + key.size(), nullptr) * 1024;
  return 0;
}

// The headroom of the soft limit `resource` (the one the kernel enforces on this process).
AvailableMemory process_limit_headroom(int resource, const std::string& limit_name, const std::string& usage_key) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return {std::numeric_limits<double>::infinity(), ""};
  return rlimit_headroom(double(r.rlim_cur), proc_status_bytes(usage_key), limit_name,
                         usage_key.substr(0, usage_key.size() - 1) + " of /proc/self/status");
}

}  // namespace

AvailableMemory available_host_memory_detail() {
  AvailableMemory out{0, "MemAvailable"};
  {
    std::ifstream f("/proc/meminfo");
    std::string key, unit;
    double kb = 0;
    while (f >> key >> kb >> unit)
      if (key == "MemAvailable:") {
        out.bytes = kb * 1024;
        break;
      }
  }
  if (out.bytes <= 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out = {pages > 0 && page > 0 ? double(pages) * double(page) : 0, "free physical pages"};
  }
  std::ifstream f("/proc/self/cgroup");
  std::stringstream text;
  text << f.rdbuf();
  const AvailableMemory cg =
      cgroup_headroom(hooks().cgroup_root.empty() ? "/sys/fs/cgroup" : hooks().cgroup_root, text.str());
  if (out.bytes <= 0 || cg.bytes < out.bytes) out = cg;
  // ulimit -v and ulimit -d: an allocation beyond them fails (std::bad_alloc) however much memory
  // the machine has free. Every allocation counts against both (mmap'd ones against RLIMIT_DATA
  // too since Linux 4.7).
  for (const AvailableMemory& lim : {process_limit_headroom(RLIMIT_AS, "RLIMIT_AS (ulimit -v)", "VmSize:"),
                                     process_limit_headroom(RLIMIT_DATA, "RLIMIT_DATA (ulimit -d)", "VmData:")})
    if (out.bytes <= 0 || lim.bytes < out.bytes) out = lim;
  if (!std::isfinite(out.bytes)) out = {0, "unknown"};
  return out;
}

double available_host_memory() {
  return available_host_memory_detail().bytes;
}

}  // namespace seisrtm
