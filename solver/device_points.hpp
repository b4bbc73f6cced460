#pragma once
// Points on the device: the injection of point series (sources, data) and the recording of
// traces, in the padded layout.
#include <cuda_runtime.h>

#include "kernels/acoustic.hpp"
#include "kernels/rtm.hpp"
#include "solver/device_buffer.hpp"
#include "solver/device_wavefield.hpp"
#include "solver/problem.hpp"

namespace seisrtm {

class SlabOverlap;

// Injection of point series: entries grouped by padded cell (kernels::SeriesInjection), and the
// entries of a slab's three parts (SlabOverlap): [split[k], split[k + 1]).
struct DeviceInjection {
  DeviceBuffer cells, offset, row, coef;
  kernels::SeriesInjection inj;
  int split[4] = {};
  kernels::SeriesInjection part(int k) const {
    return {inj.cells + split[k], inj.offset + split[k], inj.row, inj.coef, split[k + 1] - split[k]};
  }
};
// The injection of `ps`: scale multiplies m w / (1 + s). A free surface erases what lands on
// z = 0, so those entries are dropped. parts (optional): a slab's, for split.
void make_injection(const Problem& pb, const PointSet& ps, double scale, const VolumeDims& d, DeviceInjection& out,
                    const SlabOverlap* parts = nullptr);

// Recording weights of a point set in the padded layout, for launch_record.
struct Recording {
  DeviceBuffer cells, coef, offset;
  kernels::PointArgs args;
};
Recording make_recording(const PointSet& ps, const VolumeDims& d);

}  // namespace seisrtm
