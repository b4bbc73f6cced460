#include "solver/device_buffer.hpp"

#include <cuda.h>

#include <utility>

#include "kernels/cuda_check.hpp"
#include "solver/device_info.hpp"

namespace seisrtm {

namespace {

// The driver functions VMM needs, looked up through the runtime (no link against libcuda).
struct VmmApi {
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemGetAllocationPropertiesFromHandle) properties = nullptr;
  bool ok = false;
};

const VmmApi& vmm() {
  static const VmmApi api = [] {
    VmmApi a;
    a.granularity = reinterpret_cast<decltype(a.granularity)>(driver_entry_point("cuMemGetAllocationGranularity"));
    a.create = reinterpret_cast<decltype(a.create)>(driver_entry_point("cuMemCreate"));
    a.reserve = reinterpret_cast<decltype(a.reserve)>(driver_entry_point("cuMemAddressReserve"));
    a.map = reinterpret_cast<decltype(a.map)>(driver_entry_point("cuMemMap"));
    a.set_access = reinterpret_cast<decltype(a.set_access)>(driver_entry_point("cuMemSetAccess"));
    a.unmap = reinterpret_cast<decltype(a.unmap)>(driver_entry_point("cuMemUnmap"));
    a.address_free = reinterpret_cast<decltype(a.address_free)>(driver_entry_point("cuMemAddressFree"));
    a.release = reinterpret_cast<decltype(a.release)>(driver_entry_point("cuMemRelease"));
    a.properties =
        reinterpret_cast<decltype(a.properties)>(driver_entry_point("cuMemGetAllocationPropertiesFromHandle"));
    a.ok = a.granularity && a.create && a.reserve && a.map && a.set_access && a.unmap && a.address_free && a.release &&
           a.properties;
    return a;
  }();
  return api;
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes, MemoryKind kind, std::string* warning) : bytes_(bytes) {
  if (bytes == 0) return;
  if (kind == MemoryKind::compressible) {
    const VmmApi& api = vmm();
    std::string why;
    int device = 0;
    SEISRTM_CUDA(cudaGetDevice(&device));
    const GpuInfo info = query_gpu(device);
    if (!api.ok)
      why = "the driver offers no VMM entry points";
    else if (!info.vmm || !info.compression)
      why = "the device does not support compressible memory";
    if (why.empty()) {
      CUmemAllocationProp prop{};
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = device;
      prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
      size_t gran = 0;
      if (api.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS || gran == 0)
        why = "cuMemGetAllocationGranularity failed";
      else {
        mapped_ = (bytes + gran - 1) / gran * gran;
        CUmemGenericAllocationHandle h = 0;
        CUdeviceptr addr = 0;
        if (api.create(&h, mapped_, &prop, 0) != CUDA_SUCCESS) {
          why = "cuMemCreate with generic compression failed (out of memory?)";
        } else {
          CUmemAllocationProp got{};
          api.properties(&got, h);
          if (got.allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_GENERIC) {
            api.release(h);
            why = "the driver created the allocation without compression";
          } else if (api.reserve(&addr, mapped_, 0, 0, 0) != CUDA_SUCCESS ||
                     api.map(addr, mapped_, 0, h, 0) != CUDA_SUCCESS) {
            if (addr) api.address_free(addr, mapped_);
            api.release(h);
            why = "reserving or mapping the compressible allocation failed";
          } else {
            CUmemAccessDesc access{};
            access.location = prop.location;
            access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
            if (api.set_access(addr, mapped_, &access, 1) != CUDA_SUCCESS) {
              api.unmap(addr, mapped_);
              api.address_free(addr, mapped_);
              api.release(h);
              why = "cuMemSetAccess failed";
            } else {
              ptr_ = reinterpret_cast<void*>(addr);
              vmm_handle_ = h;
              return;
            }
          }
        }
      }
    }
    if (warning) *warning = "compressible memory unavailable (" + why + "); using plain memory";
  }
  const cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    ptr_ = nullptr;
    throw Error("device allocation of " + std::to_string(bytes >> 20) + " MiB failed: " + cudaGetErrorString(e));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_) return;
  if (vmm_handle_) {
    const VmmApi& api = vmm();
    const auto addr = reinterpret_cast<CUdeviceptr>(ptr_);
    api.unmap(addr, mapped_);
    api.address_free(addr, mapped_);
    api.release(vmm_handle_);
  } else {
    cudaFree(ptr_);
  }
}

void DeviceBuffer::swap(DeviceBuffer& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  std::swap(mapped_, o.mapped_);
  std::swap(vmm_handle_, o.vmm_handle_);
}

CudaStream::CudaStream() {
  SEISRTM_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}
CudaStream::CudaStream(bool high_priority) {
  int least = 0, greatest = 0;
  SEISRTM_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SEISRTM_CUDA(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, high_priority ? greatest : least));
}
CudaStream::~CudaStream() {
  if (s_) cudaStreamDestroy(s_);
}
CudaEvent::CudaEvent() {
  SEISRTM_CUDA(cudaEventCreate(&e_));
}
CudaEvent::~CudaEvent() {
  if (e_) cudaEventDestroy(e_);
}

CudaGraphExec::CudaGraphExec(cudaGraph_t graph) : graph_(graph) {
  SEISRTM_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
}
CudaGraphExec::~CudaGraphExec() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}
CudaGraphExec& CudaGraphExec::operator=(CudaGraphExec&& o) noexcept {
  std::swap(graph_, o.graph_);
  std::swap(exec_, o.exec_);
  return *this;
}
void CudaGraphExec::launch(cudaStream_t s) const {
  SEISRTM_CUDA(cudaGraphLaunch(exec_, s));
}

void throw_upload_failed(std::size_t bytes) {
  throw Error("copying " + std::to_string(bytes) + " bytes to the GPU failed");
}

}  // namespace seisrtm
