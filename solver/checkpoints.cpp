#include "solver/checkpoints.hpp"

#include "base/error.hpp"
#include "kernels/cuda_check.hpp"

namespace seisrtm {

Checkpoints::Checkpoints(long long count, long long interval, long long coarse_interval, std::size_t volume_bytes,
                         bool anisotropic, MemoryKind memory, std::string* warning)
    : count_(count),
      interval_(interval),
      coarse_interval_(coarse_interval),
      volume_(volume_bytes),
      per_checkpoint_(anisotropic ? 4 : 2),
      newest_(count, 0) {
  for (auto& b : replay_.p) b = DeviceBuffer(volume_bytes, memory, warning);
  if (anisotropic)
    for (auto& b : replay_.q) b = DeviceBuffer(volume_bytes, memory, warning);
  const std::size_t bytes = host_bytes(count, volume_bytes, anisotropic);
  if (bytes > 0) SEISRTM_CUDA(cudaMallocHost(&host_, bytes));
}

Checkpoints::~Checkpoints() {
  // The last transfers read or write host_ (the copy stream's down, the main stream's load up):
  // they end before host_ is freed (unchecked: a destructor does not throw).
  cudaStreamSynchronize(copy_.get());
  cudaEventSynchronize(loaded_.get());
  if (host_) cudaFreeHost(host_);
}

std::vector<DeviceBuffer*> Checkpoints::buffers() {
  std::vector<DeviceBuffer*> b = {&replay_.p[0], &replay_.p[1]};
  if (per_checkpoint_ == 4) b.insert(b.end(), {&replay_.q[0], &replay_.q[1]});
  return b;
}

void Checkpoints::save(long long k, const DeviceWavefield& w, cudaStream_t stream) {
  if (k < 0 || k >= count_)
    throw Error("Checkpoints::save: checkpoint " + std::to_string(k) + " of " + std::to_string(count_));
  const std::vector<DeviceBuffer*> to = buffers();
  char* at = host_ + static_cast<std::size_t>(k) * per_checkpoint_ * volume_;
  newest_[k] = w.cur;
  if (&w == &replay_) {
    // A sweep's own state (two levels): straight down; its next steps overwrite these levels,
    // so `stream` waits for the copies (per_checkpoint_ volumes at the host link's bandwidth).
    SEISRTM_CUDA(cudaEventRecord(staged_.get(), stream));
    SEISRTM_CUDA(cudaStreamWaitEvent(copy_.get(), staged_.get()));
    for (int b = 0; b < per_checkpoint_; ++b)
      SEISRTM_CUDA(cudaMemcpyAsync(at + b * volume_, to[b]->as<void>(), volume_, cudaMemcpyDeviceToHost, copy_.get()));
    SEISRTM_CUDA(cudaEventRecord(sent_.get(), copy_.get()));
    SEISRTM_CUDA(cudaStreamWaitEvent(stream, sent_.get()));
    return;
  }
  // The replay field stages the copy: free once the previous checkpoint went down.
  SEISRTM_CUDA(cudaStreamWaitEvent(stream, sent_.get()));
  const DeviceBuffer* from[4] = {&w.p[0], &w.p[1], &w.q[0], &w.q[1]};
  for (int b = 0; b < per_checkpoint_; ++b)
    SEISRTM_CUDA(cudaMemcpyAsync(to[b]->as<void>(), from[b]->as<void>(), volume_, cudaMemcpyDeviceToDevice, stream));
  SEISRTM_CUDA(cudaEventRecord(staged_.get(), stream));
  SEISRTM_CUDA(cudaStreamWaitEvent(copy_.get(), staged_.get()));
  for (int b = 0; b < per_checkpoint_; ++b)
    SEISRTM_CUDA(cudaMemcpyAsync(at + b * volume_, to[b]->as<void>(), volume_, cudaMemcpyDeviceToHost, copy_.get()));
  SEISRTM_CUDA(cudaEventRecord(sent_.get(), copy_.get()));
}

void Checkpoints::load(long long k, cudaStream_t stream) {
  if (k < 0 || k >= count_)
    throw Error("Checkpoints::load: checkpoint " + std::to_string(k) + " of " + std::to_string(count_));
  SEISRTM_CUDA(cudaStreamWaitEvent(stream, sent_.get()));  // the forward pass's last copy down
  const std::vector<DeviceBuffer*> to = buffers();
  const char* at = host_ + static_cast<std::size_t>(k) * per_checkpoint_ * volume_;
  for (int b = 0; b < per_checkpoint_; ++b)
    SEISRTM_CUDA(cudaMemcpyAsync(to[b]->as<void>(), at + b * volume_, volume_, cudaMemcpyHostToDevice, stream));
  SEISRTM_CUDA(cudaEventRecord(loaded_.get(), stream));
  replay_.cur = newest_[k];
}

}  // namespace seisrtm
