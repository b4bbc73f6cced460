#pragma once
// The one table of configuration keys: for each key its path, type, allowed values (an enum's
// from its name table), range and a one-line description, and for the keys with one place in
// Config the writer of its resolved value. The parser takes each mapping's valid keys from it,
// to_yaml writes those keys through it, and docs/CONFIG.md is generated from it
// (seisrtm_config_reference).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "io/config.hpp"

namespace seisrtm {

struct ConfigKey {
  // Dotted path from the top level. "<volume>" stands for each of model.vp, model.epsilon, ...
  // and "[]" for every entry of a list.
  std::string path;
  std::string type;                  // integer, number, bool, string, enum, [x, y, z], list, mapping
  std::vector<std::string> allowed;  // enum keys: the name table's texts
  std::string range;                 // numbers: the valid interval, units included; else empty
  std::string description;
  // Keys with one place in Config: writes its value as to_yaml does; else nullptr.
  void (*write)(YAML::Emitter&, const Config&) = nullptr;
  // The reference's default where it is not what `write` gives for a default Config (required,
  // none, per volume); empty: that.
  std::string default_text;
};

// Every key, mappings before their children, in the order the parser lists valid keys.
const std::vector<ConfigKey>& config_keys();

// The names of the keys directly under `section` ("" = the top level), in table order.
std::vector<std::string> keys_under(const std::string& section);

// Writes the keys under `section` that have a writer, in table order, as `key: value` pairs
// into an open mapping.
void write_section(YAML::Emitter& e, const Config& c, const std::string& section);

// docs/CONFIG.md: every key by section with its type, default, allowed values and description.
std::string config_reference_markdown();

}  // namespace seisrtm
