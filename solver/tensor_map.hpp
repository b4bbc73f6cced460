#pragma once
// Tensor maps (CUtensorMap) over the padded volumes of the CUDA backend, for the tma variant.
#include <cuda.h>

#include <array>

namespace seisrtm {

// A map over a volume [nz][ny][nxp] of floats (element_bytes 4) or halves (2), rows padded to
// nxp elements, read in boxes of `box` = {x, y, z} elements; out-of-bounds elements read as
// zero. Throws Error when the driver has no cuTensorMapEncodeTiled or refuses the map.
void encode_volume_map(CUtensorMap* map, const void* base, long long nxp, long long ny, long long nz,
                       const std::array<int, 3>& box, int element_bytes = 4);

}  // namespace seisrtm
