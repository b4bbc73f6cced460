#pragma once
// The boundary store of a migration: the shell of the source field (the interior box's cells
// outside the inner box) at levels 1 .. N - 2, saved by the forward pass and written back by the
// backward pass that rebuilds the field in reverse. A level keeps p's shell, and q's for vti/tti
// (the reverse rebuild steps both). One interface over the tiers: the store in device memory,
// or in pinned host memory through a ring of device slots.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "solver/device_buffer.hpp"

namespace seisrtm {

inline constexpr int kStoreRing = 8;  // device slots of a boundary store kept in host memory

// What a slot holds: the fields' elements as stored (f32; f16: __half in fp16 storage), or fp32
// fields in 2 bytes a cell (migration.store_precision): bf16, or scaled_f16 (fp16 of the value
// over the shot's field scale, set_scale).
enum class StoreElement { f32, f16, bf16, scaled_f16 };

// The shell cells by padded index (ascending, so a slab's parts are contiguous ranges).
struct ShellCells {
  DeviceBuffer cells;
  long long count = 0;
  bool narrow = false;      // indices as 32-bit (padded volume under 2^32 cells)
  long long split[4] = {};  // a slab's three parts: cells [split[k], split[k + 1])
};

class BoundaryStore {
 public:
  // fields: 1 (p) or 2 (p and q); levels: N - 2 (or a checkpoint segment's).
  // `counter` is the level counter in device memory that graph-safe tiers read (forward: it
  // holds L - 1 when level L is saved; backward: L when level L is restored).
  BoundaryStore(ShellCells shell, int fields, long long levels, StoreElement element, cudaStream_t stream,
                const DeviceBuffer& counter);
  virtual ~BoundaryStore() = default;
  BoundaryStore(const BoundaryStore&) = delete;
  BoundaryStore& operator=(const BoundaryStore&) = delete;

  // Forward: level L's shell of p (and q: null for acoustic) into the store.
  virtual void save(long long level, const DeviceBuffer& p, const DeviceBuffer* q) = 0;
  // Backward: level L's shell back into p (and q), once it is on the device; then its slot
  // is free.
  virtual void restore(long long level, const DeviceBuffer& p, const DeviceBuffer* q) = 0;
  // Before the backward pass: the first levels it restores, from `level` down.
  virtual void prefetch(long long) {}
  // A slab's parts (restore_part on stream `on`): `on` waits for level L first; release(L)
  // once every part's restore is queued.
  virtual void wait(long long, cudaStream_t) {}
  virtual void release(long long) {}
  // Whether save and restore may be captured in a graph that replays for later levels.
  virtual bool graph_safe() const = 0;
  // Whether the levels live in pinned host memory (a ring of device slots in front).
  virtual bool on_host() const = 0;
  // Checkpointed reconstruction (solver/rtm_schedule.hpp, CheckpointPlan): the store holds one
  // segment of levels, the first of them `level` (slot 0) from now on; graphs captured after
  // this call address that segment's slots. A store of every level starts at level 1.
  virtual void set_first(long long level);
  // scaled_f16: the shot's field scale (a power of two), before its forward pass; graphs
  // captured after this call carry it.
  void set_scale(float scale) { scale_ = scale; }
  // One part of level L's shell back into p (and q), on stream `on` (fp32 fields, in any of the
  // store's elements: a slab stores fp32 levels).
  void restore_part(long long level, int part, const DeviceBuffer& p, const DeviceBuffer* q, cudaStream_t on);
  const ShellCells& shell() const { return shell_; }

 protected:
  // Element offsets of level L's p and q shells in the device buffer.
  virtual long long p_offset(long long level) const = 0;
  virtual long long q_offset(long long level) const = 0;
  long long per_level() const { return fields_ * shell_.count; }
  std::size_t element_bytes() const { return element_ == StoreElement::f32 ? sizeof(float) : 2; }
  void gather(const DeviceBuffer& p, long long to);
  void scatter(const DeviceBuffer& p, long long from);
  // The same at the slot of the level counter plus slot_offset (graph-safe).
  void gather_at(const DeviceBuffer& p, long long to, long long slot_offset);
  void scatter_at(const DeviceBuffer& p, long long from, long long slot_offset);
  void scaled(bool to_store, const DeviceBuffer& p, long long at, const long long* level, long long slot_offset,
              long long a, long long n, cudaStream_t on) const;

  ShellCells shell_;
  int fields_;
  long long levels_;
  StoreElement element_;
  float scale_ = 1;
  cudaStream_t stream_;
  const DeviceBuffer& counter_;
  DeviceBuffer store_;
};

// host: in pinned host memory (a ring of device slots), else the whole store on the device.
// store_bytes: the whole store's bytes; slot_bytes: one level's.
std::unique_ptr<BoundaryStore> make_boundary_store(bool host, ShellCells shell, int fields, long long levels,
                                                   StoreElement element, std::size_t store_bytes,
                                                   std::size_t slot_bytes, cudaStream_t stream,
                                                   const DeviceBuffer& counter);

}  // namespace seisrtm
