#include "solver/slab_overlap.hpp"

#include "kernels/cuda_check.hpp"
#include "solver/nccl_halo.hpp"

namespace seisrtm {

SlabOverlap::SlabOverlap(const Slab& slab) {
  if (slab.ranks > 1) halo_ = std::make_unique<DeviceHalo>(slab);  // one slab: no NCCL needed
  const SlabRanges r = slab_ranges(slab);                          // (planes fit int: the kernels' nz is int)
  const long long lo[3] = {r.own0, r.top, r.bottom}, hi[3] = {r.top, r.bottom, r.own1};
  for (int k = 0; k < 3; ++k) lo_[k] = static_cast<int>(lo[k]), hi_[k] = static_cast<int>(hi[k]);
}

SlabOverlap::~SlabOverlap() = default;

void SlabOverlap::connect() {
  if (halo_) halo_->connect();
}

bool SlabOverlap::connected() const {
  return halo_ && halo_->connected();
}

cudaEvent_t SlabOverlap::ready(cudaStream_t main) {
  SEISRTM_CUDA(cudaEventRecord(main_ready_.get(), main));
  return main_ready_.get();
}

void SlabOverlap::step(cudaStream_t main, cudaEvent_t start, const std::function<void(cudaStream_t)>& edges,
                       float* const* fields, int count, long long plane,
                       const std::function<void(cudaStream_t)>& interior) {
  const cudaStream_t h = halo_stream_.get();
  SEISRTM_CUDA(cudaStreamWaitEvent(h, start));
  edges(h);
  if (spans_ == span_begin_.size()) {
    span_begin_.push_back(std::make_unique<CudaEvent>());
    span_end_.push_back(std::make_unique<CudaEvent>());
  }
  SEISRTM_CUDA(cudaEventRecord(span_begin_[spans_]->get(), h));
  halo_->exchange(fields, count, plane, h);
  SEISRTM_CUDA(cudaEventRecord(span_end_[spans_++]->get(), h));
  SEISRTM_CUDA(cudaEventRecord(halo_done_.get(), h));
  interior(main);
  SEISRTM_CUDA(cudaStreamWaitEvent(main, halo_done_.get()));
}

void SlabOverlap::flush() {
  for (size_t k = 0; k < spans_; ++k) {
    float ms = 0;
    SEISRTM_CUDA(cudaEventElapsedTime(&ms, span_begin_[k]->get(), span_end_[k]->get()));
    seconds_ += ms * 1e-3;
  }
  spans_ = 0;
}

}  // namespace seisrtm
