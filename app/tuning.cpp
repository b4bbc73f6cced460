#include "app/tuning.hpp"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace seisrtm::app {

namespace {

// The names of `all`, joined by `sep`.
template <class E, std::size_t N>
std::string names(const E (&all)[N], const char* (*name)(E), const char* sep) {
  std::string s;
  for (E v : all) s += (s.empty() ? "" : sep) + std::string(name(v));
  return s;
}

// --flag NAME: one of `all` by its name, into `out`; `what` names the thing in the message.
template <class E, std::size_t N>
void add_choice(CLI::App& bench, const char* flag, std::optional<E>& out, const E (&all)[N], const char* (*name)(E),
                const std::string& help, const std::string& what) {
  bench
      .add_option_function<std::string>(
          flag,
          [&out, &all, name](const std::string& v) {
            for (E e : all)
              if (v == name(e)) out = e;
          },
          help + ": " + names(all, name, " | ") + " (default: the policy's)")
      ->type_name("NAME")
      ->check([&all, name, what](const std::string& v) {
        for (E e : all)
          if (v == name(e)) return std::string();
        return "'" + v + "' is not " + what + "; valid: " + names(all, name, ", ");
      });
}

// --flag N: a decimal integer from 0 to `most` (no sign, no leading zero), into `out`; `valid`
// says what the values mean, in the help and the message.
void add_count(CLI::App& bench, const char* flag, const char* type_name, std::optional<int>& out, int most,
               const std::string& help, const std::string& valid) {
  bench
      .add_option_function<std::string>(
          flag, [&out](const std::string& v) { out = std::stoi(v); }, help + ": " + valid + " (default: the policy's)")
      ->type_name(type_name)
      ->check([most, valid](const std::string& v) {
        const bool digits = !v.empty() && v.size() <= 7 && v.find_first_not_of("0123456789") == std::string::npos &&
                            (v.size() == 1 || v[0] != '0');
        return digits && std::stoi(v) <= most ? std::string() : "'" + v + "' is not valid; valid: " + valid;
      });
}

}  // namespace

void add_tuning_options(CLI::App& bench, TmaTuning& t) {
  add_choice(bench, "--tma-shape", t.shape, kernels::kTmaShapes, kernels::tma_shape_name,
             "Thread shape of the acoustic tma forward kernel (vti and tti have one)", "a tma shape");
  add_choice(bench, "--fused-shape", t.fused_shape, kernels::kFusedShapes, fused_shape_name,
             "Launch shape of the fused backward step of --rtm", "a fused shape");
  add_count(bench, "--chunk-rows", "N", t.chunk_rows, 1 << 20, "Launch order of the tma kernels",
            "tile rows a chunk of the tma launch order, 0 (whole layers) up to 1048576");
  add_count(bench, "--l2-hint", "0|1|2", t.l2_hint, 2, "L2 hints of the tma kernels' loads",
            "0 (no L2 hints), 1 (the loads read once a step evict-first: p_prev and m, vti/tti's per-cell "
            "volumes), 2 (1, and p, and vti/tti's q, evict-last)");
}

std::string tuning_text(const TmaTuning& t) {
  const std::string policy = "policy";
  return "--tma-shape " + (t.shape ? std::string(kernels::tma_shape_name(*t.shape)) : policy) + ", --fused-shape " +
         (t.fused_shape ? std::string(fused_shape_name(*t.fused_shape)) : policy) + ", --chunk-rows " +
         (t.chunk_rows ? std::to_string(*t.chunk_rows) : policy) + ", --l2-hint " +
         (t.l2_hint ? std::to_string(*t.l2_hint) : policy);
}

CudaOptions gpu_options(const Config& c, const TmaTuning& t) {
  CudaOptions o = cuda_options(c);
  o.tuning = t;
  return o;
}

}  // namespace seisrtm::app
