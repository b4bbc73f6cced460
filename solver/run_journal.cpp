#include "solver/run_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "io/output_file.hpp"
#include "solver/identity.hpp"

namespace seisrtm {

namespace fs = std::filesystem;

namespace {

constexpr char kShotMagic[] = "seisrtm run shot 1\n";
constexpr std::size_t kMagicBytes = sizeof kShotMagic - 1;

std::unique_ptr<std::FILE, int (*)(std::FILE*)> open_file(const std::string& path, const char* mode) {
  return {std::fopen(path.c_str(), mode), std::fclose};
}

// A finished shot's file, "shot_" and digits (not a temporary "shot_NNNN.<pid>.<random>.partial").
bool is_shot_file(const std::string& n) {
  return n.rfind("shot_", 0) == 0 && n.size() > 5 && n.find_first_not_of("0123456789", 5) == std::string::npos;
}

}  // namespace

struct RunJournal::Writer {
  // (Not unlinked by a signal's handler: a stopped run finishes the pieces it was handed.)
  explicit Writer(const std::string& final_path) : tmp(final_path, false) {}
  ~Writer() {
    if (f) std::fclose(f);
  }
  io::PartialFile tmp;
  std::FILE* f = nullptr;
  Fnv sum;
  long long next = 0;  // snapshots written
  bool traces = false, ok = true;
  void put(const void* p, std::size_t n) {
    sum.add(p, n);
    ok = ok && std::fwrite(p, 1, n, f) == n;
  }
};

RunJournal::RunJournal(std::string directory, std::string identity, Shape shape)
    : path_(std::move(directory)), identity_(std::move(identity)), shape_(std::move(shape)) {
  Fnv f;
  f.add(identity_.data(), identity_.size());
  identity_hash_ = f.value();
}

RunJournal::~RunJournal() {
  stop(true);  // a run that ends without its outputs (an error, a signal) keeps what it was handed
  if (held_elsewhere_ || off_) return;
  // ... for the same command again, unless no shot of it was finished and the journal is its own:
  // then there is nothing to resume.
  std::error_code ec;
  bool any = false;
  for (const auto& e : fs::directory_iterator(path_, ec)) any = any || is_shot_file(e.path().filename().string());
  if (!any && !ec && !taken_up_) fs::remove_all(path_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

long long RunJournal::values(long long shot, Piece piece) const {
  switch (piece) {
    case Piece::snapshot:
      return shape_.cells;
    case Piece::traces:
      return shape_.samples[static_cast<std::size_t>(shot)];
    case Piece::wavefield:
      return shot == shape_.pictured ? shape_.cells : 0;
  }
  return 0;
}

RunJournal::Head RunJournal::head(long long shot) const {
  return {static_cast<long long>(identity_hash_), shot, shape_.snapshots, shape_.cells, values(shot, Piece::traces),
          values(shot, Piece::wavefield)};
}

std::string RunJournal::shot_path(long long shot) const {
  char n[32];
  std::snprintf(n, sizeof n, "shot_%04lld", shot);
  return (fs::path(path_) / n).string();
}

// One run at a time keeps it: false when another run of the same output (still running) holds
// its lock, and this one then keeps none. The lock is the directory's (flock; released when the
// process ends, killed or not), taken again where the directory was replaced meanwhile (renamed
// away by a run that ended).
bool RunJournal::take_lock() {
  for (int attempt = 0; attempt < 3 && lock_fd_ < 0; ++attempt) {
    io::ensure_directory(path_);
    const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const bool busy = errno == EWOULDBLOCK;
      ::close(fd);
      if (busy) {
        held_elsewhere_ = true;
        return false;
      }
      unlocked_ = true;  // (a file system without flock: as below, unlocked)
      continue;
    }
    struct stat a, b;
    if (::fstat(fd, &a) == 0 && ::stat(path_.c_str(), &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
      lock_fd_ = fd;
    else
      ::close(fd);
  }
  if (lock_fd_ < 0) io::ensure_directory(path_);
  return true;
}

void RunJournal::remove_dead_writers(const fs::path& parent) {
  std::error_code ec;
  // Temporaries of writers that are gone (killed while writing) are only disk space: the
  // journal's own, and the outputs' of the runs of this output that left a mark here
  // (`run.<host>.<pid>`) and are gone from this host. Those of other outputs and of runs on other
  // hosts are not touched.
  io::remove_dead_temporaries(path_, "");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string mark = "run." + std::string(host) + ".";
  const std::string name = fs::path(path_).stem().string();
  for (const auto& e : fs::directory_iterator(path_, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(mark, 0) != 0) continue;
    const long pid = std::atol(n.c_str() + mark.size());
    if (pid <= 0 || !io::process_gone(pid)) continue;
    io::remove_dead_temporaries(parent.string(), name + ".", pid);
    io::remove_dead_temporaries(parent.string(), name + "_", pid);
    fs::remove(e.path(), ec);
  }
  std::ofstream(fs::path(path_) / (mark + std::to_string(::getpid())));
}

// The journal's identity: checked against this run's, or written where the journal is new.
void RunJournal::check_identity(bool holds_shots) {
  const std::string id_path = (fs::path(path_) / "identity").string();
  if (auto f = open_file(id_path, "rb")) {
    taken_up_ = true;
    std::string id;
    char buf[4096];
    for (std::size_t k; (k = std::fread(buf, 1, sizeof buf, f.get())) > 0;) id.append(buf, k);
    if (id != identity_) {
      const auto [theirs, ours] = identity_differences(id, identity_);
      throw Error("the resume journal '" + path_ + "' of an interrupted run was made with other settings or data: it " +
                  "has '" + theirs + "' where this run has '" + ours +
                  "'; run it as it was to finish it, or remove the journal to compute every shot again");
    }
  } else {
    if (holds_shots)
      throw Error("the resume journal '" + path_ +
                  "' holds shots but no identity: it is damaged; remove it to compute every shot again");
    io::PartialFile tmp(id_path);
    auto out = open_file(tmp.temp_path(), "wb");
    const bool ok = out && std::fwrite(identity_.data(), 1, identity_.size(), out.get()) == identity_.size() &&
                    std::fflush(out.get()) == 0 && ::fsync(::fileno(out.get())) == 0;
    if (!ok) throw Error("the resume journal '" + path_ + "' cannot be written" + io::write_failure_reason());
    out.reset();
    tmp.commit();
    sync_path(path_);
  }
}

std::vector<long long> RunJournal::open(std::vector<std::string>& dropped) {
  if (off_) return {};
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path_, ec)) && !fs::is_directory(path_, ec))
    throw Error("'" + path_ +
                "' is in the place of this run's resume journal but is not a run's journal (a migration's of the "
                "same output.name?): remove it or set another output.name");
  // Journals of runs killed while removing theirs (remove()).
  const fs::path parent = fs::path(path_).parent_path().empty() ? fs::path(".") : fs::path(path_).parent_path();
  const std::string removed = fs::path(path_).filename().string() + ".removed.";
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.path().filename().string().rfind(removed, 0) == 0) fs::remove_all(e.path(), ec);
  if (!take_lock()) return {};
  remove_dead_writers(parent);
  std::vector<long long> shots;
  for (const auto& e : fs::directory_iterator(path_, ec)) {
    const std::string n = e.path().filename().string();
    if (is_shot_file(n)) shots.push_back(std::atoll(n.c_str() + 5));
  }
  std::sort(shots.begin(), shots.end());
  check_identity(!shots.empty());
  std::vector<long long> whole;
  for (long long s : shots) {
    if (s < static_cast<long long>(shape_.samples.size()) && check(shot_path(s), s)) {
      whole.push_back(s);
    } else {
      fs::remove(shot_path(s), ec);
      dropped.push_back(shot_path(s));
    }
  }
  return whole;
}

bool RunJournal::check(const std::string& file, long long shot) const {
  // Its header and length; the checksum is checked as replay() reads it (one pass over the data).
  auto f = open_file(file, "rb");
  if (!f) return false;
  const Head want = head(shot);
  const std::uintmax_t floats = static_cast<std::uintmax_t>(shape_.snapshots * shape_.cells + want[4] + want[5]);
  std::error_code ec;
  if (fs::file_size(file, ec) != kMagicBytes + sizeof want + 4 * floats + 8 || ec) return false;
  char magic[kMagicBytes];
  Head got;
  return std::fread(magic, 1, kMagicBytes, f.get()) == kMagicBytes &&
         std::memcmp(magic, kShotMagic, kMagicBytes) == 0 &&
         std::fread(got.data(), 1, sizeof got, f.get()) == sizeof got && got == want;
}

bool RunJournal::replay(long long shot, std::vector<float>& buffer,
                        const std::function<void(Piece, long long, std::vector<float>&)>& take) const {
  const std::string file = shot_path(shot);
  auto f = open_file(file, "rb");
  Fnv sum;
  auto read = [&](void* out, std::size_t n) {
    if (!f || std::fread(out, 1, n, f.get()) != n)
      throw Error("the resume journal's '" + file + "' cannot be read back" + io::write_failure_reason());
    sum.add(out, n);
  };
  char front[kMagicBytes + sizeof(Head)];  // (checked by open(): into the checksum only)
  read(front, sizeof front);
  auto piece = [&](Piece p, std::vector<float>& into) {
    into.resize(static_cast<std::size_t>(values(shot, p)));
    read(into.data(), into.size() * sizeof(float));
  };
  // The snapshots go out as they are read (a damaged file's are written over when its shot is
  // computed again); the traces and the wavefield, which make files of their own, once the
  // checksum holds.
  for (long long k = 0; k < shape_.snapshots; ++k) {
    piece(Piece::snapshot, buffer);
    take(Piece::snapshot, k, buffer);
  }
  std::vector<float> traces;
  piece(Piece::traces, traces);
  if (shot == shape_.pictured) piece(Piece::wavefield, buffer);
  std::uint64_t stored = 0;
  if (std::fread(&stored, 1, 8, f.get()) != 8 || stored != sum.value()) {
    std::error_code ec;
    fs::remove(file, ec);
    return false;
  }
  take(Piece::traces, 0, traces);
  if (shot == shape_.pictured) take(Piece::wavefield, 0, buffer);
  return true;
}

struct RunJournal::Task {
  Writer* writer;
  std::vector<float> data;
  bool last;  // the shot's file is committed after it
};

void RunJournal::add(long long shot, Piece piece, long long index, std::vector<float>& data) {
  if (held_elsewhere_ || off_) return;
  std::unique_lock lock(mutex_);
  if (!error_.empty()) throw Error(error_);
  if (!thread_.joinable()) thread_ = std::thread([this] { write_loop(); });
  std::unique_ptr<Writer>& w = writing_[shot];
  if (!w) {
    // (Created here, not by the writing thread: a temporary's registration for the signal
    // handler, io/interrupt.hpp, is this thread's.)
    w = std::make_unique<Writer>(shot_path(shot));
    w->f = std::fopen(w->tmp.temp_path().c_str(), "wb");
    if (!w->f) throw Error("the resume journal '" + path_ + "' cannot be written: " + std::strerror(errno));
    const Head h = head(shot);
    w->put(kShotMagic, kMagicBytes);
    w->put(h.data(), sizeof h);
  }
  // The order a shot computes them in (shot_loop.hpp): snapshots by time, traces, the wavefield.
  const bool in_order = piece == Piece::snapshot ? !w->traces && index == w->next && index < shape_.snapshots
                        : piece == Piece::traces ? !w->traces && w->next == shape_.snapshots
                                                 : w->traces && shot == shape_.pictured;
  const size_t n = static_cast<size_t>(values(shot, piece));
  if (!in_order || data.size() < n)
    throw Error("internal: the resume journal was handed shot " + std::to_string(shot) + "'s pieces out of order");
  if (piece == Piece::snapshot) ++w->next;
  if (piece == Piece::traces) w->traces = true;
  const bool last = piece == Piece::wavefield || (piece == Piece::traces && shot != shape_.pictured);
  changed_.wait(lock, [&] { return static_cast<int>(queue_.size()) < kPending || !error_.empty(); });
  if (!error_.empty()) throw Error(error_);
  // The piece's buffer goes to the writer; the caller gets one of the same size (a spare of that
  // size: a volume's buffer must not become a gather's, or the host holds one more volume).
  std::vector<float> spare;
  for (auto it = spare_.begin(); it != spare_.end(); ++it)
    if (it->capacity() >= data.size() && it->capacity() < 2 * data.size() + 1) {
      spare = std::move(*it);
      spare_.erase(it);
      break;
    }
  spare.resize(data.size());
  std::swap(spare, data);
  spare.resize(n);
  queue_.push_back({w.get(), std::move(spare), last});
  changed_.notify_all();
}

void RunJournal::write_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Task t = std::move(queue_.front());
    queue_.pop_front();
    writing_now_ = true;
    lock.unlock();
    std::string failed;
    try {
      t.writer->put(t.data.data(), t.data.size() * sizeof(float));
      if (t.last) commit(*t.writer);
    } catch (const std::exception& e) {
      failed = e.what();
    }
    lock.lock();
    writing_now_ = false;
    if (t.last || !failed.empty()) {
      for (auto it = writing_.begin(); it != writing_.end(); ++it)
        if (it->second.get() == t.writer) {
          writing_.erase(it);  // (its temporary removed unless committed)
          break;
        }
    }
    if (!failed.empty() && error_.empty()) error_ = failed;
    if (static_cast<int>(spare_.size()) < 2 * (kPending + 1)) spare_.push_back(std::move(t.data));
    changed_.notify_all();
  }
}

void RunJournal::commit(Writer& w) {
  const std::uint64_t checksum = w.sum.value();
  bool ok = w.ok && std::fwrite(&checksum, 1, 8, w.f) == 8;
  ok = ok && std::fflush(w.f) == 0 && ::fsync(::fileno(w.f)) == 0;
  const std::string why = io::write_failure_reason();
  ok = std::fclose(w.f) == 0 && ok;
  w.f = nullptr;
  if (!ok)
    throw Error("the resume journal '" + path_ + "' cannot be written" + why +
                " (output.directory needs room for the outputs twice while a run lasts: its journal holds them too)");
  w.tmp.commit();
  sync_path(path_);
}

void RunJournal::stop(bool finish) {
  {
    std::unique_lock lock(mutex_);
    if (finish)
      changed_.wait(lock, [&] { return (queue_.empty() && !writing_now_) || !error_.empty() || !thread_.joinable(); });
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void RunJournal::remove() {
  stop(false);  // (what it had still to write, the outputs hold)
  if (held_elsewhere_ || off_) return;
  // Renamed first, in one step: a kill while its files are removed one by one must not leave a
  // journal that lacks its identity or some of its shots (open() removes what is left).
  std::error_code ec;
  const std::string gone = path_ + ".removed." + std::to_string(::getpid());
  fs::rename(path_, gone, ec);
  if (ec) return fs::remove_all(path_, ec), void();
  const fs::path dir = fs::path(path_).parent_path();
  sync_path(dir.empty() ? "." : dir.string());
  fs::remove_all(gone, ec);
}

}  // namespace seisrtm
