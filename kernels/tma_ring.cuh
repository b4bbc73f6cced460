#pragma once
// The TMA plane ring of the tma kernels (acoustic_tma.cu, tti_tma.cu, rtm_fused.cu): stages of
// shared memory, each filled by bulk tensor loads (the copy engine) and completing on its own
// mbarrier that a consumer waits on with the parity of the stage's phase. The pieces take every
// index from the caller (which thread issues, which stage a plane is in, the phase) and never read
// threadIdx; what plane sits where, and the stage and phase counters, are the kernel's own
// bookkeeping (kept as plain locals: a state object, even an inlined step on references to them,
// changed the kernels' PTX). Compute capability 9.0 (sm_90a).
#include <cuda.h>

#include <cstdint>
#include <cuda/ptx>

#include "kernels/tma_load.cuh"

namespace seisrtm::kernels::detail {

// The offset in T elements of the first 128-byte boundary in the dynamic shared array: the
// caller adds it to the array itself (`reinterpret_cast<T*>(shared_raw) + ring_offset<T>(..)`),
// not to an integer cast of its address, so the compiler keeps shared-space loads (LDS) instead of
// generic ones with 64-bit address arithmetic (a pointer built inside this function loses them
// as well). A stage of a multiple of 128 bytes then starts on a boundary too (bulk tensor
// copies need 128).
template <class T>
__device__ __forceinline__ uint32_t ring_offset(const void* shared_raw) {
  const uint32_t misalign = static_cast<uint32_t>(__cvta_generic_to_shared(shared_raw)) & 127u;
  return ((128u - misalign) & 127u) / sizeof(T);
}

// Elements of a stage holding `elements`, rounded up to 128 bytes.
template <class T>
constexpr int stage_elements(int elements) {
  constexpr int kUnit = 128 / sizeof(T);
  return (elements + kUnit - 1) / kUnit * kUnit;
}

// Barriers [0, n) expecting `arrivals` arrivals a phase. One thread calls it; fence_ring_init
// after the last ring makes the inits visible to the copy engine before the block's barrier.
__device__ __forceinline__ void init_ring(uint64_t* bar, int n, uint32_t arrivals) {
  for (int s = 0; s < n; ++s) cuda::ptx::mbarrier_init(&bar[s], arrivals);
}
__device__ __forceinline__ void fence_ring_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

// Producer: one arrival on `bar` that announces the bytes its loads will bring.
__device__ __forceinline__ void expect_bytes(uint64_t* bar, uint32_t bytes) {
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, bar,
                                       bytes);
}
// Producer: the box of `map` at `c` into `dst`, completing on `bar`.
__device__ __forceinline__ void load_box(void* dst, const CUtensorMap* map, const int32_t (&c)[3], uint64_t* bar) {
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map, c, bar);
}
// The same with an L2 eviction policy (l2_policy, kernels/tma_load.cuh).
__device__ __forceinline__ void load_box(void* dst, const CUtensorMap* map, const int32_t (&c)[3], uint64_t* bar,
                                         uint64_t policy) {
  tensor_load_hinted(dst, map, c, bar, policy);
}

// Consumer: waits until `bar` has completed the phase of this parity.
__device__ __forceinline__ void wait_stage(uint64_t* bar, uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}
// The same on a barrier's 32-bit shared-memory address, for kernels that keep the addresses in
// registers (bound by instruction issue: a generic pointer rebuilds the address at every wait).
__device__ __forceinline__ void wait_stage(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "WAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra WAIT_%=;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// Consumer release on a split barrier: one arrival (release, CTA scope) at shared address `bar`.
__device__ __forceinline__ void release_stage(uint32_t bar) {
  asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0];\n}" ::"r"(bar) : "memory");
}
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace seisrtm::kernels::detail
