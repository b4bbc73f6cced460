#include "solver/boundary_store.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <utility>

#include "base/error.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"

namespace seisrtm {

namespace {

// Calls f with the field's elements typed as stored (float*, or __half* in fp16 storage), the
// shell's indices typed as uploaded, and the store's elements (the field's type, or bfloat16).
template <class F>
void typed(StoreElement e, const DeviceBuffer& field, const DeviceBuffer& store, const ShellCells& shell, F&& f) {
  auto with_cells = [&](auto* values, auto* slots) {
    if (shell.narrow)
      f(values, shell.cells.as<unsigned>(), slots);
    else
      f(values, shell.cells.as<long long>(), slots);
  };
  switch (e) {
    case StoreElement::f32:
      return with_cells(field.as<float>(), store.as<float>());
    case StoreElement::f16:
      return with_cells(field.as<__half>(), store.as<__half>());
    case StoreElement::bf16:
      return with_cells(field.as<float>(), store.as<__nv_bfloat16>());
    case StoreElement::scaled_f16:  // BoundaryStore::scaled (the kernels take the scale)
      throw Error("the scaled fp16 store goes through BoundaryStore::scaled");
  }
}

// The store on the device: the p shells of levels 1 .. N - 2, then their q shells from
// q_half on. save and restore read the level from the counter, so one captured graph replays
// for every later group of steps.
class DeviceStore final : public BoundaryStore {
 public:
  DeviceStore(ShellCells shell, int fields, long long levels, StoreElement element, std::size_t store_bytes,
              cudaStream_t stream, const DeviceBuffer& counter)
      : BoundaryStore(std::move(shell), fields, levels, element, stream, counter) {
    store_ = DeviceBuffer(std::max<std::size_t>(store_bytes, 4), MemoryKind::plain);
  }
  // Level L = counter + 1 into slot L - first.
  void save(long long, const DeviceBuffer& p, const DeviceBuffer* q) override {
    gather_at(p, 0, 1 - first_);
    if (q) gather_at(*q, q_half(), 1 - first_);
  }
  // Level L = counter out of slot L - first.
  void restore(long long, const DeviceBuffer& p, const DeviceBuffer* q) override {
    scatter_at(p, 0, -first_);
    if (q) scatter_at(*q, q_half(), -first_);
  }
  bool graph_safe() const override { return true; }
  bool on_host() const override { return false; }
  void set_first(long long level) override { first_ = level; }

 private:
  long long q_half() const { return levels_ * shell_.count; }
  long long p_offset(long long level) const override { return (level - first_) * shell_.count; }
  long long q_offset(long long level) const override { return q_half() + (level - first_) * shell_.count; }
  long long first_ = 1;  // the level in slot 0
};

// The store in pinned host memory: levels pass through kStoreRing device slots, a level p's
// shell then q's in one slot and one copy; copies run on copy_stream_, ordered by events
// (ready_: the slot holds its level; free_: the slot may be overwritten).
class HostStore final : public BoundaryStore {
 public:
  HostStore(ShellCells shell, int fields, long long levels, StoreElement element, std::size_t store_bytes,
            std::size_t slot_bytes, cudaStream_t stream, const DeviceBuffer& counter)
      : BoundaryStore(std::move(shell), fields, levels, element, stream, counter) {
    store_ = DeviceBuffer(std::max<std::size_t>(kStoreRing * slot_bytes, 4), MemoryKind::plain);
    SEISRTM_CUDA(cudaMallocHost(&host_, std::max<std::size_t>(store_bytes, 4)));
    for (int k = 0; k < kStoreRing; ++k) {
      ready_.push_back(std::make_unique<CudaEvent>());
      free_.push_back(std::make_unique<CudaEvent>());
    }
  }
  ~HostStore() override {
    if (host_) cudaFreeHost(host_);
  }
  // Level L's shell into its slot, then down to host memory.
  void save(long long level, const DeviceBuffer& p, const DeviceBuffer* q) override {
    const int k = slot(level);
    if (level - 1 >= kStoreRing) SEISRTM_CUDA(cudaStreamWaitEvent(stream_, free_[k]->get()));
    gather(p, p_offset(level));
    if (q) gather(*q, q_offset(level));
    const std::size_t eb = element_bytes();
    SEISRTM_CUDA(cudaEventRecord(ready_[k]->get(), stream_));
    SEISRTM_CUDA(cudaStreamWaitEvent(copy_stream_.get(), ready_[k]->get()));
    SEISRTM_CUDA(cudaMemcpyAsync(host_ + (level - 1) * per_level() * eb, store_.as<char>() + p_offset(level) * eb,
                                 per_level() * eb, cudaMemcpyDeviceToHost, copy_stream_.get()));
    SEISRTM_CUDA(cudaEventRecord(free_[k]->get(), copy_stream_.get()));
  }
  // The main stream waits for level L's upload into its slot; once its scatters are queued,
  // the slot is free for the next upload.
  void restore(long long level, const DeviceBuffer& p, const DeviceBuffer* q) override {
    wait(level, stream_);
    scatter(p, p_offset(level));
    if (q) scatter(*q, q_offset(level));
    release(level);
  }
  void prefetch(long long level) override {
    for (long long k = 0; k < kStoreRing; ++k) load(level - k);
  }
  void wait(long long level, cudaStream_t on) override {
    SEISRTM_CUDA(cudaStreamWaitEvent(on, ready_[slot(level)]->get()));
  }
  void release(long long level) override {
    SEISRTM_CUDA(cudaEventRecord(free_[slot(level)]->get(), stream_));
    load(level - kStoreRing);
  }
  bool graph_safe() const override { return false; }
  bool on_host() const override { return true; }

 private:
  static int slot(long long level) { return static_cast<int>((level - 1) % kStoreRing); }
  long long p_offset(long long level) const override { return slot(level) * per_level(); }
  long long q_offset(long long level) const override { return p_offset(level) + shell_.count; }
  // Level L up into its slot once the slot is free.
  void load(long long level) {
    if (level < 1) return;
    const int k = slot(level);
    const std::size_t eb = element_bytes();
    SEISRTM_CUDA(cudaStreamWaitEvent(copy_stream_.get(), free_[k]->get()));
    SEISRTM_CUDA(cudaMemcpyAsync(store_.as<char>() + p_offset(level) * eb, host_ + (level - 1) * per_level() * eb,
                                 per_level() * eb, cudaMemcpyHostToDevice, copy_stream_.get()));
    SEISRTM_CUDA(cudaEventRecord(ready_[k]->get(), copy_stream_.get()));
  }
  char* host_ = nullptr;
  CudaStream copy_stream_;
  std::vector<std::unique_ptr<CudaEvent>> ready_, free_;
};

}  // namespace

BoundaryStore::BoundaryStore(ShellCells shell, int fields, long long levels, StoreElement element, cudaStream_t stream,
                             const DeviceBuffer& counter)
    : shell_(std::move(shell)),
      fields_(fields),
      levels_(levels),
      element_(element),
      stream_(stream),
      counter_(counter) {}

// The scaled fp16 store's gather (to_store) or scatter over cells [a, a + n) of the shell, at
// slot `at` (or the level counter's plus slot_offset: level non-null).
void BoundaryStore::scaled(bool to_store, const DeviceBuffer& p, long long at, const long long* level,
                           long long slot_offset, long long a, long long n, cudaStream_t on) const {
  auto run = [&](auto* cells) {
    if (to_store)
      kernels::launch_gather_at(p.as<float>(), cells + a, n, store_.as<__half>() + at + a, level, slot_offset, scale_,
                                on);
    else
      kernels::launch_scatter_at(p.as<float>(), cells + a, n, store_.as<__half>() + at + a, level, slot_offset, scale_,
                                 on);
  };
  if (shell_.narrow)
    run(shell_.cells.as<unsigned>());
  else
    run(shell_.cells.as<long long>());
}

void BoundaryStore::gather(const DeviceBuffer& p, long long to) {
  if (element_ == StoreElement::scaled_f16) return scaled(true, p, to, nullptr, 0, 0, shell_.count, stream_);
  typed(element_, p, store_, shell_,
        [&](auto* f, auto* cells, auto* st) { kernels::launch_gather(f, cells, shell_.count, st + to, stream_); });
}

void BoundaryStore::scatter(const DeviceBuffer& p, long long from) {
  if (element_ == StoreElement::scaled_f16) return scaled(false, p, from, nullptr, 0, 0, shell_.count, stream_);
  typed(element_, p, store_, shell_,
        [&](auto* f, auto* cells, auto* st) { kernels::launch_scatter(f, cells, shell_.count, st + from, stream_); });
}

void BoundaryStore::gather_at(const DeviceBuffer& p, long long to, long long slot_offset) {
  if (element_ == StoreElement::scaled_f16)
    return scaled(true, p, to, counter_.as<long long>(), slot_offset, 0, shell_.count, stream_);
  typed(element_, p, store_, shell_, [&](auto* f, auto* cells, auto* st) {
    kernels::launch_gather_at(f, cells, shell_.count, st + to, counter_.as<long long>(), slot_offset, stream_);
  });
}

void BoundaryStore::scatter_at(const DeviceBuffer& p, long long from, long long slot_offset) {
  if (element_ == StoreElement::scaled_f16)
    return scaled(false, p, from, counter_.as<long long>(), slot_offset, 0, shell_.count, stream_);
  typed(element_, p, store_, shell_, [&](auto* f, auto* cells, auto* st) {
    kernels::launch_scatter_at(f, cells, shell_.count, st + from, counter_.as<long long>(), slot_offset, stream_);
  });
}

void BoundaryStore::set_first(long long level) {
  if (level != 1)
    throw Error("a boundary store in pinned host memory holds every level: checkpoints keep theirs on the device");
}

void BoundaryStore::restore_part(long long level, int part, const DeviceBuffer& p, const DeviceBuffer* q,
                                 cudaStream_t on) {
  const long long a = shell_.split[part], n = shell_.split[part + 1] - a;
  auto part_of = [&](const DeviceBuffer& field, long long from) {
    if (element_ == StoreElement::scaled_f16) return scaled(false, field, from, nullptr, 0, a, n, on);
    typed(element_, field, store_, shell_,
          [&](auto* f, auto* cells, auto* st) { kernels::launch_scatter(f, cells + a, n, st + from + a, on); });
  };
  part_of(p, p_offset(level));
  if (q) part_of(*q, q_offset(level));
}

std::unique_ptr<BoundaryStore> make_boundary_store(bool host, ShellCells shell, int fields, long long levels,
                                                   StoreElement element, std::size_t store_bytes,
                                                   std::size_t slot_bytes, cudaStream_t stream,
                                                   const DeviceBuffer& counter) {
  if (host)
    return std::make_unique<HostStore>(std::move(shell), fields, levels, element, store_bytes, slot_bytes, stream,
                                       counter);
  return std::make_unique<DeviceStore>(std::move(shell), fields, levels, element, store_bytes, stream, counter);
}

}  // namespace seisrtm
