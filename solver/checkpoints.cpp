#include "solver/checkpoints.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/error.hpp"
#include "kernels/cuda_check.hpp"

namespace seisrtm {

namespace {

// Whole files of `bytes` (a state), with errno's words in the error.
void write_file(const std::string& path, const char* data, std::size_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error("checkpoint file '" + path + "' cannot be written: " + std::strerror(errno));
  const std::size_t n = std::fwrite(data, 1, bytes, f);
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (n != bytes || !closed)
    throw Error("checkpoint file '" + path + "': " + std::to_string(n) + " of " + std::to_string(bytes) +
                " bytes written (" + std::strerror(err) + "); migration.checkpoint_directory needs room for them");
}

void read_file(const std::string& path, char* data, std::size_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("checkpoint file '" + path + "' cannot be read: " + std::strerror(errno));
  const std::size_t n = std::fread(data, 1, bytes, f);
  std::fclose(f);
  if (n != bytes)
    throw Error("checkpoint file '" + path + "': " + std::to_string(n) + " of " + std::to_string(bytes) +
                " bytes read back");
}

}  // namespace

Checkpoints::Checkpoints(long long count, long long interval, long long coarse_interval, std::size_t volume_bytes,
                         bool anisotropic, MemoryKind memory, std::string* warning, long long host_count,
                         const std::string& directory)
    : count_(count),
      interval_(interval),
      coarse_interval_(coarse_interval),
      host_count_(std::min(count, host_count)),
      volume_(volume_bytes),
      per_checkpoint_(anisotropic ? 4 : 2),
      directory_(directory),
      newest_(count, 0) {
  for (auto& b : replay_.p) b = DeviceBuffer(volume_bytes, memory, warning);
  if (anisotropic)
    for (auto& b : replay_.q) b = DeviceBuffer(volume_bytes, memory, warning);
  const std::size_t bytes = host_bytes(host_count_, volume_bytes, anisotropic);
  if (bytes > 0) SEISRTM_CUDA(cudaMallocHost(&host_, bytes));
  if (on_disk() > 0) {
    if (directory_.empty() || !std::filesystem::is_directory(directory_))
      throw Error("migration.checkpoint_directory '" + directory_ + "' is not a directory (" +
                  std::to_string(on_disk()) + " checkpoints go there)");
    SEISRTM_CUDA(cudaMallocHost(&bounce_, state_bytes()));
  }
}

Checkpoints::~Checkpoints() {
  // The last transfers read or write host_ and bounce_ (the copy stream's down, the main stream's
  // load up, the writer): they end before those are freed (unchecked: a destructor does not throw).
  cudaStreamSynchronize(copy_.get());
  cudaEventSynchronize(loaded_.get());
  if (writer_.valid()) writer_.wait();
  if (host_) cudaFreeHost(host_);
  if (bounce_) cudaFreeHost(bounce_);
  for (long long k = host_count_; k < count_; ++k) {
    std::error_code ec;
    std::filesystem::remove(file(k), ec);
  }
}

std::vector<DeviceBuffer*> Checkpoints::buffers() {
  std::vector<DeviceBuffer*> b = {&replay_.p[0], &replay_.p[1]};
  if (per_checkpoint_ == 4) b.insert(b.end(), {&replay_.q[0], &replay_.q[1]});
  return b;
}

char* Checkpoints::host_at(long long k) {
  return k < host_count_ ? host_ + static_cast<std::size_t>(k) * state_bytes() : bounce_;
}

std::string Checkpoints::file(long long k) const {
  return (std::filesystem::path(directory_) /
          ("seisrtm-checkpoint-" + std::to_string(::getpid()) + "-" + std::to_string(k) + ".bin"))
      .string();
}

void Checkpoints::finish_write() {
  if (writer_.valid()) writer_.get();
}

void Checkpoints::save(long long k, const DeviceWavefield& w, cudaStream_t stream) {
  if (k < 0 || k >= count_)
    throw Error("Checkpoints::save: checkpoint " + std::to_string(k) + " of " + std::to_string(count_));
  const std::vector<DeviceBuffer*> to = buffers();
  const bool disk = k >= host_count_;
  // The bounce state is free once the writer wrote the last file and the last load's copies up
  // from it are done.
  if (disk) {
    finish_write();
    SEISRTM_CUDA(cudaEventSynchronize(loaded_.get()));
  }
  char* at = host_at(k);
  newest_[k] = w.cur;
  const bool self = &w == &replay_;
  if (!self) {
    // The replay field stages the copy: free once the previous checkpoint went down.
    SEISRTM_CUDA(cudaStreamWaitEvent(stream, sent_.get()));
    const DeviceBuffer* from[4] = {&w.p[0], &w.p[1], &w.q[0], &w.q[1]};
    for (int b = 0; b < per_checkpoint_; ++b)
      SEISRTM_CUDA(cudaMemcpyAsync(to[b]->as<void>(), from[b]->as<void>(), volume_, cudaMemcpyDeviceToDevice, stream));
  }
  SEISRTM_CUDA(cudaEventRecord(staged_.get(), stream));
  SEISRTM_CUDA(cudaStreamWaitEvent(copy_.get(), staged_.get()));
  for (int b = 0; b < per_checkpoint_; ++b)
    SEISRTM_CUDA(cudaMemcpyAsync(at + b * volume_, to[b]->as<void>(), volume_, cudaMemcpyDeviceToHost, copy_.get()));
  SEISRTM_CUDA(cudaEventRecord(sent_.get(), copy_.get()));
  // A sweep's own state (two levels): its next steps overwrite these levels, so `stream` waits
  // for the copies (per_checkpoint_ volumes at the host link's bandwidth).
  if (self) SEISRTM_CUDA(cudaStreamWaitEvent(stream, sent_.get()));
  if (disk) {
    cudaEvent_t sent = sent_.get();
    int device = 0;
    SEISRTM_CUDA(cudaGetDevice(&device));
    writer_ = std::async(std::launch::async, [this, sent, k, device] {
      SEISRTM_CUDA(cudaSetDevice(device));  // (a new thread starts on device 0: no context there)
      SEISRTM_CUDA(cudaEventSynchronize(sent));
      write_file(file(k), bounce_, state_bytes());
    });
  }
}

void Checkpoints::load(long long k, cudaStream_t stream) {
  if (k < 0 || k >= count_)
    throw Error("Checkpoints::load: checkpoint " + std::to_string(k) + " of " + std::to_string(count_));
  SEISRTM_CUDA(cudaStreamWaitEvent(stream, sent_.get()));  // the forward pass's last copy down
  if (k >= host_count_) {
    finish_write();                                     // the file is whole, the bounce state free
    SEISRTM_CUDA(cudaEventSynchronize(loaded_.get()));  // the last load's copies up are done
    read_file(file(k), bounce_, state_bytes());
  }
  const std::vector<DeviceBuffer*> to = buffers();
  const char* at = host_at(k);
  for (int b = 0; b < per_checkpoint_; ++b)
    SEISRTM_CUDA(cudaMemcpyAsync(to[b]->as<void>(), at + b * volume_, volume_, cudaMemcpyHostToDevice, stream));
  SEISRTM_CUDA(cudaEventRecord(loaded_.get(), stream));
  replay_.cur = newest_[k];
}

}  // namespace seisrtm
