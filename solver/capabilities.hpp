#pragma once
// What the GPU kernels implement, in one place (CUTLASS's can_implement): a kernel variant
// against the equation, the storage, the pass and the device. The commands ask it when they
// check a config, before any model or data is read; the propagators and migrators ask it again
// for callers that build them directly. Config keys that do not depend on the GPU (a space order
// that is not 2, 4, 8 or 16) are io/config.cpp's to refuse.
#include <string>

#include "io/config_enums.hpp"
#include "kernels/acoustic.hpp"
#include "solver/device_info.hpp"

namespace seisrtm {

struct KernelChoice {
  kernels::Variant variant = kernels::Variant::tma;
  Equation equation = Equation::acoustic;
  kernels::Storage storage = kernels::Storage::fp32;
  bool migration = false;  // the migrator's passes
  bool slabs = false;      // one slab of a z decomposition
};

// naive, smem or tma by name (throws on any other), and the name of a variant.
kernels::Variant variant_named(const std::string& name);
// solver.kernel's variant; auto is resolved by the caller (cuda_options), never passed here.
kernels::Variant variant_of(SolverKernel k);
const char* variant_name(kernels::Variant v);

// Empty where `k` runs (on `gpu`; with nullptr the device is not asked about); else the reason and
// what would be valid, one clause a caller puts after its key ("config key 'solver.kernel': ...").
std::string cannot_implement(const KernelChoice& k, const GpuInfo* gpu);

// Whether migration.fused asks for the fused backward step in this storage (where the kernel
// implements it: tma, acoustic, radius <= 4). auto: in fp32 only; in fp16 the fused step is
// issue-bound and slower than the separate kernels (docs/BENCHMARKS.md, "RTM").
bool fused_step_asked(FusedStep f, kernels::Storage storage);

}  // namespace seisrtm
