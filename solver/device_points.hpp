#pragma once
// Points on the device: the injection of point series (sources, data) and the recording of
// traces, in the padded layout.
#include <cuda_runtime.h>

#include <vector>

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

// One shot's source as the forward backend injects it: an entry a point (kernels::PointArgs),
// all of one wavelet; a slab's edge-plane entries first, as they are injected before the
// exchange.
struct PointSource {
  DeviceBuffer cells, coef;
  int entries = 0, edge_entries = 0;
  // Entries [first, first + count).
  kernels::PointArgs part(int first, int count) const {
    return {cells.as<long long>() + first, coef.as<float>() + first, nullptr, count, 0};
  }
  kernels::PointArgs all() const { return {cells.as<long long>(), coef.as<float>(), nullptr, entries, 0}; }
};
// The entries of `src` on the host, each m w / (hx hy hz (1 + s)), the factor the CPU reference
// applies; a free surface erases whatever lands on z = 0, so those entries are dropped. parts
// (optional): a slab's, whose edge-plane entries go first (stable order otherwise).
struct SourceEntries {
  std::vector<long long> cells;
  std::vector<float> coef;
  int edge_entries = 0;
};
SourceEntries source_entries(const Problem& pb, const PointSet& src, const VolumeDims& d,
                             const SlabOverlap* parts = nullptr);
// Uploads the entries (cells, then coefficients).
void upload_source(const SourceEntries& e, PointSource& out);

// Recording weights of a point set in the padded layout, for launch_record.
struct Recording {
  DeviceBuffer cells, coef, offset;
  kernels::PointArgs args;
};
Recording make_recording(const PointSet& ps, const VolumeDims& d);

}  // namespace seisrtm
