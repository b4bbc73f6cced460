#pragma once
// Bulk tensor loads (TMA) with an L2 eviction hint, for the tma kernels (compute capability 9.0).
#include <cuda.h>

#include <cstdint>

namespace seisrtm::kernels::detail {

// L2 eviction policies (createpolicy, sm_80+) for the loads of fp32 storage in plain memory
// (AcousticArgsT::l2_hint). A hinted load is not the same as none even with the normal priority:
// evict-normal hints on every load run slower in fp32 and in fp16 (docs/BENCHMARKS.md, "Tried and
// lost"), so the loads without a hint stay unhinted.
__device__ __forceinline__ uint64_t l2_policy(bool first) {
  uint64_t policy;
  if (first)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  else
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ void tensor_load_hinted(void* dst, const CUtensorMap* map, const int32_t (&c)[3],
                                                   uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))), "l"(policy)
      : "memory");
}

}  // namespace seisrtm::kernels::detail
