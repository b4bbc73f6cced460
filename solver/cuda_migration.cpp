#include "solver/cuda_migration.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <type_traits>

#include "base/format.hpp"
#include "kernels/acoustic.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"
#include "solver/capabilities.hpp"
#include "solver/cluster.hpp"
#include "solver/device_info.hpp"
#include "solver/nccl_halo.hpp"
#include "solver/storage.hpp"
#include "solver/tensor_map.hpp"

namespace seisrtm {

namespace {

constexpr long long kRowAlign = 32;  // floats, as the forward backend
constexpr int kStoreRing = 8;        // device slots of a boundary store kept in host memory

// The interior and inner boxes of a migration (solver/migration.hpp): the whole grid's, or
// their own-plane parts in a slab's coordinates.
std::pair<CellBox, CellBox> migration_boxes(const Problem& global, const Slab* slab) {
  if (!slab) return {interior_box(global), inner_box(global)};
  return {slab_box(interior_box(global), *slab), slab_box(inner_box(global), *slab)};
}

}  // namespace

// Times the phases of the passes with CUDA events: the time between two marks belongs to the
// earlier mark's phase. Read back at each flush (after the stream is synchronised), so the
// event pool stays as small as the marks between two progress reports.
class PhaseTimer {
 public:
  enum Phase { forward_step, store, receiver_step, source_step, fused_step, image, separate_steps, kCount };
  static constexpr const char* kNames[kCount] = {"forward step + source (+ gather in graphs)",
                                                 "boundary store (gather)",
                                                 "receiver step + data",
                                                 "source step + shell (scatter)",
                                                 "fused step + data + shell",
                                                 "imaging",
                                                 "separate steps: receiver, source, shell, imaging (graphs)"};
  void mark(int phase, cudaStream_t st) {
    if (used_ == pool_.size()) pool_.push_back(std::make_unique<CudaEvent>());
    SEISRTM_CUDA(cudaEventRecord(pool_[used_]->get(), st));
    phases_.push_back(phase);
    ++used_;
  }
  // After a synchronisation: closes the last phase and adds up the intervals.
  void flush(cudaStream_t st) {
    if (used_ == 0) return;
    mark(kCount, st);
    SEISRTM_CUDA(cudaEventSynchronize(pool_[used_ - 1]->get()));
    for (size_t k = 0; k + 1 < used_; ++k) {
      float ms = 0;
      SEISRTM_CUDA(cudaEventElapsedTime(&ms, pool_[k]->get(), pool_[k + 1]->get()));
      seconds_[phases_[k]] += ms * 1e-3;
    }
    used_ = 0;
    phases_.clear();
  }
  const std::array<double, kCount>& seconds() const { return seconds_; }

 private:
  std::vector<std::unique_ptr<CudaEvent>> pool_;
  std::vector<int> phases_;
  size_t used_ = 0;
  std::array<double, kCount> seconds_{};
};

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
  const bool boundary = pb.config.migration->mode == MigrationMode::boundary;
  // vti/tti rebuild p and q in reverse, so a level keeps the shell of both (twice the store).
  const std::size_t fields = pb.anisotropic() ? 2 : 1;
  f.store_per_step = boundary ? fields * static_cast<std::size_t>(shell_cells) * eb : 0;
  if (!boundary) f.store_per_step = f.volume / static_cast<std::size_t>(pb.config.migration->image_interval);
  f.store = boundary ? f.store_per_step * static_cast<std::size_t>(std::max(0LL, pb.steps - 2))
                     : f.volume * static_cast<std::size_t>(pb.steps / pb.config.migration->image_interval);
  f.data = static_cast<std::size_t>(pb.receivers.size() * pb.steps) * sizeof(float);
  const std::size_t small = (pb.grid.n[0] + pb.grid.n[1] + pb.grid.n[2] + pb.steps) * sizeof(float) +
                            (pb.receivers.cell.size() + 64) * 24 + static_cast<std::size_t>(shell_cells) * 8;
  // A slab of several also holds NCCL's communicator and channel buffers (a few hundred MiB at
  // the 4 CTAs nccl_halo.cpp sets; 512 MiB counted).
  const std::size_t nccl = slab && slab->ranks > 1 ? (512u << 20) : 0;
  f.total = f.volumes + f.store + f.data + small + (16u << 20) + nccl;
  f.total_host_store = f.volumes + f.data + small + (16u << 20) + nccl + kStoreRing * f.store_per_step;
  return f;
}

bool migration_store_on_host(const Problem& pb, const MigrationFootprint& fp, std::size_t free_b, std::size_t total_b) {
  const BoundaryStore where = pb.config.migration->store;
  // (Ranks on one node share its memory: each counts its share, as none has pinned yet.)
  const double host_free = available_host_memory() / std::max(1, cluster::local_size());
  // The host store needs the store pinned beside the host's own volumes (image, illumination,
  // model and data: about 6 volumes; vti/tti also hold epsilon and delta, tti the angles).
  const double own = 6.0 + (pb.equation == Equation::tti ? 4 : pb.equation == Equation::vti ? 2 : 0);
  const bool host_fits = host_free > 0 && double(fp.store) + own * fp.image_volume < 0.8 * host_free;
  const bool host =
      where == BoundaryStore::host || (where == BoundaryStore::automatic && fp.total > free_b && host_fits);
  const std::size_t need = host ? fp.total_host_store : fp.total;
  if (need > free_b || (host && !host_fits)) {
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
    throw Error(
        "the migration needs " + gib(fp.total) + " of GPU memory (" + std::to_string(fp.volume_count) + " volumes " +
        gib(fp.volumes) + ", boundary store " + gib(fp.store) + (pb.anisotropic() ? " of p and q" : "") + " for " +
        std::to_string(pb.steps) + " steps, data " + gib(fp.data) + ") but the GPU has " + gib(free_b) + " free of " +
        gib(total_b) + "; " + device_fix + "; in host memory it needs " + gib(fp.store) + " pinned plus about " +
        gib(static_cast<std::size_t>(own * fp.image_volume)) + " for the host's own volumes, within 80% of the " +
        gib(host_free) + " available (migration.store: host), or use solver.backend: cpu");
  }
  return host;
}

struct CudaMigrator::Impl {
  // The two fields of a migration: the source field (forward, then rebuilt in reverse) and the
  // receiver field.
  enum Field { src = 0, rec = 1 };
  const Problem& pb;
  CudaOptions opt;
  long long nx, ny, nz, nxp;
  long long ns = 0;  // shell cells
  DeviceBuffer s[2], r[2], m, image, illum, damp[3], store, shell, data, wavelet;
  // vti/tti: q of the source and receiver fields, the model volumes besides m, the step's
  // weights and sizes (tti_args, as the forward backend), and the tma maps of both fields.
  bool anisotropic = false, tilted = false;
  DeviceBuffer sq[2], rq[2];
  TtiVolumes tti;
  kernels::TtiArgs tti_base;
  CUtensorMap tti_halo[2][2][2]{}, tti_center[2][2][2]{};  // [source, receiver][p, q][buffer]
  CUtensorMap tti_model[5]{};                              // m, a, b, theta, phi
  DeviceBuffer src_cells, src_offset, src_row, src_coef, rec_cells, rec_offset, rec_row, rec_coef;
  kernels::SeriesInjection src_inj, rec_inj;
  CUtensorMap tmap_s[2]{}, tmap_s_center[2]{}, tmap_r[2]{}, tmap_r_center[2]{}, tmap_m{};
  CUtensorMap tmap_s_fused[2]{}, tmap_r_fused[2]{};  // halo boxes of the fused step's shape
  kernels::FusedShape fused_shape = kernels::FusedShape::compact;
  kernels::TmaShape shape = kernels::TmaShape::rows2;  // the forward tma kernel's (tma_shape_for)
  int chunk_rows = -1;                                 // and its launch order (tma_chunk_rows)
  int l2_hint = 0;                                     // and its loads' L2 hints (tma_l2_hint)
  CudaStream stream;
  bool fused = false;      // the fused backward step (tma, radius <= 4, migration.fused)
  bool own_stack = false;  // between begin_stack and take_stack: image and illum hold the stack
  // The boundary store in pinned host memory: levels pass through kStoreRing device slots;
  // copies run on copy_stream, ordered by events (slot_ready: the slot holds its level; slot_free:
  // the slot may be overwritten).
  bool host_store = false;
  bool shell32 = false;  // shell indices as 32-bit (padded volume under 2^32 cells)
  float* host = nullptr;
  CudaStream copy_stream;
  std::vector<std::unique_ptr<CudaEvent>> slot_ready, slot_free;
  // Fields a store level keeps: p, and for vti/tti q as well (the reverse rebuild steps both).
  // Host store: a level is p's shell then q's (ns each) in one slot and one copy. Device store:
  // the p shells of levels 1..N-2, then their q shells from q_half on (the level-counter gather
  // strides by one shell).
  int nf = 1;
  long long q_half = 0;
  long long per_level() const { return nf * ns; }
  // fp16 storage (acoustic, one device, separate backward kernels): the fields, the model and
  // the store in halves; the source field holds s / s_scale, the receiver field r / r_scale (per
  // shot: the wavelet's and the data's largest injections at 2^kHalfPeakExponent), the model
  // m / model_scale (folded into the weights), as CpuMigrator::store_as_half emulates.
  bool half = false;
  float s_scale = 1, r_scale = 1, model_scale = 1;
  std::size_t eb = sizeof(float);  // bytes of a stored element
  // Calls f with the buffer's elements typed as stored (float*, or __half* in fp16).
  template <class F>
  void typed(const DeviceBuffer& b, F&& f) const {
    if (half)
      f(b.as<__half>());
    else
      f(b.as<float>());
  }
  template <class T>
  T* at_store(long long element) {
    return store.as<T>() + element;
  }
  // Element offset of level L's slot in the store.
  long long slot_index(long long level) const {
    return (host_store ? (level - 1) % kStoreRing : level - 1) * per_level();
  }
  void gather(const DeviceBuffer& p, long long to, long long extra = 0) {
    typed(p, [&](auto* f) {
      using T = std::remove_pointer_t<decltype(f)>;
      T* dst = at_store<T>(to + extra);
      if (shell32)
        kernels::launch_gather(f, shell.as<unsigned>(), ns, dst, stream.get());
      else
        kernels::launch_gather(f, shell.as<long long>(), ns, dst, stream.get());
    });
  }
  void scatter(const DeviceBuffer& p, long long from, long long extra = 0) {
    typed(p, [&](auto* f) {
      using T = std::remove_pointer_t<decltype(f)>;
      const T* src_ = at_store<T>(from + extra);
      if (shell32)
        kernels::launch_scatter(f, shell.as<unsigned>(), ns, src_, stream.get());
      else
        kernels::launch_scatter(f, shell.as<long long>(), ns, src_, stream.get());
    });
  }
  // Forward: level L's shell (of the source field in buffer c) into its slot, then (host store)
  // down to host memory.
  void save(long long level, int c) {
    const int k = static_cast<int>((level - 1) % kStoreRing);
    if (host_store && level - 1 >= kStoreRing) SEISRTM_CUDA(cudaStreamWaitEvent(stream.get(), slot_free[k]->get()));
    gather(s[c], slot_index(level));
    if (anisotropic) gather(sq[c], slot_index(level), ns);
    if (!host_store) return;
    SEISRTM_CUDA(cudaEventRecord(slot_ready[k]->get(), stream.get()));
    SEISRTM_CUDA(cudaStreamWaitEvent(copy_stream.get(), slot_ready[k]->get()));
    SEISRTM_CUDA(cudaMemcpyAsync(reinterpret_cast<char*>(host) + (level - 1) * per_level() * eb,
                                 store.as<char>() + slot_index(level) * eb, per_level() * eb, cudaMemcpyDeviceToHost,
                                 copy_stream.get()));
    SEISRTM_CUDA(cudaEventRecord(slot_free[k]->get(), copy_stream.get()));
  }
  // Backward (host store): level L up into its slot once the slot is free.
  void load(long long level) {
    if (!host_store || level < 1) return;
    const int k = static_cast<int>((level - 1) % kStoreRing);
    SEISRTM_CUDA(cudaStreamWaitEvent(copy_stream.get(), slot_free[k]->get()));
    SEISRTM_CUDA(cudaMemcpyAsync(store.as<char>() + slot_index(level) * eb,
                                 reinterpret_cast<char*>(host) + (level - 1) * per_level() * eb, per_level() * eb,
                                 cudaMemcpyHostToDevice, copy_stream.get()));
    SEISRTM_CUDA(cudaEventRecord(slot_ready[k]->get(), copy_stream.get()));
  }
  // Backward: level L's shell back into the source field in buffer c (waiting for its upload),
  // then the next upload.
  void restore(long long level, int c) {
    wait_slot(level);
    scatter(s[c], slot_index(level));
    if (anisotropic) scatter(sq[c], slot_index(level), ns);
    free_slot(level);
  }
  // Host store: the main stream waits for level L's upload into its slot; once the stream's
  // scatters of it are queued, the slot is free for the next upload.
  void wait_slot(long long level, cudaStream_t on = nullptr) {
    if (host_store)
      SEISRTM_CUDA(
          cudaStreamWaitEvent(on ? on : stream.get(), slot_ready[static_cast<int>((level - 1) % kStoreRing)]->get()));
  }
  void free_slot(long long level) {
    if (!host_store) return;
    SEISRTM_CUDA(cudaEventRecord(slot_free[static_cast<int>((level - 1) % kStoreRing)]->get(), stream.get()));
    load(level - kStoreRing);
  }
  // The level counter in device memory: injections and the device store read their time index
  // from it, so one captured graph replays for every later group of steps.
  DeviceBuffer level;
  long long* lvl() { return level.as<long long>(); }
  void set_level(long long v) {
    SEISRTM_CUDA(cudaMemcpyAsync(lvl(), &v, sizeof v, cudaMemcpyHostToDevice, stream.get()));
  }
  // Device store only: level L = counter + 1 into slot L - 1 = counter (forward), level L =
  // counter out of slot L - 1 (backward).
  // The source field in buffer c; q's shells in the store's second half.
  void save_at(int c) {
    gather_at(s[c], 0);
    if (anisotropic) gather_at(sq[c], q_half);
  }
  void restore_at(int c) {
    scatter_at(s[c], 0);
    if (anisotropic) scatter_at(sq[c], q_half);
  }
  void gather_at(const DeviceBuffer& p, long long to) {
    typed(p, [&](auto* f) {
      using T = std::remove_pointer_t<decltype(f)>;
      if (shell32)
        kernels::launch_gather_at(f, shell.as<unsigned>(), ns, at_store<T>(to), lvl(), 0, stream.get());
      else
        kernels::launch_gather_at(f, shell.as<long long>(), ns, at_store<T>(to), lvl(), 0, stream.get());
    });
  }
  void scatter_at(const DeviceBuffer& p, long long from) {
    typed(p, [&](auto* f) {
      using T = std::remove_pointer_t<decltype(f)>;
      if (shell32)
        kernels::launch_scatter_at(f, shell.as<unsigned>(), ns, at_store<T>(from), lvl(), -1, stream.get());
      else
        kernels::launch_scatter_at(f, shell.as<long long>(), ns, at_store<T>(from), lvl(), -1, stream.get());
    });
  }
  std::size_t free_at_start = 0, lowest_free = 0, volume_bytes = 0;
  std::vector<float> host_pad;
  PhaseTimer timer;
  // The cells imaged (the interior box) and those a backward step computes (the inner box):
  // the whole grid's, or a slab's own-plane parts.
  CellBox interior, inner;
  // A slab of a z decomposition: the planes a step computes, [z_lo, z_hi) (z_hi -1: all), and the
  // exchange of the halo planes (several slabs).
  int z_lo = 0, z_hi = -1;
  std::unique_ptr<DeviceHalo> halo;
  // After a step of field f into buffer c (its sources, data and shell in): the neighbours'
  // halo planes of p (and q) of both fields when `both` (the fused step), else of f.
  void exchange(Field f, int c, bool both = false, int c_other = 0, cudaStream_t on = nullptr) {
    if (!halo || !halo->connected()) return;
    float* fields[4];
    int n = 0;
    auto add = [&](Field g, int k) {
      fields[n++] = (g == src ? s : r)[k].as<float>();
      if (anisotropic) fields[n++] = (g == src ? sq : rq)[k].as<float>();
    };
    add(f, c);
    if (both) add(f == src ? rec : src, c_other);
    halo->exchange(fields, n, nxp * ny, on ? on : stream.get());
  }

  // A slab's step beside its exchange (several slabs), as CudaPropagator's: the own planes in
  // three parts, the edge planes the neighbours receive (part 0 [own0, top), part 2 [bottom,
  // own1)) and the interior (part 1 [top, bottom), whose stencils read no halo plane). On
  // halo_stream (high priority), once the main stream's work so far is done: the edges' work
  // (their stencil, the injection entries and shell cells on their planes), then the exchange;
  // on the main stream at the same time the interior's; then the main stream waits for the
  // halos. Cells sorted by padded index lie in plane order, so each part's injection entries and
  // shell cells are one contiguous range.
  int part_lo[3] = {0, 0, 0}, part_hi[3] = {0, 0, 0};
  int src_split[4] = {}, rec_split[4] = {};  // injection cells of each part: [split[k], split[k + 1])
  long long shell_split[4] = {};             // shell cells of each part
  CudaStream halo_stream{true};
  CudaEvent main_ready, halo_done;
  // The exchange's span on halo_stream, per step since the last flush, and the total.
  std::vector<std::unique_ptr<CudaEvent>> span_begin, span_end;
  size_t spans = 0;
  double halo_span_seconds = 0;
  bool overlapped() const { return halo && halo->connected(); }
  void beside_exchange(const std::function<void(int part, cudaStream_t on)>& work, Field f, int c, bool both = false,
                       int c_other = 0) {
    const cudaStream_t h = halo_stream.get(), m = stream.get();
    SEISRTM_CUDA(cudaEventRecord(main_ready.get(), m));
    SEISRTM_CUDA(cudaStreamWaitEvent(h, main_ready.get()));
    work(0, h);
    work(2, h);
    if (spans == span_begin.size()) {
      span_begin.push_back(std::make_unique<CudaEvent>());
      span_end.push_back(std::make_unique<CudaEvent>());
    }
    SEISRTM_CUDA(cudaEventRecord(span_begin[spans]->get(), h));
    exchange(f, c, both, c_other, h);
    SEISRTM_CUDA(cudaEventRecord(span_end[spans++]->get(), h));
    SEISRTM_CUDA(cudaEventRecord(halo_done.get(), h));
    work(1, m);
    SEISRTM_CUDA(cudaStreamWaitEvent(m, halo_done.get()));
  }
  // After the main stream is synchronised (every recorded span complete).
  void flush_spans() {
    for (size_t k = 0; k < spans; ++k) {
      float ms = 0;
      SEISRTM_CUDA(cudaEventElapsedTime(&ms, span_begin[k]->get(), span_end[k]->get()));
      halo_span_seconds += ms * 1e-3;
    }
    spans = 0;
  }
  static kernels::SeriesInjection sub(const kernels::SeriesInjection& inj, const int* split, int part) {
    return {inj.cells + split[part], inj.offset + split[part], inj.row, inj.coef, split[part + 1] - split[part]};
  }
  // One part of a series term into buffer c of field f (p, and q for vti/tti), sample from the
  // level counter plus offset.
  void inject_part(Field f, int c, int part, const float* series, long long stride, long long offset, cudaStream_t on) {
    const kernels::SeriesInjection inj = f == src ? sub(src_inj, src_split, part) : sub(rec_inj, rec_split, part);
    kernels::launch_inject_series_at((f == src ? s : r)[c].as<float>(), inj, series, stride, lvl(), offset, on);
    if (anisotropic)
      kernels::launch_inject_series_at((f == src ? sq : rq)[c].as<float>(), inj, series, stride, lvl(), offset, on);
  }
  // One part of level L's shell back into the source field in buffer c, from the store (device:
  // p's shells, then q's from q_half; host: the level's ring slot, already waited for).
  void restore_part(long long level, int c, int part, cudaStream_t on) {
    const long long a = shell_split[part], n = shell_split[part + 1] - a;
    // (A slab stores fp32: fp16 storage is refused for a slab.)
    float* p_shells = store.as<float>() + (host_store ? slot_index(level) : (level - 1) * ns);
    float* q_shells = store.as<float>() + (host_store ? slot_index(level) + ns : q_half + (level - 1) * ns);
    auto scatter_part = [&](float* field, const float* from) {
      if (shell32)
        kernels::launch_scatter(field, shell.as<unsigned>() + a, n, from + a, on);
      else
        kernels::launch_scatter(field, shell.as<long long>() + a, n, from + a, on);
    };
    scatter_part(s[c].as<float>(), p_shells);
    if (anisotropic) scatter_part(sq[c].as<float>(), q_shells);
  }
  // The split points of cells sorted by padded index at the part boundaries top and bottom.
  template <class T>
  void split_at_parts(const T* cells, long long count, T* split) const {
    const long long plane = nxp * ny;
    auto first_at = [&](long long z) {
      return static_cast<T>(std::lower_bound(cells, cells + count, z * plane,
                                             [](T cell, long long v) { return static_cast<long long>(cell) < v; }) -
                            cells);
    };
    split[0] = 0;
    split[1] = first_at(part_hi[0]);
    split[2] = first_at(part_hi[1]);
    split[3] = static_cast<T>(count);
  }

  Impl(const Problem& p, const CudaOptions& o) : pb(p), opt(o) {}

  void sample_memory() {
    std::size_t free_b = 0, total_b = 0;
    SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
    lowest_free = std::min(lowest_free, free_b);
  }

  long long padded(long long cell) const {
    const long long ix = cell % nx, iy = (cell / nx) % ny, iz = cell / (nx * ny);
    return (iz * ny + iy) * nxp + ix;
  }

  kernels::AcousticArgs args(const DeviceBuffer* pair, int c) const {
    kernels::AcousticArgs a = acoustic_args(pb, nxp, pair[c].as<float>(), pair[1 - c].as<float>(), m.as<float>(), damp);
    a.z_lo = z_lo, a.z_hi = z_hi;
    a.chunk_rows = chunk_rows;
    a.l2_hint = l2_hint;
    return a;
  }

  // One forward-kernel step of a field from buffer c: buffer 1 - c receives the new level (p,
  // and q for vti/tti: the forward backend's TTI step, the same arguments and maps).
  void step(Field f, int c) { step(f, c, z_lo, z_hi, stream.get()); }
  // The same over planes [lo, hi) in stream `on` (a slab's edge or interior planes).
  void step(Field f, int c, int lo, int hi, cudaStream_t on) {
    if (anisotropic) {
      const DeviceBuffer* p = f == src ? s : r;
      const DeviceBuffer* q = f == src ? sq : rq;
      kernels::TtiArgs t = tti_base;
      t.p = p[c].as<float>();
      t.pn = p[1 - c].as<float>();
      t.q = q[c].as<float>();
      t.qn = q[1 - c].as<float>();
      t.z_lo = lo, t.z_hi = hi;
      const kernels::TtiMaps maps{&tti_halo[f][0][c],
                                  &tti_halo[f][1][c],
                                  &tti_center[f][0][1 - c],
                                  &tti_center[f][1][1 - c],
                                  &tti_model[0],
                                  &tti_model[1],
                                  &tti_model[2],
                                  &tti_model[3],
                                  &tti_model[4]};
      kernels::launch_tti_step(t, tilted, opt.variant, pb.radius, opt.z_block, maps, on);
      return;
    }
    const DeviceBuffer* pair = f == src ? s : r;
    const CUtensorMap* halo = f == src ? tmap_s : tmap_r;
    const CUtensorMap* center = f == src ? tmap_s_center : tmap_r_center;
    const kernels::TmaMaps maps{&halo[c], &center[1 - c], &tmap_m};
    if (half) {
      kernels::AcousticArgsHalf a =
          acoustic_args(pb, nxp, pair[c].as<__half>(), pair[1 - c].as<__half>(), m.as<__half>(), damp, model_scale);
      a.z_lo = lo, a.z_hi = hi;
      a.chunk_rows = chunk_rows;
      a.l2_hint = l2_hint;
      kernels::launch_acoustic_step(a, opt.variant, pb.radius, opt.z_block, maps, shape, on);
      return;
    }
    kernels::AcousticArgs a = args(pair, c);
    a.z_lo = lo, a.z_hi = hi;
    kernels::launch_acoustic_step(a, opt.variant, pb.radius, opt.z_block, maps, shape, on);
  }
  // A series term into the level in buffer c of a field, its sample from the level counter plus
  // offset: into p, and for vti/tti into q as well (the pair's source enters both fields, the
  // data with the acoustic scaling, as CpuMigrator's inject_source and inject_data do).
  void inject_at(Field f, int c, const kernels::SeriesInjection& inj, const float* series, long long stride,
                 long long offset) {
    typed((f == src ? s : r)[c],
          [&](auto* p) { kernels::launch_inject_series_at(p, inj, series, stride, lvl(), offset, stream.get()); });
    if (anisotropic)
      kernels::launch_inject_series_at((f == src ? sq : rq)[c].as<float>(), inj, series, stride, lvl(), offset,
                                       stream.get());
  }
  // The same with the sample given (model_traces, adjoint_traces).
  void inject(Field f, int c, const kernels::SeriesInjection& inj, const float* series, long long stride,
              long long sample) {
    typed((f == src ? s : r)[c],
          [&](auto* p) { kernels::launch_inject_series(p, inj, series, stride, sample, stream.get()); });
    if (anisotropic)
      kernels::launch_inject_series((f == src ? sq : rq)[c].as<float>(), inj, series, stride, sample, stream.get());
  }
  // Zeroes both levels of a field (p and q).
  void clear(Field f) {
    for (int c = 0; c < 2; ++c) {
      for (auto* b : {&(f == src ? s : r)[c], &(f == src ? sq : rq)[c]})
        if (b->bytes() > 0) SEISRTM_CUDA(cudaMemsetAsync(b->as<void>(), 0, b->bytes(), stream.get()));
    }
  }

  // Injection of point series: entries grouped by padded cell; scale multiplies m w / (1 + s).
  // A free surface erases what lands on z = 0, so those entries are dropped.
  // split (optional): the cells of the three parts of a slab's step (beside_exchange).
  void make_injection(const PointSet& ps, double scale, DeviceBuffer& cells_b, DeviceBuffer& offset_b,
                      DeviceBuffer& row_b, DeviceBuffer& coef_b, kernels::SeriesInjection& inj, int* split = nullptr) {
    std::map<long long, std::vector<std::pair<int, float>>> by_cell;
    const double dt2 = pb.dt * pb.dt;
    for (long long i = 0; i < ps.size(); ++i)
      for (long long e = ps.offset[i]; e < ps.offset[i + 1]; ++e) {
        const long long c = ps.cell[e];
        const long long ix = c % nx, iy = (c / nx) % ny, iz = c / (nx * ny);
        if (pb.free_surface && iz == 0) continue;
        const double sdamp = double(pb.damping[0][ix]) + pb.damping[1][iy] + pb.damping[2][iz];
        const double v = pb.vp[c];
        by_cell[padded(c)].push_back(
            {static_cast<int>(i), static_cast<float>(v * v * dt2 * ps.weight[e] * scale / (1 + sdamp))});
      }
    std::vector<long long> cells;
    std::vector<int> offset{0}, row;
    std::vector<float> coef;
    for (const auto& [cell, list] : by_cell) {
      cells.push_back(cell);
      for (const auto& [rw, cf] : list) row.push_back(rw), coef.push_back(cf);
      offset.push_back(static_cast<int>(row.size()));
    }
    if (split) {
      long long sp[4];
      split_at_parts(cells.data(), static_cast<long long>(cells.size()), sp);
      for (int k = 0; k < 4; ++k) split[k] = static_cast<int>(sp[k]);
    }
    cells_b = upload(cells);
    offset_b = upload(offset);
    row_b = upload(row);
    coef_b = upload(coef);
    inj = {cells_b.as<long long>(), offset_b.as<int>(), row_b.as<int>(), coef_b.as<float>(),
           static_cast<int>(cells.size())};
  }

  // A pinned host volume for the shot's image and illumination: copies at the link's speed
  // (pageable memory took about 1 s for the two 2 GB volumes at 800^3).
  float* pinned = nullptr;
  ~Impl() {
    if (pinned) cudaFreeHost(pinned);
    if (host) cudaFreeHost(host);
  }
  float* pinned_volume() {
    if (!pinned) SEISRTM_CUDA(cudaMallocHost(&pinned, static_cast<size_t>(nx * ny * nz) * sizeof(float)));
    return pinned;
  }

  // A field level (scale: its field scale in fp16) or an image volume as floats.
  void download(const DeviceBuffer& b, float* out, float scale = 0) {
    if (half && scale > 0) {
      std::vector<__half> h(static_cast<size_t>(nxp * ny * nz));
      SEISRTM_CUDA(
          cudaMemcpyAsync(h.data(), b.as<void>(), h.size() * sizeof(__half), cudaMemcpyDeviceToHost, stream.get()));
      SEISRTM_CUDA(cudaStreamSynchronize(stream.get()));
      for (long long k = 0; k < ny * nz; ++k)
        for (long long x = 0; x < nx; ++x) out[k * nx + x] = __half2float(h[k * nxp + x]) * scale;
      return;
    }
    SEISRTM_CUDA(cudaMemcpy2DAsync(out, nx * sizeof(float), b.as<float>(), nxp * sizeof(float), nx * sizeof(float),
                                   ny * nz, cudaMemcpyDeviceToHost, stream.get()));
    SEISRTM_CUDA(cudaStreamSynchronize(stream.get()));
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
  if (slab.ranks > 1) {    // one slab: the whole grid, no exchange
    d.opt.graphs = false;  // the NCCL exchange is not captured
    d.halo = std::make_unique<DeviceHalo>(slab);
  }
  d.z_lo = static_cast<int>(slab.own_lo - slab.lo);  // (planes fit int: the kernels' nz is int)
  d.z_hi = static_cast<int>(slab.own_hi - slab.lo);
  const SlabRanges r = slab_ranges(slab);
  const long long lo[3] = {r.own0, r.top, r.bottom}, hi[3] = {r.top, r.bottom, r.own1};
  for (int k = 0; k < 3; ++k) d.part_lo[k] = static_cast<int>(lo[k]), d.part_hi[k] = static_cast<int>(hi[k]);
  init(global, &slab);
}

void CudaMigrator::connect() {
  if (impl_->halo) impl_->halo->connect();
}

void CudaMigrator::init(const Problem& global, const Slab* slab) {
  Impl& d = *impl_;
  const Problem& pb = d.pb;
  const CudaOptions& opt = d.opt;
  if (!pb.config.migration) throw Error("CudaMigrator needs a migration config");
  if (pb.config.migration->image_interval < 1)
    throw Error("migration.image_interval is not resolved (auto is resolved by prepare_migration)");
  d.anisotropic = pb.anisotropic();
  d.tilted = pb.equation == Equation::tti;
  d.nf = d.anisotropic ? 2 : 1;
  if (pb.config.migration->mode != MigrationMode::boundary)
    throw Error(
        "config key 'migration.mode' snapshots runs on the CPU backend only (the GPU keeps the boundary "
        "store); use migration.mode: boundary or solver.backend: cpu");
  // The fused backward step is acoustic (kernels/rtm_fused.cu): vti/tti take the separate
  // kernels whatever migration.fused says (name() says so).
  d.half = opt.storage == kernels::Storage::fp16;
  d.eb = kernels::storage_bytes(opt.storage);
  if (const std::string why = cannot_implement({opt.variant, to_text(pb.equation), opt.storage, true, slab}, nullptr);
      !why.empty())
    throw Error("solver.kernel " + std::string(variant_name(opt.variant)) + ": " + why);
  // fp16 takes the separate backward kernels (the fused step reads floats).
  d.fused = !d.anisotropic && !d.half && opt.variant == kernels::Variant::tma &&
            kernels::fused_backward_supported(pb.radius) && pb.config.migration->fused;
  d.nx = pb.grid.n[0];
  d.ny = pb.grid.n[1];
  d.nz = pb.grid.n[2];
  d.nxp = (d.nx + kRowAlign - 1) / kRowAlign * kRowAlign;
  if (inner_box(global).cells() == 0)
    throw Error(
        "config key 'grid.shape' leaves no interior to migrate: the damping zone and the stencil radius fill the grid");
  const MigrationFootprint fp = migration_footprint(global, opt, slab);
  std::size_t free_b = 0, total_b = 0;
  SEISRTM_CUDA(cudaMemGetInfo(&free_b, &total_b));
  d.free_at_start = d.lowest_free = free_b;
  d.volume_bytes = fp.volume;
  d.host_store = migration_store_on_host(pb, fp, free_b, total_b);
  std::string warning;
  for (auto& b : d.s) b = DeviceBuffer(fp.volume, opt.memory, &warning);
  for (auto& b : d.r) b = DeviceBuffer(fp.volume, opt.memory, &warning);
  // m = v^2 dt^2 (vti/tti: vp, the vertical speed) and the vti/tti volumes, uploaded as the
  // forward backend does (solver/cuda_propagator.hpp), so both step the same model.
  const double dt2 = pb.dt * pb.dt;
  auto m_value = [&](long long i) { return double(pb.vp[i]) * double(pb.vp[i]) * dt2; };
  if (d.half)
    d.m = half_model_volume(pb, d.nxp, opt.memory, &warning, m_value, &d.model_scale);
  else
    d.m = model_volume(pb, d.nxp, opt.memory, &warning, m_value);
  if (d.anisotropic) {
    for (auto& b : d.sq) b = DeviceBuffer(fp.volume, opt.memory, &warning);
    for (auto& b : d.rq) b = DeviceBuffer(fp.volume, opt.memory, &warning);
    d.tti = tti_volumes(pb, d.nxp, opt.memory, &warning);
  }
  d.fused_shape = fused_shape_for(opt.tuning, d.s[0].compressible());
  if (opt.variant == kernels::Variant::tma && !pb.anisotropic()) {
    d.shape = tma_shape_for(opt.tuning, pb.radius, d.s[0].compressible(), opt.storage);
    d.chunk_rows = tma_chunk_rows(opt.tuning);
    d.l2_hint = tma_l2_hint(opt.tuning, pb.radius, d.s[0].compressible(), opt.storage);
  }
  d.image = DeviceBuffer(fp.image_volume, MemoryKind::plain);
  d.illum = DeviceBuffer(fp.image_volume, MemoryKind::plain);
  if (!warning.empty()) notes_.push_back(warning);
  for (int a = 0; a < 3; ++a) d.damp[a] = upload(pb.damping[a]);
  d.tti_base = tti_args(pb, d.nxp, d.damp);
  d.tti_base.z_lo = d.z_lo, d.tti_base.z_hi = d.z_hi;
  if (d.anisotropic) set_tti_model(d.tti_base, d.m, d.tti);
  d.wavelet = upload(pb.wavelet);
  // The shell: cells of the interior box outside the inner box (CpuMigrator's order).
  std::tie(d.interior, d.inner) = migration_boxes(global, slab);
  const CellBox &in = d.interior, &inner = d.inner;
  std::vector<long long> shell;
  for (long long iz = in.lo[2]; iz < in.hi[2]; ++iz)
    for (long long iy = in.lo[1]; iy < in.hi[1]; ++iy)
      for (long long ix = in.lo[0]; ix < in.hi[0]; ++ix) {
        const bool is_inner = ix >= inner.lo[0] && ix < inner.hi[0] && iy >= inner.lo[1] && iy < inner.hi[1] &&
                              iz >= inner.lo[2] && iz < inner.hi[2];
        if (!is_inner) shell.push_back((iz * d.ny + iy) * d.nxp + ix);
      }
  d.ns = static_cast<long long>(shell.size());
  d.split_at_parts(shell.data(), d.ns, d.shell_split);
  d.q_half = std::max(0LL, pb.steps - 2) * d.ns;
  d.shell32 = d.nxp * d.ny * d.nz < (1LL << 32);
  if (d.shell32)
    d.shell = upload(std::vector<unsigned>(shell.begin(), shell.end()));
  else
    d.shell = upload(shell);
  if (d.host_store) {
    d.store = DeviceBuffer(std::max<std::size_t>(kStoreRing * fp.store_per_step, 4), MemoryKind::plain);
    SEISRTM_CUDA(cudaMallocHost(&d.host, std::max<std::size_t>(fp.store, 4)));
    for (int k = 0; k < kStoreRing; ++k) {
      d.slot_ready.push_back(std::make_unique<CudaEvent>());
      d.slot_free.push_back(std::make_unique<CudaEvent>());
    }
  } else {
    d.store = DeviceBuffer(std::max<std::size_t>(fp.store, 4), MemoryKind::plain);
  }
  d.data = DeviceBuffer(std::max<std::size_t>(fp.data, 4), MemoryKind::plain);
  d.level = DeviceBuffer(sizeof(long long), MemoryKind::plain);
  d.make_injection(pb.receivers, 1.0, d.rec_cells, d.rec_offset, d.rec_row, d.rec_coef, d.rec_inj, d.rec_split);
  if (opt.variant == kernels::Variant::tma && d.anisotropic) {
    // The forward backend's maps (CudaPropagator's encode_tensor_maps) for each field.
    for (int f = 0; f < 2; ++f)
      for (int c = 0; c < 2; ++c) {
        const DeviceBuffer* v[2] = {f == Impl::src ? &d.s[c] : &d.r[c], f == Impl::src ? &d.sq[c] : &d.rq[c]};
        for (int k = 0; k < 2; ++k) {
          encode_volume_map(&d.tti_halo[f][k][c], v[k]->as<void>(), d.nxp, d.ny, d.nz,
                            kernels::tti_halo_box(pb.radius));
          encode_volume_map(&d.tti_center[f][k][c], v[k]->as<void>(), d.nxp, d.ny, d.nz,
                            kernels::tti_center_box(pb.radius));
        }
      }
    const DeviceBuffer* vols[5] = {&d.m, &d.tti.a, &d.tti.b, &d.tti.theta, &d.tti.phi};
    for (int k = 0; k < (d.tilted ? 5 : 3); ++k)
      encode_volume_map(&d.tti_model[k], vols[k]->as<void>(), d.nxp, d.ny, d.nz, kernels::tti_center_box(pb.radius));
  } else if (opt.variant == kernels::Variant::tma) {
    for (int c = 0; c < 2; ++c) {
      const int eb = static_cast<int>(d.eb);
      encode_volume_map(&d.tmap_s[c], d.s[c].as<void>(), d.nxp, d.ny, d.nz, kernels::tma_box(pb.radius, eb), eb);
      encode_volume_map(&d.tmap_s_center[c], d.s[c].as<void>(), d.nxp, d.ny, d.nz, kernels::tma_center_box(), eb);
      encode_volume_map(&d.tmap_r[c], d.r[c].as<void>(), d.nxp, d.ny, d.nz, kernels::tma_box(pb.radius, eb), eb);
      encode_volume_map(&d.tmap_r_center[c], d.r[c].as<void>(), d.nxp, d.ny, d.nz, kernels::tma_center_box(), eb);
      if (d.fused) {
        const auto box = kernels::fused_box(pb.radius, d.fused_shape);
        encode_volume_map(&d.tmap_s_fused[c], d.s[c].as<void>(), d.nxp, d.ny, d.nz, box);
        encode_volume_map(&d.tmap_r_fused[c], d.r[c].as<void>(), d.nxp, d.ny, d.nz, box);
      }
    }
    encode_volume_map(&d.tmap_m, d.m.as<void>(), d.nxp, d.ny, d.nz, kernels::tma_center_box(), static_cast<int>(d.eb));
  }
  d.sample_memory();
}

CudaMigrator::~CudaMigrator() = default;

std::string CudaMigrator::name() const {
  const Impl& d = *impl_;
  const char* v = variant_name(d.opt.variant);
  const std::string shape = d.opt.variant == kernels::Variant::tma && !d.anisotropic
                                ? std::string(" (forward kernel ") + kernels::tma_shape_name(d.shape) +
                                      tma_settings_text(d.l2_hint, d.chunk_rows, d.half, false) + ")"
                                : "";
  return std::string("cuda ") + (d.anisotropic ? to_text(d.pb.equation) + " " : "") + v + shape +
         (d.half ? ", fp16 storage" : "") + ", z_block " + std::to_string(d.opt.z_block) + ", " +
         (d.s[0].compressible() ? "compressible" : "plain") + " memory, " +
         (d.fused ? std::string("fused backward step (") + fused_shape_name(d.fused_shape) + ")"
                  : std::string("separate backward kernels")) +
         (d.anisotropic && d.pb.config.migration->fused ? " (migration.fused is ignored: the fused step is acoustic)"
                                                        : "") +
         (d.half && d.pb.config.migration->fused ? " (migration.fused is ignored: the fused step reads floats)" : "") +
         ", boundary store " + (d.host_store ? "in pinned host memory" : "on the device") + ", on " +
         query_gpu(d.opt.device).name;
}

namespace {

// Recording weights of a point set in the padded layout, for launch_record.
struct Recording {
  DeviceBuffer cells, coef, offset;
  kernels::PointArgs args;
};
Recording make_recording(const PointSet& ps, long long nx, long long ny, long long nxp) {
  std::vector<long long> cells;
  for (long long c : ps.cell) cells.push_back((c / (nx * ny) * ny + (c / nx) % ny) * nxp + c % nx);
  std::vector<int> offset(ps.offset.begin(), ps.offset.end());
  Recording r;
  r.cells = upload(cells);
  r.coef = upload(ps.weight);
  r.offset = upload(offset);
  r.args = {r.cells.as<long long>(), r.coef.as<float>(), r.offset.as<int>(), 0, static_cast<int>(ps.size())};
  return r;
}

}  // namespace

std::vector<float> CudaMigrator::model_traces(const PointSet& src, const std::vector<float>& f) {
  Impl& d = *impl_;
  if (d.half) throw Error("CudaMigrator::model_traces (the adjoint's dot test) runs in fp32 storage only");
  const long long nt = d.pb.steps, nrec = d.pb.receivers.size();
  cudaStream_t st = d.stream.get();
  d.clear(Impl::src);
  DeviceBuffer series = upload(f), cells, offset, row, coef,
               traces(std::max<long long>(1, nrec * nt) * sizeof(float), MemoryKind::plain),
               counter(sizeof(int), MemoryKind::plain);
  kernels::SeriesInjection inj;
  d.make_injection(src, 1.0 / d.pb.cell_volume(), cells, offset, row, coef, inj);
  const Recording rec = make_recording(d.pb.receivers, d.nx, d.ny, d.nxp);
  SEISRTM_CUDA(cudaMemsetAsync(counter.as<int>(), 0, sizeof(int), st));
  int cs = 0;
  for (long long n = 0; n < nt; ++n) {
    d.step(Impl::src, cs);
    d.inject(Impl::src, 1 - cs, inj, series.as<float>(), nt, n);
    kernels::launch_record(d.s[1 - cs].as<float>(), rec.args, traces.as<float>(), static_cast<int>(nt),
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
  d.clear(Impl::rec);
  DeviceBuffer data = upload(r), samples(std::max<long long>(1, npt * nt) * sizeof(float), MemoryKind::plain),
               counter(sizeof(int), MemoryKind::plain);
  const Recording at_src = make_recording(src, d.nx, d.ny, d.nxp);
  SEISRTM_CUDA(cudaMemsetAsync(counter.as<int>(), 0, sizeof(int), st));
  // chi^n for n = N .. 1 (slot k = N - n), then (F^T r)^{n-1} = S chi^n / V.
  int cr = 0;
  for (long long n = nt; n >= 1; --n) {
    d.step(Impl::rec, cr);
    d.inject(Impl::rec, 1 - cr, d.rec_inj, data.as<float>(), nt, n - 1);
    kernels::launch_record(d.r[1 - cr].as<float>(), at_src.args, samples.as<float>(), static_cast<int>(nt),
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
  impl_->own_stack = false;
}

bool CudaMigrator::fused() const {
  return impl_->fused;
}

bool CudaMigrator::begin_stack() {
  Impl& d = *impl_;
  for (auto* b : {&d.image, &d.illum}) SEISRTM_CUDA(cudaMemsetAsync(b->as<void>(), 0, b->bytes(), d.stream.get()));
  d.own_stack = true;
  return true;
}

void CudaMigrator::take_stack(float* image, float* illumination) {
  Impl& d = *impl_;
  d.download(d.image, image);
  d.download(d.illum, illumination);
  d.own_stack = false;
}

std::vector<std::pair<std::string, double>> CudaMigrator::breakdown() const {
  std::vector<std::pair<std::string, double>> out;
  for (int k = 0; k < PhaseTimer::kCount; ++k)
    if (impl_->timer.seconds()[k] > 0) out.emplace_back(PhaseTimer::kNames[k], impl_->timer.seconds()[k]);
  // A slab's exchanges ran on their own stream beside the phases above (not part of their sum).
  if (impl_->halo_span_seconds > 0)
    out.emplace_back("halo exchange span (NCCL stream, beside the steps)", impl_->halo_span_seconds);
  return out;
}

Propagator::DeviceMemory CudaMigrator::device_memory() const {
  return {impl_->free_at_start - impl_->lowest_free, impl_->volume_bytes};
}

void CudaMigrator::migrate_shot(long long shot, const float* data, float* image, float* illumination,
                                const Progress& progress) {
  Impl& d = *impl_;
  if (d.halo && !d.halo->connected())
    throw Error("CudaMigrator: a slab of several migrates only once connect() ran on every rank");
  const Problem& pb = d.pb;
  const long long nt = pb.steps, every = pb.config.migration->image_interval;
  cudaStream_t st = d.stream.get();
  d.clear(Impl::src);
  d.clear(Impl::rec);
  if (!d.own_stack)
    for (auto* b : {&d.image, &d.illum}) SEISRTM_CUDA(cudaMemsetAsync(b->as<void>(), 0, b->bytes(), st));
  SEISRTM_CUDA(
      cudaMemcpyAsync(d.data.as<float>(), data, pb.receivers.size() * nt * sizeof(float), cudaMemcpyHostToDevice, st));
  // The previous shot's kernels may still read the injection arrays that are replaced here.
  SEISRTM_CUDA(cudaStreamSynchronize(st));
  if (d.half) {
    // The shot's field scales (CpuMigrator::store_as_half's): the wavelet's and the data's
    // largest injections at 2^kHalfPeakExponent; the injections add to s / s_scale, r / r_scale.
    d.s_scale = source_field_scale(pb, shot, kHalfPeakExponent, "the source");
    d.r_scale = data_field_scale(pb, data, kHalfPeakExponent);  // 1 for a shot without data: it images nothing
    d.make_injection(pb.receivers, 1.0 / d.r_scale, d.rec_cells, d.rec_offset, d.rec_row, d.rec_coef, d.rec_inj,
                     d.rec_split);
  }
  d.make_injection(pb.shots[shot], 1.0 / pb.cell_volume() / d.s_scale, d.src_cells, d.src_offset, d.src_row, d.src_coef,
                   d.src_inj, d.src_split);
  const long long report = std::max(1LL, nt / 100);
  // Runs body(n) for n = first, first + dir, ... (count steps), then after(n) for each: as
  // CUDA graphs of `period` steps where graphs are on (solver.graphs; not with the store in host
  // memory, whose copies are ordered by events, nor when a test reads every level), else step
  // by step. body launches only, with its time index from the level counter; the buffers'
  // parity and the imaging levels repeat with `period`, so the graph captured at the first
  // group replays for every later one. Graph launches time as one phase.
  const bool graphs = d.opt.graphs && !d.host_store && !on_source_level;
  // A period beyond this many steps (a large image_interval) runs step by step: such a graph
  // would be captured for a replay or two and hold the interrupt check for its whole length.
  constexpr long long kMaxGraphSteps = 64;
  PhaseTimer& t = d.timer;
  // A slab's exchange of the new level in buffer c of field f (and of the other field's in c2
  // when both): after the step's sources, data and shell, before anything reads the halo planes.
  // A slab of several (beside_exchange): each step's edge planes and exchange beside its interior.
  const bool slabs = d.overlapped();
  auto replay = [&](long long first, long long count, int dir, long long period, int phase, auto&& body, auto&& after) {
    CudaGraphExec g;
    long long n = first, left = count;
    bool direct_first = true;  // one step outside capture first: it sets the kernels' attributes
    while (left > 0) {
      if (graphs && !direct_first && period <= kMaxGraphSteps && left >= period) {
        if (!g.valid()) {
          cudaGraph_t graph = nullptr;
          SEISRTM_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
          for (long long k = 0; k < period; ++k) body(n + k * dir, false);
          SEISRTM_CUDA(cudaStreamEndCapture(st, &graph));
          g = CudaGraphExec(graph);
        }
        t.mark(phase, st);
        g.launch(st);
        for (long long k = 0; k < period; ++k) after(n + k * dir);
        n += period * dir;
        left -= period;
      } else {
        body(n, true);
        after(n);
        n += dir;
        --left;
        direct_first = false;
      }
    }
  };

  // Forward: p^{n+1}; the shell of levels 1..N-2 goes to the store.
  progress("forward", 0);
  int cs = 0;
  d.set_level(0);
  auto forward_step = [&](long long n, bool marks) {
    if (marks) t.mark(PhaseTimer::forward_step, st);
    if (slabs) {
      d.beside_exchange(
          [&](int part, cudaStream_t on) {
            d.step(Impl::src, cs, d.part_lo[part], d.part_hi[part], on);
            d.inject_part(Impl::src, 1 - cs, part, d.wavelet.as<float>(), 0, 0, on);
          },
          Impl::src, 1 - cs);
    } else {
      d.step(Impl::src, cs);
      d.inject_at(Impl::src, 1 - cs, d.src_inj, d.wavelet.as<float>(), 0, 0);
    }
    cs = 1 - cs;
    const long long level = n + 1;
    if (marks) t.mark(PhaseTimer::store, st);
    if (level <= nt - 2) {
      if (d.host_store)
        d.save(level, cs);
      else
        d.save_at(cs);
    }
    kernels::launch_add_level(d.lvl(), 1, st);
  };
  auto report_forward = [&](long long n) {
    if ((n + 1) % report == 0 || n + 1 == nt) {
      t.flush(st);
      d.flush_spans();
      progress("forward", n + 1);
    }
  };
  // Steps 0 .. N-3 store their level: graphs of two steps; the last two steps one by one.
  replay(0, std::max(0LL, nt - 2), 1, 2, PhaseTimer::forward_step, forward_step, report_forward);
  for (long long n = std::max(0LL, nt - 2); n < nt; ++n) {
    forward_step(n, true);
    report_forward(n);
  }
  d.sample_memory();

  // Backward: chi^n (forward kernel, data sample n - 1 injected); p^n rebuilt by the forward
  // kernel over the whole grid (exact where s = 0; the damping zone holds values nobody
  // reads) with the shell written back; every `every` levels, p^n imaged with chi^{n+1} inside
  // the interior box (the zero-lag correlation at equal times: docs/ADJOINT.md, "Imaging";
  // validation/cpu_migration.cpp pairs the same levels).
  const CellBox& in = d.interior;
  kernels::ImageBox box;
  for (int a = 0; a < 3; ++a) box.lo[a] = static_cast<int>(in.lo[a]), box.hi[a] = static_cast<int>(in.hi[a]);
  box.sy = d.nxp;
  box.sz = d.nxp * d.ny;
  box.s_scale = d.s_scale;
  box.r_scale = d.r_scale;
  std::vector<float> level_field;
  auto source_level = [&](long long n, const DeviceBuffer& b) {
    if (!on_source_level) return;
    level_field.resize(static_cast<size_t>(pb.grid.cells()));
    d.download(b, level_field.data(), d.s_scale);
    on_source_level(n, level_field.data());
  };
  auto report_backward = [&](long long n) {
    if ((nt - n + 1) % report == 0 || n == 1) {
      t.flush(st);
      d.flush_spans();
      progress("backward", nt - n + 1);
    }
  };
  progress("backward", 0);
  for (long long k = 0; k < kStoreRing; ++k) d.load(nt - 2 - k);  // the first levels the backward pass restores
  int cr = 0;
  auto image_now = [&](const DeviceBuffer& sv, const DeviceBuffer& rv) {
    if (d.half)
      kernels::launch_image(sv.as<__half>(), rv.as<__half>(), d.image.as<float>(), d.illum.as<float>(), box, st);
    else
      kernels::launch_image(sv.as<float>(), rv.as<float>(), d.image.as<float>(), d.illum.as<float>(), box, st);
  };
  // The level counter holds the level n each backward step makes, from N down to 1.
  d.set_level(nt);
  // One receiver step: chi^n from chi^{n+1}, chi^{n+2}, with data sample n - 1.
  auto receiver_step = [&](bool marks) {
    if (marks) t.mark(PhaseTimer::receiver_step, st);
    if (slabs) {
      d.beside_exchange(
          [&](int part, cudaStream_t on) {
            d.step(Impl::rec, cr, d.part_lo[part], d.part_hi[part], on);
            d.inject_part(Impl::rec, 1 - cr, part, d.data.as<float>(), nt, -1, on);
          },
          Impl::rec, 1 - cr);
    } else {
      d.step(Impl::rec, cr);
      d.inject_at(Impl::rec, 1 - cr, d.rec_inj, d.data.as<float>(), nt, -1);
    }
    cr = 1 - cr;
  };
  // Levels N and N - 1 of the receiver field, before the source field moves.
  auto leading_receiver_step = [&]() {
    receiver_step(true);
    kernels::launch_add_level(d.lvl(), -1, st);
  };
  // Level n of the source field (in buffer c) written back on the shell (the level counter
  // holds n).
  auto restore = [&](long long n, int c) {
    if (d.host_store)
      d.restore(n, c);
    else
      d.restore_at(c);
  };
  auto after_backward = [&](long long n) {
    source_level(n, d.s[cs]);
    report_backward(n);
  };
  // Imaging levels and the buffers' parity repeat every `period` steps.
  const long long period = every % 2 == 0 ? every : 2 * every;
  if (d.fused && nt >= 3) {
    // Levels N and N - 1 of the receiver field by plain steps; the source field's are the
    // forward pass's last two. Level N is imaged with chi^{N+1} = 0 (its illumination counts)
    // before chi^{N+1}'s buffer takes chi^{N-1}. Then each fused step makes level n of both
    // fields and images p^{n+1} with chi^{n+2}; level 1 is imaged with chi^2 at the end.
    leading_receiver_step();
    if (nt % every == 0) image_now(d.s[cs], d.r[1 - cr]);
    after_backward(nt);
    leading_receiver_step();
    cs = 1 - cs;
    after_backward(nt - 1);
    kernels::FusedArgs fa;
    fa.image = d.image.as<float>();
    fa.illumination = d.illum.as<float>();
    for (int a = 0; a < 3; ++a) fa.box_lo[a] = box.lo[a], fa.box_hi[a] = box.hi[a];
    auto fused_step = [&](long long n, bool marks) {
      fa.s = d.args(d.s, cs);
      fa.r = d.args(d.r, cr);
      fa.image_level = (n + 1) % every == 0;
      const kernels::FusedMaps maps{&d.tmap_s_fused[cs], &d.tmap_r_fused[cr], &d.tmap_s_center[1 - cs],
                                    &d.tmap_r_center[1 - cr], &d.tmap_m};
      if (marks) t.mark(PhaseTimer::fused_step, st);
      if (slabs) {
        d.beside_exchange(
            [&](int part, cudaStream_t on) {
              kernels::FusedArgs g = fa;
              g.s.z_lo = d.part_lo[part], g.s.z_hi = d.part_hi[part];
              kernels::launch_fused_backward(g, pb.radius, d.opt.z_block, maps, d.fused_shape, on);
              d.inject_part(Impl::rec, 1 - cr, part, d.data.as<float>(), nt, -1, on);
              d.inject_part(Impl::src, 1 - cs, part, d.wavelet.as<float>(), 0, 1, on);
              d.wait_slot(n, on);  // (host store: only the scatter waits for the level's upload)
              d.restore_part(n, 1 - cs, part, on);
            },
            Impl::src, 1 - cs, true, 1 - cr);
        d.free_slot(n);
      } else {
        kernels::launch_fused_backward(fa, pb.radius, d.opt.z_block, maps, d.fused_shape, st);
        kernels::launch_inject_series_at(d.r[1 - cr].as<float>(), d.rec_inj, d.data.as<float>(), nt, d.lvl(), -1, st);
        kernels::launch_inject_series_at(d.s[1 - cs].as<float>(), d.src_inj, d.wavelet.as<float>(), 0, d.lvl(), 1, st);
        restore(n, 1 - cs);
      }
      kernels::launch_add_level(d.lvl(), -1, st);
      cs = 1 - cs;
      cr = 1 - cr;
    };
    replay(nt - 2, nt - 2, -1, period, PhaseTimer::fused_step, fused_step, after_backward);
    if (1 % every == 0) image_now(d.s[cs], d.r[1 - cr]);
  } else {
    // Levels N and N - 1: receiver steps only (the source field's are the forward pass's last
    // two). After a receiver step, d.r[cr] holds chi^n and d.r[1 - cr] chi^{n+1} (zero at n = N).
    for (long long n = nt; n >= std::max(1LL, nt - 1); --n) {
      leading_receiver_step();
      if (n == nt - 1) cs = 1 - cs;  // the last two levels are p^N, p^{N-1}: start from them
      if (n % every == 0) {
        t.mark(PhaseTimer::image, st);
        image_now(d.s[cs], d.r[1 - cr]);
      }
      after_backward(n);
    }
    // p^n = 2 p^{n+1} - p^{n+2} + m (L p^{n+1} + S^T f^{n+1} / V) where s = 0 (vti/tti: p and
    // q with the pair's operator, the source into both, the shell of both from the store).
    auto separate_step = [&](long long n, bool marks) {
      receiver_step(marks);
      if (marks) t.mark(PhaseTimer::source_step, st);
      if (slabs) {
        d.beside_exchange(
            [&](int part, cudaStream_t on) {
              d.step(Impl::src, cs, d.part_lo[part], d.part_hi[part], on);
              d.inject_part(Impl::src, 1 - cs, part, d.wavelet.as<float>(), 0, 1, on);
              d.wait_slot(n, on);
              d.restore_part(n, 1 - cs, part, on);
            },
            Impl::src, 1 - cs);
        d.free_slot(n);
      } else {
        d.step(Impl::src, cs);
        d.inject_at(Impl::src, 1 - cs, d.src_inj, d.wavelet.as<float>(), 0, 1);
        restore(n, 1 - cs);
      }
      cs = 1 - cs;
      if (n % every == 0) {
        if (marks) t.mark(PhaseTimer::image, st);
        image_now(d.s[cs], d.r[1 - cr]);
      }
      kernels::launch_add_level(d.lvl(), -1, st);
    };
    replay(nt - 2, std::max(0LL, nt - 2), -1, period, PhaseTimer::separate_steps, separate_step, after_backward);
  }
  if (d.own_stack) {
    d.sample_memory();
    return;
  }
  // The shot's image and illumination come back to be added on the host (2 volumes a shot).
  float* h = d.pinned_volume();
  const long long cells = pb.grid.cells();
  d.download(d.image, h);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < cells; ++i) image[i] += h[i];
  d.download(d.illum, h);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < cells; ++i) illumination[i] += h[i];
  d.sample_memory();
}

}  // namespace seisrtm
