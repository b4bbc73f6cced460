#include "solver/hooks.hpp"

namespace seisrtm {

namespace {
Hooks g_hooks;
}  // namespace

const Hooks& hooks() {
  return g_hooks;
}

void set_hooks(const Hooks& h) {
  g_hooks = h;
}

}  // namespace seisrtm
