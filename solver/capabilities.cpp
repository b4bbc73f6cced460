#include "solver/capabilities.hpp"

#include "base/error.hpp"

namespace seisrtm {

kernels::Variant variant_named(const std::string& name) {
  if (name == "naive") return kernels::Variant::naive;
  if (name == "smem") return kernels::Variant::smem;
  if (name == "tma") return kernels::Variant::tma;
  throw Error("'" + name + "' is not a kernel variant; valid: naive, smem, tma");
}

kernels::Variant variant_of(SolverKernel k) {
  switch (k) {
    case SolverKernel::naive:
      return kernels::Variant::naive;
    case SolverKernel::smem:
      return kernels::Variant::smem;
    case SolverKernel::tma:
      return kernels::Variant::tma;
    case SolverKernel::automatic:
      break;
  }
  throw Error("solver.kernel auto is resolved by cuda_options before a variant is taken");
}

const char* variant_name(kernels::Variant v) {
  return v == kernels::Variant::naive ? "naive" : v == kernels::Variant::smem ? "smem" : "tma";
}

std::string cannot_implement(const KernelChoice& k, const GpuInfo* gpu) {
  const bool half = k.storage == kernels::Storage::fp16;
  const bool acoustic = k.equation == Equation::acoustic;
  if (k.variant == kernels::Variant::smem && !acoustic)
    return to_text(k.equation) + " has no smem variant; valid for vti and tti: tma (Hopper), naive";
  if (k.variant == kernels::Variant::smem && half) return "fp16 storage has no smem variant; use tma or naive";
  // The migrator's fp16 fields take the acoustic separate kernels with the store on one device.
  if (k.migration && half && (!acoustic || k.slabs))
    return "fp16 storage migrates the acoustic equation on one device; use fp32 storage";
  // TMA bulk tensor copies: compute capability 9.0, built for sm_90a; below it the kernel traps.
  if (k.variant == kernels::Variant::tma && gpu != nullptr && !gpu->tma) {
    const bool smem_runs = acoustic && !half;
    return "tma needs a Hopper GPU (compute capability 9.0); " + gpu->name + " is " + std::to_string(gpu->cc_major) +
           "." + std::to_string(gpu->cc_minor) + ": use auto, " + (smem_runs ? "smem or naive" : "naive");
  }
  return {};
}

bool fused_step_asked(FusedStep f, kernels::Storage storage) {
  return f == FusedStep::on || (f == FusedStep::automatic && storage == kernels::Storage::fp32);
}

}  // namespace seisrtm
