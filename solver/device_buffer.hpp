#pragma once
// RAII device memory: plain (cudaMalloc) or compressible (CUDA VMM with generic compression,
// checked after creation), behind one move-only type. Also small RAII wrappers for streams,
// events and graphs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace seisrtm {

enum class MemoryKind { plain, compressible };

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Compressible memory falls back to plain where the device or driver refuses it; `warning`
  // then receives why (the caller reports it once).
  DeviceBuffer(std::size_t bytes, MemoryKind kind, std::string* warning = nullptr);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer t(std::move(o));
    swap(t);
    return *this;
  }
  ~DeviceBuffer();

  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  bool compressible() const { return vmm_handle_ != 0; }

 private:
  void swap(DeviceBuffer& o) noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0, mapped_ = 0;
  unsigned long long vmm_handle_ = 0;  // CUmemGenericAllocationHandle when compressible
};

[[noreturn]] void throw_upload_failed(std::size_t bytes);

// A plain device copy of a host vector (at least one element's worth of bytes).
template <class T>
DeviceBuffer upload(const std::vector<T>& v);

class CudaStream {
 public:
  CudaStream();
  // high_priority: the device's greatest stream priority, whose blocks the SMs take before those
  // of waiting lower-priority kernels (a halo exchange beside the interior stencil).
  explicit CudaStream(bool high_priority);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class CudaGraphExec {
 public:
  CudaGraphExec() = default;
  explicit CudaGraphExec(cudaGraph_t graph);  // instantiates and takes ownership of the graph
  ~CudaGraphExec();
  CudaGraphExec(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(const CudaGraphExec&) = delete;
  CudaGraphExec(CudaGraphExec&& o) noexcept : graph_(o.graph_), exec_(o.exec_) {
    o.graph_ = nullptr;
    o.exec_ = nullptr;
  }
  CudaGraphExec& operator=(CudaGraphExec&& o) noexcept;
  bool valid() const { return exec_ != nullptr; }
  void launch(cudaStream_t s) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

template <class T>
DeviceBuffer upload(const std::vector<T>& v) {
  DeviceBuffer b(std::max<std::size_t>(v.size() * sizeof(T), sizeof(T)), MemoryKind::plain);
  if (!v.empty() && cudaMemcpy(b.as<T>(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
    throw_upload_failed(v.size() * sizeof(T));
  return b;
}

}  // namespace seisrtm
