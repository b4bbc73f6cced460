#include "solver/identity.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace seisrtm {

std::string hash_text(const void* data, std::size_t n) {
  Fnv f;
  f.add(data, n);
  char t[32];
  std::snprintf(t, sizeof t, "%016llx", static_cast<unsigned long long>(f.value()));
  return t;
}

Config bit_deciding_config(Config c) {
  c.source_file.clear();
  for (VolumeConfig* v : {&c.model.vp, &c.model.epsilon, &c.model.delta, &c.model.theta, &c.model.phi}) v->file.clear();
  c.sources.wavelet.file.clear();
  const SolverConfig keep = c.solver;
  c.solver = SolverConfig{};
  c.solver.kernel = keep.kernel, c.solver.z_block = keep.z_block, c.solver.storage = keep.storage;
  return c;
}

std::string inputs_identity(const Problem& pb) {
  std::string id;
  for (const auto& [name, v] : std::vector<std::pair<const char*, const std::vector<float>*>>{
           {"vp", &pb.vp}, {"epsilon", &pb.epsilon}, {"delta", &pb.delta}, {"theta", &pb.theta}, {"phi", &pb.phi}})
    if (!v->empty()) id += std::string("model ") + name + ": " + data_hash(*v) + "\n";
  id += "wavelet: " + data_hash(pb.wavelet) + "\n";
  std::vector<double> where;
  for (long long s = 0; s < pb.shot_count(); ++s) {
    for (const auto& q : pb.shots[s].position) where.insert(where.end(), q.begin(), q.end());
    for (const auto& q : pb.receivers_of(s).position) where.insert(where.end(), q.begin(), q.end());
  }
  id += "sources and receivers: " + data_hash(where) + "\n";
  return id;
}

std::string backend_kind(const std::string& name) {
  return name.substr(0, std::min(name.find(" ("), name.find(',')));
}

namespace {

// Each line of a YAML text with the keys of the lines above it that enclose it ("a.b: 3").
std::vector<std::string> keyed_lines(const std::string& text) {
  std::vector<std::string> out;
  std::vector<std::pair<size_t, std::string>> parents;  // indentation, key
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    while (!parents.empty() && parents.back().first >= indent) parents.pop_back();
    std::string path;
    for (const auto& p : parents) path += p.second + ".";
    const std::string body = line.substr(indent);
    out.push_back(path + body);
    const size_t colon = body.find(':');
    if (colon != std::string::npos && colon + 1 == body.size()) parents.emplace_back(indent, body.substr(0, colon));
  }
  return out;
}

}  // namespace

std::pair<std::string, std::string> identity_differences(const std::string& a_text, const std::string& b_text) {
  const std::vector<std::string> a = keyed_lines(a_text), b = keyed_lines(b_text);
  auto only = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    std::string out;
    int n = 0;
    for (const std::string& l : x)
      if (std::find(y.begin(), y.end(), l) == y.end() && n++ < 3) out += (out.empty() ? "" : "', '") + l;
    return out.empty() ? std::string("(nothing)") : out;
  };
  return {only(a, b), only(b, a)};
}

bool sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

}  // namespace seisrtm
