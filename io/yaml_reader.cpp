#include "io/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/error.hpp"

namespace seisrtm::io {

namespace {
std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}
}  // namespace

YamlReader::YamlReader(YAML::Node node, std::string path) : node_(std::move(node)), path_(std::move(path)) {
  if (node_ && !node_.IsNull() && !node_.IsMap())
    throw Error("config key '" + path_ + "' must be a mapping of keys, got " + describe(node_));
}

std::string YamlReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool YamlReader::has(const std::string& key) const {
  return node_ && node_.IsMap() && node_[key] && !node_[key].IsNull();
}

YamlReader YamlReader::child(const std::string& key) {
  if (!has(key)) return YamlReader(YAML::Node(YAML::NodeType::Map), key_path(key));
  return YamlReader(node_[key], key_path(key));
}

void YamlReader::allow_only(const std::vector<std::string>& keys) const {
  if (!node_ || !node_.IsMap()) return;
  for (const auto& kv : node_) {
    const std::string k = kv.first.as<std::string>();
    bool known = false;
    for (const auto& a : keys) known = known || a == k;
    if (!known) {
      std::string valid;
      for (const auto& a : keys) valid += (valid.empty() ? "" : ", ") + a;
      throw Error("config key '" + key_path(k) + "' is unknown; valid keys" +
                  (path_.empty() ? "" : " under '" + path_ + "'") + ": " + valid);
    }
  }
}

double YamlReader::as_number(const YAML::Node& n, const std::string& path) {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v))
    throw Error("config key '" + path + "' must be a finite number, got " + describe(n));
  return v;
}

std::array<double, 3> YamlReader::as_triple(const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence() || n.size() != 3)
    throw Error("config key '" + path + "' must be a list of 3 numbers [x, y, z], got " + describe(n));
  std::array<double, 3> out{};
  for (int i = 0; i < 3; ++i) out[i] = as_number(n[i], path + "[" + std::to_string(i) + "]");
  return out;
}

long long YamlReader::as_integer(const YAML::Node& n, const std::string& path) {
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  const size_t sign = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  if (!n.IsScalar() || s.size() == sign || s.find_first_not_of("0123456789", sign) != std::string::npos)
    throw Error("config key '" + path + "' must be an integer, got " + describe(n));
  if (s.size() > sign + 1 && s[sign] == '0') {
    const size_t nz = s.find_first_not_of('0', sign);
    throw Error("config key '" + path + "' = " + s + " has a leading zero; write " + s.substr(0, sign) +
                (nz == std::string::npos ? "0" : s.substr(nz)) +
                " (YAML reads leading-zero integers as octal, so they are refused)");
  }
  long long v = 0;
  const char* first = s.data() + (s[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw Error("config key '" + path + "' = " + s + " is out of range: integers must lie within " +
                "+-9223372036854775807 (64 bits), and each key has its own valid range");
  return v;
}

double YamlReader::number(const std::string& key, double fallback) {
  return has(key) ? as_number(node_[key], key_path(key)) : fallback;
}

long long YamlReader::integer(const std::string& key, long long fallback) {
  return has(key) ? as_integer(node_[key], key_path(key)) : fallback;
}

long long YamlReader::integer_in(const std::string& key, long long fallback, long long lo, long long hi,
                                 const std::string& meaning) {
  const long long v = integer(key, fallback);
  if (v < lo || v > hi)
    throw Error("config key '" + key_path(key) + "' must be an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "] " + meaning + ", got " + std::to_string(v));
  return v;
}

bool YamlReader::boolean(const std::string& key, bool fallback) {
  if (!has(key)) return fallback;
  bool v = false;
  const YAML::Node n = node_[key];
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
    throw Error("config key '" + key_path(key) + "' must be true or false, got " + describe(n));
  return v;
}

std::string YamlReader::text(const std::string& key, const std::string& fallback) {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (!n.IsScalar()) throw Error("config key '" + key_path(key) + "' must be a string, got " + describe(n));
  return n.Scalar();
}

std::string YamlReader::choice(const std::string& key, const std::string& fallback,
                               const std::vector<std::string>& choices) {
  std::string v = text(key, fallback);
  // A choice of true and false (migration.fused, once a bool) takes YAML's other spellings of a
  // bool as well (yes, on, True, ...), as the bool it was did.
  const auto offers = [&](const char* c) { return std::find(choices.begin(), choices.end(), c) != choices.end(); };
  if (bool b = false; has(key) && offers("true") && offers("false") && YAML::convert<bool>::decode(node_[key], b))
    v = b ? "true" : "false";
  for (const auto& c : choices)
    if (c == v) return v;
  std::string valid;
  for (const auto& c : choices) valid += (valid.empty() ? "" : " | ") + c;
  throw Error("config key '" + key_path(key) + "' must be one of " + valid + ", got '" + v + "'");
}

std::array<double, 3> YamlReader::triple(const std::string& key, std::array<double, 3> fallback, bool broadcast) {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (broadcast && n.IsScalar()) {
    const double v = as_number(n, key_path(key));
    return {v, v, v};
  }
  return as_triple(n, key_path(key));
}

std::array<long long, 3> YamlReader::int_triple(const std::string& key, std::array<long long, 3> fallback) {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (!n.IsSequence() || n.size() != 3)
    throw Error("config key '" + key_path(key) + "' must be a list of 3 integers [nx, ny, nz], got " + describe(n));
  std::array<long long, 3> out{};
  for (int i = 0; i < 3; ++i) out[i] = as_integer(n[i], key_path(key) + "[" + std::to_string(i) + "]");
  return out;
}

}  // namespace seisrtm::io
