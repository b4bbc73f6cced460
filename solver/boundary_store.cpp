#include "solver/boundary_store.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <utility>

#include "base/error.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/rtm.hpp"

namespace seisrtm {

namespace {

// Calls f with the buffer's elements typed as stored (float*, or __half* in fp16) and the
// shell's indices typed as uploaded.
template <class F>
void typed(bool half, const DeviceBuffer& b, const ShellCells& shell, F&& f) {
  auto with_cells = [&](auto* field) {
    if (shell.narrow)
      f(field, shell.cells.as<unsigned>());
    else
      f(field, shell.cells.as<long long>());
  };
  if (half)
    with_cells(b.as<__half>());
  else
    with_cells(b.as<float>());
}

// The store on the device: the p shells of levels 1 .. N - 2, then their q shells from
// q_half on. save and restore read the level from the counter, so one captured graph replays
// for every later group of steps.
class DeviceStore final : public BoundaryStore {
 public:
  DeviceStore(ShellCells shell, int fields, long long levels, bool half, std::size_t store_bytes, cudaStream_t stream,
              const DeviceBuffer& counter)
      : BoundaryStore(std::move(shell), fields, levels, half, stream, counter) {
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
  HostStore(ShellCells shell, int fields, long long levels, bool half, std::size_t store_bytes, std::size_t slot_bytes,
            cudaStream_t stream, const DeviceBuffer& counter)
      : BoundaryStore(std::move(shell), fields, levels, half, stream, counter) {
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

BoundaryStore::BoundaryStore(ShellCells shell, int fields, long long levels, bool half, cudaStream_t stream,
                             const DeviceBuffer& counter)
    : shell_(std::move(shell)), fields_(fields), levels_(levels), half_(half), stream_(stream), counter_(counter) {}

void BoundaryStore::gather(const DeviceBuffer& p, long long to) {
  typed(half_, p, shell_, [&](auto* f, auto* cells) {
    using T = std::remove_pointer_t<decltype(f)>;
    kernels::launch_gather(f, cells, shell_.count, store_.as<T>() + to, stream_);
  });
}

void BoundaryStore::scatter(const DeviceBuffer& p, long long from) {
  typed(half_, p, shell_, [&](auto* f, auto* cells) {
    using T = std::remove_pointer_t<decltype(f)>;
    kernels::launch_scatter(f, cells, shell_.count, store_.as<T>() + from, stream_);
  });
}

void BoundaryStore::gather_at(const DeviceBuffer& p, long long to, long long slot_offset) {
  typed(half_, p, shell_, [&](auto* f, auto* cells) {
    using T = std::remove_pointer_t<decltype(f)>;
    kernels::launch_gather_at(f, cells, shell_.count, store_.as<T>() + to, counter_.as<long long>(), slot_offset,
                              stream_);
  });
}

void BoundaryStore::scatter_at(const DeviceBuffer& p, long long from, long long slot_offset) {
  typed(half_, p, shell_, [&](auto* f, auto* cells) {
    using T = std::remove_pointer_t<decltype(f)>;
    kernels::launch_scatter_at(f, cells, shell_.count, store_.as<T>() + from, counter_.as<long long>(), slot_offset,
                               stream_);
  });
}

void BoundaryStore::set_first(long long level) {
  if (level != 1)
    throw Error("a boundary store in pinned host memory holds every level: checkpoints keep theirs on the device");
}

void BoundaryStore::restore_part(long long level, int part, const DeviceBuffer& p, const DeviceBuffer* q,
                                 cudaStream_t on) {
  const long long a = shell_.split[part], n = shell_.split[part + 1] - a;
  auto scatter_part = [&](float* field, const float* from) {
    if (shell_.narrow)
      kernels::launch_scatter(field, shell_.cells.as<unsigned>() + a, n, from + a, on);
    else
      kernels::launch_scatter(field, shell_.cells.as<long long>() + a, n, from + a, on);
  };
  scatter_part(p.as<float>(), store_.as<float>() + p_offset(level));
  if (q) scatter_part(q->as<float>(), store_.as<float>() + q_offset(level));
}

std::unique_ptr<BoundaryStore> make_boundary_store(bool host, ShellCells shell, int fields, long long levels, bool half,
                                                   std::size_t store_bytes, std::size_t slot_bytes, cudaStream_t stream,
                                                   const DeviceBuffer& counter) {
  if (host)
    return std::make_unique<HostStore>(std::move(shell), fields, levels, half, store_bytes, slot_bytes, stream,
                                       counter);
  return std::make_unique<DeviceStore>(std::move(shell), fields, levels, half, store_bytes, stream, counter);
}

}  // namespace seisrtm
