#pragma once
// Shared setups of the tests: the surveys in tests/data/*.yaml and the overrides that make a
// test's variant of one. An override replaces a top-level key (its line and any indented lines
// below it) where the key stands, or appends it, so a variant's text is the file's text with
// that key changed: the same grid, steps and positions as the file unless a test says otherwise.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace seisrtm::test {

// A top-level key and its value as YAML text: "{steps: 60}", "2000", or a block that starts
// with a newline ("\n  data: x.h5\n  mute: {velocity: 2000}").
using Override = std::pair<std::string, std::string>;

// tests/data/<name> (SEISRTM_SOURCE_DIR: tests/CMakeLists.txt).
inline std::filesystem::path fixture_path(const std::string& name) {
  return std::filesystem::path(SEISRTM_SOURCE_DIR) / "tests" / "data" / name;
}

// `yaml` with top-level key `key` set to `value`: its line (and the indented lines of its
// block) replaced in place, or appended when `yaml` has no such key.
inline std::string with_key(std::string yaml, const std::string& key, const std::string& value) {
  const std::string line = key + ":" + (value.empty() || value.front() == '\n' ? "" : " ") + value + "\n";
  size_t at = 0;  // where the key's line starts
  if (yaml.compare(0, key.size() + 1, key + ":") != 0) {
    at = yaml.find("\n" + key + ":");
    if (at != std::string::npos) ++at;
  }
  if (at == std::string::npos) {
    if (!yaml.empty() && yaml.back() != '\n') yaml += '\n';
    return yaml + line;
  }
  size_t end = yaml.find('\n', at);
  end = end == std::string::npos ? yaml.size() : end + 1;
  while (end < yaml.size() && yaml[end] == ' ') {  // the block's indented lines
    const size_t next = yaml.find('\n', end);
    end = next == std::string::npos ? yaml.size() : next + 1;
  }
  return yaml.replace(at, end - at, line);
}

// The text of tests/data/<name> with `overrides` applied in order. Throws when the file cannot
// be read (at static initialisation too: the message names the file).
inline std::string fixture(const std::string& name, const std::vector<Override>& overrides = {}) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the test fixture " + fixture_path(name).string());
  std::string yaml{std::istreambuf_iterator<char>(in), {}};
  for (const auto& [key, value] : overrides) yaml = with_key(std::move(yaml), key, value);
  return yaml;
}

// A small valid survey (32 x 30 x 28 cells of 10 m, 40 steps, one shot, 8 receivers, snapshots
// every 20 steps), output name "small": tests/data/small.yaml.
inline std::string small_survey(const std::vector<Override>& overrides = {}) {
  return fixture("small.yaml", overrides);
}

// small_survey's setup on 64^3 cells with the shot in the middle, on the CPU backend: long
// enough a run to be stopped by a signal.
inline std::string small64_survey(const std::vector<Override>& overrides = {}) {
  return fixture("small64.yaml", overrides);
}

// Two layers (2000 | 2800 m/s at z 160 m) under a free surface on 36 x 30 x 32 cells, 200 steps,
// one shot and 12 receivers at z 20 m; output name "data", no pictures.
inline std::string two_layers(const std::vector<Override>& overrides = {}) {
  return fixture("two_layers.yaml", overrides);
}

// A migration on two_layers' grid in the constant 2000 m/s of its top layer: `overrides` add
// output and migration (e.g. two_layers_migration({{"output", "{name: rtm}"}, {"migration", ...}})).
inline std::string two_layers_migration(const std::vector<Override>& overrides = {}) {
  return fixture("two_layers_migration.yaml", overrides);
}

// " --set k=v" for each of `sets`, in order: the command-line form of the overrides.
inline std::string set_args(const std::vector<Override>& sets) {
  std::string s;
  for (const auto& [k, v] : sets) s += " --set " + k + "=" + v;
  return s;
}

}  // namespace seisrtm::test
