// seisrtm bench, the files: --csv and --json with every figure (the JSON also with the device,
// driver, CUDA versions, date and the full configuration), and the reading of --json files back
// for --compare. Both are written under a temporary name and renamed when complete.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/bench/bench.hpp"
#include "base/error.hpp"
#include "io/output_file.hpp"

namespace seisrtm::app::bench {

namespace {

// The bench --json schema: insertion-ordered, so a file reads in the order it was written.
using Json = nlohmann::ordered_json;

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

// B/s of the copy of random data in the cell's memory kind; the plain copy where that was not
// measured.
double same_memory_copy(const Results& r, const Cell& c) {
  for (const auto& cp : r.copies)
    if (cp.memory == c.memory && cp.data == "random" && cp.bytes_per_second > 0) return cp.bytes_per_second;
  return r.copy_plain;
}

// Reads a file written by bench --json; one Error naming the file for what is not JSON.
Json read_json(const std::string& file) {
  if (std::filesystem::is_directory(file))
    throw Error("bench --compare: '" + file + "' is a directory; give two JSON files written by bench --json");
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
                (cut == std::string::npos ? what : what.substr(cut + 2)) + "); write it with bench --json");
  }
}

// The value of `key` in the object `obj` (called `where` in messages) of `file`, checked to be
// of the type `want` ("a number", "an integer", "a string") says.
const Json& field(const Json& obj, const std::string& where, const char* key, const char* want,
                  const std::string& file) {
  const auto it = obj.find(key);
  if (it == obj.end())
    throw Error("bench --compare: '" + file + "': " + where + " has no key '" + key + "'; write it with bench --json");
  const bool ok = std::string(want) == "a string"     ? it->is_string()
                  : std::string(want) == "an integer" ? it->is_number_integer()
                                                      : it->is_number();
  if (!ok) throw Error("bench --compare: '" + file + "': " + where + "." + key + " is " + it->dump() + ", not " + want);
  return *it;
}

}  // namespace

void write_csv(const Setup& s, const Results& r) {
  std::ostringstream csv;
  csv << "device,variant,z_block,memory,compressible,steps,repeats,gcells_median,gcells_min,gcells_"
         "max,spread,"
         "effective_gb_per_s,bytes_per_cell,fraction_of_copy,fraction_of_same_memory_copy,peak_"
         "device_bytes,"
         "volume_bytes,seconds,storage,sm_clock_mhz,power_held\n";
  for (const auto& c : r.cells) {
    csv << '"' << s.gpu.name << "\"," << c.variant << "," << c.z_block << "," << c.memory << "," << c.compressible
        << "," << c.steps << "," << c.seconds.size() << "," << c.median << "," << c.lo << "," << c.hi << ","
        << c.spread() << "," << c.median * bytes_per_cell(s.problem, c.storage) << ","
        << bytes_per_cell(s.problem, c.storage) << ","
        << c.median * bytes_per_cell(s.problem, c.storage) * 1e9 / r.copy_plain << ","
        << c.median * bytes_per_cell(s.problem, c.storage) * 1e9 / same_memory_copy(r, c) << "," << c.peak_bytes << ","
        << c.volume_bytes << ",";
    for (size_t i = 0; i < c.seconds.size(); ++i) csv << (i ? ";" : "") << c.seconds[i];
    csv << "," << c.storage << "," << c.clocks.mean_sm_mhz << "," << c.clocks.power_held << "\n";
  }
  write_text(s.options.csv, csv.str());
}

void write_json(const Setup& s, const Results& r) {
  const GpuInfo& g = s.gpu;
  const Axes& a = s.axes;
  Json j;
  j["tool"] = "seisrtm bench";
  j["version"] = SEISRTM_VERSION;
  j["date"] = r.date;
  j["command"] = s.options.command_line;
  j["device"] = {
      {"name", g.name},
      {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
      {"multiprocessors", g.multiprocessors},
      {"l2_bytes", g.l2_bytes},
      {"memory_bytes", g.total_memory},
      {"driver", driver_release()},
      {"driver_cuda", std::to_string(g.driver_version / 1000) + "." + std::to_string(g.driver_version % 1000 / 10)},
      {"runtime_cuda", std::to_string(g.runtime_version / 1000) + "." + std::to_string(g.runtime_version % 1000 / 10)}};
  // The tuning flags as given; null where a flag was not given (the policy's, which the cells'
  // kernel names spell out).
  const TmaTuning& t = s.tuning;
  const Json tuning = {{"tma_shape", t.shape ? Json(kernels::tma_shape_name(*t.shape)) : Json()},
                       {"fused_shape", t.fused_shape ? Json(fused_shape_name(*t.fused_shape)) : Json()},
                       {"chunk_rows", t.chunk_rows ? Json(*t.chunk_rows) : Json()},
                       {"l2_hint", t.l2_hint ? Json(*t.l2_hint) : Json()}};
  j["configuration"] = {{"variants", a.variants},
                        {"z_blocks", a.z_blocks},
                        {"memories", a.memories},
                        {"storages", a.storages},
                        {"tuning", tuning},
                        {"steps", a.steps},
                        {"repeat", a.repeat},
                        {"warm_up_steps", r.warm},
                        {"bytes_per_cell", static_cast<int>(bytes_per_cell(s.problem))},
                        {"cells", s.problem.grid.cells()},
                        {"dt", s.problem.dt},
                        {"config", to_yaml(s.config)}};
  Json& cp = j["copy_bandwidth"] = Json::array();
  for (const auto& c : r.copies)
    cp.push_back({{"memory", c.memory},
                  {"data", c.data},
                  {"bytes_per_second", c.bytes_per_second},
                  {"compressible", c.compressible}});
  j["roofline_gcells_per_s"] = r.roof;
  Json& list = j["cells"] = Json::array();
  for (const auto& c : r.cells) {
    list.push_back({{"variant", series_name(c.variant, c.storage)},  // "tma fp16": the key stays apart from fp32's
                    {"storage", c.storage},
                    {"bytes_per_cell", bytes_per_cell(s.problem, c.storage)},
                    {"z_block", c.z_block},
                    {"memory", c.memory},
                    {"kernel", c.kernel},
                    {"compressible", c.compressible},
                    {"steps", c.steps},
                    {"seconds", c.seconds},
                    {"gcells_median", c.median},
                    {"gcells_min", c.lo},
                    {"gcells_max", c.hi},
                    {"spread", c.spread()},
                    {"effective_gb_per_s", c.median * bytes_per_cell(s.problem, c.storage)},
                    {"fraction_of_copy", c.median * bytes_per_cell(s.problem, c.storage) * 1e9 / r.copy_plain},
                    {"fraction_of_same_memory_copy",
                     c.median * bytes_per_cell(s.problem, c.storage) * 1e9 / same_memory_copy(r, c)},
                    {"peak_device_bytes", c.peak_bytes},
                    {"volume_bytes", c.volume_bytes}});
    // The clocks where they were sampled (NVML): the SM clock's mean and least over the runs,
    // the board power, and the shares of the samples held by the power limit and by heat.
    if (c.clocks.samples > 0)
      list.back()["clocks"] = {{"samples", c.clocks.samples},           {"sm_mhz_mean", c.clocks.mean_sm_mhz},
                               {"sm_mhz_least", c.clocks.min_sm_mhz},   {"sm_mhz_highest", c.clocks.top_sm_mhz},
                               {"power_w_mean", c.clocks.mean_power_w}, {"power_limit_w", c.clocks.power_limit_w},
                               {"held_by_power", c.clocks.power_held},  {"held_by_heat", c.clocks.thermal_held}};
  }
  // Bytes that are not UTF-8 (a device name, the command line) become U+FFFD instead of
  // failing the write; NaN and Inf become null.
  write_text(s.options.json, j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

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
      throw Error("bench --compare: '" + file + "': " + where + " is " + c.dump() + ", not an object");
    JsonCell j;
    j.key = field(c, where, "variant", "a string", file).get<std::string>() + " z_block " +
            z_name(field(c, where, "z_block", "an integer", file).get<int>()) + " " +
            field(c, where, "memory", "a string", file).get<std::string>() + " " +
            std::to_string(field(c, where, "steps", "an integer", file).get<long long>()) + " steps";
    if (const auto k = c.find("kernel"); k != c.end()) {
      if (!k->is_string())
        throw Error("bench --compare: '" + file + "': " + where + ".kernel is " + k->dump() + ", not a string");
      j.kernel = k->get<std::string>();
    }
    j.median = field(c, where, "gcells_median", "a number", file).get<double>();
    j.min = field(c, where, "gcells_min", "a number", file).get<double>();
    j.max = field(c, where, "gcells_max", "a number", file).get<double>();
    if (const auto k = c.find("clocks"); k != c.end()) {
      if (!k->is_object())
        throw Error("bench --compare: '" + file + "': " + where + ".clocks is " + k->dump() + ", not an object");
      j.sm_mhz = field(*k, where + ".clocks", "sm_mhz_mean", "a number", file).get<double>();
      j.held_by_power = field(*k, where + ".clocks", "held_by_power", "a number", file).get<double>();
    }
    cells.push_back(j);
  }
  return cells;
}

}  // namespace seisrtm::app::bench
