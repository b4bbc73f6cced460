#include "io/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "base/error.hpp"
#include "base/format.hpp"
#include "io/config_keys.hpp"
#include "io/segy.hpp"
#include "io/yaml_reader.hpp"

namespace seisrtm {

namespace {

// Applies one `a.b.c=value` override to the tree; the value is parsed as YAML, so
// `grid.shape=[50,50,50]` and `time.dt=auto` both work.
void apply_override(YAML::Node& root, const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--set '" + item + "' must have the form key.path=value, e.g. time.steps=200");
  const std::string key = item.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(item.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw Error("--set '" + item + "': the value is not valid YAML: " + e.msg);
  }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) {
    if (p.empty()) throw Error("--set '" + item + "': empty key component in '" + key + "'");
    parts.push_back(p);
  }
  // yaml-cpp nodes are handles: walk with fresh handles (operator= on a handle would alias).
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    if (!cur[parts[i]] || !cur[parts[i]].IsMap()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    chain.push_back(cur[parts[i]]);
  }
  chain.back()[parts.back()] = value;
}

void check_positive(double v, const std::string& key, const std::string& what) {
  if (!(v > 0)) throw Error("config key '" + key + "' must be " + what + ", got " + number_text(v));
}

std::vector<std::array<double, 3>> point_list(const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) throw Error("config key '" + key + "' must be a list of [x, y, z] positions in m");
  std::vector<std::array<double, 3>> out;
  for (size_t i = 0; i < n.size(); ++i)
    out.push_back(io::YamlReader::as_triple(n[i], key + "[" + std::to_string(i) + "]"));
  return out;
}

// The largest grid: 2^50 cells (1.1e15, 4.5 PB a float volume), far beyond any host, so that
// byte counts of a few volumes (16 B a cell and more) and cell indices stay exact in 64 bits
// and in double. What fits the memory is checked later (solver/memory_estimate).
constexpr long long kMaxCells = 1LL << 50;

// The largest config file read: 16 MiB. A config is a few kB; the longest real ones list
// receivers, about 30 B a line, so 16 MiB holds over 500 000 of them, more than a list written
// out by hand (a survey's geometry comes in a data file), and far less than any host's memory.
// A device (/dev/zero) or an endless file would otherwise be read until the memory ran out.
constexpr std::uintmax_t kMaxConfigBytes = std::uintmax_t{16} << 20;

// migration.wavelet and migration.segy_headers: SEG-Y data only (an HDF5 data file carries its
// geometry in datasets and its own wavelet, /sources/wavelet).
void parse_segy_data(io::YamlReader& m, Config& c) {
  MigrationConfig& mc = *c.migration;
  const bool segy = io::is_segy_path(mc.data);
  if (!segy) {
    for (const char* k : {"wavelet", "segy_headers"})
      if (m.has(k))
        throw Error("config key 'migration." + std::string(k) +
                    "' applies to SEG-Y data only (migration.data "
                    "ending in .sgy or .segy); the HDF5 data file '" +
                    mc.data + "' carries its own " +
                    (std::string(k) == "wavelet" ? "wavelet (/sources/wavelet)" : "geometry"));
    return;
  }
  if (!m.has("wavelet"))
    throw Error("config key 'migration.wavelet' is required for SEG-Y data ('" + mc.data +
                "'): SEG-Y carries no "
                "source wavelet; give the one of the data, e.g. {peak_frequency: 15} (a Ricker, delay auto = "
                "1.2 / peak_frequency) or {type: file, file: wavelet.h5}");
  auto w = m.child("wavelet");
  mc.wavelet = WaveletConfig{};
  read_section(w, c, "migration.wavelet");
  WaveletConfig& wc = *mc.wavelet;
  if (wc.type == WaveletType::file) {
    wc.file = w.text("file", "");
    if (wc.file.empty()) throw Error("config key 'migration.wavelet.file' is required for type file: an HDF5 path");
  }
  auto h = m.child("segy_headers");
  read_section(h, c, "migration.segy_headers");
  // The table checks each byte's range; here, that it starts a field.
  const SegyHeaderConfig& b = mc.segy_headers;
  const std::pair<const char*, int> bytes[] = {{"shot", b.shot},
                                               {"source_x", b.source_x},
                                               {"source_y", b.source_y},
                                               {"source_depth", b.source_depth},
                                               {"source_elevation", b.source_elevation},
                                               {"receiver_x", b.receiver_x},
                                               {"receiver_y", b.receiver_y},
                                               {"receiver_elevation", b.receiver_elevation},
                                               {"coordinate_scalar", b.coordinate_scalar},
                                               {"elevation_scalar", b.elevation_scalar}};
  for (const auto& [key, v] : bytes)
    if (!io::is_segy_trace_field(v))
      throw Error("config key '" + h.key_path(key) + "' = " + std::to_string(v) +
                  " is not the first byte of a SEG-Y trace header field; valid: " + io::segy_trace_fields_text());
}

void parse_migration(io::YamlReader m, Config& c) {
  MigrationConfig& mc = c.migration.emplace();
  m.allow_only(keys_under("migration"));
  mc.data = m.text("data", "");
  if (mc.data.empty())
    throw Error(
        "config key 'migration.data' is required: the HDF5 file written by seisrtm run "
        "(traces, source and receiver positions, dt), or SEG-Y (.sgy, .segy; a glob such as "
        "out/run_shot_*.sgy for one file a shot)");
  parse_segy_data(m, c);
  // 0: auto.
  if (m.has("image_interval") &&
      !(m.node()["image_interval"].IsScalar() && m.node()["image_interval"].Scalar() == "auto")) {
    mc.image_interval = m.integer("image_interval", 1);
    check_range(config_key("migration.image_interval"), mc.image_interval, "migration.image_interval");
  }
  read_section(m, c, "migration");
  if (m.has("mute")) {
    auto mute = m.child("mute");
    mute.allow_only(keys_under("migration.mute"));
    if (!mute.has("velocity"))
      throw Error("config key 'migration.mute.velocity' is required when migration.mute is given (m/s)");
    mc.mute.enabled = true;
    read_section(mute, c, "migration.mute");
  }
  if (m.has("gathers")) {
    auto g = m.child("gathers");
    g.allow_only(keys_under("migration.gathers"));
    read_section(g, c, "migration.gathers");  // (each value's range first)
    if (!g.has("offsets"))
      throw Error(
          "config key 'migration.gathers.offsets' is required when migration.gathers is given (the largest "
          "subsurface half-offset, cells along x)");
    auto given = [&](const char* key, const char* fallback) {  // the value as written, or the default's text
      return g.has(key) ? g.node()[key].as<std::string>() : std::string(fallback);
    };
    if (mc.gathers.angle_step > mc.gathers.max_angle)
      throw Error("config key 'migration.gathers.angle_step' (" + given("angle_step", "2") +
                  " degrees) must not exceed migration.gathers.max_angle (" + given("max_angle", "60") + " degrees)");
  }
}

// The keys of a layer or body entry of the volume `name`: its value key is the volume's name.
std::vector<std::string> volume_keys(const std::string& section, const std::string& name) {
  std::vector<std::string> keys = keys_under(section);
  for (auto& k : keys)
    if (k == "<volume>") k = name;
  return keys;
}

// One model volume, model.<name>: a number (a constant) or a mapping. Its layers and bodies
// carry their value under the volume's own name ({top: 0, vp: 1500}, {..., epsilon: 0.1}). Only
// vp must be positive and may be smoothed; the anisotropy parameters' ranges (1 + 2 epsilon > 0,
// delta <= epsilon) are checked per cell when the problem is built, where the sampled values are.
void parse_volume(io::YamlReader& model, const std::string& name, VolumeConfig& v) {
  const bool vp = name == "vp";
  const std::string key = "model." + name;
  const std::string unit = vp ? "m/s" : name == "theta" || name == "phi" ? "degrees" : "dimensionless";
  if (model.has(name) && model.node()[name].IsScalar()) {  // shorthand: model: {vp: 2000}
    v.type = VolumeType::constant;
    v.value = io::YamlReader::as_number(model.node()[name], key);
  } else {
    auto r = model.child(name);
    r.allow_only(keys_under("model.<volume>"));
    if (!vp && r.has("smoothing"))
      throw Error("config key '" + r.key_path("smoothing") +
                  "' is not valid: smoothing applies to model.vp only (a smooth slowness background); remove it");
    v.smoothing = r.number("smoothing", v.smoothing);
    check_range(config_key("model.<volume>.smoothing"), v.smoothing, r.key_path("smoothing"));
    v.type = *from_text<VolumeType>(r.choice("type", to_text(v.type), enum_texts<VolumeType>()));
    v.value = r.number("value", v.value);
    v.gradient = r.number("gradient", v.gradient);
    if (v.type == VolumeType::layers) {
      if (!r.has("layers") || !r.node()["layers"].IsSequence() || r.node()["layers"].size() == 0)
        throw Error("config key '" + key + ".layers' must be a list of {top: m, " + name + ": " + unit +
                    "} for type layers");
      const YAML::Node layers = r.node()["layers"];
      for (size_t i = 0; i < layers.size(); ++i) {
        io::YamlReader l(layers[i], key + ".layers[" + std::to_string(i) + "]");
        l.allow_only(volume_keys("model.<volume>.layers[]", name));
        if (!l.has("top") || !l.has(name))
          throw Error("config key '" + l.path() + "' needs both 'top' (m) and '" + name + "' (" + unit + ")");
        LayerConfig lc{l.number("top", 0), l.number(name, 0), {0, 0}};
        if (l.has("dip")) {
          const YAML::Node d = l.node()["dip"];
          if (!d.IsSequence() || d.size() != 2)
            throw Error("config key '" + l.key_path("dip") + "' must be [dip_x, dip_y] in degrees");
          for (int k = 0; k < 2; ++k) {
            lc.dip[k] = io::YamlReader::as_number(d[k], l.key_path("dip"));
            check_range(config_key("model.<volume>.layers[].dip"), lc.dip[k], l.key_path("dip"));
          }
        }
        if (i > 0 && !(lc.top > v.layers.back().top))
          throw Error("config key '" + l.key_path("top") + "' must be deeper than the layer above (" +
                      std::to_string(v.layers.back().top) + " m)");
        if (vp) check_positive(lc.value, l.key_path(name), "a positive velocity in m/s");
        v.layers.push_back(lc);
      }
    } else if (r.has("layers")) {
      throw Error("config key '" + key + ".layers' is only valid with " + key + ".type: layers");
    }
    if (v.type == VolumeType::file) {
      v.file = r.text("file", "");
      if (v.file.empty())
        throw Error("config key '" + key +
                    ".file' is required for type file: an HDF5 path or a SEG-Y cube (.sgy, .segy)");
    }
    v.dataset = r.text("dataset", v.dataset);
    if (r.has("bodies")) {
      const YAML::Node bodies = r.node()["bodies"];
      if (!bodies.IsSequence())
        throw Error("config key '" + key + ".bodies' must be a list of {center: [x, y, z], radii: [a, b, c], " + name +
                    ": " + unit + "}");
      if (v.type == VolumeType::file)
        throw Error("config key '" + key + ".bodies' is not valid with " + key +
                    ".type: file (put the body in the file)");
      for (size_t i = 0; i < bodies.size(); ++i) {
        io::YamlReader b(bodies[i], key + ".bodies[" + std::to_string(i) + "]");
        b.allow_only(volume_keys("model.<volume>.bodies[]", name));
        for (const std::string& k : {std::string("center"), std::string("radii"), name})
          if (!b.has(k))
            throw Error("config key '" + b.key_path(k) + "' is required (center m, radii m, " + name + " " + unit +
                        ")");
        BodyConfig bc{b.triple("center", {}, false), b.triple("radii", {}, true), b.number(name, 0)};
        for (int a = 0; a < 3; ++a)
          check_range(config_key("model.<volume>.bodies[].radii"), bc.radii[a], b.key_path("radii"));
        if (vp) check_positive(bc.value, b.key_path(name), "a positive velocity in m/s");
        v.bodies.push_back(bc);
      }
    }
  }
  if (vp && (v.type == VolumeType::constant || v.type == VolumeType::gradient))
    check_positive(v.value, "model.vp.value", "a positive velocity in m/s");
}

Config from_tree(const YAML::Node& root_node) {
  Config c;
  io::YamlReader root(root_node, "");
  root.allow_only(keys_under(""));
  // A migration config takes its sources, receivers and record length from the data file.
  const bool migration = root_node["migration"].IsDefined();
  if (migration && !root_node["migration"].IsMap())
    throw Error(
        "config key 'migration' must be a mapping with at least migration.data (the HDF5 file of "
        "seisrtm run); remove it for a modelling config");
  if (!root.has("grid")) throw Error("config key 'grid' is required (grid.shape and grid.spacing)");

  auto grid = root.child("grid");
  grid.allow_only(keys_under("grid"));
  if (!grid.has("shape")) throw Error("config key 'grid.shape' is required: [nx, ny, nz] cells");
  if (!grid.has("spacing")) throw Error("config key 'grid.spacing' is required: h or [hx, hy, hz] in m");
  c.grid.shape = grid.int_triple("shape", c.grid.shape);
  c.grid.spacing = grid.triple("spacing", c.grid.spacing, true);
  c.grid.origin = grid.triple("origin", c.grid.origin, false);
  for (int a = 0; a < 3; ++a)
    if (!std::isfinite(c.grid.origin[a]))
      throw Error("config key 'grid.origin' must be finite survey coordinates [x, y, z] in m");
  for (int a = 0; a < 3; ++a) {
    if (c.grid.shape[a] <= 0)
      throw Error("config key 'grid.shape[" + std::to_string(a) + "]' must be a positive number of cells, got " +
                  std::to_string(c.grid.shape[a]));
    check_positive(c.grid.spacing[a], "grid.spacing", "a positive spacing in m");
  }
  {
    long long cells = 1;
    for (int a = 0; a < 3; ++a)
      if (__builtin_mul_overflow(cells, c.grid.shape[a], &cells) || cells > kMaxCells)
        throw Error("config key 'grid.shape' = [" + std::to_string(c.grid.shape[0]) + ", " +
                    std::to_string(c.grid.shape[1]) + ", " + std::to_string(c.grid.shape[2]) +
                    "] has too many cells: nx ny nz must be at most 2^50 = " + std::to_string(kMaxCells) +
                    " (and fit the memory)");
  }

  auto time = root.child("time");
  time.allow_only(keys_under("time"));
  const bool steps_auto =
      time.has("steps") && time.node()["steps"].IsScalar() && time.node()["steps"].Scalar() == "auto";
  if (!time.has("steps") && !migration) throw Error("config key 'time.steps' is required: the number of time steps");
  if (steps_auto && !migration)
    throw Error("config key 'time.steps' may be 'auto' only in a migration config (the data's length)");
  // 0: auto, the record length of the migration's data.
  c.time.steps = time.has("steps") && !steps_auto ? time.integer("steps", 0) : 0;
  if (time.has("steps") && !steps_auto) check_range(config_key("time.steps"), c.time.steps, "time.steps");
  read_section(time, c, "time");

  auto physics = root.child("physics");
  read_section(physics, c, "physics");

  auto model = root.child("model");
  model.allow_only(keys_under("model"));
  parse_volume(model, "vp", c.model.vp);
  // The anisotropy keys belong to the pseudo-acoustic equations only: on acoustic they would be
  // read and silently have no effect, and VTI has theta = phi = 0 by definition.
  const Equation equation = c.physics.equation;
  for (const char* key : {"epsilon", "delta", "theta", "phi", "clamp_delta"}) {
    const std::string k = key;
    if (!model.has(k)) continue;
    if (equation == Equation::acoustic)
      throw Error("config key 'model." + k +
                  "' applies to physics.equation vti or tti only, but physics.equation is acoustic; remove it, or "
                  "set physics.equation: vti (vertical symmetry axis) or tti (tilted axis)");
    if (equation == Equation::vti && (k == "theta" || k == "phi"))
      throw Error("config key 'model." + k +
                  "' is not valid with physics.equation: vti (its symmetry axis is vertical: theta = phi = 0); "
                  "use tti for a tilted axis, or remove it");
  }
  parse_volume(model, "epsilon", c.model.epsilon);
  parse_volume(model, "delta", c.model.delta);
  parse_volume(model, "theta", c.model.theta);
  parse_volume(model, "phi", c.model.phi);
  read_section(model, c, "model");

  auto boundary = root.child("boundary");
  read_section(boundary, c, "boundary");

  auto sources = root.child("sources");
  sources.allow_only(keys_under("sources"));
  auto wavelet = sources.child("wavelet");
  read_section(wavelet, c, "sources.wavelet");
  if (c.sources.wavelet.type == WaveletType::file) {
    c.sources.wavelet.file = wavelet.text("file", "");
    if (c.sources.wavelet.file.empty())
      throw Error("config key 'sources.wavelet.file' is required for type file: an HDF5 path");
  }
  read_section(sources, c, "sources");
  if (migration) {
    if (sources.has("shots") || sources.has("wavelet"))
      throw Error("config key 'sources." + std::string(sources.has("shots") ? "shots" : "wavelet") +
                  "' is not allowed in a migration config: shots and the wavelet come from the file "
                  "named by migration.data (only sources.interpolation may be set)");
  } else {
    if (!sources.has("shots"))
      throw Error("config key 'sources.shots' is required: a list of [x, y, z] source positions in m");
    c.sources.shots = point_list(sources.node()["shots"], "sources.shots");
    if (c.sources.shots.empty()) throw Error("config key 'sources.shots' must list at least one shot");
  }

  auto receivers = root.child("receivers");
  read_section(receivers, c, "receivers");
  const int layouts = receivers.has("line") + receivers.has("grid") + receivers.has("list") + receivers.has("per_shot");
  if (migration && layouts > 0)
    throw Error(
        "config keys 'receivers.line', 'receivers.grid', 'receivers.list' and 'receivers.per_shot' are not allowed in "
        "a migration config: receivers come from the file named by migration.data (only "
        "receivers.interpolation may be set)");
  if (layouts > 1)
    throw Error(
        "config keys 'receivers.line', 'receivers.grid', 'receivers.list' and 'receivers.per_shot' exclude each other: "
        "give one");
  if (receivers.has("line")) {
    c.receivers.layout = ReceiverLayout::line;
    auto line = receivers.child("line");
    line.allow_only(keys_under("receivers.line"));
    for (const char* k : {"start", "end", "count"})
      if (!line.has(k)) throw Error("config key 'receivers.line." + std::string(k) + "' is required");
    c.receivers.line.start = line.triple("start", {}, false);
    c.receivers.line.end = line.triple("end", {}, false);
    c.receivers.line.count = line.integer("count", 0);
    check_range(config_key("receivers.line.count"), c.receivers.line.count, "receivers.line.count");
  } else if (receivers.has("grid")) {
    c.receivers.layout = ReceiverLayout::grid;
    auto g = receivers.child("grid");
    g.allow_only(keys_under("receivers.grid"));
    for (const char* k : {"origin", "spacing", "count"})
      if (!g.has(k)) throw Error("config key 'receivers.grid." + std::string(k) + "' is required");
    c.receivers.grid.origin = g.triple("origin", {}, false);
    const YAML::Node sp = g.node()["spacing"], cn = g.node()["count"];
    if (!sp.IsSequence() || sp.size() != 2) throw Error("config key 'receivers.grid.spacing' must be [dx, dy] in m");
    if (!cn.IsSequence() || cn.size() != 2) throw Error("config key 'receivers.grid.count' must be [nx, ny]");
    for (int i = 0; i < 2; ++i) {
      c.receivers.grid.spacing[i] = io::YamlReader::as_number(sp[i], "receivers.grid.spacing");
      c.receivers.grid.count[i] = io::YamlReader::as_integer(cn[i], "receivers.grid.count[" + std::to_string(i) + "]");
      check_range(config_key("receivers.grid.count"), c.receivers.grid.count[i], "receivers.grid.count");
      if (c.receivers.grid.count[i] > 1)
        check_positive(c.receivers.grid.spacing[i], "receivers.grid.spacing", "positive (m)");
    }
    // At most one receiver a cell of the grid, nx ny nz (itself at most 2^50): the receivers lie
    // inside the grid, so more would put several in a cell, and the product nx ny stays far below
    // 2^63 for the estimates and messages that count them.
    const long long cells = c.grid.shape[0] * c.grid.shape[1] * c.grid.shape[2];
    long long receivers = 0;
    if (__builtin_mul_overflow(c.receivers.grid.count[0], c.receivers.grid.count[1], &receivers) || receivers > cells)
      throw Error("config key 'receivers.grid.count' = [" + std::to_string(c.receivers.grid.count[0]) + ", " +
                  std::to_string(c.receivers.grid.count[1]) + "] asks for more receivers than the grid has cells (" +
                  std::to_string(cells) + "); valid: nx ny at most grid.shape's nx ny nz");
  } else if (receivers.has("list")) {
    c.receivers.layout = ReceiverLayout::list;
    c.receivers.list = point_list(receivers.node()["list"], "receivers.list");
  } else if (receivers.has("per_shot")) {
    c.receivers.layout = ReceiverLayout::per_shot;
    const YAML::Node spreads = receivers.node()["per_shot"];
    if (!spreads.IsSequence())
      throw Error("config key 'receivers.per_shot' must be a list of spreads, one a shot: [[[x, y, z], ...], ...] m");
    for (size_t s = 0; s < spreads.size(); ++s)
      c.receivers.per_shot.push_back(point_list(spreads[s], "receivers.per_shot[" + std::to_string(s) + "]"));
    if (c.receivers.per_shot.size() != c.sources.shots.size())
      throw Error("config key 'receivers.per_shot' lists " + std::to_string(c.receivers.per_shot.size()) +
                  " spreads for the " + std::to_string(c.sources.shots.size()) +
                  " shots of sources.shots; valid: one spread a shot, in the same order");
  }
  if (c.receivers.relative &&
      (c.receivers.layout == ReceiverLayout::per_shot || c.receivers.layout == ReceiverLayout::none))
    throw Error("config key 'receivers.relative' moves a receivers.line, grid or list with each shot; receivers." +
                to_text(c.receivers.layout) + " has nothing to move (per_shot lists each shot's spread as it is)");

  auto output = root.child("output");
  if (migration) c.output.name = OutputConfig::migration_name;
  read_section(output, c, "output");
  // '.' and '..' would write hidden files ("..h5"), as would any name starting with '.'; a control
  // character (a newline) makes file names no listing or script shows as they are.
  const bool control = std::any_of(c.output.name.begin(), c.output.name.end(),
                                   [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
  if (c.output.name.empty() || c.output.name.find('/') != std::string::npos || c.output.name[0] == '.' || control)
    throw Error(
        "config key 'output.name' must be a non-empty file stem without '/' or control characters, not "
        "starting with '.', got " +
        (control ? std::string("a name holding a control character") : "'" + c.output.name + "'"));
  // The files add suffixes (_wavefield_shot_0000.png, .<pid>.<hex>.partial) within the 255 bytes
  // of a file name; a longer stem failed only when the first file was created, after the run.
  if (c.output.name.size() > 128)
    throw Error("config key 'output.name' has " + std::to_string(c.output.name.size()) +
                " bytes; valid: at most 128 (the output files add their suffixes to it within a file name's 255)");
  if (c.output.segy != SegyRevision::none && !migration) {
    // A SEG-Y trace holds the run's samples and t = 0 (io/segy.hpp); its length is a 16-bit
    // field: signed in rev 1, unsigned in rev 2. (A migration's image cube is checked by
    // io::plan_segy_cube once its grid is known.)
    const long long most = io::segy_max_samples(c.output.segy == SegyRevision::rev1 ? 1 : 2) - 1;
    if (c.time.steps > most)
      throw Error("config key 'output.segy' = " + to_text(c.output.segy) + " holds at most " + std::to_string(most) +
                  " time steps a trace (the samples field is 16 bits; t = 0 is written too), but time.steps = " +
                  std::to_string(c.time.steps) + "; lower time.steps" +
                  (c.output.segy == SegyRevision::rev1 ? ", use rev2 (up to 65534)," : "") +
                  " or set output.segy: none");
  }

  auto solver = root.child("solver");
  read_section(solver, c, "solver");
  if (c.solver.storage == SolverStorage::fp16) {
    // What fp16 storage exists for: one device (the naive and tma kernels, or the CPU backend's
    // emulation); forward runs of acoustic, vti and tti, and boundary-store acoustic migrations.
    const std::string key = "config key 'solver.storage' = fp16 ";
    if (migration && c.physics.equation != Equation::acoustic)
      throw Error(key + "migrates physics.equation acoustic only, but it is " + to_text(c.physics.equation) +
                  " (a vti/tti migration stores fp32); set solver.storage: fp32");
    if (c.solver.decomposition == Decomposition::z)
      throw Error(key +
                  "is not available with solver.decomposition z (the slabs exchange fp32 halos); set "
                  "solver.storage: fp32 or solver.decomposition: none");
    if (c.solver.kernel == SolverKernel::smem)
      throw Error(key + "runs with solver.kernel tma, naive or auto; smem stores fp32 only");
  }
  auto checks = root.child("checks");
  read_section(checks, c, "checks");
  if (migration) parse_migration(root.child("migration"), c);
  if (c.migration && c.solver.storage == SolverStorage::fp16 && c.migration->mode != MigrationMode::boundary)
    throw Error(
        "config key 'solver.storage' = fp16 migrates with migration.mode boundary only (snapshots keep "
        "fp32 levels); set migration.mode: boundary or solver.storage: fp32");
  if (c.migration && c.migration->store_precision != StorePrecision::fp32 &&
      (c.solver.storage == SolverStorage::fp16 || c.migration->mode != MigrationMode::boundary))
    throw Error("config key 'migration.store_precision' = " + to_text(c.migration->store_precision) +
                " stores the boundary of fp32 levels in boundary mode (fp16 storage keeps its halves, snapshots keep "
                "volumes); set migration.store_precision: fp32");
  if (c.migration && c.migration->checkpoint_location == CheckpointLocation::disk &&
      c.migration->checkpoint_directory.empty())
    throw Error(
        "config key 'migration.checkpoint_location' = disk needs migration.checkpoint_directory: a directory for the "
        "checkpoint files");
  return c;
}

}  // namespace

namespace {

// yaml-cpp keeps both entries of a repeated key and lookups find the first: a second `time:`
// section would be ignored without a word. Every mapping is checked for repeated keys.
void check_unique_keys(const YAML::Node& n, const std::string& path, const std::string& origin) {
  if (n.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      const std::string full = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second)
        throw Error(origin + ": config key '" + full + "' appears twice (line " +
                    std::to_string(kv.first.Mark().line + 1) + "); give each key once");
      check_unique_keys(kv.second, full, origin);
    }
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) check_unique_keys(n[i], path + "[" + std::to_string(i) + "]", origin);
  }
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::vector<std::string>& overrides,
                    const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw Error(origin + ": malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) throw Error(origin + ": the top level must be a mapping of keys (grid, time, ...)");
  check_unique_keys(root, "", origin);
  for (const auto& o : overrides) apply_override(root, o);
  try {
    Config c = from_tree(root);
    c.source_file = origin;
    return c;
  } catch (const YAML::Exception& e) {
    throw Error(origin + ": " + e.msg);
  }
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st))
    throw Error("config file '" + path + "' is a directory; give a YAML file, e.g. configs/quickstart.yaml");
  const std::string limit = "valid: a YAML file of at most " + std::to_string(kMaxConfigBytes >> 20) +
                            " MiB (a config is a few kB; long receiver lists belong in receivers.grid or a data file)";
  if (fs::is_regular_file(st)) {
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > kMaxConfigBytes)
      throw Error("config file '" + path + "' has " + std::to_string(size) + " bytes; " + limit + "; nothing was read");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("config file '" + path + "' cannot be opened (missing or unreadable)");
  // Read with the cap whatever the file is: a device (/dev/zero) or a pipe has no size to check
  // first and may never end.
  std::string text;
  std::vector<char> buf(1 << 16);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    text.append(buf.data(), static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes)
      throw Error("config file '" + path + "' gave more than " + std::to_string(kMaxConfigBytes) + " bytes" +
                  (fs::is_regular_file(st) ? "" : " (it is not a regular file: a device or a pipe)") +
                  " and was not read further; " + limit);
  }
  if (in.bad()) throw Error("config file '" + path + "' could not be read (an I/O error)");
  return parse_config(text, overrides, path);
}

std::string to_yaml(const Config& c) {
  // Every section and key through the key table: where it applies, in its order.
  YAML::Emitter e;
  e << YAML::BeginMap;
  write_section(e, WriteScope{c, "", nullptr, 0}, "");
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace seisrtm
