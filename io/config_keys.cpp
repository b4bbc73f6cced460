#include "io/config_keys.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>

#include "base/error.hpp"
#include "base/format.hpp"

namespace seisrtm {

namespace {

using Writer = void (*)(YAML::Emitter&, const WriteScope&);
using When = bool (*)(const WriteScope&);
using Reader = void (*)(io::YamlReader&, const ConfigKey&, Config&);

// solver.threads: at most 4 threads per hardware thread of this machine, and at least 256 so
// that a config written for a large machine still runs on a small one. More only oversubscribe
// the cores, and OpenMP aborts the program when it cannot create them.
long long max_threads() {
  return std::max(256LL, 4LL * static_cast<long long>(std::thread::hardware_concurrency()));
}

std::string name_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// "2, 4, 8 or 16"
std::string or_list(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + v[i];
  return s;
}

// Readers of one key's value into its place in Config, by the place's type; an absent key
// leaves the place as it is.
void read_value(io::YamlReader& r, const ConfigKey& k, double& place) {
  const std::string n = name_of(k.path);
  if (!r.has(n)) return;
  const double v = r.number(n, 0);
  check_range(k, v, r.key_path(n));
  place = v;
}

void read_value(io::YamlReader& r, const ConfigKey& k, std::optional<double>& place) {
  const std::string n = name_of(k.path);
  if (!r.has(n) || (r.node()[n].IsScalar() && r.node()[n].Scalar() == "auto")) return;
  double v = 0;
  read_value(r, k, v);
  place = v;
}

template <class I>
requires std::is_integral_v<I> &&
    (!std::is_same_v<I, bool>)void read_value(io::YamlReader& r, const ConfigKey& k, I& place) {
  const std::string n = name_of(k.path);
  if (!r.has(n)) return;
  const long long v = r.integer(n, 0);
  if (!k.allowed.empty() && std::find(k.allowed.begin(), k.allowed.end(), std::to_string(v)) == k.allowed.end())
    throw Error("config key '" + r.key_path(n) + "' must be " + or_list(k.allowed) + ", got " + std::to_string(v));
  check_range(k, static_cast<long double>(v), r.key_path(n));
  place = static_cast<I>(v);
}

void read_value(io::YamlReader& r, const ConfigKey& k, bool& place) {
  place = r.boolean(name_of(k.path), place);
}

void read_value(io::YamlReader& r, const ConfigKey& k, std::string& place) {
  place = r.text(name_of(k.path), place);
}

// An enumerated key: its text checked against the enum's name table (the message lists the
// table's texts).
template <class E>
requires std::is_enum_v<E>
void read_value(io::YamlReader& r, const ConfigKey& k, E& place) {
  place = *from_text<E>(r.choice(name_of(k.path), to_text(place), enum_texts<E>()));
}

template <class T>
void write_value(YAML::Emitter& e, const T& v) {
  if constexpr (std::is_enum_v<T>)
    e << to_text(v);
  else
    e << v;
}

// An optional number that is auto when empty.
void write_value(YAML::Emitter& e, const std::optional<double>& v) {
  if (v)
    e << *v;
  else
    e << "auto";
}

struct Field {
  Reader read;
  Writer write;
};

// A writer of one value of a default-free expression of `c` (the config) or `s` (the scope).
#define SEISRTM_WRITE(expr)                   \
  [](YAML::Emitter& e, const WriteScope& s) { \
    [[maybe_unused]] const Config& c = s.c;   \
    e << (expr);                              \
  }
// A writer of a [x, y, z] value, in flow style as to_yaml writes it.
#define SEISRTM_WRITE3(expr)                                                                  \
  [](YAML::Emitter& e, const WriteScope& s) {                                                 \
    [[maybe_unused]] const Config& c = s.c;                                                   \
    e << YAML::Flow << YAML::BeginSeq << (expr)[0] << (expr)[1] << (expr)[2] << YAML::EndSeq; \
  }
// A writer of a [x, y] value, in flow style.
#define SEISRTM_WRITE2(expr)                                                     \
  [](YAML::Emitter& e, const WriteScope& s) {                                    \
    [[maybe_unused]] const Config& c = s.c;                                      \
    e << YAML::Flow << YAML::BeginSeq << (expr)[0] << (expr)[1] << YAML::EndSeq; \
  }
// A writer of a list of [x, y, z] values: a block list of flow triples.
#define SEISRTM_WRITE_POINTS(expr)                                                                          \
  [](YAML::Emitter& e, const WriteScope& s) {                                                               \
    e << YAML::BeginSeq;                                                                                    \
    for (const auto& p : (expr)) e << YAML::Flow << YAML::BeginSeq << p[0] << p[1] << p[2] << YAML::EndSeq; \
    e << YAML::EndSeq;                                                                                      \
  }

// The reader and the writer of one place `expr` of Config `c`: its type picks how it is read
// and written.
#define SEISRTM_FIELD(expr)                                                             \
  Field {                                                                               \
    [](io::YamlReader& r, const ConfigKey& k, Config& c) { read_value(r, k, (expr)); }, \
        [](YAML::Emitter& e, const WriteScope& s) {                                     \
          const Config& c = s.c;                                                        \
          write_value(e, (expr));                                                       \
        }                                                                               \
  }

// A number above `lo` (open) or from `lo` (closed); the error says "must <must>".
KeyRange above(double lo, std::string unit, std::string must, bool got = true) {
  KeyRange r;
  r.lo = lo;
  r.lo_open = true;
  r.unit = std::move(unit);
  r.must = std::move(must);
  r.got = got;
  return r;
}

KeyRange at_least(double lo, std::string unit, std::string must, bool got = true) {
  KeyRange r = above(lo, std::move(unit), std::move(must), got);
  r.lo_open = false;
  return r;
}

KeyRange between(double lo, bool lo_open, double hi, bool hi_open, std::string must, bool got = true) {
  KeyRange r = above(lo, "", std::move(must), got);
  r.lo_open = lo_open;
  r.hi = hi;
  r.hi_open = hi_open;
  return r;
}

// An integer in [lo, hi]; the error names both and `meaning`.
KeyRange integers(long long lo, long long hi, std::string unit, std::string meaning) {
  KeyRange r = at_least(static_cast<double>(lo), std::move(unit), std::move(meaning));
  r.hi = static_cast<double>(hi);
  r.bounds = true;
  return r;
}

KeyRange with_note(KeyRange r, std::string note, std::string hi_text = "") {
  r.note = std::move(note);
  r.hi_text = std::move(hi_text);
  return r;
}

ConfigKey key(std::string path, std::string type, std::string range, std::string description, Writer write,
              std::string default_text = "") {
  ConfigKey k;  // member by member: the entry's later members keep their defaults
  k.path = std::move(path);
  k.type = std::move(type);
  k.range = std::move(range);
  k.description = std::move(description);
  k.write = write;
  k.default_text = std::move(default_text);
  return k;
}

// A key with one place in Config, read and written through `f`, checked against `check`.
ConfigKey field(std::string path, std::string type, KeyRange check, std::string description, Field f,
                std::string default_text = "") {
  ConfigKey k = key(std::move(path), std::move(type), "", std::move(description), f.write, std::move(default_text));
  k.read = f.read;
  k.check = std::move(check);
  return k;
}

// An enumerated key with one place in Config.
template <class E>
ConfigKey choice(std::string path, std::string description, Field f) {
  ConfigKey k = key(std::move(path), "enum", "", std::move(description), f.write);
  k.allowed = enum_texts<E>();
  k.read = f.read;
  return k;
}

// A key read by hand (its reading depends on other keys) and checked against `check`.
ConfigKey checked(std::string path, std::string type, KeyRange check, std::string description, Writer write,
                  std::string default_text = "") {
  ConfigKey k = key(std::move(path), std::move(type), "", std::move(description), write, std::move(default_text));
  k.check = std::move(check);
  return k;
}

ConfigKey mapping(std::string path, std::string description, std::string default_text = "") {
  return key(std::move(path), "mapping", "", std::move(description), nullptr, std::move(default_text));
}

// The key written by to_yaml only where `when` holds, after the keys of a lower `order`.
ConfigKey written_when(ConfigKey k, When when, int order = 0) {
  k.when = when;
  k.order = order;
  return k;
}

// A list of `entries` mappings, each written from the keys under "<path>[]".
ConfigKey listed(ConfigKey k, size_t (*entries)(const WriteScope&), When when) {
  k.entries = entries;
  k.when = when;
  return k;
}

bool anisotropic(const WriteScope& s) {
  return s.c.physics.equation != Equation::acoustic;
}
bool tilted(const WriteScope& s) {
  return s.c.physics.equation == Equation::tti;
}

void add_top(std::vector<ConfigKey>& k) {
  k.push_back(mapping("grid", "the grid, damping zone included", "required"));
  k.push_back(mapping("time", "the time axis"));
  k.push_back(mapping("physics", "the wave equation and its stencil"));
  k.push_back(mapping("model", "the model volumes"));
  k.push_back(mapping("boundary", "the absorbing zone and the free surface"));
  k.push_back(mapping("sources", "the source wavelet and the shots"));
  k.push_back(mapping("receivers", "where the traces are recorded (one of line, grid, list, per_shot)"));
  k.push_back(mapping("output", "what is written, and where"));
  k.push_back(mapping("solver", "how and where the run executes"));
  k.push_back(mapping("checks", "plausibility checks that refuse a run before it starts"));
  k.push_back(written_when(
      mapping("migration", "reverse-time migration (seisrtm migrate); present only in migration configs", "absent"),
      [](const WriteScope& s) { return s.c.migration.has_value(); }));
  k.push_back(key("grid.shape", "[x, y, z]", "positive integers, nx ny nz at most 2^50",
                  "cells [nx, ny, nz], damping zone included", SEISRTM_WRITE3(c.grid.shape), "required"));
  k.push_back(key("grid.spacing", "[x, y, z]", "> 0 m", "m [hx, hy, hz]; a single number for all three axes",
                  SEISRTM_WRITE3(c.grid.spacing), "required"));
  k.push_back(key("grid.origin", "[x, y, z]", "finite m",
                  "m: the survey coordinates of cell (0, 0, 0); every position (config, data, outputs) is in survey "
                  "coordinates",
                  SEISRTM_WRITE3(c.grid.origin), "[0, 0, 0]"));
  k.push_back(checked("time.steps", "integer",
                      with_note(at_least(1, "", "be a positive integer"), "auto in migration configs only"),
                      "number of time steps; auto (migration): the record length of migration.data",
                      SEISRTM_WRITE(c.time.steps), "required"));
  k.push_back(field("time.dt", "number",
                    with_note(above(0, "s", "be a positive time step in s or 'auto'"), "at most the stability limit"),
                    "s; auto: time.safety x the largest stable dt", SEISRTM_FIELD(c.time.dt)));
  k.push_back(field("time.safety", "number", between(0, true, 1, false, "be in (0, 1]"),
                    "fraction of the largest stable dt that time.dt auto uses", SEISRTM_FIELD(c.time.safety)));
  k.push_back(choice<Equation>("physics.equation",
                               "acoustic: isotropic; vti, tti: pseudo-acoustic with a vertical or tilted symmetry axis",
                               SEISRTM_FIELD(c.physics.equation)));
  ConfigKey order =
      field("physics.space_order", "integer", {}, "order of the spatial stencil", SEISRTM_FIELD(c.physics.space_order));
  order.allowed = {"2", "4", "8", "16"};
  k.push_back(order);
}

void add_model(std::vector<ConfigKey>& k) {
  k.push_back(mapping("model.vp", "P velocity, m/s: a number (constant) or a volume mapping", "2000 (constant)"));
  // The anisotropy volumes and clamp_delta are written only where the equation accepts them.
  k.push_back(written_when(mapping("model.epsilon", "Thomsen's epsilon (vti, tti only)", "0 (constant)"), anisotropic));
  k.push_back(written_when(mapping("model.delta", "Thomsen's delta (vti, tti only)", "0 (constant)"), anisotropic));
  k.push_back(written_when(
      mapping("model.theta", "tilt of the symmetry axis from vertical, degrees (tti only)", "0 (constant)"), tilted));
  k.push_back(written_when(
      mapping("model.phi", "azimuth of the symmetry axis from +x towards +y, degrees (tti only)", "0 (constant)"),
      tilted));
  k.push_back(written_when(field("model.clamp_delta", "bool", {},
                                 "vti, tti: where delta > epsilon, set delta to epsilon instead of refusing",
                                 SEISRTM_FIELD(c.model.clamp_delta)),
                           anisotropic));
  const std::string v = "model.<volume>.";
  k.push_back(choice<VolumeType>(v + "type", "how the volume's value varies over the grid",
                                 Field{nullptr, SEISRTM_WRITE(to_text(s.v->type))}));
  k.push_back(key(v + "value", "number", "vp: > 0 m/s", "constant; gradient: the value at z = 0",
                  SEISRTM_WRITE(s.v->value), "2000 (vp), 0 (others)"));
  k.push_back(key(v + "gradient", "number", "", "gradient: d value / dz, per m", SEISRTM_WRITE(s.v->gradient)));
  k.push_back(listed(
      key(v + "layers", "list", "non-empty, tops increasing",
          "layers: {top: m, <volume>: value, dip: [x, y] degrees} from the top down", nullptr, "none"),
      [](const WriteScope& s) { return s.v->layers.size(); },
      [](const WriteScope& s) { return s.v->type == VolumeType::layers; }));
  // to_yaml writes file, dataset and smoothing after the bodies.
  k.push_back(written_when(
      key(v + "file", "string", "",
          "file: an HDF5 file, or a SEG-Y cube (.sgy, .segy); resampled where it has its own origin and spacing",
          SEISRTM_WRITE(s.v->file)),
      nullptr, 1));
  k.push_back(written_when(key(v + "dataset", "string", "", "file: the dataset, shape [nz, ny, nx]",
                               SEISRTM_WRITE(s.v->dataset), "the volume's name"),
                           nullptr, 1));
  k.push_back(written_when(
      checked(
          v + "smoothing", "number", with_note(at_least(0, "m", "be >= 0 m (0 = none)"), "at most the grid's extent"),
          "vp only: standard deviation of a Gaussian smoothing of slowness (0 = none)", SEISRTM_WRITE(s.v->smoothing)),
      [](const WriteScope& s) { return s.volume == "vp"; }, 1));
  k.push_back(listed(
      key(v + "bodies", "list", "radii > 0 m",
          "ellipsoids {center: [x, y, z] m, radii: [a, b, c] m, <volume>: value} laid over the volume", nullptr,
          "none"),
      [](const WriteScope& s) { return s.v->bodies.size(); },
      [](const WriteScope& s) { return !s.v->bodies.empty(); }));
  k.push_back(key(v + "layers[].top", "number", "", "m, depth of the layer's top at the grid's centre",
                  SEISRTM_WRITE(s.v->layers[s.entry].top), "required"));
  k.push_back(key(v + "layers[].<volume>", "number", "vp: > 0 m/s", "the volume's value in the layer",
                  SEISRTM_WRITE(s.v->layers[s.entry].value), "required"));
  KeyRange dip = between(-80, true, 80, true, "hold angles in (-80, 80) degrees", false);
  dip.unit = "degrees";
  k.push_back(checked(v + "layers[].dip", "list", dip, "[dip_x, dip_y]: the top deepens along +x, +y",
                      SEISRTM_WRITE2(s.v->layers[s.entry].dip), "[0, 0]"));
  k.push_back(
      key(v + "bodies[].center", "[x, y, z]", "", "m", SEISRTM_WRITE3(s.v->bodies[s.entry].center), "required"));
  k.push_back(checked(v + "bodies[].radii", "[x, y, z]", above(0, "m", "be positive semi-axes in m"),
                      "m, semi-axes along x, y, z", SEISRTM_WRITE3(s.v->bodies[s.entry].radii), "required"));
  k.push_back(key(v + "bodies[].<volume>", "number", "vp: > 0 m/s", "the volume's value inside",
                  SEISRTM_WRITE(s.v->bodies[s.entry].value), "required"));
}

void add_boundary_sources(std::vector<ConfigKey>& k) {
  // The grid's own bound, (grid.shape - 1) / 2 on every axis, is checked with the space order
  // when the problem is built; here the value must fit the int that holds it.
  k.push_back(field("boundary.damping_width", "integer",
                    with_note(integers(0, std::numeric_limits<int>::max(), "cells",
                                       "cells (and at most (grid.shape - 1) / 2 on every axis)"),
                              "", "(grid.shape - 1) / 2"),
                    "cells of the absorbing zone inside the grid, on every face but a free surface",
                    SEISRTM_FIELD(c.boundary.damping_width)));
  k.push_back(field("boundary.reflection", "number", between(0, true, 1, true, "be in (0, 1)"),
                    "normal-incidence round-trip amplitude attenuation of the zone",
                    SEISRTM_FIELD(c.boundary.reflection)));
  k.push_back(field("boundary.free_surface", "bool", {}, "p = 0 at z = 0", SEISRTM_FIELD(c.boundary.free_surface)));
  k.push_back(mapping("sources.wavelet", "the source time function (not in migration configs)"));
  k.push_back(choice<Interpolation>("sources.interpolation", "how a source off the grid is spread over cells",
                                    SEISRTM_FIELD(c.sources.interpolation)));
  k.push_back(field("sources.first_record", "integer", at_least(1, "", "be a positive integer"),
                    "the field record number of the first shot (SEG-Y bytes 9, /sources/record); the others follow: "
                    "give each part of a survey run in parts its own",
                    SEISRTM_FIELD(c.sources.first_record), "1"));
  k.push_back(key("sources.shots", "list", "inside the grid", "[x, y, z] m, one a shot (not in migration configs)",
                  SEISRTM_WRITE_POINTS(s.c.sources.shots), "required"));
  k.push_back(
      choice<WaveletType>("sources.wavelet.type", "ricker or an HDF5 file", SEISRTM_FIELD(c.sources.wavelet.type)));
  k.push_back(field("sources.wavelet.peak_frequency", "number", above(0, "Hz", "be a positive frequency in Hz"),
                    "Hz (ricker)", SEISRTM_FIELD(c.sources.wavelet.peak_frequency)));
  k.push_back(field("sources.wavelet.delay", "number", {}, "s; auto: 1.2 / peak_frequency",
                    SEISRTM_FIELD(c.sources.wavelet.delay)));
  k.push_back(key("sources.wavelet.file", "string", "", "file: the HDF5 file", SEISRTM_WRITE(c.sources.wavelet.file)));
  k.push_back(field("sources.wavelet.dataset", "string", {}, "file: 1D dataset; optional attribute dt (s) to resample",
                    SEISRTM_FIELD(c.sources.wavelet.dataset)));
}

void add_receivers_output(std::vector<ConfigKey>& k) {
  k.push_back(choice<Interpolation>("receivers.interpolation", "how a receiver off the grid samples cells",
                                    SEISRTM_FIELD(c.receivers.interpolation)));
  // Only the layout in use is written.
  k.push_back(written_when(mapping("receivers.line", "count receivers evenly from start to end", "none"),
                           [](const WriteScope& s) { return s.c.receivers.layout == ReceiverLayout::line; }));
  k.push_back(written_when(mapping("receivers.grid", "count[0] x count[1] receivers from origin along x and y", "none"),
                           [](const WriteScope& s) { return s.c.receivers.layout == ReceiverLayout::grid; }));
  k.push_back(written_when(key("receivers.list", "list", "inside the grid", "[x, y, z] m, one a receiver",
                               SEISRTM_WRITE_POINTS(s.c.receivers.list), "none"),
                           [](const WriteScope& s) { return s.c.receivers.layout == ReceiverLayout::list; }));
  k.push_back(written_when(key(
                               "receivers.per_shot", "list", "inside the grid, one spread a shot of sources.shots",
                               "a spread of its own for each shot: a list of [x, y, z] m lists",
                               [](YAML::Emitter& e, const WriteScope& s) {
                                 e << YAML::BeginSeq;
                                 for (const auto& spread : s.c.receivers.per_shot) {
                                   e << YAML::BeginSeq;
                                   for (const auto& p : spread)
                                     e << YAML::Flow << YAML::BeginSeq << p[0] << p[1] << p[2] << YAML::EndSeq;
                                   e << YAML::EndSeq;
                                 }
                                 e << YAML::EndSeq;
                               },
                               "none"),
                           [](const WriteScope& s) { return s.c.receivers.layout == ReceiverLayout::per_shot; }));
  k.push_back(field("receivers.relative", "bool", {},
                    "line, grid, list: x and y are offsets from each shot's x and y (the spread moves with its shot: "
                    "a towed streamer, a rolling spread); z as given",
                    SEISRTM_FIELD(c.receivers.relative)));
  k.push_back(key("receivers.line.start", "[x, y, z]", "", "m", SEISRTM_WRITE3(c.receivers.line.start), "required"));
  k.push_back(key("receivers.line.end", "[x, y, z]", "", "m", SEISRTM_WRITE3(c.receivers.line.end), "required"));
  k.push_back(checked("receivers.line.count", "integer", at_least(1, "", "be a positive integer"),
                      "receivers on the line", SEISRTM_WRITE(c.receivers.line.count), "required"));
  k.push_back(key("receivers.grid.origin", "[x, y, z]", "", "m, the first receiver",
                  SEISRTM_WRITE3(c.receivers.grid.origin), "required"));
  k.push_back(key("receivers.grid.spacing", "list", "> 0 m where count > 1", "[dx, dy] m",
                  SEISRTM_WRITE2(c.receivers.grid.spacing), "required"));
  k.push_back(checked("receivers.grid.count", "list",
                      with_note(at_least(1, "", "hold positive integers"), "nx ny at most the grid's cells"),
                      "[nx, ny]", SEISRTM_WRITE2(c.receivers.grid.count), "required"));
  k.push_back(field("output.directory", "string", {}, "where the files go", SEISRTM_FIELD(c.output.directory)));
  ConfigKey name =
      field("output.name", "string", {}, "file stem of every output; a migration's default is seisrtm_migration",
            SEISRTM_FIELD(c.output.name));
  name.range = "at most 128 bytes, no '/', not starting with '.'";
  k.push_back(name);
  k.push_back(field("output.snapshot_interval", "integer",
                    at_least(0, "steps", "be >= 0 steps (0 = no snapshots)", false),
                    "steps between wavefield snapshots; 0 = none", SEISRTM_FIELD(c.output.snapshot_interval)));
  k.push_back(field("output.traces", "bool", {}, "write the shot gathers", SEISRTM_FIELD(c.output.traces)));
  k.push_back(field("output.model", "bool", {}, "write the model volumes", SEISRTM_FIELD(c.output.model)));
  k.push_back(field("output.pictures", "bool", {}, "write PNG pictures", SEISRTM_FIELD(c.output.pictures)));
  k.push_back(choice<SegyRevision>(
      "output.segy",
      "run: a SEG-Y copy of every shot gather, <name>_shot_NNNN.sgy; migrate: the image as a SEG-Y cube, "
      "<name>_image.sgy",
      SEISRTM_FIELD(c.output.segy)));
  k.push_back(field("output.resume", "bool", {},
                    "keep a journal, <name>.resume, so that the same command resumes after a kill (run: the "
                    "finished shots, as many bytes again as the outputs; migrate: the stack); false: none",
                    SEISRTM_FIELD(c.output.resume)));
}

void add_solver_checks(std::vector<ConfigKey>& k) {
  k.push_back(choice<SolverBackend>("solver.backend", "auto: cuda where a GPU is usable, else cpu",
                                    SEISRTM_FIELD(c.solver.backend)));
  k.push_back(field("solver.threads", "integer",
                    with_note(integers(0, max_threads(), "",
                                       "(0 = all cores; at most 4 per hardware thread of this machine, and at least "
                                       "256)"),
                              "", "max(256, 4 per hardware thread)"),
                    "CPU threads; 0 = all", SEISRTM_FIELD(c.solver.threads)));
  k.push_back(choice<SolverKernel>("solver.kernel", "cuda: the stencil kernel; auto = tma (smem or naive without TMA)",
                                   SEISRTM_FIELD(c.solver.kernel)));
  // At most 2^20 planes (more than any grid holds along z): the launches count z blocks as
  // (planes + z_block - 1) / z_block in int.
  k.push_back(field("solver.z_block", "integer", integers(0, 1 << 20, "planes", "planes (0 = the whole column)"),
                    "cuda: planes per block along z; 0 = the whole column", SEISRTM_FIELD(c.solver.z_block)));
  k.push_back(choice<SolverMemory>("solver.memory", "cuda: plain or compressible device memory",
                                   SEISRTM_FIELD(c.solver.memory)));
  k.push_back(choice<SolverStorage>("solver.storage", "fp16: wavefields and model in 16 bits, arithmetic in fp32",
                                    SEISRTM_FIELD(c.solver.storage)));
  k.push_back(field("solver.graphs", "bool", {}, "cuda: the time loop as CUDA graphs", SEISRTM_FIELD(c.solver.graphs)));
  k.push_back(field("solver.device", "integer", integers(0, 1023, "", "a CUDA device index (seisrtm info lists them)"),
                    "cuda: the device index (CUDA_VISIBLE_DEVICES applies)", SEISRTM_FIELD(c.solver.device)));
  k.push_back(choice<Decomposition>("solver.decomposition",
                                    "under mpirun: none = shots across ranks; z = each shot over all ranks in z slabs",
                                    SEISRTM_FIELD(c.solver.decomposition)));
  k.push_back(field("checks.physical_ranges", "bool", {},
                    "refuse vp outside [100, 10000] m/s and fewer than 2 points a wavelength; false: warn",
                    SEISRTM_FIELD(c.checks.physical_ranges)));
}

bool segy_data(const WriteScope& s) {
  return s.c.migration->wavelet.has_value();
}
bool ricker(const WriteScope& s) {
  return s.c.migration->wavelet->type == WaveletType::ricker;
}
bool not_ricker(const WriteScope& s) {
  return !ricker(s);
}

// A count of levels or `auto`, held as 0 (migration.checkpoint_interval and
// coarse_checkpoint_interval).
template <long long MigrationConfig::*M>
Field levels_or_auto() {
  return {[](io::YamlReader& r, const ConfigKey& k, Config& c) {
            const std::string leaf = k.path.substr(k.path.rfind('.') + 1);
            if (r.has(leaf) && r.node()[leaf].IsScalar() && r.node()[leaf].Scalar() == "auto")
              (*c.migration).*M = 0;
            else
              read_value(r, k, (*c.migration).*M);
          },
          [](YAML::Emitter& e, const WriteScope& s) {
            if ((*s.c.migration).*M > 0)
              e << (*s.c.migration).*M;
            else
              e << "auto";
          }};
}

void add_migration(std::vector<ConfigKey>& k) {
  k.push_back(key("migration.data", "string", "", "the HDF5 file of seisrtm run, or SEG-Y (.sgy, .segy; a glob)",
                  SEISRTM_WRITE(c.migration->data), "required"));
  k.push_back(
      choice<MigrationMode>("migration.mode", "how the source field is rebuilt", SEISRTM_FIELD(c.migration->mode)));
  k.push_back(checked(
      "migration.image_interval", "integer", at_least(1, "step", "be >= 1 step or auto"),
      "steps between imaging time levels; auto: the largest k with 1 / (k dt) > 2 f_max",
      [](YAML::Emitter& e, const WriteScope& s) {
        // 0: auto.
        if (s.c.migration->image_interval > 0)
          e << s.c.migration->image_interval;
        else
          e << "auto";
      },
      "auto"));
  k.push_back(field("migration.illumination_epsilon", "number",
                    between(0, true, 1, true, "be in (0, 1) (a fraction of the largest illumination)"),
                    "stabiliser, fraction of the largest illumination",
                    SEISRTM_FIELD(c.migration->illumination_epsilon)));
  // to_yaml writes depth_slice after store, then wavelet, segy_headers and mute.
  k.push_back(written_when(
      mapping("migration.mute", "direct-arrival mute of the observed data", "none"),
      [](const WriteScope& s) { return s.c.migration->mute.enabled; }, 4));
  k.push_back(written_when(field("migration.depth_slice", "number", at_least(0, "m", "be >= 0 m or auto", false),
                                 "m; auto: the depth of the strongest image", SEISRTM_FIELD(c.migration->depth_slice)),
                           nullptr, 1));
  k.push_back(choice<DataFilter>("migration.data_filter",
                                 "(-i w)^alpha before back-propagation; auto picks by the receivers' spread",
                                 SEISRTM_FIELD(c.migration->data_filter)));
  k.push_back(choice<ImagingCondition>(
      "migration.imaging_condition",
      "correlation: sum of S R; isic: sum of (1 / v^2) dS/dt dR/dt - grad S . grad R, without the backscatter of "
      "sharp contrasts (acoustic, boundary mode)",
      SEISRTM_FIELD(c.migration->imaging_condition)));
  k.push_back(choice<FusedStep>("migration.fused",
                                "GPU, tma, space order <= 8: one fused kernel per backward step (true) or separate "
                                "kernels (false); auto: fused in fp32 storage, separate in fp16",
                                SEISRTM_FIELD(c.migration->fused)));
  k.push_back(choice<StoreLocation>("migration.store",
                                    "GPU, boundary mode: where the boundary store lives; auto: device when it fits",
                                    SEISRTM_FIELD(c.migration->store)));
  k.push_back(choice<Reconstruction>(
      "migration.reconstruction",
      "boundary mode: every level's shell kept (store) or checkpoints and one segment's shells re-run (checkpoint); "
      "auto: the store where it fits (GPU: device or host), else checkpoints",
      SEISRTM_FIELD(c.migration->reconstruction)));
  k.push_back(choice<StorePrecision>(
      "migration.store_precision",
      "boundary mode, fp32 storage: the store's element; bf16 (8 significant bits) and fp16 (11, over the shot's "
      "field scale) halve its bytes",
      SEISRTM_FIELD(c.migration->store_precision)));
  k.push_back(field("migration.checkpoint_interval", "integer", at_least(1, "level", "be >= 1 level or auto"),
                    "reconstruction checkpoint: levels between checkpoints; auto: the fewest bytes held, about "
                    "sqrt(N state / shell)",
                    levels_or_auto<&MigrationConfig::checkpoint_interval>(), "auto"));
  k.push_back(field("migration.coarse_checkpoint_interval", "integer", at_least(1, "level", "be >= 1 level or auto"),
                    "reconstruction checkpoint: levels between the group checkpoints of two levels (a multiple of "
                    "checkpoint_interval; about two more forward passes instead of one); auto: one level where its "
                    "checkpoints fit the host, else the fewest checkpoints",
                    levels_or_auto<&MigrationConfig::coarse_checkpoint_interval>(), "auto"));
  k.push_back(choice<CheckpointLocation>(
      "migration.checkpoint_location",
      "reconstruction checkpoint, GPU: host (pinned memory), disk (files in checkpoint_directory) or auto: the host "
      "in one level, else in two, else the checkpoints beyond what the host holds in checkpoint_directory",
      SEISRTM_FIELD(c.migration->checkpoint_location)));
  k.push_back(field("migration.checkpoint_directory", "string", {},
                    "a directory for checkpoints on disk (checkpoint_location disk, or auto where the host holds too "
                    "few); files removed at the end",
                    SEISRTM_FIELD(c.migration->checkpoint_directory), "none"));
  // Both only with SEG-Y data, the only data with a migration.wavelet.
  k.push_back(written_when(
      mapping("migration.segy_headers", "SEG-Y data only: trace header bytes that carry the geometry"), segy_data, 3));
  k.push_back(
      written_when(mapping("migration.wavelet", "SEG-Y data only (required then): the source wavelet of the data",
                           "required for SEG-Y"),
                   segy_data, 2));
  k.push_back(written_when(
      mapping("migration.gathers", "subsurface-offset and angle gathers at locations of the image (velocity analysis)",
              "none"),
      [](const WriteScope& s) { return s.c.migration->gathers.enabled(); }, 5));
  k.push_back(field("migration.gathers.offsets", "integer",
                    integers(1, 512, "cells", "be the largest half-offset in cells along x"),
                    "the largest subsurface half-offset h in cells along x: gathers of S(x - h) R(x + h) for "
                    "h = -offsets..offsets",
                    SEISRTM_FIELD(c.migration->gathers.offsets), "required"));
  k.push_back(field("migration.gathers.x_every", "integer", at_least(1, "cells", "be >= 1 cell"),
                    "a gather location every x_every-th x cell of the imaged box, from its first",
                    SEISRTM_FIELD(c.migration->gathers.x_every)));
  k.push_back(field("migration.gathers.y_every", "integer", at_least(1, "cells", "be >= 1 cell"),
                    "and every y_every-th y cell", SEISRTM_FIELD(c.migration->gathers.y_every)));
  k.push_back(field("migration.gathers.max_angle", "number", between(0, true, 80, false, "be in (0, 80] degrees"),
                    "degrees: the largest reflection angle of the angle gathers",
                    SEISRTM_FIELD(c.migration->gathers.max_angle)));
  // At least 0.1 degrees: at most 801 angle traces a location (each a depth trace of the host's
  // angle gathers, counted in the host memory plan).
  k.push_back(field("migration.gathers.angle_step", "number", at_least(0.1, "degrees", "be >= 0.1 degrees"),
                    "degrees between the angle gathers' traces", SEISRTM_FIELD(c.migration->gathers.angle_step)));
  k.push_back(field("migration.mute.velocity", "number", above(0, "m/s", "be a positive velocity in m/s"),
                    "m/s of the direct arrival", SEISRTM_FIELD(c.migration->mute.velocity), "required"));
  k.push_back(field("migration.mute.t0", "number", at_least(0, "s", "be >= 0 s or auto", false),
                    "s; auto: twice the peak time of the wavelet", SEISRTM_FIELD(c.migration->mute.t0), "auto"));
  k.push_back(field("migration.mute.taper", "number", at_least(0, "s", "be >= 0 s or auto", false),
                    "s; auto: half the peak time of the wavelet", SEISRTM_FIELD(c.migration->mute.taper), "auto"));
}

void add_segy_headers(std::vector<ConfigKey>& k) {
  const KeyRange range = with_note(integers(1, 240, "", "the first byte (1-based) of a trace header field"),
                                   "the first byte of a SEG-Y trace header field");
  auto byte = [&](const char* name, const char* what, Field f) {
    k.push_back(field(std::string("migration.segy_headers.") + name, "integer", range, what, f));
  };
  byte("shot", "field record number: traces are grouped into shots by it",
       SEISRTM_FIELD(c.migration->segy_headers.shot));
  byte("source_x", "source x", SEISRTM_FIELD(c.migration->segy_headers.source_x));
  byte("source_y", "source y", SEISRTM_FIELD(c.migration->segy_headers.source_y));
  byte("source_depth", "source depth below the surface, positive down",
       SEISRTM_FIELD(c.migration->segy_headers.source_depth));
  byte("source_elevation", "surface elevation at the source",
       SEISRTM_FIELD(c.migration->segy_headers.source_elevation));
  byte("receiver_x", "receiver x", SEISRTM_FIELD(c.migration->segy_headers.receiver_x));
  byte("receiver_y", "receiver y", SEISRTM_FIELD(c.migration->segy_headers.receiver_y));
  byte("receiver_elevation", "receiver group elevation (z = -elevation)",
       SEISRTM_FIELD(c.migration->segy_headers.receiver_elevation));
  byte("coordinate_scalar", "scalar applied to x and y", SEISRTM_FIELD(c.migration->segy_headers.coordinate_scalar));
  byte("elevation_scalar", "scalar applied to elevations and depths",
       SEISRTM_FIELD(c.migration->segy_headers.elevation_scalar));
  k.push_back(choice<WaveletType>("migration.wavelet.type", "ricker or an HDF5 file",
                                  SEISRTM_FIELD(c.migration->wavelet->type)));
  // A ricker's keys, or a file's.
  k.push_back(
      written_when(field("migration.wavelet.peak_frequency", "number", above(0, "Hz", "be a positive frequency in Hz"),
                         "Hz (ricker)", SEISRTM_FIELD(c.migration->wavelet->peak_frequency)),
                   ricker));
  k.push_back(written_when(field("migration.wavelet.delay", "number", {}, "s; auto: 1.2 / peak_frequency",
                                 SEISRTM_FIELD(c.migration->wavelet->delay)),
                           ricker));
  k.push_back(written_when(key("migration.wavelet.file", "string", "", "file: the HDF5 file",
                               SEISRTM_WRITE(c.migration->wavelet->file), "required for type file"),
                           not_ricker));
  k.push_back(
      written_when(field("migration.wavelet.dataset", "string", {}, "file: 1D dataset; optional attribute dt (s)",
                         SEISRTM_FIELD(c.migration->wavelet->dataset)),
                   not_ricker));
}

#undef SEISRTM_WRITE
#undef SEISRTM_WRITE3
#undef SEISRTM_WRITE2
#undef SEISRTM_WRITE_POINTS
#undef SEISRTM_FIELD

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
  k.write(e, WriteScope{defaults, "vp", &defaults.model.vp});
  const std::string s = e.c_str();
  return s.empty() ? "\"\"" : s;
}

// The model volume model.<name>.
const VolumeConfig& volume_of(const Config& c, const std::string& name) {
  const ModelConfig& m = c.model;
  return name == "vp"        ? m.vp
         : name == "epsilon" ? m.epsilon
         : name == "delta"   ? m.delta
         : name == "theta"   ? m.theta
                             : m.phi;
}

// One key and its value: a value through its writer, a list of mappings entry by entry, a
// mapping through its keys (a model volume's are those of model.<volume>).
void write_key(YAML::Emitter& e, const WriteScope& s, const ConfigKey& k) {
  const std::string name = name_of(k.path);
  e << YAML::Key << (name == "<volume>" ? s.volume : name) << YAML::Value;
  if (k.write) {
    k.write(e, s);
  } else if (k.entries) {
    e << YAML::BeginSeq;
    for (size_t i = 0, n = k.entries(s); i < n; ++i) {
      WriteScope entry = s;
      entry.entry = i;
      e << YAML::Flow << YAML::BeginMap;
      write_section(e, entry, k.path + "[]");
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  } else if (parent_of(k.path) == "model") {
    const WriteScope volume{s.c, name, &volume_of(s.c, name)};
    e << YAML::BeginMap;
    write_section(e, volume, "model.<volume>");
    e << YAML::EndMap;
  } else {
    e << YAML::BeginMap;
    write_section(e, s, k.path);
    e << YAML::EndMap;
  }
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

const ConfigKey& config_key(const std::string& path) {
  for (const auto& k : config_keys())
    if (k.path == path) return k;
  throw Error("the key table has no key '" + path + "'");
}

void check_range(const ConfigKey& k, long double v, const std::string& path) {
  const KeyRange& r = k.check;
  if (r.must.empty()) return;
  const long double lo = r.lo, hi = r.hi;
  if ((r.lo_open ? v > lo : v >= lo) && (r.hi_open ? v < hi : v <= hi)) return;
  // An entry of a list of integers (receivers.grid.count) is printed as an integer too.
  const bool integer = k.type == "integer" || (k.type == "list" && std::floor(v) == v);
  auto text = [&](long double x) {
    return integer ? std::to_string(static_cast<long long>(x)) : number_text(static_cast<double>(x));
  };
  const std::string bounds = r.bounds ? "be an integer in [" + text(lo) + ", " + text(hi) + "] " : "";
  throw Error("config key '" + path + "' must " + bounds + r.must + (r.got ? ", got " + text(v) : ""));
}

std::string range_text(const ConfigKey& k) {
  const KeyRange& r = k.check;
  if (r.must.empty()) return k.type == "integer" && !k.allowed.empty() ? or_list(k.allowed) : k.range;
  const bool integer = k.type == "integer";
  auto num = [&](double x) { return integer ? std::to_string(static_cast<long long>(x)) : number_text(x); };
  const bool has_lo = std::isfinite(r.lo), has_hi = std::isfinite(r.hi);
  const std::string hi = r.hi_text.empty() ? num(r.hi) : r.hi_text;
  std::string s;
  if (has_lo && has_hi)
    s = integer ? num(r.lo) + " to " + hi : (r.lo_open ? "(" : "[") + num(r.lo) + ", " + hi + (r.hi_open ? ")" : "]");
  else if (has_lo)
    s = (r.lo_open ? "> " : ">= ") + num(r.lo);
  else if (has_hi)
    s = (r.hi_open ? "< " : "<= ") + hi;
  if (!r.unit.empty()) s += " " + r.unit;
  if (!r.note.empty()) s += ", " + r.note;
  return s;
}

void read_section(io::YamlReader& r, Config& c, const std::string& section) {
  r.allow_only(keys_under(section));
  for (const auto& k : config_keys())
    if (k.read && parent_of(k.path) == section) k.read(r, k, c);
}

std::vector<std::string> keys_under(const std::string& section) {
  std::vector<std::string> out;
  for (const auto& k : config_keys())
    if (parent_of(k.path) == section) out.push_back(name_of(k.path));
  return out;
}

void write_section(YAML::Emitter& e, const WriteScope& s, const std::string& section) {
  std::vector<const ConfigKey*> keys;
  for (const auto& k : config_keys())
    if (parent_of(k.path) == section && (!k.when || k.when(s))) keys.push_back(&k);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const ConfigKey* a, const ConfigKey* b) { return a->order < b->order; });
  for (const ConfigKey* k : keys) write_key(e, s, *k);
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
      const std::string allowed = k.allowed.empty() || k.type == "integer" ? range_text(k) : joined(k.allowed, " \\| ");
      s << "| `" << k.path << "` | " << k.type << " | `" << default_text(k, defaults) << "` | " << allowed << " | "
        << k.description << " |\n";
    }
  }
  return s.str();
}

}  // namespace seisrtm
