#include "solver/stack_parts.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "base/error.hpp"
#include "io/config.hpp"
#include "io/hdf5_file.hpp"
#include "io/output_file.hpp"
#include "solver/identity.hpp"

namespace seisrtm {

namespace {

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

// Reads a one-dimensional int64 dataset.
std::vector<long long> read_list(hid_t file, const std::string& name, const std::string& path) {
  io::H5QuietErrors quiet;
  io::H5Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw Error("'" + path + "' has no dataset " + name);
  io::H5Handle s(H5Dget_space(d.get()), H5Sclose);
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(s.get()) != 1) throw Error("'" + path + "': " + name + " is not a list");
  H5Sget_simple_extent_dims(s.get(), &n, nullptr);
  std::vector<long long> w(static_cast<size_t>(n));
  if (H5Dread(d.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data()) < 0)
    throw Error("'" + path + "': " + name + " cannot be read");
  return w;
}

// Adds a part's sums, dataset `name` of the shape `dims` ([z, y, x, 2]), into `total` a few z
// planes at a time (64 MiB of them at most): no second stack of 32 bytes a cell. Integer
// addition: exact, whatever the order.
void add_part_sums(hid_t file, const std::string& name, const std::string& path, const std::vector<hsize_t>& dims,
                   __int128* total) {
  io::H5QuietErrors quiet;
  io::H5Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw Error("'" + path + "' has no dataset " + name);
  io::H5Handle space(H5Dget_space(d.get()), H5Sclose);
  std::vector<hsize_t> got(static_cast<size_t>(std::max(0, H5Sget_simple_extent_ndims(space.get()))));
  H5Sget_simple_extent_dims(space.get(), got.data(), nullptr);
  if (got != dims)
    throw Error("'" + path + "': " + name + " has another shape than this survey's grid (a part of another survey)");
  const hsize_t plane = dims[1] * dims[2];  // cells
  const hsize_t planes = std::max<hsize_t>(1, (hsize_t(64) << 20) / (16 * plane));
  std::vector<__int128> chunk(static_cast<size_t>(std::min(planes, dims[0]) * plane));
  for (hsize_t z = 0; z < dims[0]; z += planes) {
    const hsize_t nz = std::min(planes, dims[0] - z);
    const hsize_t start[4] = {z, 0, 0, 0}, count[4] = {nz, dims[1], dims[2], 2};
    io::H5Handle mem(H5Screate_simple(4, count, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(d.get(), H5T_NATIVE_LLONG, mem.get(), space.get(), H5P_DEFAULT, chunk.data()) < 0)
      throw Error("'" + path + "': " + name + " cannot be read");
    __int128* to = total + z * plane;
    const long long n = static_cast<long long>(nz * plane);
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; ++i) to[i] += chunk[static_cast<size_t>(i)];
  }
}

// The shape of a part's gather sums: [location][offset][z][2 words] (rows of offsets x z values,
// added a few locations at a time).
std::vector<hsize_t> gather_sum_dims(const GatherLayout& l) {
  return {hsize_t(l.locations()), hsize_t(l.offsets()), hsize_t(l.nz), 2};
}

// A 128-bit sum as the file's two words, low then high: its own bytes on this little-endian
// machine (no copy of the stack's 32 bytes a cell).
static_assert(std::endian::native == std::endian::little && sizeof(__int128) == 2 * sizeof(long long));
const long long* as_words(const __int128* v) {
  return reinterpret_cast<const long long*>(v);
}

}  // namespace

std::string stack_identity(const MigrationInput& in, const std::string& migrator) {
  const Problem& pb = in.problem;
  // What does not change the stack besides (identity.hpp): where the files go and come from (the
  // data's contents are hashed below), how the boundary is rebuilt (checkpoints give the store's
  // bits) and what is made of the stack afterwards (epsilon, the depth slice).
  Config c = bit_deciding_config(pb.config);
  c.output = OutputConfig{};
  MigrationConfig& m = *c.migration;
  m.data.clear();
  if (m.wavelet) m.wavelet->file.clear();
  m.store = StoreLocation::automatic;
  m.reconstruction = Reconstruction::automatic;
  m.checkpoint_interval = m.coarse_checkpoint_interval = 0;
  m.checkpoint_location = CheckpointLocation::automatic;
  m.checkpoint_directory.clear();
  m.illumination_epsilon = MigrationConfig{}.illumination_epsilon;
  m.depth_slice.reset();
  std::string id = to_yaml(c) + "\nstack format: 1 (128-bit sums, " + std::to_string(kStackGrowthBits) +
                   " bits of growth)\nbackend: " + backend_kind(migrator) + "\n";
  // The contents the migration read: the data as migrated, the model, the wavelet, the geometry.
  id += "data as migrated (migration.data): " + data_hash(in.traces) + "\n";
  return id + inputs_identity(pb);
}

void write_stack_part(hid_t root, const MigrationInput& in, const ExactStack& stack,
                      const std::vector<long long>& shots, const std::string& migrator) {
  const Grid& g = in.problem.grid;
  io::H5Handle grp(H5Gcreate2(root, "stack", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!grp.valid()) throw Error("creating HDF5 group /stack");
  const std::vector<hsize_t> dims{hsize_t(g.n[2]), hsize_t(g.n[1]), hsize_t(g.n[0]), 2};
  io::write_dataset(root, "stack/image", dims, as_words(stack.sums(false)));
  io::describe_dataset(root, "stack/image", "2^(exponents[0] - 95) x image/correlation units",
                       "exact sum of the part's shots' correlation, a 128-bit integer a cell: low word, high word");
  io::write_dataset(root, "stack/illumination", dims, as_words(stack.sums(true)));
  io::describe_dataset(root, "stack/illumination", "2^(exponents[1] - 95) x image/illumination units",
                       "exact sum of the part's shots' illumination, a 128-bit integer a cell: low word, high word");
  if (stack.gather_values() > 0) {
    const GatherLayout l = gather_layout(in.problem);
    io::write_dataset(root, "stack/gathers", gather_sum_dims(l), as_words(stack.gather_sums()));
    io::describe_dataset(
        root, "stack/gathers", "2^(exponents[0] - 95) x gathers/offset units",
        "exact sum of the part's shots' offset gathers, a 128-bit integer a value: low word, high word");
  }
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
  const GatherLayout layout = gather_layout(pb);
  ExactStack total(g.cells(), e, layout.values());
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
      const auto [theirs, ours] = identity_differences(id, identity);
      throw Error("part '" + path + "' was migrated with other settings or data: it has '" + theirs +
                  "' where this config and data give '" + ours +
                  "'; parts add up only when migrated with the same config, data and backend");
    }
    if (io::read_attribute(grp.get(), "exponents") != std::vector<double>{double(e.image), double(e.illumination)})
      throw Error("part '" + path + "' was summed on another grid (its /stack exponents are not this survey's): " +
                  "a part of other data or of another version of seisrtm");
    const std::vector<long long> mine = read_list(f.get(), "stack/shots", path);
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
    add_part_sums(f.get(), "stack/image", path, dims, total.sums(false));
    add_part_sums(f.get(), "stack/illumination", path, dims, total.sums(true));
    if (layout.values() > 0)
      add_part_sums(f.get(), "stack/gathers", path, gather_sum_dims(layout), total.gather_sums());
  }
  std::sort(shots.begin(), shots.end());
  return total;
}

namespace {

constexpr char kJournalMagic[] = "seisrtm resume 1\n";

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ResumeJournal::ResumeJournal(std::string path, std::string identity)
    : path_(std::move(path)), identity_(std::move(identity)) {}

bool ResumeJournal::load(ExactStack& stack, std::vector<long long>& shots) const {
  namespace fs = std::filesystem;
  if (fs::is_directory(path_))
    throw Error("'" + path_ + "' is in the place of this migration's resume journal but is a directory (a run's " +
                "journal of the same output.name?): remove it or set another output.name");
  std::FILE* f = std::fopen(path_.c_str(), "rb");
  if (!f) return false;
  // The killed migrations' temporaries of the journal are only disk space.
  const fs::path dir = fs::path(path_).parent_path();
  io::remove_dead_temporaries(dir.string(), fs::path(path_).filename().string() + ".");
  std::error_code ec;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  const std::uintmax_t size = fs::file_size(path_, ec);
  const std::string damaged = "the resume journal '" + path_ + "' of an interrupted migration is damaged (";
  const std::string fix = "); remove it to migrate every shot again";
  // Read in place (the sums straight into the stack), hashed as they come; the checksum last.
  Fnv sum;
  std::uintmax_t at = 0;
  auto take = [&](void* out, std::size_t n) {
    if (ec || at + n + 8 > size || std::fread(out, 1, n, f) != n) throw Error(damaged + "shorter than it says" + fix);
    sum.add(out, n);
    at += n;
  };
  const std::size_t magic = sizeof kJournalMagic - 1;
  char head_text[sizeof kJournalMagic] = {};
  take(head_text, magic);
  if (std::memcmp(head_text, kJournalMagic, magic) != 0) throw Error(damaged + "not a journal of this version" + fix);
  unsigned long long idlen = 0;
  take(&idlen, 8);
  if (idlen > size) throw Error(damaged + "shorter than it says" + fix);
  std::string id(idlen, '\0');
  take(id.data(), idlen);
  if (id != identity_) {
    const auto [theirs, ours] = identity_differences(id, identity_);
    throw Error("the resume journal '" + path_ +
                "' of an interrupted migration was made with other settings or data: it " + "has '" + theirs +
                "' where this migration has '" + ours +
                "'; run it as it was to finish it, or remove the journal to migrate every shot again");
  }
  long long head[4] = {0, 0, 0, 0};  // exponents, cells, shots
  take(head, sizeof head);
  if (head[0] != stack.exponents().image || head[1] != stack.exponents().illumination || head[2] != stack.cells() ||
      head[3] < 0 || head[3] > stack.cells() + (1LL << 40))
    throw Error(damaged + "its grid is not this migration's" + fix);
  const std::size_t sums = static_cast<std::size_t>(stack.cells()) * sizeof(__int128);
  const std::size_t gathers = static_cast<std::size_t>(stack.gather_values()) * sizeof(__int128);
  if (at + 8 * static_cast<std::uintmax_t>(head[3]) + 2 * sums + gathers + 8 != size)
    throw Error(damaged + "not as long as it says" + fix);
  shots.resize(static_cast<std::size_t>(head[3]));
  take(shots.data(), shots.size() * sizeof(long long));
  take(stack.sums(false), sums);
  take(stack.sums(true), sums);
  if (gathers > 0) take(stack.gather_sums(), gathers);
  std::uint64_t stored = 0;
  if (std::fread(&stored, 1, 8, f) != 8 || stored != sum.value())
    throw Error(damaged + "its checksum does not match" + fix);
  return true;
}

bool ResumeJournal::due() const {
  return last_end_ < 0 || now_seconds() - last_end_ >= 19.0 * last_seconds_;
}

void ResumeJournal::save(const ExactStack& stack, const std::vector<long long>& shots) {
  const double start = now_seconds();
  io::PartialFile tmp(path_);
  std::FILE* f = std::fopen(tmp.temp_path().c_str(), "wb");
  if (!f) throw Error("the resume journal '" + path_ + "' cannot be written: " + std::strerror(errno));
  Fnv sum;
  bool ok = true;
  auto put = [&](const void* p, std::size_t n) {
    sum.add(p, n);
    ok = ok && std::fwrite(p, 1, n, f) == n;
  };
  put(kJournalMagic, sizeof kJournalMagic - 1);
  const unsigned long long idlen = identity_.size();
  put(&idlen, 8);
  put(identity_.data(), identity_.size());
  const long long head[4] = {stack.exponents().image, stack.exponents().illumination, stack.cells(),
                             static_cast<long long>(shots.size())};
  put(head, sizeof head);
  put(shots.data(), shots.size() * sizeof(long long));
  put(stack.sums(false), static_cast<std::size_t>(stack.cells()) * sizeof(__int128));
  put(stack.sums(true), static_cast<std::size_t>(stack.cells()) * sizeof(__int128));
  if (stack.gather_values() > 0)
    put(stack.gather_sums(), static_cast<std::size_t>(stack.gather_values()) * sizeof(__int128));
  const std::uint64_t checksum = sum.value();
  ok = ok && std::fwrite(&checksum, 1, 8, f) == 8;
  ok = ok && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    throw Error("the resume journal '" + path_ + "' cannot be written: " + std::strerror(err) +
                " (output.directory needs room for 32 bytes a cell beside the outputs)");
  tmp.commit();
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  sync_path(dir.empty() ? "." : dir);
  last_end_ = now_seconds();
  last_seconds_ = last_end_ - start;
}

void ResumeJournal::remove() const {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::vector<long long> parse_shot_list(const std::string& text, long long count) {
  auto bad = [&](const std::string& why) {
    return Error("--shots '" + text + "': " + why + "; valid: indices and ranges A:B (A to B-1), A: and :B, " +
                 "comma-separated, within 0.." + std::to_string(count - 1) + " (0-based)");
  };
  auto number = [&](const std::string& t, long long fallback) {
    if (t.empty()) return fallback;
    if (t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + t + "' is not a shot index");
    return std::stoll(t);
  };
  if (!text.empty() && text.back() == ',') throw bad("an empty item");
  std::vector<char> on(static_cast<size_t>(count), 0);
  std::stringstream in(text);
  bool any = false;
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) throw bad("an empty item");
    const size_t colon = item.find(':');
    long long a = 0, b = 0;
    if (colon == std::string::npos) {
      a = number(item, 0);
      if (a >= count) throw bad("'" + item + "' reaches beyond the last shot");
      b = a + 1;
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
