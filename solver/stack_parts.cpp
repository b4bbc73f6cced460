#include "solver/stack_parts.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/error.hpp"
#include "io/config.hpp"
#include "io/hdf5_file.hpp"

namespace seisrtm {

namespace {

// FNV-1a, 64 bits, of the data's bytes: enough to tell two data sets apart (not a defence).
std::string data_hash(const std::vector<float>& v) {
  unsigned long long h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ b[i]) * 1099511628211ull;
  char t[32];
  std::snprintf(t, sizeof t, "%016llx", h);
  return t;
}

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

std::string string_attribute(hid_t loc, const std::string& name, const std::string& file) {
  io::H5QuietErrors quiet;
  io::H5Handle a(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!a.valid()) throw Error("'" + file + "' has no /stack attribute '" + name + "'");
  io::H5Handle t(H5Aget_type(a.get()), H5Tclose);
  std::string v(H5Tget_size(t.get()), '\0');
  if (H5Aread(a.get(), t.get(), v.data()) < 0) throw Error("'" + file + "': /stack." + name + " cannot be read");
  v.resize(v.find('\0') == std::string::npos ? v.size() : v.find('\0'));
  return v;
}

std::vector<long long> read_words(hid_t file, const std::string& name, const std::string& path,
                                  const std::vector<hsize_t>& dims) {
  io::H5QuietErrors quiet;
  io::H5Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw Error("'" + path + "' has no dataset " + name);
  io::H5Handle s(H5Dget_space(d.get()), H5Sclose);
  std::vector<hsize_t> got(static_cast<size_t>(std::max(0, H5Sget_simple_extent_ndims(s.get()))));
  H5Sget_simple_extent_dims(s.get(), got.data(), nullptr);
  if (dims.empty() ? got.size() != 1 : got != dims)
    throw Error("'" + path + "': " + name + " has another shape than this survey's grid (a part of another survey)");
  hsize_t n = 1;
  for (hsize_t x : got) n *= x;
  std::vector<long long> w(static_cast<size_t>(n));
  if (H5Dread(d.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data()) < 0)
    throw Error("'" + path + "': " + name + " cannot be read");
  return w;
}

}  // namespace

std::string stack_identity(const MigrationInput& in, const std::string& migrator) {
  Config c = in.problem.config;
  // What does not change a shot's image: where the files go and come from, the device, the CPU
  // threads, the memory kind, graphs and the decomposition (z slabs give one process's bits).
  c.output = OutputConfig{};
  c.migration->data.clear();
  c.source_file.clear();
  const SolverConfig keep = c.solver;
  c.solver = SolverConfig{};
  c.solver.kernel = keep.kernel, c.solver.z_block = keep.z_block, c.solver.storage = keep.storage;
  // The backend as resolved (auto: whichever ran) and its kernel: the migrator's name up to its
  // settings ("cpu", "cuda tma"; a slab's name adds ", z slab ...").
  const std::string kind = migrator.substr(0, std::min(migrator.find(" ("), migrator.find(',')));
  return to_yaml(c) + "\nbackend: " + kind + "\ndata: " + data_hash(in.traces) + "\n";
}

void write_stack_part(hid_t root, const MigrationInput& in, const ExactStack& stack,
                      const std::vector<long long>& shots, const std::string& migrator) {
  const Grid& g = in.problem.grid;
  io::H5Handle grp(H5Gcreate2(root, "stack", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!grp.valid()) throw Error("creating HDF5 group /stack");
  const std::vector<hsize_t> dims{hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0]), 2};
  io::write_dataset(root, "stack/image", dims, stack.words(false).data());
  io::describe_dataset(root, "stack/image", "2^(exponents[0] - 95) x image/correlation units",
                       "exact sum of the part's shots' correlation, a 128-bit integer a cell: low word, high word");
  io::write_dataset(root, "stack/illumination", dims, stack.words(true).data());
  io::describe_dataset(root, "stack/illumination", "2^(exponents[1] - 95) x image/illumination units",
                       "exact sum of the part's shots' illumination, a 128-bit integer a cell: low word, high word");
  io::write_dataset(root, "stack/shots", {hsize_t(shots.size())}, shots.data());
  io::describe_dataset(root, "stack/shots", "1", "the shots (0-based) in this part's sums");
  io::write_attribute(grp.get(), "identity", stack_identity(in, migrator));
  io::write_attribute(grp.get(), "migrator", migrator);
  io::write_attribute(grp.get(), "exponents",
                      std::vector<long long>{stack.exponents().image, stack.exponents().illumination});
}

ExactStack sum_parts(const MigrationInput& in, const std::vector<std::string>& files, std::vector<long long>& shots,
                     std::string& migrator) {
  const Problem& pb = in.problem;
  const Grid& g = pb.grid;
  const StackExponents e = stack_exponents(pb, in.traces.data());
  ExactStack total(g.cells(), e), part(g.cells(), e);
  const std::vector<hsize_t> dims{hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0]), 2};
  std::vector<std::string> owner(static_cast<size_t>(pb.shot_count()));  // the part that has each shot
  std::string identity;
  shots.clear();
  for (const std::string& path : files) {
    io::H5QuietErrors quiet;
    io::H5Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!f.valid()) throw Error("part '" + path + "' cannot be opened as HDF5");
    io::H5Handle grp(H5Gopen2(f.get(), "stack", H5P_DEFAULT), H5Gclose);
    if (!grp.valid())
      throw Error("'" + path + "' is not a part of a survey (no /stack: seisrtm migrate --shots writes one)");
    const std::string id = string_attribute(grp.get(), "identity", path);
    if (identity.empty()) {
      // Every part against this migration's own settings and data.
      migrator = string_attribute(grp.get(), "migrator", path);
      identity = stack_identity(in, migrator);
    }
    if (id != identity) {
      const std::vector<std::string> a = keyed_lines(id), b = keyed_lines(identity);
      size_t i = 0;
      while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
      const std::string theirs = i < a.size() ? a[i] : "(nothing)", ours = i < b.size() ? b[i] : "(nothing)";
      throw Error("part '" + path + "' was migrated with other settings or data: it has '" + theirs +
                  "' where this config and data give '" + ours +
                  "'; parts add up only when migrated with the same config, data and backend");
    }
    const std::vector<long long> mine = read_words(f.get(), "stack/shots", path, {});
    for (long long s : mine) {
      if (s < 0 || s >= pb.shot_count())
        throw Error("part '" + path + "' holds shot " + std::to_string(s) + ", beyond the data's " +
                    std::to_string(pb.shot_count()) + " shots");
      std::string& who = owner[static_cast<size_t>(s)];
      if (!who.empty())
        throw Error("parts '" + who + "' and '" + path + "' both hold shot " + std::to_string(s) +
                    ": parts of a survey must not overlap (migrate --shots gives each part its own)");
      who = path;
      shots.push_back(s);
    }
    part.set_words(false, read_words(f.get(), "stack/image", path, dims));
    part.set_words(true, read_words(f.get(), "stack/illumination", path, dims));
    total.add(part);
  }
  std::sort(shots.begin(), shots.end());
  return total;
}

std::vector<long long> parse_shot_list(const std::string& text, long long count) {
  auto bad = [&](const std::string& why) {
    return Error("--shots '" + text + "': " + why + "; valid: indices and ranges A:B (A to B-1), A: and :B, " +
                 "comma-separated, within 0.." + std::to_string(count - 1) + " (0-based)");
  };
  auto number = [&](const std::string& t, long long fallback) {
    if (t.empty()) return fallback;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      throw bad("'" + t + "' is not a shot index");
    }
    if (used != t.size() || v < 0) throw bad("'" + t + "' is not a shot index");
    return v;
  };
  std::vector<char> on(static_cast<size_t>(count), 0);
  std::stringstream in(text);
  bool any = false;
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) throw bad("an empty item");
    const size_t colon = item.find(':');
    long long a = 0, b = 0;
    if (colon == std::string::npos) {
      a = number(item, 0), b = a + 1;
    } else {
      a = number(item.substr(0, colon), 0), b = number(item.substr(colon + 1), count);
    }
    if (a >= count || b > count) throw bad("'" + item + "' reaches beyond the last shot");
    if (b <= a) throw bad("'" + item + "' holds no shot");
    for (long long s = a; s < b; ++s) on[static_cast<size_t>(s)] = 1, any = true;
  }
  if (!any) throw bad("no shot");
  std::vector<long long> shots;
  for (long long s = 0; s < count; ++s)
    if (on[static_cast<size_t>(s)]) shots.push_back(s);
  return shots;
}

}  // namespace seisrtm
