#pragma once
// The tma kernels' tuning from the environment, for A/Bs of whole binaries (`seisrtm bench`,
// the GPU scripts): SEISRTM_TMA_SHAPE (rows2, rows4, pairs, quads), SEISRTM_TMA_CHUNK_ROWS (tile
// rows a chunk of the launch order, 0 whole layers), SEISRTM_TMA_L2_HINT (0, 1, 2) and
// SEISRTM_FUSED_SHAPE (wide, compact, compact1). Unset or empty: the policy's. Read here, in the
// command layer, once; the solver takes them as CudaOptions::tuning.
#include "io/config.hpp"
#include "solver/cuda_propagator.hpp"

namespace seisrtm::app {

// Throws Error naming the variable and the valid values for anything else.
TmaTuning tma_tuning_from_environment();
// cuda_options(c) with the environment's tuning.
CudaOptions gpu_options(const Config& c);

}  // namespace seisrtm::app
