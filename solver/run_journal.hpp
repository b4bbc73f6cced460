#pragma once
// The journal of a forward-modelling run in progress, the directory `<directory>/<name>.resume`
// beside its outputs (docs/guide/run.md "An interrupted run resumes"):
//
//   identity     the run's identity (text: the config as it decides the bits, the backend, hashes
//                of the inputs as read, the shots of a part), written first
//   shot_NNNN    one file a finished shot: everything the outputs take of it
//
// Each file is written whole under a temporary name, flushed to the disk and renamed (then the
// directory flushed): a kill at any moment leaves a shot's file whole or absent, never part of
// one. A shot's file (little-endian): "seisrtm run shot 1\n"; the identity's FNV, the shot, its
// snapshots, the cells of a snapshot, its trace samples, the cells of its last wavefield (0 but
// for the shot whose wavefield is pictured) (8 bytes each); the snapshots in order, the traces and
// the wavefield (float32); a checksum of all of it (8 bytes, FNV-1a over 64-bit words).
//
// `run` run again reads it: the journal's shots go into the outputs as they were computed, only
// the others are computed, and the outputs are the bits of a run never stopped. Removed once the
// outputs are committed. It holds what the outputs hold: as many bytes again on the disk.
#include <array>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace seisrtm {

class RunJournal {
 public:
  enum class Piece { snapshot, traces, wavefield };
  struct Shape {
    long long snapshots = 0;         // a shot's snapshots
    long long cells = 0;             // of a snapshot and of the wavefield
    std::vector<long long> samples;  // each shot's trace samples (its receivers x steps)
    long long pictured = -1;         // the shot whose last wavefield is kept (pictures), or -1
  };
  RunJournal(std::string directory, std::string identity, Shape shape);
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;
  const std::string& path() const { return path_; }

  // Rank 0 before its first shot: creates the journal, or takes up one an interrupted run left.
  // Returns its finished shots, sorted. Error naming the journal for one of other settings or
  // data (the first difference) or one that is not a run's. A shot's file whose header or length
  // does not check is removed and its shot not counted as finished: `dropped` names it.
  std::vector<long long> open(std::vector<std::string>& dropped);
  // Before open(): keep no journal (output.resume false); open, add and remove do nothing.
  void switch_off() { off_ = true; }
  // open() found the journal of an interrupted run.
  bool taken_up() const { return taken_up_; }
  // open() found the journal held by another run of the same output that is still running: this
  // run keeps none (add and remove do nothing).
  bool held_elsewhere() const { return held_elsewhere_; }
  // The file system refused the lock (flock): two runs of this output at once would share it.
  bool unlocked() const { return unlocked_ && lock_fd_ < 0; }

  // A finished shot's pieces in the order they were computed, each handed to `take(piece, index,
  // data)`: the snapshots as they are read (into `buffer`, resized), the traces and the wavefield
  // once the file's checksum holds. False, with the file removed, where it does not: the shot is
  // to be computed again (its snapshots were handed over already).
  bool replay(long long shot, std::vector<float>& buffer,
              const std::function<void(Piece, long long, std::vector<float>&)>& take) const;

  // A piece of a shot as it comes (its snapshots in order, its traces, for the pictured shot its
  // wavefield); the shot's file is committed with its last piece. Written by a thread of the
  // journal beside the stepping: `data`'s buffer is taken (swapped for one of the same size whose
  // values are undefined), at most kPending pieces wait, and add() waits for room beyond them.
  // An error of an earlier write is thrown here (Error naming the journal).
  void add(long long shot, Piece piece, long long index, std::vector<float>& data);
  // Pieces that wait to be written while the next are computed; with the one being written, the
  // host holds this many + 1 more buffers of a piece (memory_estimate.cpp counts them).
  static constexpr int kPending = 1;

  // Once the outputs are committed: the writes still pending are dropped (the outputs hold them)
  // and the journal removed. (Without it, the destructor keeps the journal where it holds a
  // finished shot and removes it otherwise.)
  void remove();

 private:
  struct Writer;
  struct Task;
  long long values(long long shot, Piece piece) const;
  // A shot's file header after its magic: the identity's hash, the shot, its snapshots, the
  // cells of a snapshot, its trace samples, the cells of its wavefield.
  using Head = std::array<long long, 6>;
  Head head(long long shot) const;
  std::string shot_path(long long shot) const;
  bool check(const std::string& file, long long shot) const;
  // open()'s parts: the directory's lock (false: held by another run), the temporaries of
  // writers that are gone, the identity checked or written.
  bool take_lock();
  void remove_dead_writers(const std::filesystem::path& parent);
  void check_identity(bool holds_shots);
  void write_loop();
  void stop(bool finish);  // finish: the pieces handed over are written first
  void commit(Writer& w);
  std::string path_, identity_;
  Shape shape_;
  unsigned long long identity_hash_ = 0;
  bool taken_up_ = false, held_elsewhere_ = false, unlocked_ = false, off_ = false;
  int lock_fd_ = -1;
  std::map<long long, std::unique_ptr<Writer>> writing_;  // guarded by mutex_ (the writer erases)
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> queue_;
  std::vector<std::vector<float>> spare_;  // buffers written out, for the next pieces
  bool stopping_ = false, writing_now_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace seisrtm
