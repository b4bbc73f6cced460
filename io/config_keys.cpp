#include "io/config_keys.hpp"

#include <optional>
#include <sstream>

namespace seisrtm {

namespace {

using Writer = void (*)(YAML::Emitter&, const Config&);

// A writer of one value of a default-free expression of `c`.
#define SEISRTM_WRITE(expr) [](YAML::Emitter& e, const Config& c) { e << (expr); }
// A writer of a [x, y, z] value, in flow style as to_yaml writes it.
#define SEISRTM_WRITE3(expr)                                                                  \
  [](YAML::Emitter& e, const Config& c) {                                                     \
    e << YAML::Flow << YAML::BeginSeq << (expr)[0] << (expr)[1] << (expr)[2] << YAML::EndSeq; \
  }

// An optional number that is auto when empty.
void write_auto(YAML::Emitter& e, const std::optional<double>& v) {
  if (v)
    e << *v;
  else
    e << "auto";
}

ConfigKey key(std::string path, std::string type, std::string range, std::string description, Writer write,
              std::string default_text = "") {
  return {std::move(path), std::move(type),        {}, std::move(range), std::move(description),
          write,           std::move(default_text)};
}

template <class E>
ConfigKey choice(std::string path, std::string description, Writer write) {
  return {std::move(path), "enum", enum_texts<E>(), "", std::move(description), write, ""};
}

ConfigKey mapping(std::string path, std::string description, std::string default_text = "") {
  return {std::move(path), "mapping", {}, "", std::move(description), nullptr, std::move(default_text)};
}

void add_top(std::vector<ConfigKey>& k) {
  k.push_back(mapping("grid", "the grid, damping zone included", "required"));
  k.push_back(mapping("time", "the time axis"));
  k.push_back(mapping("physics", "the wave equation and its stencil"));
  k.push_back(mapping("model", "the model volumes"));
  k.push_back(mapping("boundary", "the absorbing zone and the free surface"));
  k.push_back(mapping("sources", "the source wavelet and the shots"));
  k.push_back(mapping("receivers", "where the traces are recorded (one of line, grid, list)"));
  k.push_back(mapping("output", "what is written, and where"));
  k.push_back(mapping("solver", "how and where the run executes"));
  k.push_back(mapping("checks", "plausibility checks that refuse a run before it starts"));
  k.push_back(
      mapping("migration", "reverse-time migration (seisrtm migrate); present only in migration configs", "absent"));
  k.push_back(key("grid.shape", "[x, y, z]", "positive integers, nx ny nz at most 2^50",
                  "cells [nx, ny, nz], damping zone included", SEISRTM_WRITE3(c.grid.shape), "required"));
  k.push_back(key("grid.spacing", "[x, y, z]", "> 0 m", "m [hx, hy, hz]; a single number for all three axes",
                  SEISRTM_WRITE3(c.grid.spacing), "required"));
  k.push_back(key("time.steps", "integer", ">= 1; auto in migration configs only",
                  "number of time steps; auto (migration): the record length of migration.data",
                  SEISRTM_WRITE(c.time.steps), "required"));
  k.push_back(key("time.dt", "number", "> 0 s, at most the stability limit",
                  "s; auto: time.safety x the largest stable dt",
                  [](YAML::Emitter& e, const Config& c) { write_auto(e, c.time.dt); }));
  k.push_back(key("time.safety", "number", "(0, 1]", "fraction of the largest stable dt that time.dt auto uses",
                  SEISRTM_WRITE(c.time.safety)));
  k.push_back(choice<Equation>("physics.equation",
                               "acoustic: isotropic; vti, tti: pseudo-acoustic with a vertical or tilted symmetry axis",
                               SEISRTM_WRITE(to_text(c.physics.equation))));
  k.push_back(key("physics.space_order", "integer", "2, 4, 8 or 16", "order of the spatial stencil",
                  SEISRTM_WRITE(c.physics.space_order)));
}

void add_model(std::vector<ConfigKey>& k) {
  k.push_back(mapping("model.vp", "P velocity, m/s: a number (constant) or a volume mapping", "2000 (constant)"));
  k.push_back(mapping("model.epsilon", "Thomsen's epsilon (vti, tti only)", "0 (constant)"));
  k.push_back(mapping("model.delta", "Thomsen's delta (vti, tti only)", "0 (constant)"));
  k.push_back(mapping("model.theta", "tilt of the symmetry axis from vertical, degrees (tti only)", "0 (constant)"));
  k.push_back(
      mapping("model.phi", "azimuth of the symmetry axis from +x towards +y, degrees (tti only)", "0 (constant)"));
  k.push_back(key("model.clamp_delta", "bool", "",
                  "vti, tti: where delta > epsilon, set delta to epsilon instead of refusing",
                  SEISRTM_WRITE(c.model.clamp_delta)));
  const std::string v = "model.<volume>.";
  k.push_back(choice<VolumeType>(v + "type", "how the volume's value varies over the grid",
                                 SEISRTM_WRITE(to_text(c.model.vp.type))));
  k.push_back(key(v + "value", "number", "vp: > 0 m/s", "constant; gradient: the value at z = 0", nullptr,
                  "2000 (vp), 0 (others)"));
  k.push_back(key(v + "gradient", "number", "", "gradient: d value / dz, per m", SEISRTM_WRITE(c.model.vp.gradient)));
  k.push_back(key(v + "layers", "list", "non-empty, tops increasing",
                  "layers: {top: m, <volume>: value, dip: [x, y] degrees} from the top down", nullptr, "none"));
  k.push_back(key(v + "file", "string", "", "file: the HDF5 file", SEISRTM_WRITE(c.model.vp.file)));
  k.push_back(key(v + "dataset", "string", "", "file: the dataset, shape [nz, ny, nx]", nullptr, "the volume's name"));
  k.push_back(key(v + "smoothing", "number", ">= 0 m, at most the grid's extent",
                  "vp only: standard deviation of a Gaussian smoothing of slowness (0 = none)",
                  SEISRTM_WRITE(c.model.vp.smoothing)));
  k.push_back(key(v + "bodies", "list", "radii > 0 m",
                  "ellipsoids {center: [x, y, z] m, radii: [a, b, c] m, <volume>: value} laid over the volume", nullptr,
                  "none"));
  k.push_back(
      key(v + "layers[].top", "number", "", "m, depth of the layer's top at the grid's centre", nullptr, "required"));
  k.push_back(
      key(v + "layers[].<volume>", "number", "vp: > 0 m/s", "the volume's value in the layer", nullptr, "required"));
  k.push_back(key(v + "layers[].dip", "list", "(-80, 80) degrees", "[dip_x, dip_y]: the top deepens along +x, +y",
                  nullptr, "[0, 0]"));
  k.push_back(key(v + "bodies[].center", "[x, y, z]", "", "m", nullptr, "required"));
  k.push_back(key(v + "bodies[].radii", "[x, y, z]", "> 0 m", "m, semi-axes along x, y, z", nullptr, "required"));
  k.push_back(key(v + "bodies[].<volume>", "number", "vp: > 0 m/s", "the volume's value inside", nullptr, "required"));
}

void add_boundary_sources(std::vector<ConfigKey>& k) {
  k.push_back(key("boundary.damping_width", "integer", "0 to (grid.shape - 1) / 2 cells",
                  "cells of the absorbing zone inside the grid, on every face but a free surface",
                  SEISRTM_WRITE(c.boundary.damping_width)));
  k.push_back(key("boundary.reflection", "number", "(0, 1)",
                  "normal-incidence round-trip amplitude attenuation of the zone",
                  SEISRTM_WRITE(c.boundary.reflection)));
  k.push_back(key("boundary.free_surface", "bool", "", "p = 0 at z = 0", SEISRTM_WRITE(c.boundary.free_surface)));
  k.push_back(mapping("sources.wavelet", "the source time function (not in migration configs)"));
  k.push_back(choice<Interpolation>("sources.interpolation", "how a source off the grid is spread over cells",
                                    SEISRTM_WRITE(to_text(c.sources.interpolation))));
  k.push_back(key("sources.shots", "list", "inside the grid", "[x, y, z] m, one a shot (not in migration configs)",
                  nullptr, "required"));
  k.push_back(choice<WaveletType>("sources.wavelet.type", "ricker or an HDF5 file",
                                  SEISRTM_WRITE(to_text(c.sources.wavelet.type))));
  k.push_back(key("sources.wavelet.peak_frequency", "number", "> 0 Hz", "Hz (ricker)",
                  SEISRTM_WRITE(c.sources.wavelet.peak_frequency)));
  k.push_back(key("sources.wavelet.delay", "number", "", "s; auto: 1.2 / peak_frequency",
                  [](YAML::Emitter& e, const Config& c) { write_auto(e, c.sources.wavelet.delay); }));
  k.push_back(key("sources.wavelet.file", "string", "", "file: the HDF5 file", SEISRTM_WRITE(c.sources.wavelet.file)));
  k.push_back(key("sources.wavelet.dataset", "string", "", "file: 1D dataset; optional attribute dt (s) to resample",
                  SEISRTM_WRITE(c.sources.wavelet.dataset)));
}

void add_receivers_output(std::vector<ConfigKey>& k) {
  k.push_back(choice<Interpolation>("receivers.interpolation", "how a receiver off the grid samples cells",
                                    SEISRTM_WRITE(to_text(c.receivers.interpolation))));
  k.push_back(mapping("receivers.line", "count receivers evenly from start to end", "none"));
  k.push_back(mapping("receivers.grid", "count[0] x count[1] receivers from origin along x and y", "none"));
  k.push_back(key("receivers.list", "list", "inside the grid", "[x, y, z] m, one a receiver", nullptr, "none"));
  k.push_back(key("receivers.line.start", "[x, y, z]", "", "m", nullptr, "required"));
  k.push_back(key("receivers.line.end", "[x, y, z]", "", "m", nullptr, "required"));
  k.push_back(key("receivers.line.count", "integer", ">= 1", "receivers on the line", nullptr, "required"));
  k.push_back(key("receivers.grid.origin", "[x, y, z]", "", "m, the first receiver", nullptr, "required"));
  k.push_back(key("receivers.grid.spacing", "list", "> 0 m where count > 1", "[dx, dy] m", nullptr, "required"));
  k.push_back(
      key("receivers.grid.count", "list", ">= 1, nx ny at most the grid's cells", "[nx, ny]", nullptr, "required"));
  k.push_back(key("output.directory", "string", "", "where the files go", SEISRTM_WRITE(c.output.directory)));
  k.push_back(key("output.name", "string", "at most 128 bytes, no '/', not starting with '.'",
                  "file stem of every output; a migration's default is seisrtm_migration",
                  SEISRTM_WRITE(c.output.name)));
  k.push_back(key("output.snapshot_interval", "integer", ">= 0 steps", "steps between wavefield snapshots; 0 = none",
                  SEISRTM_WRITE(c.output.snapshot_interval)));
  k.push_back(key("output.traces", "bool", "", "write the shot gathers", SEISRTM_WRITE(c.output.traces)));
  k.push_back(key("output.model", "bool", "", "write the model volumes", SEISRTM_WRITE(c.output.model)));
  k.push_back(key("output.pictures", "bool", "", "write PNG pictures", SEISRTM_WRITE(c.output.pictures)));
  k.push_back(choice<SegyRevision>("output.segy", "SEG-Y copy of every shot gather, <name>_shot_NNNN.sgy (run only)",
                                   SEISRTM_WRITE(to_text(c.output.segy))));
}

void add_solver_checks(std::vector<ConfigKey>& k) {
  k.push_back(choice<SolverBackend>("solver.backend", "auto: cuda where a GPU is usable, else cpu",
                                    SEISRTM_WRITE(to_text(c.solver.backend))));
  k.push_back(key("solver.threads", "integer", "0 to max(256, 4 per hardware thread)", "CPU threads; 0 = all",
                  SEISRTM_WRITE(c.solver.threads)));
  k.push_back(choice<SolverKernel>("solver.kernel", "cuda: the stencil kernel; auto = tma (smem or naive without TMA)",
                                   SEISRTM_WRITE(to_text(c.solver.kernel))));
  k.push_back(key("solver.z_block", "integer", "0 to 2^20 planes",
                  "cuda: planes per block along z; 0 = the whole column", SEISRTM_WRITE(c.solver.z_block)));
  k.push_back(choice<SolverMemory>("solver.memory", "cuda: plain or compressible device memory",
                                   SEISRTM_WRITE(to_text(c.solver.memory))));
  k.push_back(choice<SolverStorage>("solver.storage", "fp16: wavefields and model in 16 bits, arithmetic in fp32",
                                    SEISRTM_WRITE(to_text(c.solver.storage))));
  k.push_back(key("solver.graphs", "bool", "", "cuda: the time loop as CUDA graphs", SEISRTM_WRITE(c.solver.graphs)));
  k.push_back(key("solver.device", "integer", "0 to 1023", "cuda: the device index (CUDA_VISIBLE_DEVICES applies)",
                  SEISRTM_WRITE(c.solver.device)));
  k.push_back(choice<Decomposition>("solver.decomposition",
                                    "under mpirun: none = shots across ranks; z = each shot over all ranks in z slabs",
                                    SEISRTM_WRITE(to_text(c.solver.decomposition))));
  k.push_back(key("checks.physical_ranges", "bool", "",
                  "refuse vp outside [100, 10000] m/s and fewer than 2 points a wavelength; false: warn",
                  SEISRTM_WRITE(c.checks.physical_ranges)));
}

void add_migration(std::vector<ConfigKey>& k) {
  k.push_back(key("migration.data", "string", "", "the HDF5 file of seisrtm run, or SEG-Y (.sgy, .segy; a glob)",
                  nullptr, "required"));
  k.push_back(choice<MigrationMode>("migration.mode", "how the source field is rebuilt",
                                    SEISRTM_WRITE(to_text(c.migration->mode))));
  k.push_back(key("migration.image_interval", "integer", ">= 1 step",
                  "steps between imaging time levels; auto: the largest k with 1 / (k dt) > 2 f_max", nullptr, "auto"));
  k.push_back(key("migration.illumination_epsilon", "number", "(0, 1)",
                  "stabiliser, fraction of the largest illumination",
                  SEISRTM_WRITE(c.migration->illumination_epsilon)));
  k.push_back(mapping("migration.mute", "direct-arrival mute of the observed data", "none"));
  k.push_back(key("migration.depth_slice", "number", ">= 0 m", "m; auto: the depth of the strongest image",
                  [](YAML::Emitter& e, const Config& c) { write_auto(e, c.migration->depth_slice); }));
  k.push_back(choice<DataFilter>("migration.data_filter",
                                 "(-i w)^alpha before back-propagation; auto picks by the receivers' spread",
                                 SEISRTM_WRITE(to_text(c.migration->data_filter))));
  k.push_back(key("migration.fused", "bool", "", "GPU, tma, space order <= 8: one fused kernel per backward step",
                  SEISRTM_WRITE(c.migration->fused)));
  k.push_back(choice<StoreLocation>("migration.store",
                                    "GPU, boundary mode: where the boundary store lives; auto: device when it fits",
                                    SEISRTM_WRITE(to_text(c.migration->store))));
  k.push_back(mapping("migration.segy_headers", "SEG-Y data only: trace header bytes that carry the geometry"));
  k.push_back(mapping("migration.wavelet", "SEG-Y data only (required then): the source wavelet of the data",
                      "required for SEG-Y"));
  k.push_back(key("migration.mute.velocity", "number", "> 0 m/s", "m/s of the direct arrival", nullptr, "required"));
  k.push_back(
      key("migration.mute.t0", "number", ">= 0 s", "s; auto: twice the peak time of the wavelet", nullptr, "auto"));
  k.push_back(
      key("migration.mute.taper", "number", ">= 0 s", "s; auto: half the peak time of the wavelet", nullptr, "auto"));
}

void add_segy_headers(std::vector<ConfigKey>& k) {
  const std::string range = "1 to 240, the first byte of a SEG-Y trace header field";
  auto byte = [&](const char* name, const char* what, Writer write) {
    k.push_back(key(std::string("migration.segy_headers.") + name, "integer", range, what, write));
  };
  byte("shot", "field record number: traces are grouped into shots by it",
       SEISRTM_WRITE(c.migration->segy_headers.shot));
  byte("source_x", "source x", SEISRTM_WRITE(c.migration->segy_headers.source_x));
  byte("source_y", "source y", SEISRTM_WRITE(c.migration->segy_headers.source_y));
  byte("source_depth", "source depth below the surface, positive down",
       SEISRTM_WRITE(c.migration->segy_headers.source_depth));
  byte("source_elevation", "surface elevation at the source",
       SEISRTM_WRITE(c.migration->segy_headers.source_elevation));
  byte("receiver_x", "receiver x", SEISRTM_WRITE(c.migration->segy_headers.receiver_x));
  byte("receiver_y", "receiver y", SEISRTM_WRITE(c.migration->segy_headers.receiver_y));
  byte("receiver_elevation", "receiver group elevation (z = -elevation)",
       SEISRTM_WRITE(c.migration->segy_headers.receiver_elevation));
  byte("coordinate_scalar", "scalar applied to x and y", SEISRTM_WRITE(c.migration->segy_headers.coordinate_scalar));
  byte("elevation_scalar", "scalar applied to elevations and depths",
       SEISRTM_WRITE(c.migration->segy_headers.elevation_scalar));
  k.push_back(choice<WaveletType>("migration.wavelet.type", "ricker or an HDF5 file",
                                  SEISRTM_WRITE(to_text(c.migration->wavelet->type))));
  k.push_back(key("migration.wavelet.peak_frequency", "number", "> 0 Hz", "Hz (ricker)",
                  SEISRTM_WRITE(c.migration->wavelet->peak_frequency)));
  k.push_back(key("migration.wavelet.delay", "number", "", "s; auto: 1.2 / peak_frequency",
                  [](YAML::Emitter& e, const Config& c) { write_auto(e, c.migration->wavelet->delay); }));
  k.push_back(key("migration.wavelet.file", "string", "", "file: the HDF5 file", nullptr, "required for type file"));
  k.push_back(key("migration.wavelet.dataset", "string", "", "file: 1D dataset; optional attribute dt (s)",
                  SEISRTM_WRITE(c.migration->wavelet->dataset)));
}

#undef SEISRTM_WRITE
#undef SEISRTM_WRITE3

std::vector<ConfigKey> make_keys() {
  std::vector<ConfigKey> k;
  add_top(k);
  add_model(k);
  add_boundary_sources(k);
  add_receivers_output(k);
  add_solver_checks(k);
  add_migration(k);
  add_segy_headers(k);
  return k;
}

// The parent of a path: everything before its last '.'.
std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string name_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// A default Config with the optional sections engaged, so that their keys' defaults can be written.
Config default_config() {
  Config c;
  c.migration = MigrationConfig{};
  c.migration->wavelet = WaveletConfig{};
  return c;
}

std::string default_text(const ConfigKey& k, const Config& defaults) {
  if (!k.default_text.empty()) return k.default_text;
  if (!k.write) return "-";
  // 15 digits: 0.8, not the 17 of to_yaml's round trip (0.80000000000000004).
  YAML::Emitter e;
  e.SetDoublePrecision(15);
  k.write(e, defaults);
  const std::string s = e.c_str();
  return s.empty() ? "\"\"" : s;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = make_keys();
  return keys;
}

std::vector<std::string> keys_under(const std::string& section) {
  std::vector<std::string> out;
  for (const auto& k : config_keys())
    if (parent_of(k.path) == section) out.push_back(name_of(k.path));
  return out;
}

void write_section(YAML::Emitter& e, const Config& c, const std::string& section) {
  for (const auto& k : config_keys())
    if (k.write && parent_of(k.path) == section) {
      e << YAML::Key << name_of(k.path) << YAML::Value;
      k.write(e, c);
    }
}

std::string config_reference_markdown() {
  const Config defaults = default_config();
  std::ostringstream s;
  s << "# Configuration reference\n\n"
       "Generated from the key table in io/config_keys.cpp; do not edit. Regenerate with\n"
       "`build/seisrtm_config_reference > docs/CONFIG.md`.\n\n"
       "Units: metres, seconds, m/s, Hz. `<volume>` stands for each of model.vp, model.epsilon,\n"
       "model.delta, model.theta and model.phi; `[]` for every entry of a list. Unknown keys are refused.\n";
  for (const auto& top : config_keys()) {
    if (top.path.find('.') != std::string::npos) continue;
    s << "\n## " << top.path << "\n\n" << top.description << ".\n\n";
    s << "| key | type | default | allowed | description |\n|---|---|---|---|---|\n";
    for (const auto& k : config_keys()) {
      if (k.path.rfind(top.path + ".", 0) != 0) continue;
      const std::string allowed = k.allowed.empty() ? k.range : joined(k.allowed, " \\| ");
      s << "| `" << k.path << "` | " << k.type << " | `" << default_text(k, defaults) << "` | " << allowed << " | "
        << k.description << " |\n";
    }
  }
  return s.str();
}

}  // namespace seisrtm
