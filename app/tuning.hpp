#pragma once
// The tma kernels' tuning as flags of `seisrtm bench`, for A/Bs within one binary: --tma-shape,
// --fused-shape, --chunk-rows and --l2-hint, each checked against the kernels' own name tables
// (kernels::kTmaShapes, kernels::kFusedShapes) as the command line is parsed. A flag not given
// is the policy's. run, migrate and validate take no tuning: they run the policy. The solver
// takes the choice as CudaOptions::tuning.
#include <string>

#include "app/commands.hpp"
#include "io/config.hpp"
#include "solver/cuda_propagator.hpp"

namespace CLI {
class App;
}

namespace seisrtm::app {

// Adds the four flags to `bench`, parsed into `t`. A value outside the valid ones is a usage
// error naming the flag and the valid values.
void add_tuning_options(CLI::App& bench, TmaTuning& t);
// One line for a bench header: each flag and its value, "policy" where it was not given.
std::string tuning_text(const TmaTuning& t);
// cuda_options(c) with the tuning `t`: bench's flags; the policy where none is given.
CudaOptions gpu_options(const Config& c, const TmaTuning& t = {});

// seisrtm bench (app/cmd_bench.cpp) with the tuning of its flags.
int cmd_bench(const BenchOptions& b, const TmaTuning& t);
// What bench --rtm cannot run in these storages (--gathers, --isic or a 16-bit store with fp16;
// --longest with --storage), refused before the GPU is asked for (app/cmd_bench_rtm.cpp).
void check_rtm_storages(const BenchOptions& b, const std::vector<std::string>& storages);
// bench --rtm on the bench's model and survey (app/cmd_bench_rtm.cpp), with the tuning of its flags.
int bench_rtm(const BenchOptions& b, const Config& base, const TmaTuning& t, const std::vector<std::string>& storages);

}  // namespace seisrtm::app
