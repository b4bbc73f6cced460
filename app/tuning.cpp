#include "app/tuning.hpp"

#include <cstdlib>
#include <string>

#include "base/error.hpp"

namespace seisrtm::app {

namespace {

// The value of `all` whose name(value) variable `var` holds; nullopt when it is unset or empty.
template <class E, std::size_t N>
std::optional<E> env_choice(const char* var, const E (&all)[N], const char* (*name)(E)) {
  const char* e = std::getenv(var);
  if (e == nullptr || *e == 0) return std::nullopt;
  std::string valid;
  for (E v : all) {
    if (std::string(e) == name(v)) return v;
    valid += (valid.empty() ? "" : ", ") + std::string(name(v));
  }
  throw Error(std::string("environment variable ") + var + " is '" + e + "'; valid: " + valid);
}

}  // namespace

TmaTuning tma_tuning_from_environment() {
  TmaTuning t;
  t.shape = env_choice("SEISRTM_TMA_SHAPE", kernels::kTmaShapes, kernels::tma_shape_name);
  t.fused_shape = env_choice("SEISRTM_FUSED_SHAPE", kernels::kFusedShapes, fused_shape_name);
  if (const char* e = std::getenv("SEISRTM_TMA_CHUNK_ROWS"); e != nullptr && *e != 0) {
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (*end != 0 || v < 0 || v > 1 << 20)
      throw Error(std::string("environment variable SEISRTM_TMA_CHUNK_ROWS is '") + e +
                  "'; valid: tile rows a chunk of the tma launch order, 0 (whole layers) up to 1048576, or unset");
    t.chunk_rows = static_cast<int>(v);
  }
  if (const char* e = std::getenv("SEISRTM_TMA_L2_HINT"); e != nullptr && *e != 0) {
    if (!((e[0] == '0' || e[0] == '1' || e[0] == '2') && e[1] == 0))
      throw Error(std::string("environment variable SEISRTM_TMA_L2_HINT is '") + e +
                  "'; valid: 0 (no L2 hints), 1 (the loads read once a step evict-first: p_prev and m, vti/tti's "
                  "per-cell volumes), 2 (1, and p, and vti/tti's q, evict-last), or unset");
    t.l2_hint = e[0] - '0';
  }
  return t;
}

CudaOptions gpu_options(const Config& c) {
  CudaOptions o = cuda_options(c);
  o.tuning = tma_tuning_from_environment();
  return o;
}

}  // namespace seisrtm::app
