#include "solver/rtm_gathers.hpp"

#include "base/error.hpp"
#include "kernels/cuda_check.hpp"

namespace seisrtm {

RtmGathers::~RtmGathers() {
  if (pinned_) cudaFreeHost(pinned_);
}

void RtmGathers::allocate(const GatherLayout& l, const CellBox& in, const VolumeDims& d, long long z_shift) {
  layout_ = l;
  if (!active()) return;
  kernels::GatherArgs& a = args_;
  a.nxl = static_cast<int>(l.x.size());
  a.nyl = static_cast<int>(l.y.size());
  a.x_first = static_cast<int>(l.x.front());
  a.y_first = static_cast<int>(l.y.front());
  a.x_step = a.nxl > 1 ? static_cast<int>(l.x[1] - l.x[0]) : 1;
  a.y_step = a.nyl > 1 ? static_cast<int>(l.y[1] - l.y[0]) : 1;
  for (size_t j = 0; j < l.x.size(); ++j)
    if (l.x[j] != a.x_first + static_cast<long long>(j) * a.x_step)
      throw Error("RtmGathers: x locations not evenly spaced");
  for (size_t j = 0; j < l.y.size(); ++j)
    if (l.y[j] != a.y_first + static_cast<long long>(j) * a.y_step)
      throw Error("RtmGathers: y locations not evenly spaced");
  a.half = static_cast<int>(l.half_offsets);
  for (int k = 0; k < 3; ++k) a.lo[k] = static_cast<int>(in.lo[k]), a.hi[k] = static_cast<int>(in.hi[k]);
  a.nz = static_cast<int>(d.nz);  // the device layout's depths: the fields' planes
  a.sy = d.nxp;
  a.sz = d.nxp * d.ny;
  planes_ = DevicePlanes{d.nz, in.lo[2], in.hi[2], z_shift};
  values_ = DeviceBuffer(bytes(l, d.nz), MemoryKind::plain);
  // The pinned copy now, not at the first shot's end (cudaMallocHost of GiBs takes a while).
  SEISRTM_CUDA(cudaMallocHost(&pinned_, values_.bytes()));
}

void RtmGathers::clear(cudaStream_t stream) const {
  if (active()) SEISRTM_CUDA(cudaMemsetAsync(values_.as<void>(), 0, values_.bytes(), stream));
}

void RtmGathers::add(const DeviceBuffer& s, const DeviceBuffer& r, cudaStream_t stream) const {
  if (active()) kernels::launch_offset_gathers(s.as<float>(), r.as<float>(), values_.as<float>(), args_, stream);
}

void RtmGathers::add_to(float* host, cudaStream_t stream) {
  if (!active()) return;
  SEISRTM_CUDA(cudaMemcpyAsync(pinned_, values_.as<void>(), values_.bytes(), cudaMemcpyDeviceToHost, stream));
  SEISRTM_CUDA(cudaStreamSynchronize(stream));
  add_from_device_layout(layout_, pinned_, host, planes_);
}

}  // namespace seisrtm
