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
// The source field is made by forward sweeps: the first pass from rest, and before the rebuild of
// level hi of every other segment, a replay that restores a checkpoint (the full state: the two
// levels lo and lo - 1 of each field it steps) into a third wave and re-runs forward steps from
// there, saving the segment's shells into the same store: the levels, and so the shells, are the
// first pass's bit for bit (the same deterministic steps from the same state).
//
// One level (coarse interval K): a checkpoint at the lo of every segment but the last in time,
// saved by the first pass; a segment's replay starts at its own lo. Memory: ceil((N - 2) / K) - 1
// states + K shells + the replay wave; cost: about one more forward pass.
//
// Two levels (coarse interval K1 = m K, m >= 2), for records whose one-level checkpoints do not
// fit the host: segments fall into groups of m from level 1 up; the first pass keeps a checkpoint
// at the lo of every group, and within the last group the lo of each segment but its last. A
// group's last segment is replayed from the group's checkpoint by a sweep over the whole group
// that also keeps the lo of each of the group's other segments (in m - 2 slots the groups share
// in turn: a group's are used up before the next group back is swept); those segments replay from
// their own checkpoint as in one level. Memory: a checkpoint a group (less one where the last
// group is segment 0 alone) + m - 2 states + K shells + the replay wave; cost: about two more
// forward passes (replay_steps).
class CheckpointPlan {
 public:
  struct Segment {
    long long lo = 0, hi = 0;  // saved levels lo .. hi
  };
  // A forward sweep of the source field: from the state at level `from` (levels from and
  // from - 1; from 0: the first pass, from rest) its steps from .. to - 1 make levels from + 1 ..
  // to. It saves a checkpoint after each level that checkpoint_after() names and the shells of
  // levels shells_from .. to (a replay with shells_from == from: that level's shell from the
  // restored state itself).
  struct Sweep {
    long long from = 0, to = 0, shells_from = 0;
    RtmSchedule::Range steps() const { return {from, to - from, 1}; }
  };
  // interval: K, levels between checkpoints (>= 1); K >= N - 2 is one segment, the plain boundary
  // store. coarse_interval: K1, rounded down to a multiple of K (one level where that is below 2 K
  // or holds every segment).
  CheckpointPlan(long long steps, long long interval, long long coarse_interval = 0);
  long long steps() const { return steps_; }
  long long interval() const { return k_; }          // K, at most the N - 2 saved levels (and >= 1)
  long long coarse_interval() const { return k1_; }  // K1 = m K; K for one level
  bool two_level() const { return k1_ > k_; }
  // Segments in backward order: segment 0 is the last in time (the first pass's), segment
  // segments() - 1 starts at level 1.
  long long segments() const { return segments_; }
  Segment segment(long long j) const;
  long long segment_of(long long level) const;  // of a saved level
  // The sweeps: the first pass, and the one that runs before backward level n is rebuilt (n the
  // hi of a segment other than segment 0; else a sweep with no steps and no shells: to == 0).
  Sweep first_pass() const;
  Sweep sweep_before(long long n) const;
  // The checkpoint slot sweep w fills after making `level` (a level it makes, below its
  // shells_from), or -1.
  long long checkpoint_after(const Sweep& w, long long level) const;
  // The slot that holds the checkpoint at `level` (a sweep's from), or -1 where none does.
  long long checkpoint_slot(long long level) const;
  long long checkpoints() const { return coarse_slots_ + fine_slots_; }  // slots
  long long replay_steps() const;                                        // the steps of every sweep but the first pass
  // Where level's shell is in the store of interval() slots.
  long long slot(long long level) const { return (level - 1) % k_; }
  // Bytes held: checkpoints() states, interval() shells, and the replay wave (a state) where
  // there is a replay.
  double bytes(double state_bytes, double shell_bytes) const;

 private:
  long long group_of(long long level) const { return (level - 1) / k1_; }  // from level 1 up
  long long last_in_group(long long g) const;  // the index within group g of its last segment
  long long steps_, k_, k1_, saved_, segments_, coarse_slots_ = 0, fine_slots_ = 0;
};

// migration.checkpoint_interval auto: the K that holds the fewest bytes (CheckpointPlan::bytes;
// about sqrt(N state / shell) where that is below N - 2), the larger K on a tie.
long long auto_checkpoint_interval(long long steps, double state_bytes, double shell_bytes);
// migration.coarse_checkpoint_interval auto where one level's checkpoints do not fit: the coarse
// interval K1 (a multiple of K) with the fewest checkpoints at interval K (about m = sqrt((N - 2)
// / K) segments a group), the fewer replay steps on a tie; K where two levels hold no fewer.
long long auto_coarse_interval(long long steps, long long interval);

}  // namespace seisrtm
