#include "solver/rtm_imager.hpp"

#include <cuda_fp16.h>

#include "base/error.hpp"
#include "kernels/cuda_check.hpp"

namespace seisrtm {

RtmImager::~RtmImager() {
  if (pinned_) cudaFreeHost(pinned_);
}

void RtmImager::allocate(std::size_t bytes, const CellBox& in, const VolumeDims& d) {
  image_ = DeviceBuffer(bytes, MemoryKind::plain);
  illumination_ = DeviceBuffer(bytes, MemoryKind::plain);
  dims_ = d;
  for (int a = 0; a < 3; ++a) box_.lo[a] = static_cast<int>(in.lo[a]), box_.hi[a] = static_cast<int>(in.hi[a]);
  box_.sy = d.nxp;
  box_.sz = d.nxp * d.ny;
}

void RtmImager::clear(cudaStream_t stream) const {
  for (auto* b : {&image_, &illumination_}) SEISRTM_CUDA(cudaMemsetAsync(b->as<void>(), 0, b->bytes(), stream));
}

void RtmImager::use_isic(DeviceBuffer w, const double h[3], const CellBox& valid) {
  // The kernel reads a neighbour only inside `valid`, and its z march carries the plane below
  // into the next: the box must lie inside it.
  for (int a = 0; a < 3; ++a)
    if (box_.lo[a] < valid.lo[a] || box_.hi[a] > valid.hi[a])
      throw Error("RtmImager::use_isic: the imaged box is not inside the cells the gradients may read");
  receiver_change_ = DeviceBuffer(w.bytes(), MemoryKind::plain);
  weight_ = std::move(w);
  isic_.box = box_;
  for (int a = 0; a < 3; ++a)
    isic_.valid_lo[a] = static_cast<int>(valid.lo[a]), isic_.valid_hi[a] = static_cast<int>(valid.hi[a]);
  // As the reference: Real(0.25 / (h h)).
  isic_.cx = static_cast<float>(0.25 / (h[0] * h[0]));
  isic_.cy = static_cast<float>(0.25 / (h[1] * h[1]));
  isic_.cz = static_cast<float>(0.25 / (h[2] * h[2]));
}

void RtmImager::keep_receiver_change(const DeviceBuffer& newer, const DeviceBuffer& older, cudaStream_t stream) const {
  kernels::launch_difference(newer.as<float>(), older.as<float>(), receiver_change_.as<float>(), box_, stream);
}

void RtmImager::image(const DeviceBuffer& s, const DeviceBuffer& s_next, const DeviceBuffer& r, bool half,
                      cudaStream_t stream) const {
  if (isic()) {
    kernels::launch_isic(s.as<float>(), s_next.as<float>(), r.as<float>(), receiver_change_.as<float>(),
                         weight_.as<float>(), image_.as<float>(), illumination_.as<float>(), isic_, stream);
  } else if (half)
    kernels::launch_image(s.as<__half>(), r.as<__half>(), image_.as<float>(), illumination_.as<float>(), box_, stream);
  else
    kernels::launch_image(s.as<float>(), r.as<float>(), image_.as<float>(), illumination_.as<float>(), box_, stream);
}

void RtmImager::fused_args(kernels::FusedArgs& fa) const {
  fa.image = image_.as<float>();
  fa.illumination = illumination_.as<float>();
  for (int a = 0; a < 3; ++a) fa.box_lo[a] = box_.lo[a], fa.box_hi[a] = box_.hi[a];
  fa.s_scale = box_.s_scale, fa.r_scale = box_.r_scale;
}

void RtmImager::download(float* image, float* illumination, cudaStream_t stream) const {
  download_volume(image_, image, dims_, false, 0, stream);
  download_volume(illumination_, illumination, dims_, false, 0, stream);
}

void RtmImager::add_to(float* image, float* illumination, cudaStream_t stream) {
  const long long cells = dims_.nx * dims_.ny * dims_.nz;
  if (!pinned_) SEISRTM_CUDA(cudaMallocHost(&pinned_, static_cast<size_t>(cells) * sizeof(float)));
  float* h = pinned_;
  download_volume(image_, h, dims_, false, 0, stream);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < cells; ++i) image[i] += h[i];
  download_volume(illumination_, h, dims_, false, 0, stream);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < cells; ++i) illumination[i] += h[i];
}

}  // namespace seisrtm
