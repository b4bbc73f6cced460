#pragma once
// The halo exchange of a z slab (solver/decomposition.hpp) for the CPU wave pairs: the current
// level of the acoustic field, or of p and q (padded layout, whole padded planes).
#include "solver/decomposition.hpp"
#include "validation/cpu_tti.hpp"
#include "validation/cpu_wave.hpp"

namespace seisrtm::validation {

inline void exchange_halos(CpuWave<float>& w, const Problem& slab_pb, const Slab& s) {
  exchange_host_planes(w.current_data(), slab_pb.grid.n[0] * slab_pb.grid.n[1], s);
}

inline void exchange_halos(CpuTti<float>& w, const Problem&, const Slab& s) {
  exchange_host_planes(w.p_data() + w.plane_offset(0), w.padded_stride(2), s);
  exchange_host_planes(w.q_data() + w.plane_offset(0), w.padded_stride(2), s);
}

}  // namespace seisrtm::validation
