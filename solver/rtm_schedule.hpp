#pragma once
// The level schedule of reverse-time migration with a boundary store, shared by the CPU
// reference (validation/cpu_migration.cpp) and the GPU migrator (solver/cuda_migration.cpp):
// which level of the source field is saved, rebuilt and imaged when, and which level of the
// receiver field it is imaged with. N = steps; forward step n makes level n + 1; the backward
// pass visits n = N .. 1, and p^n is imaged with chi^{n+1} (docs/ADJOINT.md, "Imaging").
#include <functional>

namespace seisrtm {

class RtmSchedule {
 public:
  // Levels first, first + dir, ... (count of them).
  struct Range {
    long long first = 0, count = 0;
    int dir = 1;
  };
  // One backward level n. source: p^n into the source field (nothing at n = N, the last two
  // levels swapped in at n = N - 1, rebuilt by a source step and the stored shell below);
  // image: p^n with chi^{n+1}, on imaging levels only; receiver: chi^n from chi^{n+1},
  // chi^{n+2} and data sample n - 1.
  struct Backward {
    std::function<void(long long n)> source, image, receiver;
  };
  // The order within a level. image_then_receiver (CPU): chi^{n+1} is the receiver field's
  // newest level when p^n is imaged. receiver_first (GPU): chi^n is made first and chi^{n+1} is
  // the older of its two buffers.
  enum class Order { image_then_receiver, receiver_first };
  // The fused backward step (GPU, acoustic tma): from level N - 2 down, one step makes level n
  // of both fields and images p^{n+1} with chi^{n+2}. receiver and source as in Backward (the
  // leading levels N and N - 1), image(n) on imaging levels, after(n) once level n of both fields
  // is made, steps(range) the fused steps of the range.
  struct Fused {
    std::function<void(long long n)> source, image, receiver, after;
    std::function<void(const Range&)> steps;
  };

  RtmSchedule(long long steps, long long image_interval) : steps_(steps), every_(image_interval) {}
  long long steps() const { return steps_; }
  // Forward: level L's shell goes to the store for 1 <= L <= N - 2; levels N and N - 1 stay in
  // the field's two buffers and start the backward pass.
  bool saved(long long level) const { return level >= 1 && level <= steps_ - 2; }
  Range saving_steps() const;  // forward steps 0 .. N - 3
  bool imaged(long long level) const { return level % every_ == 0; }
  // Whether backward level n is rebuilt by a source step (levels N and N - 1 are not).
  bool rebuilt(long long n) const { return n < steps_ - 1; }
  Range leading() const;     // levels N, N - 1: the receiver field alone steps
  Range rebuilding() const;  // levels N - 2 .. 1
  // Imaging levels and the parity of a field's two buffers repeat every period levels.
  long long period() const { return every_ % 2 == 0 ? every_ : 2 * every_; }
  // The fused order needs a level to rebuild; fused step n images level n + 1.
  bool fuses() const { return steps_ >= 3; }
  bool fused_images(long long n) const { return imaged(n + 1); }

  void backward_level(long long n, Order order, const Backward& b) const;
  // Levels N .. 1 in turn, after(n) following each.
  void backward(Order order, const Backward& b, const std::function<void(long long n)>& after) const;
  void fused_backward(const Fused& f) const;

 private:
  long long steps_, every_;
};

// Segmented checkpointing (migration.reconstruction: checkpoint): the boundary store of a long
// record holds only one segment of K levels. The saved levels 1 .. N - 2 are cut into segments
// [lo, hi] of K levels from level 1 up (the last one shorter where K does not divide N - 2).
// Forward, the full state of the source field at level lo of every segment but the last (the two
// levels lo and lo - 1 of each field it steps) is a checkpoint, and the last segment's shells go
// to the store. Backward, before the rebuild of level hi of any other segment, its replay restores
// the checkpoint into a third wave, saves the shell of level lo, and runs the forward steps
// lo .. hi - 1 saving the shells of levels lo + 1 .. hi into the same store: the levels, and so the
// shells, are the first pass's bit for bit (the same deterministic steps from the same state).
// Memory: checkpoints() x state + K x shell + the replay wave; cost: replay_steps() more forward
// steps (about one forward pass).
class CheckpointPlan {
 public:
  struct Segment {
    long long lo = 0, hi = 0;  // saved levels lo .. hi
  };
  // interval: K, levels between checkpoints (>= 1); K >= N - 2 is one segment, the plain boundary store.
  CheckpointPlan(long long steps, long long interval);
  long long steps() const { return steps_; }
  long long interval() const { return k_; }  // K, at most the N - 2 saved levels (and >= 1)
  // Segments in backward order: segment 0 is the last in time (the first pass's), segment
  // segments() - 1 starts at level 1.
  long long segments() const { return segments_; }
  Segment segment(long long j) const;
  long long segment_of(long long level) const;  // of a saved level
  // The forward pass: whether it saves the shell of `level` (segment 0's levels) and whether
  // `level` is a checkpoint (lo of every other segment), and which of checkpoints() it is.
  bool first_pass_saves(long long level) const;
  bool checkpointed(long long level) const;
  long long checkpoint_slot(long long level) const { return (level - 1) / k_; }
  long long checkpoints() const { return segments_ > 0 ? segments_ - 1 : 0; }
  // The segment whose replay runs before backward level n is rebuilt (n = its hi, segments
  // 1 ..), or -1.
  long long replayed_before(long long n) const;
  // The replay of segment j >= 1: forward steps lo .. hi - 1 (step n makes level n + 1), after
  // the shell of level lo is saved from the checkpoint; it saves levels lo .. hi.
  RtmSchedule::Range replay_steps(long long j) const;
  long long replay_steps() const;  // over every replay
  // Where level's shell is in the store of interval() slots.
  long long slot(long long level) const { return (level - 1) % k_; }
  // Bytes held: checkpoints() states, interval() shells, and the replay wave (a state) where
  // there is a replay.
  double bytes(double state_bytes, double shell_bytes) const;

 private:
  long long steps_, k_, saved_, segments_;
};

// migration.checkpoint_interval auto: the K that holds the fewest bytes (CheckpointPlan::bytes;
// about sqrt(N state / shell) where that is below N - 2), the larger K on a tie.
long long auto_checkpoint_interval(long long steps, double state_bytes, double shell_bytes);

}  // namespace seisrtm
