#pragma once
// The copy bandwidth a stencil is measured against: device-to-device copies of a large buffer,
// bytes read plus bytes written, median of several.
#include "solver/device_buffer.hpp"

namespace seisrtm {

struct CopyBandwidth {
  double bytes_per_second = 0;  // read + write
  bool compressible = false;    // the buffers really were compressible
};

// `random`: the source holds random floats (incompressible); otherwise zeros.
CopyBandwidth measure_copy_bandwidth(std::size_t bytes, MemoryKind kind, bool random, int repeats = 10);

}  // namespace seisrtm
