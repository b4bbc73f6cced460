#pragma once
// Checked access to a YAML tree: every read names its full key path in errors, every key read
// is remembered, and keys nobody read are reported as unknown with the valid alternatives.
#include <yaml-cpp/yaml.h>

#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace seisrtm::io {

class YamlReader {
 public:
  YamlReader(YAML::Node node, std::string path);

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  bool has(const std::string& key) const;
  // A child mapping; an absent key gives an empty mapping (all defaults).
  YamlReader child(const std::string& key);
  // The keys this reader accepts: any other key is an error naming these.
  void allow_only(const std::vector<std::string>& keys) const;

  std::string key_path(const std::string& key) const;

  double number(const std::string& key, double fallback);
  // A decimal 64-bit integer (as_integer); integer_in also checks lo <= value <= hi and names
  // `meaning` (units, special values) in its message.
  long long integer(const std::string& key, long long fallback);
  long long integer_in(const std::string& key, long long fallback, long long lo, long long hi,
                       const std::string& meaning);
  bool boolean(const std::string& key, bool fallback);
  std::string text(const std::string& key, const std::string& fallback);
  // A string restricted to one of `choices`.
  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& choices);
  // A list of exactly N numbers; a scalar is accepted and repeated when `broadcast`.
  std::array<double, 3> triple(const std::string& key, std::array<double, 3> fallback, bool broadcast);
  std::array<long long, 3> int_triple(const std::string& key, std::array<long long, 3> fallback);

  // Element parsers for values that are not under a key (list entries).
  static std::array<double, 3> as_triple(const YAML::Node& n, const std::string& path);
  static double as_number(const YAML::Node& n, const std::string& path);
  // Integers are decimal and 64-bit: [+-]digits without a leading zero. yaml-cpp alone would
  // read 010 as octal 8 and 0x10 as 16, and a value beyond the target type would be truncated
  // by the caller's cast; here a leading zero, any other form and anything beyond 64 bits is
  // refused with the key's path.
  static long long as_integer(const YAML::Node& n, const std::string& path);

 private:
  YAML::Node node_;
  std::string path_;
};

}  // namespace seisrtm::io
