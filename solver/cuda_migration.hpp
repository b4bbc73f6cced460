#pragma once
// Migration on the GPU (the CUDA backend of seisrtm migrate): the CPU migrator's passes with
// the forward kernels (the adjoint field and the reversed source field are forward steps,
// docs/ADJOINT.md), the boundary store in device memory, and imaging kernels. Seven volumes
// live on the device: the source and receiver fields (two levels each), m, image and
// illumination; plus the boundary store and the shot's data. vti and tti (the forward
// backend's TTI step, separate backward kernels) add q of both fields (two levels each), a and
// b, and for tti theta and phi: 13 and 15 volumes; their store keeps the shell of p and q.
#include <memory>
#include <string>
#include <vector>

#include "solver/cuda_propagator.hpp"
#include "solver/decomposition.hpp"
#include "solver/migration.hpp"

namespace seisrtm {

// Volumes a migration keeps on the device: 7 (acoustic), 13 (vti), 15 (tti).
int migration_volumes(const Problem& pb);
// Device bytes of a migration: the volumes, the boundary store, the data, small arrays. With a
// slab (solver.decomposition z), those of that slab of `pb`'s grid: its planes' volumes and its
// own planes' part of the boundary shell.
struct MigrationFootprint {
  int volume_count = 7;  // migration_volumes
  // volume: one field or model volume (halves in fp16 storage); image_volume: the image's and
  // the illumination's (floats).
  std::size_t volume = 0, image_volume = 0, volumes = 0, store = 0, data = 0, total = 0;
  std::size_t store_per_step = 0;
  std::size_t total_host_store = 0;  // device bytes with the store in host memory (a ring of slots)
  std::size_t replay = 0;            // the replay field of checkpointed reconstruction (2 levels of p, q)
};
MigrationFootprint migration_footprint(const Problem& pb, const CudaOptions& o, const Slab* slab = nullptr);
// What the cuda backend refuses of a migration the CPU reference runs (migration.mode snapshots;
// image gathers or isic with fp16 storage), and the imaging condition's own checks; throws naming
// the keys. Called by the migrator and by migrate before the traces are read.
void check_cuda_migration(const Problem& pb, const CudaOptions& o);
// The host memory a GPU migration holds beside any pinned store (the exact stack, a shot's volumes,
// the image gathers' sums and copies); throws Error with the figures and the keys to change where
// it exceeds kHostMemoryMargin of `available` bytes (this rank's share).
double migration_host_bytes(const Problem& pb, const MigrationFootprint& fp);
void check_migration_host_memory(const Problem& pb, const MigrationFootprint& fp, double available);
// Device bytes a checkpointed plan leaves free beside its segment's store, which it otherwise
// sizes to the free bytes' last level.
constexpr std::size_t kSegmentReserve = std::size_t{512} << 20;
// Checkpointed reconstruction (migration.reconstruction: checkpoint, or auto where the store
// fits neither the device nor the host): the interval (migration.checkpoint_interval, or the
// one that holds the fewest bytes, from the whole grid's sizes so that every slab takes the
// same), two levels where one level's checkpoints do not fit the host (one GPU or one rank) or
// where asked (migration.coarse_checkpoint_interval), the checkpoints, their pinned host bytes
// and the device bytes of the whole migration.
// coarse_interval: two levels where above interval (CheckpointPlan); replay_steps: the forward
// steps the sweeps re-run.
// host_checkpoints of them in pinned host memory, the others in files under `directory` (disk
// bytes; migration.checkpoint_location); host: the pinned bytes, those checkpoints' and, with
// files, the bounce state they pass through.
struct CheckpointChoice {
  long long interval = 0, coarse_interval = 0, checkpoints = 0, replay_steps = 0, host_checkpoints = 0;
  std::size_t host = 0, device = 0, disk = 0;
  std::string directory;
  std::string describe() const;  // the checkpoints, their levels and what they cost
};
// The reconstruction a migration takes (migration.reconstruction, migration.store): the store on
// the device or in pinned host memory where it fits (auto: the device first), else checkpoints;
// `device`: the device bytes of the whole migration. Throws Error with the numbers and what
// would fit where nothing does. The same choice before the traces are read (seisrtm migrate's
// plan) and in the migrator. host: the host memory this rank may pin (negative: measured,
// available_host_memory() over the node's ranks); given by tests.
struct ReconstructionChoice {
  bool host_store = false;
  CheckpointChoice checkpoints;  // checkpoints 0: the store holds every level
  std::size_t device = 0;
  std::string describe(const MigrationFootprint& fp) const;
};
ReconstructionChoice choose_reconstruction(const Problem& pb, const Problem& global, const CudaOptions& o,
                                           const Slab* slab, const MigrationFootprint& fp, std::size_t free_b,
                                           std::size_t total_b, double host = -1);

class CudaMigrator final : public Migrator {
 public:
  CudaMigrator(const Problem& pb, const CudaOptions& options);
  // One slab of a z decomposition (SlabMigrator): `slab_pb` is the slab's problem (its receivers:
  // the data entries on its own planes), `global` the whole grid's. Every step of a field
  // computes the slab's edge planes (with their sources, data and boundary shell) and exchanges
  // them with the neighbours (NCCL) on a high-priority stream while the interior planes are
  // computed on the main stream, as CudaPropagator's slab step; the shell and the image are the
  // own planes' part of the whole grid's. Graphs are off (the exchange is not captured).
  // connect() must follow on every rank before the first shot.
  CudaMigrator(const Problem& slab_pb, const CudaOptions& options, const Slab& slab, const Problem& global);
  // Collective: the NCCL communicator of a slab of several (no-op otherwise).
  void connect();
  ~CudaMigrator() override;
  std::string name() const override;
  void migrate_shot(long long shot, const float* data, float* image, float* illumination,
                    const Progress& progress) override;
  // The stack stays in the device's image and illumination volumes until take_stack.
  bool begin_stack() override;
  void take_stack(float* image, float* illumination) override;
  void drop_stack() override;
  // Whether the backward pass runs the fused step (every slab of a decomposition must agree:
  // the fused step exchanges both fields in one group, the separate steps one at a time).
  bool fused() const;
  std::vector<std::string> notes() const { return notes_; }
  // Peak device memory of the run so far (cudaMemGetInfo) and one volume, bytes.
  Propagator::DeviceMemory device_memory() const;
  // For the adjoint test: F and F^T with the migrator's kernels and steps. model_traces maps
  // source functions f [point][step] injected at the points of `src` (with 1 / V, as a source)
  // to traces [receiver][step]; adjoint_traces maps traces back (validation/cpu_migration.hpp
  // has the formulas).
  std::vector<float> model_traces(const PointSet& src, const std::vector<float>& f);
  std::vector<float> adjoint_traces(const PointSet& src, const std::vector<float>& r);
  // Seconds of GPU time per phase, all shots so far (CUDA events around each kernel group).
  std::vector<std::pair<std::string, double>> breakdown() const;
  // For tests: p at time level n of the rebuilt source field (unpadded, whole grid; valid in
  // the interior box), called after each backward level when set. Copies: slow.
  std::function<void(long long n, const float* source_field)> on_source_level;

 private:
  struct Impl;
  void init(const Problem& global, const Slab* slab);
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> notes_;
};

}  // namespace seisrtm
