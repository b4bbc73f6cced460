#include "solver/tensor_map.hpp"

#include <string>

#include "base/error.hpp"
#include "solver/device_info.hpp"

namespace seisrtm {

void encode_volume_map(CUtensorMap* map, const void* base, long long nxp, long long ny, long long nz,
                       const std::array<int, 3>& box, int element_bytes) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static const auto encode = reinterpret_cast<Encode>(driver_entry_point("cuTensorMapEncodeTiled"));
  if (!encode) throw Error("solver.kernel tma: the driver offers no cuTensorMapEncodeTiled; use smem");
  // x extent: the padded row (a multiple of 32 elements). The pad columns are zero and never
  // written, exactly what the copy engine's out-of-bounds fill would give (+0 in either type).
  if (element_bytes != 4 && element_bytes != 2)
    throw Error("tensor map: elements of " + std::to_string(element_bytes) + " bytes (valid: 4 or 2)");
  const cuuint64_t eb = cuuint64_t(element_bytes);
  const cuuint64_t dims[3] = {cuuint64_t(nxp), cuuint64_t(ny), cuuint64_t(nz)};
  const cuuint64_t strides[2] = {cuuint64_t(nxp) * eb, cuuint64_t(nxp * ny) * eb};
  const cuuint32_t elem[3] = {1, 1, 1};
  const cuuint32_t boxd[3] = {cuuint32_t(box[0]), cuuint32_t(box[1]), cuuint32_t(box[2])};
  const CUresult r =
      encode(map, element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
             const_cast<void*>(base), dims, strides, boxd, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error("cuTensorMapEncodeTiled failed (error " + std::to_string(int(r)) + ") for the " + std::to_string(nxp) +
                " x " + std::to_string(ny) + " x " + std::to_string(nz) + " padded grid");
}

}  // namespace seisrtm
