#pragma once
// The one table of configuration keys: for each key its path, type, allowed values (an enum's
// from its name table), valid range and a one-line description, the writer of its value (and
// when it is written), and the reader of every key whose reading depends on no other key. The
// parser takes each mapping's valid keys from it and reads and checks keys through it, to_yaml
// writes the whole config through it, and docs/CONFIG.md is generated from it
// (seisrtm_config_reference).
#include <yaml-cpp/yaml.h>

#include <limits>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/yaml_reader.hpp"

namespace seisrtm {

// The valid values of a number or integer key: an interval, checked when the key is read and
// written into the reference. An empty `must` means no interval.
struct KeyRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  std::string unit;  // after the interval in the reference ("Hz", "m/s")
  // The error's text after "must "; with `bounds` it follows "be an integer in [lo, hi] ".
  std::string must;
  bool bounds = false;
  bool got = true;  // the error ends with ", got <value>"
  // The reference's text for hi where the checked value depends on the machine or on another
  // key (checked later), and the reference's note of such conditions.
  std::string hi_text, note;
};

// What a writer writes from: the config and, inside model.<volume>, the volume's name and its
// config; inside an entry of a list ("[]"), the entry's index.
struct WriteScope {
  const Config& c;
  std::string volume;
  const VolumeConfig* v = nullptr;
  size_t entry = 0;
};

struct ConfigKey {
  // Dotted path from the top level. "<volume>" stands for each of model.vp, model.epsilon, ...
  // and "[]" for every entry of a list.
  std::string path;
  std::string type;                  // integer, number, bool, string, enum, [x, y, z], list, mapping
  std::vector<std::string> allowed;  // enum keys: the name table's texts
  std::string range;                 // what is valid where `check` holds no interval; else empty
  std::string description;
  // Writes the key's value as to_yaml does; nullptr for a mapping (to_yaml writes its keys) and
  // for a list of mappings (`entries` of them, each written from the keys under "<path>[]").
  void (*write)(YAML::Emitter&, const WriteScope&) = nullptr;
  // The reference's default where it is not what `write` gives for a default Config (required,
  // none, per volume); empty: that.
  std::string default_text;
  // Keys with one place in Config: reads the key, when present, from the reader of its mapping
  // into that place, checked against `check`; absent, the place keeps Config's default.
  void (*read)(io::YamlReader&, const ConfigKey&, Config&) = nullptr;
  KeyRange check;
  // to_yaml writes the key only where `when` holds (nullptr: always), and the keys of a mapping
  // by ascending `order`, table order among equals.
  bool (*when)(const WriteScope&) = nullptr;
  int order = 0;
  size_t (*entries)(const WriteScope&) = nullptr;
};

// Every key, mappings before their children, in the order the parser lists valid keys.
const std::vector<ConfigKey>& config_keys();

// The entry of `path`; throws when the table has none.
const ConfigKey& config_key(const std::string& path);

// Throws the entry's error, naming `path` (an entry of a list, a volume's key), where `v` is
// outside its interval. long double: exact for every 64-bit integer.
void check_range(const ConfigKey& k, long double v, const std::string& path);

// The reference's text of the entry's valid values: its interval, or `range`.
std::string range_text(const ConfigKey& k);

// Reads the keys under `section` that have a reader, in table order, from `r`, the reader of
// that mapping, after refusing keys the table does not list there.
void read_section(io::YamlReader& r, Config& c, const std::string& section);

// The names of the keys directly under `section` ("" = the top level), in table order.
std::vector<std::string> keys_under(const std::string& section);

// Writes the keys under `section` where their `when` holds, by `order`, as `key: value` pairs
// into an open mapping; a mapping key with its own keys, a list of mappings with its entries'.
void write_section(YAML::Emitter& e, const WriteScope& s, const std::string& section);

// docs/CONFIG.md: every key by section with its type, default, allowed values and description.
std::string config_reference_markdown();

}  // namespace seisrtm
