#include "solver/cuda_migration.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>

#include "base/format.hpp"
#include "kernels/acoustic.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"
#include "solver/boundary_store.hpp"
#include "solver/capabilities.hpp"
#include "solver/checkpoints.hpp"
#include "solver/cluster.hpp"
#include "solver/device_info.hpp"
#include "solver/device_model.hpp"
#include "solver/device_points.hpp"
#include "solver/device_wavefield.hpp"
#include "solver/memory_estimate.hpp"
#include "solver/memory_watch.hpp"
#include "solver/phase_timer.hpp"
#include "solver/rtm_gathers.hpp"
#include "solver/rtm_imager.hpp"
#include "solver/rtm_schedule.hpp"
#include "solver/slab_overlap.hpp"
#include "solver/step_graph.hpp"
#include "solver/step_operator.hpp"
#include "solver/storage.hpp"
#include "solver/tensor_map.hpp"

namespace seisrtm {

namespace {

constexpr long long kRowAlign = 32;  // floats, as the forward backend

// The interior and inner boxes of a migration (solver/migration.hpp): the whole grid's, or
// their own-plane parts in a slab's coordinates.
std::pair<CellBox, CellBox> migration_boxes(const Problem& global, const Slab* slab) {
  if (!slab) return {interior_box(global), inner_box(global)};
  return {slab_box(interior_box(global), *slab), slab_box(inner_box(global), *slab)};
}

}  // namespace

int migration_volumes(const Problem& pb) {
  // acoustic: s, s_prev, r, r_prev, m, image, illumination; vti: + q and q_prev of both fields,
  // a and b; tti: + theta and phi.
  return 7 + (pb.equation == Equation::tti ? 8 : pb.equation == Equation::vti ? 6 : 0);
}

MigrationFootprint migration_footprint(const Problem& pb, const CudaOptions& o, const Slab* slab) {
  MigrationFootprint f;
  f.volume_count = migration_volumes(pb);
  const long long nxp = (pb.grid.n[0] + kRowAlign - 1) / kRowAlign * kRowAlign;
  const std::size_t cells = static_cast<std::size_t>(nxp * pb.grid.n[1] * (slab ? slab->planes() : pb.grid.n[2]));
  const std::size_t eb = kernels::storage_bytes(o.storage);
  f.volume = cells * eb;
  f.image_volume = cells * sizeof(float);
  const auto [interior, inner] = migration_boxes(pb, slab);
  const long long shell_cells = interior.cells() - inner.cells();
  const std::size_t round = o.memory == MemoryKind::compressible ? (2u << 20) : 0;
  f.volumes = (f.volume_count - 2) * (f.volume + round) + 2 * (f.image_volume + round);
  // migration.gathers: 4 bytes a value over the grid's or the slab's planes.
  f.volumes += RtmGathers::bytes(gather_layout(pb), slab ? slab->planes() : pb.grid.n[2]);
  // isic: 1 / (v^2 dt^2) and the receiver field's change dR, image-sized volumes.
  if (pb.config.migration->imaging_condition == ImagingCondition::isic) f.volumes += 2 * (f.image_volume + round);
  const bool boundary = pb.config.migration->mode == MigrationMode::boundary;
  // vti/tti rebuild p and q in reverse, so a level keeps the shell of both (twice the store).
  const std::size_t fields = pb.anisotropic() ? 2 : 1;
  // The store's element: the field's, or 2 bytes (migration.store_precision bf16, fp16; fp32 storage).
  const std::size_t sb = pb.config.migration->store_precision != StorePrecision::fp32 ? 2 : eb;
  f.store_per_step = boundary ? fields * static_cast<std::size_t>(shell_cells) * sb : 0;
  if (!boundary) f.store_per_step = f.volume / static_cast<std::size_t>(pb.config.migration->image_interval);
  f.store = boundary ? f.store_per_step * static_cast<std::size_t>(std::max(0LL, pb.steps - 2))
                     : f.volume * static_cast<std::size_t>(pb.steps / pb.config.migration->image_interval);
  f.data = static_cast<std::size_t>(pb.max_receivers() * pb.steps) * sizeof(float);  // a shot's rows
  const std::size_t small = (pb.grid.n[0] + pb.grid.n[1] + pb.grid.n[2] + pb.steps) * sizeof(float) +
                            (pb.receivers.cell.size() + 64) * 24 + static_cast<std::size_t>(shell_cells) * 8;
  // A slab of several also holds NCCL's communicator and channel buffers (a few hundred MiB at
  // the 4 CTAs nccl_halo.cpp sets; 512 MiB counted).
  const std::size_t nccl = slab && slab->ranks > 1 ? (512u << 20) : 0;
  f.total = f.volumes + f.store + f.data + small + (16u << 20) + nccl;
  f.total_host_store = f.volumes + f.data + small + (16u << 20) + nccl + kStoreRing * f.store_per_step;
  f.replay = 2 * fields * (f.volume + round);
  return f;
}

namespace {

// The host's memory a rank may pin (ranks on one node share it: each counts its share, as none
// has pinned yet), and the host's own volumes beside the pinned bytes: the exact stack (32
// bytes a cell: 8 volumes, exact_stack.hpp), a shot's image and illumination, the model and the
// data (about 12 volumes), then the four images (the shot's pair freed); vti/tti also hold
// epsilon and delta, tti the angles.
double host_share(double given = -1) {
  if (given >= 0) return given;
  return available_host_memory() / std::max(1, cluster::local_size());
}
double host_own_volumes(const Problem& pb) {
  return 14.0 + (pb.equation == Equation::tti ? 4 : pb.equation == Equation::vti ? 2 : 0);
}

}  // namespace

void check_cuda_migration(const Problem& pb, const CudaOptions& o) {
  const MigrationConfig& mc = *pb.config.migration;
  check_imaging_condition(mc, pb.equation);
  if (mc.mode != MigrationMode::boundary)
    throw Error(
        "config key 'migration.mode' snapshots runs on the CPU backend only (the GPU keeps the boundary "
        "store); use migration.mode: boundary or solver.backend: cpu");
  const bool half = o.storage == kernels::Storage::fp16;
  if (mc.gathers.enabled() && half)
    throw Error(
        "config key 'migration.gathers' needs solver.storage: fp32 on the cuda backend (the gathers read "
        "float fields)");
  if (mc.imaging_condition == ImagingCondition::isic && half)
    throw Error(
        "config key 'migration.imaging_condition' isic needs solver.storage: fp32 on the cuda backend (its "
        "differences read float fields)");
}

// The host's own volumes' bytes, with the image gathers' (and their pinned copy: 4 bytes a value).
double migration_host_bytes(const Problem& pb, const MigrationFootprint& fp) {
  return host_own_volumes(pb) * double(fp.image_volume) + gather_host_bytes(pb) +
         4.0 * double(gather_layout(pb).values());
}

void check_migration_host_memory(const Problem& pb, const MigrationFootprint& fp, double available) {
  const double need = migration_host_bytes(pb, fp);
  if (available <= 0 || need <= kHostMemoryMargin * available) return;
  const double gathers = need - host_own_volumes(pb) * double(fp.image_volume);
  throw Error("the migration needs " + gib(static_cast<std::size_t>(need)) +
              " of host memory beside the GPU (the exact stack and a shot's volumes" +
              (gathers > 0 ? ", and " + gib(static_cast<std::size_t>(gathers)) + " for the image gathers" : "") +
              ") but " + gib(static_cast<std::size_t>(available)) + " is available" +
              (gathers > 0.5 * need ? "; fewer gather locations (migration.gathers.x_every, y_every) or offsets "
                                      "(migration.gathers.offsets)"
                                    : "; a coarser grid.shape"));
}

namespace {

// Where the store goes (migration.store) and whether it fits there.
struct StoreTier {
  bool host = false, fits = false;
};
StoreTier store_tier(const Problem& pb, const MigrationFootprint& fp, std::size_t free_b, double host) {
  const StoreLocation where = pb.config.migration->store;
  const double host_free = host_share(host);
  const bool host_fits = host_free > 0 && double(fp.store) + migration_host_bytes(pb, fp) < 0.8 * host_free;
  StoreTier t;
  t.host = where == StoreLocation::host || (where == StoreLocation::automatic && fp.total > free_b && host_fits);
  t.fits = (t.host ? fp.total_host_store : fp.total) <= free_b && (!t.host || host_fits);
  return t;
}

// Where the store goes (true: pinned host memory) for the GPU's free and total bytes; throws
// Error with the numbers and the step count that would fit when neither place does.
bool migration_store_on_host(const Problem& pb, const MigrationFootprint& fp, std::size_t free_b, std::size_t total_b,
                             double host) {
  const StoreTier tier = store_tier(pb, fp, free_b, host);
  if (!tier.fits) {
    const double host_free = host_share(host);
    const std::size_t spare =
        free_b > fp.volumes + fp.data + (64u << 20) ? free_b - fp.volumes - fp.data - (64u << 20) : 0;
    // Fewer steps (time.steps; auto = the whole record) migrate only the start of the record:
    // said only where the two steps a migration needs fit at all.
    const long long fit = static_cast<long long>(spare / std::max<std::size_t>(1, fp.store_per_step));
    const std::string device_fix =
        fit >= 2 ? "the store would fit the device for about " + std::to_string(fit) + " of the " +
                       std::to_string(pb.steps) + " steps (time.steps " + std::to_string(fit) +
                       " migrates only the start of the record)"
                 : "the volumes and the data leave no room on the device for the store of even 2 steps";
    throw Error("the migration needs " + gib(fp.total) + " of GPU memory (" + std::to_string(fp.volume_count) +
                " volumes " + gib(fp.volumes) + ", boundary store " + gib(fp.store) +
                (pb.anisotropic() ? " of p and q" : "") + " for " + std::to_string(pb.steps) + " steps, data " +
                gib(fp.data) + ") but the GPU has " + gib(free_b) + " free of " + gib(total_b) + "; " + device_fix +
                "; in host memory it needs " + gib(fp.store) + " pinned plus about " +
                gib(static_cast<std::size_t>(migration_host_bytes(pb, fp))) +
                " for the host's own volumes, within 80% of the " + gib(static_cast<std::size_t>(host_free)) +
                " available (migration.store: host); migration.reconstruction: checkpoint keeps one segment of the "
                "store, or use solver.backend: cpu");
  }
  return tier.host;
}

// Throws Error with the numbers where the device (free_b; it holds the store of device_levels
// levels beside the volumes), the checkpoint directory or the host (host_free, pinned within 80%
// of it beside `own` bytes of its own volumes; `state` bytes a checkpoint) cannot hold `c`.
void check_checkpoint_room(const CheckpointChoice& c, bool two_level, std::size_t free_b, long long device_levels,
                           double host_free, double own, std::size_t state) {
  const double room = 0.8 * host_free - own;
  const std::string what = c.describe() + " (" + gib(c.host) + " of pinned host memory" +
                           (c.disk > 0 ? ", " + gib(c.disk) + " in " + c.directory : "") +
                           ") and a boundary store of " + std::to_string(c.interval) +
                           " levels with the replay field on the device (" + gib(c.device) + " in all)";
  if (c.device > free_b)
    throw Error("the checkpointed migration needs " + what + " but the GPU has " + gib(free_b) + " free; " +
                (device_levels >= 1 ? "it holds the store of at most " + std::to_string(device_levels) +
                                          " levels beside the volumes (migration.checkpoint_interval " +
                                          std::to_string(device_levels) + " or less)"
                                    : "the volumes and the data leave no room for the store of one level"));
  if (c.disk > 0) {
    std::error_code ec;
    const std::filesystem::space_info sp = std::filesystem::space(c.directory, ec);
    if (ec || !std::filesystem::is_directory(c.directory))
      throw Error("config key 'migration.checkpoint_directory' '" + c.directory + "' is not a directory" +
                  (ec ? " (" + ec.message() + ")" : std::string()) + "; the checkpointed migration puts " +
                  std::to_string(c.checkpoints - c.host_checkpoints) + " checkpoints (" + gib(c.disk) + ") there");
    if (double(sp.available) < double(c.disk))
      throw Error("the checkpointed migration needs " + what + " but '" + c.directory + "' has " +
                  gib(static_cast<std::size_t>(sp.available)) +
                  " available (migration.checkpoint_directory: a directory with room for them)");
  }
  if (c.checkpoints > 0 && c.host > 0 && !(host_free > 0 && double(c.host) <= room)) {
    // What fits: the checkpoints the host holds, and the record they cover (one level at this
    // interval; two levels: about (fit / 2 + 1)^2 segments).
    const long long fit = room > 0 ? static_cast<long long>(room / double(state)) : 0;
    const long long one = (fit + 1) * c.interval + 2, two = (fit / 2 + 1) * (fit / 2 + 1) * c.interval + 2;
    throw Error("the checkpointed migration needs " + what + " but the host has " +
                gib(static_cast<std::size_t>(std::max(0.0, host_free))) +
                " available (pinned within 80% of it, beside about " + gib(static_cast<std::size_t>(own)) +
                " of the host's own volumes): it holds " + std::to_string(fit) + " checkpoints, a record of about " +
                std::to_string(two_level ? std::max(one, two) : one) + " steps at this interval (time.steps)" +
                (two_level || fit < 2 ? "" : ", or " + std::to_string(two) + " with two levels of checkpoints") +
                ", or a directory for the checkpoints beyond that (migration.checkpoint_directory), or split the grid "
                "over more GPUs (solver.decomposition: z)");
  }
}

// The checkpoint interval and the memory it takes; throws Error with the numbers where the
// device or the host cannot hold them.
CheckpointChoice migration_checkpoints(const Problem& pb, const Problem& global, const CudaOptions& o, const Slab* slab,
                                       const MigrationFootprint& fp, std::size_t free_b, double host) {
  const long long nt = pb.steps;
  const int fields = pb.anisotropic() ? 2 : 1;
  const std::size_t state = Checkpoints::host_bytes(1, fp.volume, pb.anisotropic());
  // The device holds everything but the store, the replay field, and the segment's levels, with
  // 512 MiB to spare: the segment that filled the free bytes to the last one failed to allocate
  // (the allocations' rounding and the context's own).
  const std::size_t besides = fp.total - fp.store + fp.replay + kSegmentReserve;
  const long long device_levels =
      free_b > besides ? static_cast<long long>((free_b - besides) / std::max<std::size_t>(1, fp.store_per_step)) : 0;
  const long long set = pb.config.migration->checkpoint_interval;
  long long k = set;
  if (set == 0) {
    // The interval from the whole grid's sizes, so that every slab of a decomposition takes the
    // same; one GPU takes at most the levels it holds.
    const MigrationFootprint g = slab ? migration_footprint(global, o) : fp;
    k = auto_checkpoint_interval(nt, 2.0 * fields * double(g.volume), double(g.store_per_step));
    if (!(slab && slab->ranks > 1)) k = std::max(1LL, std::min(k, device_levels));
  }
  const double host_free = host_share(host), own = migration_host_bytes(pb, fp);
  const double room = 0.8 * host_free - own;
  // Two levels where asked (migration.coarse_checkpoint_interval), or (auto, one GPU or one
  // rank: the slabs of a decomposition take the same plan) where one level's checkpoints do
  // not fit the host even at the longest segment the device holds (interval auto).
  const MigrationConfig& mc = *pb.config.migration;
  long long k1 = mc.coarse_checkpoint_interval;
  const bool disk = mc.checkpoint_location == CheckpointLocation::disk;
  auto host_holds = [&](long long interval, long long coarse) {
    return double(CheckpointPlan(nt, interval, coarse).checkpoints()) * double(state) <= std::max(0.0, room);
  };
  if (k1 == 0 && !disk && !(slab && slab->ranks > 1) && !host_holds(k, 0)) {
    if (set == 0) k = std::max(1LL, device_levels);
    if (!host_holds(k, 0)) k1 = auto_coarse_interval(nt, k);
    // Where even two levels do not fit the host, a directory takes one level's beyond it.
    if (!host_holds(k, k1) && mc.checkpoint_location == CheckpointLocation::automatic &&
        !mc.checkpoint_directory.empty())
      k1 = 0;
  }
  const CheckpointPlan plan(nt, k, k1);
  // The checkpoints the host holds; those beyond go to the directory (location disk: all).
  const long long host_fit = room > 0 ? static_cast<long long>(room / double(state)) : 0;
  const bool spill = disk || (mc.checkpoint_location == CheckpointLocation::automatic &&
                              !mc.checkpoint_directory.empty() && plan.checkpoints() > host_fit);
  CheckpointChoice c;
  c.interval = plan.interval();
  c.coarse_interval = plan.coarse_interval();
  c.checkpoints = plan.checkpoints();
  c.replay_steps = plan.replay_steps();
  // Files go up and down through one pinned state (the bounce state), beside the pinned ones.
  c.host_checkpoints = spill ? (disk ? 0 : std::min(c.checkpoints, std::max(0LL, host_fit - 1))) : c.checkpoints;
  const long long bounce = c.host_checkpoints < c.checkpoints ? 1 : 0;
  c.host = static_cast<std::size_t>(c.host_checkpoints + bounce) * state;
  c.disk = static_cast<std::size_t>(c.checkpoints - c.host_checkpoints) * state;
  if (c.disk > 0) c.directory = mc.checkpoint_directory;
  c.device = fp.total - fp.store + static_cast<std::size_t>(c.interval) * fp.store_per_step +
             (c.checkpoints > 0 ? fp.replay : 0);
  check_checkpoint_room(c, plan.two_level(), free_b, device_levels, host_free, own, state);
  return c;
}

// Why the fused backward step cannot run this migration (null: it can), whatever
// migration.fused asks: init's test, and the reason name() gives.
const char* fused_step_blocker(const Problem& pb, const CudaOptions& o, const VolumeDims& d) {
  if (pb.anisotropic()) return "the fused step is acoustic";
  if (o.variant != kernels::Variant::tma) return "the fused step is the tma variant's";
  if (!kernels::fused_backward_supported(pb.radius, d.nxp * d.ny))
    return pb.radius > 4 ? "the fused step takes space orders up to 8" : "a plane of 2^31 cells or more";
  return nullptr;
}

}  // namespace

ReconstructionChoice choose_reconstruction(const Problem& pb, const Problem& global, const CudaOptions& o,
                                           const Slab* slab, const MigrationFootprint& fp, std::size_t free_b,
                                           std::size_t total_b, double host) {
  const Reconstruction how = pb.config.migration->reconstruction;
  ReconstructionChoice r;
  // auto takes checkpoints only where the store fits nowhere, with migration.store left to auto,
  // and on one GPU or one rank: the slabs of a decomposition would each judge their own store
  // (the edge slabs hold the z faces), and ranks that replay exchange halos the others never post;
  // they take checkpoints when asked (migration.reconstruction: checkpoint).
  const bool may_checkpoint = pb.config.migration->store == StoreLocation::automatic && !(slab && slab->ranks > 1);
  if (how == Reconstruction::store ||
      (how == Reconstruction::automatic && (!may_checkpoint || store_tier(pb, fp, free_b, host).fits))) {
    r.host_store = migration_store_on_host(pb, fp, free_b, total_b, host);
    r.device = r.host_store ? fp.total_host_store : fp.total;
    return r;
  }
  if (how == Reconstruction::checkpoint && pb.config.migration->store == StoreLocation::host)
    throw Error(
        "config keys 'migration.store' host and 'migration.reconstruction' checkpoint: a checkpointed migration keeps "
        "its segment of the store on the device (the checkpoints in host memory); use migration.store: auto or device");
  r.checkpoints = migration_checkpoints(pb, global, o, slab, fp, free_b, host);
  r.device = r.checkpoints.device;
  return r;
}

std::string CheckpointChoice::describe() const {
  if (coarse_interval <= interval)
    return std::to_string(checkpoints) + " checkpoints every " + std::to_string(interval) +
           " levels (about one more forward pass: " + std::to_string(replay_steps) + " steps)";
  return std::to_string(checkpoints) + " checkpoints in two levels, every " + std::to_string(coarse_interval) +
         " and every " + std::to_string(interval) +
         " levels within (about two more forward passes: " + std::to_string(replay_steps) + " steps)";
}

std::string ReconstructionChoice::describe(const MigrationFootprint& fp) const {
  if (checkpoints.checkpoints > 0)
    return checkpoints.describe() + ", " + gib(checkpoints.host) + " of pinned host memory" +
           (checkpoints.disk > 0 ? " and " + gib(checkpoints.disk) + " (" +
                                       std::to_string(checkpoints.checkpoints - checkpoints.host_checkpoints) +
                                       " checkpoints) in files under " + checkpoints.directory
                                 : "") +
           ", and a boundary store of " + std::to_string(checkpoints.interval) + " levels (" +
           gib(fp.store_per_step * static_cast<std::size_t>(checkpoints.interval)) +
           ") with the replay field on the device";
  return "boundary store " + gib(fp.store) + (host_store ? " in pinned host memory" : " on the device");
}

// A migration as a composition: the model, the source field (forward, then rebuilt in reverse)
// and the receiver field, their step operator, the points, the boundary store, the imager, a
// slab's overlap of step and exchange, and the phase timer.
struct CudaMigrator::Impl {
  const Problem& pb;
  CudaOptions opt;
  VolumeDims dims;
  bool half = false;   // fp16 storage (solver/storage.hpp; as CpuMigrator::store_as_half emulates)
  bool fused = false;  // the fused backward step (tma, radius <= 4, migration.fused)
  CudaStream stream;
  DeviceModel model;
  DeviceWavefield s, r;
  std::unique_ptr<StepOperator> op;
  // The shot's series: the source (the wavelet, one row for every point) and the receivers
  // (the shot's data, a row of nt samples a receiver).
  struct Series {
    DeviceInjection points;
    DeviceBuffer samples;
    long long stride = 0;  // samples from one point's row to the next (0: one row)
  } source, receivers;
  // The level counter in device memory: injections and the device store read their time index
  // from it, so one captured graph replays for every later group of steps.
  DeviceBuffer level;
  std::unique_ptr<BoundaryStore> store;
  std::unique_ptr<Checkpoints> checkpoints;  // checkpointed reconstruction (null: the store holds every level)
  RtmImager imager;
  RtmGathers gathers;                    // migration.gathers
  std::unique_ptr<SlabOverlap> overlap;  // a slab of a z decomposition
  PhaseTimer timer;
  // fp16: the source field holds s / scales.s, the receiver field r / scales.r (per shot: the
  // wavelet's and the data's largest injections at 2^kHalfPeakExponent).
  struct FieldScales {
    float s = 1, r = 1;
    std::vector<float> store;  // an fp16 store's, per shot, from the whole grid (solver/storage.hpp)
  } scales;
  MemoryWatch memory;

  Impl(const Problem& p, const CudaOptions& o) : pb(p), opt(o) {}

  long long* lvl() { return level.as<long long>(); }
  void set_level(long long v) {
    SEISRTM_CUDA(cudaMemcpyAsync(lvl(), &v, sizeof v, cudaMemcpyHostToDevice, stream.get()));
  }
  void add_level(long long delta) { kernels::launch_add_level(lvl(), delta, stream.get()); }
  // Whether each step of a field runs beside its halo exchange (a slab of several).
  bool slabs() const { return overlap && overlap->connected(); }

  // A series term into the level in buffer c of field w, its sample from the level counter plus
  // offset: into p, and for vti/tti into q as well (the pair's source enters both fields, the
  // data with the acoustic scaling, as CpuMigrator's inject_source and inject_data do).
  void inject_at(DeviceWavefield& w, int c, const Series& ser, long long offset) {
    const kernels::SeriesInjection& inj = ser.points.inj;
    const float* series = ser.samples.as<float>();
    const long long stride = ser.stride;
    if (half)
      kernels::launch_inject_series_at(w.p[c].as<__half>(), inj, series, stride, lvl(), offset, stream.get());
    else
      kernels::launch_inject_series_at(w.p[c].as<float>(), inj, series, stride, lvl(), offset, stream.get());
    if (pb.anisotropic())
      kernels::launch_inject_series_at(w.q[c].as<float>(), inj, series, stride, lvl(), offset, stream.get());
  }
  // The same with the sample given (model_traces, adjoint_traces).
  void inject(DeviceWavefield& w, int c, const kernels::SeriesInjection& inj, const float* series, long long stride,
              long long sample) {
    if (half)
      kernels::launch_inject_series(w.p[c].as<__half>(), inj, series, stride, sample, stream.get());
    else
      kernels::launch_inject_series(w.p[c].as<float>(), inj, series, stride, sample, stream.get());
    if (pb.anisotropic()) kernels::launch_inject_series(w.q[c].as<float>(), inj, series, stride, sample, stream.get());
  }
  // One part of a series term into buffer c of field w (p, and q for vti/tti) in stream `on`.
  void inject_part(DeviceWavefield& w, const Series& ser, int c, int part, long long offset, cudaStream_t on) {
    const kernels::SeriesInjection inj = ser.points.part(part);
    const float* series = ser.samples.as<float>();
    kernels::launch_inject_series_at(w.p[c].as<float>(), inj, series, ser.stride, lvl(), offset, on);
    if (pb.anisotropic())
      kernels::launch_inject_series_at(w.q[c].as<float>(), inj, series, ser.stride, lvl(), offset, on);
  }
  // A slab's step beside its exchange: work(part, stream) for the edge parts 0 and 2 on the
  // halo stream, then the exchange of the new level in buffer c of w (and of `other`'s in its
  // buffer c_other: the fused step), work(1) on the main stream meanwhile.
  void beside(const std::function<void(int part, cudaStream_t on)>& work, const DeviceWavefield& w, int c,
              const DeviceWavefield* other = nullptr, int c_other = 0) {
    float* fields[4];
    int n = 0;
    auto add = [&](const DeviceWavefield& g, int k) {
      fields[n++] = g.p[k].as<float>();
      if (pb.anisotropic()) fields[n++] = g.q[k].as<float>();
    };
    add(w, c);
    if (other) add(*other, c_other);
    const cudaStream_t m = stream.get();
    overlap->step(
        m, overlap->ready(m),
        [&](cudaStream_t h) {
          work(0, h);
          work(2, h);
        },
        fields, n, dims.nxp * dims.ny, [&](cudaStream_t on) { work(1, on); });
  }
  // A restore of level n into the source field's buffer c over a slab's part (the store's
  // wait for the level first: host store, only the scatter waits for the level's upload).
  void restore_part(long long n, int c, int part, cudaStream_t on) {
    store->wait(n, on);
    store->restore_part(n, part, s.p[c], s.q_at(c), on);
  }

  void init(const Problem& global, const Slab* slab, std::vector<std::string>& notes);
  void allocate_fields(const MigrationFootprint& fp, std::string& warning);
  // The store's tier and the levels it holds (plan_reconstruction).
  struct StorePlan {
    bool host = false;
    long long levels = 0;
  };
  void build_store(const MigrationFootprint& fp, const CellBox& interior, const CellBox& inner, StorePlan plan);
  // The reconstruction: the store's tier, or checkpoints (migration.reconstruction).
  StorePlan plan_reconstruction(const Problem& global, const Slab* slab, const MigrationFootprint& fp,
                                std::size_t free_b, std::size_t total_b, std::vector<std::string>& notes);
  void encode_maps();
  StoreElement store_element() const {
    if (half) return StoreElement::f16;
    switch (pb.config.migration->store_precision) {
      case StorePrecision::bf16:
        return StoreElement::bf16;
      case StorePrecision::fp16:
        return StoreElement::scaled_f16;
      case StorePrecision::fp32:
        break;
    }
    return StoreElement::f32;
  }
  // The passes of one shot.
  struct Pass {
    const RtmSchedule& schedule;
    const Progress& progress;
    long long report;  // steps between progress reports
    StepGraph graph;
    const std::function<void(long long n, const float* source_field)>& on_source_level;
    const CheckpointPlan* plan;  // checkpointed reconstruction, else null
  };
  void begin_shot(long long shot, const float* shot_data);
  void forward(const Pass& pass);
  void forward_step(DeviceWavefield& w, long long n, bool marks, bool save);
  // Checkpointed reconstruction: the steps of a sweep in field f, a sweep before the rebuild of
  // a segment, and the rebuilding levels r in runs that each stay within one segment, the
  // segment's sweep first.
  void sweep_steps(const Pass& pass, DeviceWavefield& f, const CheckpointPlan::Sweep& w,
                   const std::function<void(long long)>& report, const std::function<void()>& launched);
  void sweep(const Pass& pass, const CheckpointPlan::Sweep& w);
  void by_segment(const Pass& pass, const RtmSchedule::Range& r,
                  const std::function<void(const RtmSchedule::Range&)>& run);
  void receiver_step(bool marks);
  void leading_receiver_step() {
    receiver_step(true);
    add_level(-1);
  }
  void source_step(long long n, bool marks);
  void after_backward(const Pass& pass, long long n);
  void backward_separate(const Pass& pass);
  void backward_fused(const Pass& pass);
  void fused_step(long long n, bool marks, kernels::FusedArgs& fa, const RtmSchedule& sc);
  // isic: before the receiver step that makes chi^n, dR = chi^{n+2} - chi^{n+1} of imaging level n.
  void keep_receiver_change(long long n, const RtmSchedule& sc) {
    if (imager.isic() && sc.imaged(n)) imager.keep_receiver_change(r.p[1 - r.cur], r.p[r.cur], stream.get());
  }
  // p^n (with p^{n+1} beside it) and chi^{n+1}: the buffers after level n's receiver and source.
  void image_now() {
    imager.image(s.p[s.cur], s.p[1 - s.cur], r.p[1 - r.cur], half, stream.get());
    gathers.add(s.p[s.cur], r.p[1 - r.cur], stream.get());
  }
};

// The device is made current first: the streams and events of Impl belong to it.
CudaMigrator::CudaMigrator(const Problem& pb, const CudaOptions& opt)
    : impl_((select_device(opt), std::make_unique<Impl>(pb, opt))) {
  init(pb, nullptr);
}

CudaMigrator::CudaMigrator(const Problem& slab_pb, const CudaOptions& opt, const Slab& slab, const Problem& global)
    : impl_((select_device(opt), std::make_unique<Impl>(slab_pb, opt))) {
  Impl& d = *impl_;
  d.overlap = std::make_unique<SlabOverlap>(slab);  // one slab: the whole grid, no exchange
  if (slab.ranks > 1) d.opt.graphs = false;         // the NCCL exchange is not captured
  init(global, &slab);
}

void CudaMigrator::connect() {
  if (impl_->overlap) impl_->overlap->connect();
}

void CudaMigrator::init(const Problem& global, const Slab* slab) {
  impl_->init(global, slab, notes_);
}

void CudaMigrator::Impl::init(const Problem& global, const Slab* slab, std::vector<std::string>& notes) {
  if (!pb.config.migration) throw Error("CudaMigrator needs a migration config");
  if (pb.config.migration->image_interval < 1)
    throw Error("migration.image_interval is not resolved (auto is resolved by prepare_migration)");
  check_cuda_migration(pb, opt);
  // The fused backward step is acoustic (kernels/rtm_fused.cu): vti/tti take the separate
  // kernels whatever migration.fused says (name() says so).
  half = opt.storage == kernels::Storage::fp16;
  if (!half) scales.store = store_scales(global, kHalfPeakExponent);
  if (const std::string why = cannot_implement({opt.variant, pb.equation, opt.storage, true, slab != nullptr}, nullptr);
      !why.empty())
    throw Error("solver.kernel " + std::string(variant_name(opt.variant)) + ": " + why);
  dims = {pb.grid.n[0], pb.grid.n[1], pb.grid.n[2], (pb.grid.n[0] + kRowAlign - 1) / kRowAlign * kRowAlign};
  fused = !fused_step_blocker(pb, opt, dims) && fused_step_asked(pb.config.migration->fused, opt.storage);
  if (inner_box(global).cells() == 0)
    throw Error(
        "config key 'grid.shape' leaves no interior to migrate: the damping zone and the stencil radius fill the grid");
  const MigrationFootprint fp = migration_footprint(global, opt, slab);
  std::size_t free_b = 0, total_b = 0;
  SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
  memory.free_at_start = memory.lowest_free = free_b;
  memory.volume_bytes = fp.volume;
  const StorePlan store_plan = plan_reconstruction(global, slab, fp, free_b, total_b, notes);
  // The cells imaged (the interior box) and those a backward step computes (the inner box):
  // the whole grid's, or a slab's own-plane parts.
  const auto [interior, inner] = migration_boxes(global, slab);
  std::string warning;
  allocate_fields(fp, warning);
  imager.allocate(fp.image_volume, interior, dims);
  gathers.allocate(gather_layout(global), interior, dims, slab ? slab->lo : 0);
  if (pb.config.migration->imaging_condition == ImagingCondition::isic) {
    // As the reference's isic_level: float(1 / (v v dt dt)) from the double v.
    imager.use_isic(model_volume(pb, dims.nxp, MemoryKind::plain, &warning,
                                 [&](long long i) {
                                   const double v = pb.vp[i];
                                   return 1.0 / (v * v * pb.dt * pb.dt);
                                 }),
                    pb.grid.h.data(), rebuilt_box(global, slab));
  }
  if (!warning.empty()) notes.push_back(warning);
  for (int a = 0; a < 3; ++a) model.damp[a] = upload(pb.damping[a]);
  // A slab's step computes its own planes [z_lo, z_hi) (planes fit int: the kernels' nz is int).
  const int z_lo = slab ? static_cast<int>(slab->own_lo - slab->lo) : 0;
  const int z_hi = slab ? static_cast<int>(slab->own_hi - slab->lo) : -1;
  op = std::make_unique<StepOperator>(pb, opt, dims.nxp, model, half, z_lo, z_hi);
  op->tune(s.p[0].compressible());
  source.samples = upload(pb.wavelet);
  build_store(fp, interior, inner, store_plan);
  receivers.samples = DeviceBuffer(std::max<std::size_t>(fp.data, 4), MemoryKind::plain);
  receivers.stride = pb.steps;
  level = DeviceBuffer(sizeof(long long), MemoryKind::plain);
  make_injection(pb, pb.receivers, 1.0, dims, receivers.points, overlap.get());
  encode_maps();
  memory.sample();
}

// The fields and the model: m = v^2 dt^2 (vti/tti: vp, the vertical speed) and the vti/tti
// volumes, uploaded as the forward backend does (solver/cuda_propagator.hpp), so both step the
// same model.
void CudaMigrator::Impl::allocate_fields(const MigrationFootprint& fp, std::string& warning) {
  for (auto& b : s.p) b = DeviceBuffer(fp.volume, opt.memory, &warning);
  for (auto& b : r.p) b = DeviceBuffer(fp.volume, opt.memory, &warning);
  const double dt2 = pb.dt * pb.dt;
  auto m_value = [&](long long i) { return double(pb.vp[i]) * double(pb.vp[i]) * dt2; };
  if (half)
    model.m = half_model_volume(pb, dims.nxp, opt.memory, &warning, m_value, &model.model_scale);
  else
    model.m = model_volume(pb, dims.nxp, opt.memory, &warning, m_value);
  if (pb.anisotropic()) {
    for (auto& b : s.q) b = DeviceBuffer(fp.volume, opt.memory, &warning);
    for (auto& b : r.q) b = DeviceBuffer(fp.volume, opt.memory, &warning);
    model.tti = tti_volumes(pb, dims.nxp, opt.memory, &warning);
  }
}

// The shell: cells of the interior box outside the inner box (CpuMigrator's order), by padded
// index; its store in device or pinned host memory.
void CudaMigrator::Impl::build_store(const MigrationFootprint& fp, const CellBox& in, const CellBox& inner,
                                     StorePlan plan) {
  std::vector<long long> cells;
  for (long long iz = in.lo[2]; iz < in.hi[2]; ++iz)
    for (long long iy = in.lo[1]; iy < in.hi[1]; ++iy)
      for (long long ix = in.lo[0]; ix < in.hi[0]; ++ix) {
        const bool is_inner = ix >= inner.lo[0] && ix < inner.hi[0] && iy >= inner.lo[1] && iy < inner.hi[1] &&
                              iz >= inner.lo[2] && iz < inner.hi[2];
        if (!is_inner) cells.push_back((iz * dims.ny + iy) * dims.nxp + ix);
      }
  ShellCells shell;
  shell.count = static_cast<long long>(cells.size());
  if (overlap) overlap->split(cells.data(), shell.count, dims.nxp * dims.ny, shell.split);
  shell.narrow = dims.nxp * dims.ny * dims.nz < (1LL << 32);
  if (shell.narrow)
    shell.cells = upload(std::vector<unsigned>(cells.begin(), cells.end()));
  else
    shell.cells = upload(cells);
  store = make_boundary_store(plan.host, std::move(shell), pb.anisotropic() ? 2 : 1, plan.levels, store_element(),
                              fp.store_per_step * static_cast<std::size_t>(plan.levels), fp.store_per_step,
                              stream.get(), level);
}

CudaMigrator::Impl::StorePlan CudaMigrator::Impl::plan_reconstruction(const Problem& global, const Slab* slab,
                                                                      const MigrationFootprint& fp, std::size_t free_b,
                                                                      std::size_t total_b,
                                                                      std::vector<std::string>& notes) {
  const ReconstructionChoice choice = choose_reconstruction(pb, global, opt, slab, fp, free_b, total_b);
  const CheckpointChoice& c = choice.checkpoints;
  if (c.checkpoints == 0) return {choice.host_store, std::max(0LL, pb.steps - 2)};  // one segment: the whole store
  std::string warning;
  checkpoints = std::make_unique<Checkpoints>(c.checkpoints, c.interval, c.coarse_interval, fp.volume, pb.anisotropic(),
                                              opt.memory, &warning, c.host_checkpoints, c.directory);
  if (!warning.empty()) notes.push_back(warning);
  return {choice.host_store, c.interval};
}

void CudaMigrator::Impl::encode_maps() {
  if (opt.variant != kernels::Variant::tma) return;
  if (pb.anisotropic()) {
    // The forward backend's maps (CudaPropagator's encode_tensor_maps) for each field.
    s.encode_tti_maps(dims, pb.radius);
    r.encode_tti_maps(dims, pb.radius);
    if (checkpoints) checkpoints->field().encode_tti_maps(dims, pb.radius);
    encode_tti_model_maps(model.m, model.tti, pb.equation == Equation::tti, dims, pb.radius, 4, model.tti_maps);
    return;
  }
  const int eb = kernels::storage_bytes(opt.storage);
  s.encode_acoustic_maps(dims, pb.radius, eb, fused, op->fused_shape());
  r.encode_acoustic_maps(dims, pb.radius, eb, fused, op->fused_shape());
  if (checkpoints) checkpoints->field().encode_acoustic_maps(dims, pb.radius, eb, false, op->fused_shape());
  encode_volume_map(&model.tmap_m, model.m.as<void>(), dims.nxp, dims.ny, dims.nz, kernels::tma_center_box(), eb);
}

CudaMigrator::~CudaMigrator() = default;

std::string CudaMigrator::name() const {
  const Impl& d = *impl_;
  const bool anisotropic = d.pb.anisotropic();
  const char* v = variant_name(d.opt.variant);
  const std::string shape = d.opt.variant == kernels::Variant::tma && !anisotropic
                                ? std::string(" (forward kernel ") + kernels::tma_shape_name(d.op->shape()) +
                                      tma_settings_text(d.op->l2_hint(), d.op->chunk_rows(), d.half, false) + ")"
                                : "";
  // migration.fused: true where the fused step does not run says why.
  std::string fused_ignored;
  if (d.pb.config.migration->fused == FusedStep::on && !d.fused)
    fused_ignored = std::string(" (migration.fused is ignored: ") + fused_step_blocker(d.pb, d.opt, d.dims) + ")";
  return std::string("cuda ") + (anisotropic ? to_text(d.pb.equation) + " " : "") + v + shape +
         (d.half ? ", fp16 storage" : "") + ", z_block " + std::to_string(d.opt.z_block) + ", " +
         (d.s.p[0].compressible() ? "compressible" : "plain") + " memory, " +
         (d.fused ? std::string("fused backward step (") + fused_shape_name(d.op->fused_shape()) + ")"
                  : std::string("separate backward kernels")) +
         fused_ignored + ", boundary store " +
         (d.store_element() == StoreElement::bf16         ? "in bf16 "
          : d.store_element() == StoreElement::scaled_f16 ? "in fp16 (over the shot's field scale) "
                                                          : "") +
         (d.checkpoints
              ? "of " + std::to_string(d.checkpoints->interval()) + " levels on the device, " +
                    std::to_string(d.checkpoints->count() - d.checkpoints->on_disk()) +
                    " checkpoints in pinned host memory (" + gib(d.checkpoints->bytes()) +
                    (d.checkpoints->coarse_interval() > d.checkpoints->interval()
                         ? "; two levels, groups of " + std::to_string(d.checkpoints->coarse_interval()) + " levels"
                         : "") +
                    ")" +
                    (d.checkpoints->on_disk() > 0 ? " and " + std::to_string(d.checkpoints->on_disk()) +
                                                        " in files (migration.checkpoint_directory)"
                                                  : "")
          : d.store->on_host() ? "in pinned host memory"
                               : "on the device") +
         ", on " + query_gpu(d.opt.device).name;
}

std::vector<float> CudaMigrator::model_traces(const PointSet& src, const std::vector<float>& f) {
  Impl& d = *impl_;
  if (d.half) throw Error("CudaMigrator::model_traces (the adjoint's dot test) runs in fp32 storage only");
  const long long nt = d.pb.steps, nrec = d.pb.receivers.size();
  cudaStream_t st = d.stream.get();
  d.s.clear(st);
  DeviceBuffer series = upload(f), traces(std::max<long long>(1, nrec * nt) * sizeof(float), MemoryKind::plain),
               counter(sizeof(int), MemoryKind::plain);
  DeviceInjection points;
  make_injection(d.pb, src, 1.0 / d.pb.cell_volume(), d.dims, points);
  const Recording rec = make_recording(d.pb.receivers, d.dims);
  SEISRTM_CUDA(cudaMemsetAsync(counter.as<int>(), 0, sizeof(int), st));
  int cs = 0;
  for (long long n = 0; n < nt; ++n) {
    d.op->step(d.s, cs, st);
    d.inject(d.s, 1 - cs, points.inj, series.as<float>(), nt, n);
    kernels::launch_record(d.s.p[1 - cs].as<float>(), rec.args, traces.as<float>(), static_cast<int>(nt),
                           counter.as<int>(), st);
    kernels::launch_advance_step(counter.as<int>(), st);
    cs = 1 - cs;
  }
  std::vector<float> rows(static_cast<size_t>(nrec * nt)), out(rows.size());
  SEISRTM_CUDA(
      cudaMemcpyAsync(rows.data(), traces.as<float>(), rows.size() * sizeof(float), cudaMemcpyDeviceToHost, st));
  SEISRTM_CUDA(cudaStreamSynchronize(st));
  for (long long n = 0; n < nt; ++n)
    for (long long r = 0; r < nrec; ++r) out[r * nt + n] = rows[n * nrec + r];  // [step][receiver] -> [receiver][step]
  return out;
}

std::vector<float> CudaMigrator::adjoint_traces(const PointSet& src, const std::vector<float>& r) {
  Impl& d = *impl_;
  if (d.half) throw Error("CudaMigrator::adjoint_traces (the adjoint's dot test) runs in fp32 storage only");
  const long long nt = d.pb.steps, npt = src.size();
  cudaStream_t st = d.stream.get();
  d.r.clear(st);
  DeviceBuffer data = upload(r), samples(std::max<long long>(1, npt * nt) * sizeof(float), MemoryKind::plain),
               counter(sizeof(int), MemoryKind::plain);
  const Recording at_src = make_recording(src, d.dims);
  SEISRTM_CUDA(cudaMemsetAsync(counter.as<int>(), 0, sizeof(int), st));
  // chi^n for n = N .. 1 (slot k = N - n), then (F^T r)^{n-1} = S chi^n / V.
  int cr = 0;
  for (long long n = nt; n >= 1; --n) {
    d.op->step(d.r, cr, st);
    d.inject(d.r, 1 - cr, d.receivers.points.inj, data.as<float>(), nt, n - 1);
    kernels::launch_record(d.r.p[1 - cr].as<float>(), at_src.args, samples.as<float>(), static_cast<int>(nt),
                           counter.as<int>(), st);
    kernels::launch_advance_step(counter.as<int>(), st);
    cr = 1 - cr;
  }
  std::vector<float> rows(static_cast<size_t>(npt * nt)), out(rows.size());
  SEISRTM_CUDA(
      cudaMemcpyAsync(rows.data(), samples.as<float>(), rows.size() * sizeof(float), cudaMemcpyDeviceToHost, st));
  SEISRTM_CUDA(cudaStreamSynchronize(st));
  for (long long k = 0; k < nt; ++k)
    for (long long i = 0; i < npt; ++i)
      out[i * nt + (nt - k) - 1] = static_cast<float>(rows[k * npt + i] / d.pb.cell_volume());
  return out;
}

void CudaMigrator::drop_stack() {
  impl_->imager.set_stacking(false);
}

bool CudaMigrator::fused() const {
  return impl_->fused;
}

bool CudaMigrator::begin_stack() {
  Impl& d = *impl_;
  d.imager.clear(d.stream.get());
  d.imager.set_stacking(true);
  return true;
}

void CudaMigrator::take_stack(float* image, float* illumination) {
  Impl& d = *impl_;
  d.imager.download(image, illumination, d.stream.get());
  d.imager.set_stacking(false);
}

std::vector<std::pair<std::string, double>> CudaMigrator::breakdown() const {
  std::vector<std::pair<std::string, double>> out;
  for (int k = 0; k < PhaseTimer::kCount; ++k)
    if (impl_->timer.seconds()[k] > 0) out.emplace_back(PhaseTimer::kNames[k], impl_->timer.seconds()[k]);
  // A slab's exchanges ran on their own stream beside the phases above (not part of their sum).
  if (impl_->overlap && impl_->overlap->seconds() > 0)
    out.emplace_back("halo exchange span (NCCL stream, beside the steps)", impl_->overlap->seconds());
  return out;
}

Propagator::DeviceMemory CudaMigrator::device_memory() const {
  return {impl_->memory.free_at_start - impl_->memory.lowest_free, impl_->memory.volume_bytes};
}

void CudaMigrator::migrate_shot(long long shot, const float* data, float* image, float* illumination,
                                const Progress& progress) {
  Impl& d = *impl_;
  if (d.overlap && d.overlap->has_exchange() && !d.overlap->connected())
    throw Error("CudaMigrator: a slab of several migrates only once connect() ran on every rank");
  const long long nt = d.pb.steps;
  const RtmSchedule schedule(nt, d.pb.config.migration->image_interval);
  d.begin_shot(shot, data);
  // Graphs where solver.graphs is on, but not with the store in host memory (its copies are
  // ordered by events) nor when a test reads every level.
  const bool graphs = d.opt.graphs && d.store->graph_safe() && !on_source_level;
  std::optional<CheckpointPlan> plan;
  if (d.checkpoints) plan.emplace(nt, d.checkpoints->interval(), d.checkpoints->coarse_interval());
  const Impl::Pass pass{schedule,
                        progress,
                        std::max(1LL, nt / 100),
                        StepGraph{d.stream.get(), graphs},
                        on_source_level,
                        plan ? &*plan : nullptr};
  d.forward(pass);
  if (d.fused && schedule.fuses())
    d.backward_fused(pass);
  else
    d.backward_separate(pass);
  if (!d.imager.stacking()) {
    // The shot's image and illumination come back to be added on the host (2 volumes a shot).
    d.imager.add_to(image, illumination, d.stream.get());
  }
  if (gathers_) d.gathers.add_to(gathers_, d.stream.get());
  d.memory.sample();
}

void CudaMigrator::Impl::begin_shot(long long shot, const float* shot_data) {
  const long long nt = pb.steps;
  cudaStream_t st = stream.get();
  s.clear(st);
  r.clear(st);
  if (!imager.stacking()) imager.clear(st);
  gathers.clear(st);
  SEISRTM_CUDA(cudaMemcpyAsync(receivers.samples.as<float>(), shot_data, pb.max_receivers() * nt * sizeof(float),
                               cudaMemcpyHostToDevice, st));
  // The previous shot's kernels may still read the injection arrays that are replaced here.
  SEISRTM_CUDA(cudaStreamSynchronize(st));
  if (half) {
    // The shot's field scales (CpuMigrator::store_as_half's): the wavelet's and the data's
    // largest injections at 2^kHalfPeakExponent; the injections add to s / scales.s, r / scales.r.
    scales.s = source_field_scale(pb, shot, kHalfPeakExponent, "the source");
    scales.r = data_field_scale(pb, shot_data, kHalfPeakExponent);  // 1 for a shot without data: it images nothing
    make_injection(pb, pb.receivers_of(shot), 1.0 / scales.r, dims, receivers.points, overlap.get());
  } else if (pb.varying_spread()) {  // the shot's receivers (the stream synchronized above)
    make_injection(pb, pb.receivers_of(shot), 1.0, dims, receivers.points, overlap.get());
  }
  make_injection(pb, pb.shots[shot], 1.0 / pb.cell_volume() / scales.s, dims, source.points, overlap.get());
  // An fp16 store keeps the source field over the shot's field scale (CpuMigrator's).
  if (store_element() == StoreElement::scaled_f16) store->set_scale(scales.store.at(static_cast<size_t>(shot)));
  imager.set_scales(scales.s, scales.r);
}

// Forward step n of field w (the source field, or a checkpoint's replay field): p^{n+1} from
// p^n, p^{n-1} with the source; level n + 1's shell to the store where `save`.
void CudaMigrator::Impl::forward_step(DeviceWavefield& w, long long n, bool marks, bool save) {
  cudaStream_t st = stream.get();
  if (marks) timer.mark(&w == &s ? PhaseTimer::forward_step : PhaseTimer::replay, st);
  const int cs = w.cur;
  if (slabs()) {
    beside(
        [&](int part, cudaStream_t on) {
          op->step(w, cs, overlap->lo(part), overlap->hi(part), on);
          inject_part(w, source, 1 - cs, part, 0, on);
        },
        w, 1 - cs);
  } else {
    op->step(w, cs, st);
    inject_at(w, 1 - cs, source, 0);
  }
  w.flip();
  if (marks && &w == &s) timer.mark(PhaseTimer::store, st);
  if (save) store->save(n + 1, w.p[w.cur], w.q_at(w.cur));
  add_level(1);
}

void CudaMigrator::Impl::forward(const Pass& pass) {
  const RtmSchedule& sc = pass.schedule;
  const long long nt = sc.steps();
  cudaStream_t st = stream.get();
  pass.progress("forward", 0);
  s.cur = 0;
  set_level(0);
  auto report = [&](long long n) {
    if ((n + 1) % pass.report == 0 || n + 1 == nt) {
      timer.flush(st);
      if (overlap) overlap->flush();
      pass.progress("forward", n + 1);
    }
  };
  auto launched = [&] { timer.mark(PhaseTimer::forward_step, st); };
  if (!pass.plan) {
    // The steps that save their level (1 .. N - 2): graphs of two steps.
    pass.graph.run(
        sc.saving_steps(), 2, [&](long long n, bool marks) { forward_step(s, n, marks, true); }, report, launched);
  } else {
    // The first pass's sweep: from level 1, keeping the plan's checkpoints on its way, the
    // shells of the last segment in time.
    const CheckpointPlan::Sweep first = pass.plan->first_pass();
    store->set_first(first.shells_from);
    sweep_steps(pass, s, first, report, launched);
  }
  // Levels N - 1 and N stay in the field's buffers: the last two steps one by one.
  for (long long n = std::max(0LL, nt - 2); n < nt; ++n) {
    forward_step(s, n, true, false);
    report(n);
  }
  memory.sample();
}

// The steps of sweep w in field f: runs of steps between the segment starts on its way, each
// start made by a step of its own, after which the sweep may keep a checkpoint; the runs from
// w.shells_from on save their levels' shells.
void CudaMigrator::Impl::sweep_steps(const Pass& pass, DeviceWavefield& f, const CheckpointPlan::Sweep& w,
                                     const std::function<void(long long)>& report,
                                     const std::function<void()>& launched) {
  const CheckpointPlan& plan = *pass.plan;
  const long long k = plan.interval();
  cudaStream_t st = stream.get();
  long long n = w.from;  // step n makes level n + 1
  while (n < w.to) {
    const long long start = 1 + (n + k - 1) / k * k;  // the next segment start, >= n + 1
    const long long end = std::min(start, w.to + 1);  // steps n .. end - 2 make levels below it
    if (end - 1 > n) {
      const bool saves = n + 1 >= w.shells_from;
      pass.graph.run(
          {n, end - 1 - n, 1}, 2, [&](long long m, bool marks) { forward_step(f, m, marks, saves); }, report, launched);
      n = end - 1;
    }
    if (start > w.to) break;
    forward_step(f, n, true, start >= w.shells_from);
    report(n);
    if (const long long c = plan.checkpoint_after(w, start); c >= 0) checkpoints->save(c, f, st);
    n = start;
  }
}

// Before the rebuild of level hi of a segment other than segment 0: sweep w from its checkpoint
// in the replay field, the shell of its first level from there where the sweep saves it, then
// its forward steps; the level counter is then back at w.to, the level the backward pass makes
// next.
void CudaMigrator::Impl::sweep(const Pass& pass, const CheckpointPlan::Sweep& w) {
  const CheckpointPlan& plan = *pass.plan;
  cudaStream_t st = stream.get();
  timer.mark(PhaseTimer::replay, st);
  checkpoints->load(plan.checkpoint_slot(w.from), st);
  DeviceWavefield& f = checkpoints->field();
  store->set_first(w.shells_from);
  if (w.shells_from == w.from) {
    set_level(w.from - 1);
    store->save(w.from, f.p[f.cur], f.q_at(f.cur));
  }
  set_level(w.from);
  // The backward count stays at the levels done while the sweep runs; reporting it every
  // pass.report steps keeps the progress line (and its interrupt check) alive through the sweep.
  const long long done = pass.schedule.steps() - w.to;
  auto report = [&](long long n) {
    if ((n - w.from + 1) % pass.report == 0) {
      timer.flush(st);
      if (overlap) overlap->flush();
      pass.progress("backward", done);
    }
  };
  sweep_steps(pass, f, w, report, [&] { timer.mark(PhaseTimer::replay, st); });
  set_level(w.to);
}

void CudaMigrator::Impl::by_segment(const Pass& pass, const RtmSchedule::Range& r,
                                    const std::function<void(const RtmSchedule::Range&)>& run) {
  if (!pass.plan) return run(r);
  const CheckpointPlan& plan = *pass.plan;
  long long n = r.first, left = r.count;  // levels N - 2 down to 1
  while (left > 0) {
    const CheckpointPlan::Segment seg = plan.segment(plan.segment_of(n));
    if (const CheckpointPlan::Sweep w = plan.sweep_before(n); w.to > 0) sweep(pass, w);
    const long long count = std::min(left, n - seg.lo + 1);
    run({n, count, -1});
    n -= count;
    left -= count;
  }
}

// One receiver step: chi^n from chi^{n+1}, chi^{n+2}, with data sample n - 1 (the level counter
// holds n).
void CudaMigrator::Impl::receiver_step(bool marks) {
  cudaStream_t st = stream.get();
  if (marks) timer.mark(PhaseTimer::receiver_step, st);
  const int cr = r.cur;
  if (slabs()) {
    beside(
        [&](int part, cudaStream_t on) {
          op->step(r, cr, overlap->lo(part), overlap->hi(part), on);
          inject_part(r, receivers, 1 - cr, part, -1, on);
        },
        r, 1 - cr);
  } else {
    op->step(r, cr, st);
    inject_at(r, 1 - cr, receivers, -1);
  }
  r.flip();
}

// p^n = 2 p^{n+1} - p^{n+2} + m (L p^{n+1} + S^T f^{n+1} / V) where s = 0 (vti/tti: p and q
// with the pair's operator, the source into both, the shell of both from the store), over the
// whole grid (exact where s = 0; the damping zone holds values nobody reads).
void CudaMigrator::Impl::source_step(long long n, bool marks) {
  cudaStream_t st = stream.get();
  if (marks) timer.mark(PhaseTimer::source_step, st);
  const int cs = s.cur;
  if (slabs()) {
    beside(
        [&](int part, cudaStream_t on) {
          op->step(s, cs, overlap->lo(part), overlap->hi(part), on);
          inject_part(s, source, 1 - cs, part, 1, on);
          restore_part(n, 1 - cs, part, on);
        },
        s, 1 - cs);
    store->release(n);
  } else {
    op->step(s, cs, st);
    inject_at(s, 1 - cs, source, 1);
    store->restore(n, s.p[1 - cs], s.q_at(1 - cs));
  }
  s.flip();
}

void CudaMigrator::Impl::after_backward(const Pass& pass, long long n) {
  if (pass.on_source_level) {
    // For tests: p^n of the rebuilt source field, unpadded (copies: slow).
    std::vector<float> level_field(static_cast<size_t>(pb.grid.cells()));
    download_volume(s.p[s.cur], level_field.data(), dims, half, scales.s, stream.get());
    pass.on_source_level(n, level_field.data());
  }
  const long long nt = pb.steps;
  if ((nt - n + 1) % pass.report == 0 || n == 1) {
    timer.flush(stream.get());
    if (overlap) overlap->flush();
    pass.progress("backward", nt - n + 1);
  }
}

// Backward with the separate kernels, levels N .. 1 in the schedule's receiver_first order: the
// receiver step to chi^n (forward kernel, data sample n - 1), the source field's p^n (the
// forward pass's last two levels, then rebuilt with the shell written back), and on imaging
// levels p^n imaged with chi^{n+1} inside the interior box (the zero-lag correlation at equal
// times: docs/ADJOINT.md, "Imaging"). After a receiver step, r.p[r.cur] holds chi^n and
// r.p[1 - r.cur] chi^{n+1} (zero at n = N).
void CudaMigrator::Impl::backward_separate(const Pass& pass) {
  const RtmSchedule& sc = pass.schedule;
  const long long nt = sc.steps();
  cudaStream_t st = stream.get();
  pass.progress("backward", 0);
  store->prefetch(nt - 2);  // the first levels the backward pass restores
  r.cur = 0;
  // The level counter holds the level n each backward step makes, from N down to 1.
  set_level(nt);
  RtmSchedule::Backward leading;
  leading.receiver = [&](long long n) {
    keep_receiver_change(n, sc);
    leading_receiver_step();
  };
  leading.source = [&](long long n) {
    if (n == nt - 1) s.flip();  // the last two levels are p^N, p^{N-1}: start from them
  };
  leading.image = [&](long long) {
    timer.mark(PhaseTimer::image, st);
    image_now();
  };
  const RtmSchedule::Range lead = sc.leading();
  for (long long k = 0, n = lead.first; k < lead.count; ++k, n += lead.dir) {
    sc.backward_level(n, RtmSchedule::Order::receiver_first, leading);
    after_backward(pass, n);
  }
  bool marks = true;  // outside graph capture: each phase marked
  RtmSchedule::Backward level;
  level.receiver = [&](long long n) {
    keep_receiver_change(n, sc);
    receiver_step(marks);
  };
  level.source = [&](long long n) { source_step(n, marks); };
  level.image = [&](long long) {
    if (marks) timer.mark(PhaseTimer::image, st);
    image_now();
  };
  auto body = [&](long long n, bool direct) {
    marks = direct;
    sc.backward_level(n, RtmSchedule::Order::receiver_first, level);
    add_level(-1);
  };
  by_segment(pass, sc.rebuilding(), [&](const RtmSchedule::Range& levels) {
    pass.graph.run(
        levels, sc.period(), body, [&](long long n) { after_backward(pass, n); },
        [&] { timer.mark(PhaseTimer::separate_steps, st); });
  });
}

// The fused step of level n: chi^n and p^n in one launch that images p^{n+1} with chi^{n+2},
// then the data, the source and the shell.
void CudaMigrator::Impl::fused_step(long long n, bool marks, kernels::FusedArgs& fa, const RtmSchedule& sc) {
  cudaStream_t st = stream.get();
  const int cs = s.cur, cr = r.cur;
  // isic images level n + 1 by its own kernel before the step (the fused kernel correlates).
  fa.image_level = sc.fused_images(n) && !imager.isic();
  if (marks) timer.mark(PhaseTimer::fused_step, st);
  // The gathers of the level the step images (p^{n+1} with chi^{n+2}: the buffers image_now
  // reads), and isic's image and dR, in the main stream before the step overwrites chi^{n+2}
  // with chi^n (a slab's parts start after what the main stream holds: SlabOverlap::ready).
  if (fa.image_level) gathers.add(s.p[cs], r.p[1 - cr], st);
  if (imager.isic()) {
    if (sc.fused_images(n)) image_now();
    keep_receiver_change(n, sc);  // (after the image above: it reads level n + 1's)
  }
  if (slabs()) {
    beside(
        [&](int part, cudaStream_t on) {
          op->fused(fa, s, r, overlap->lo(part), overlap->hi(part), on);
          inject_part(r, receivers, 1 - cr, part, -1, on);
          inject_part(s, source, 1 - cs, part, 1, on);
          restore_part(n, 1 - cs, part, on);
        },
        s, 1 - cs, &r, 1 - cr);
    store->release(n);
  } else {
    op->fused(fa, s, r, st);
    inject_at(r, 1 - cr, receivers, -1);
    inject_at(s, 1 - cs, source, 1);
    store->restore(n, s.p[1 - cs], s.q_at(1 - cs));
  }
  add_level(-1);
  s.flip();
  r.flip();
}

// Backward with the fused step, in the schedule's fused order (RtmSchedule::fused_backward).
void CudaMigrator::Impl::backward_fused(const Pass& pass) {
  const RtmSchedule& sc = pass.schedule;
  const long long nt = sc.steps();
  cudaStream_t st = stream.get();
  pass.progress("backward", 0);
  store->prefetch(nt - 2);  // the first levels the backward pass restores
  r.cur = 0;
  set_level(nt);
  kernels::FusedArgs fa;
  imager.fused_args(fa);
  RtmSchedule::Fused f;
  f.receiver = [&](long long n) {
    keep_receiver_change(n, sc);
    leading_receiver_step();
  };
  f.source = [&](long long n) {
    if (n == nt - 1) s.flip();
  };
  f.image = [&](long long) { image_now(); };
  f.after = [&](long long n) { after_backward(pass, n); };
  f.steps = [&](const RtmSchedule::Range& range) {
    by_segment(pass, range, [&](const RtmSchedule::Range& levels) {
      pass.graph.run(
          levels, sc.period(), [&](long long n, bool marks) { fused_step(n, marks, fa, sc); }, f.after,
          [&] { timer.mark(PhaseTimer::fused_step, st); });
    });
  };
  sc.fused_backward(f);
}

}  // namespace seisrtm
