// Catch2 main for every test tier. Where no usable GPU exists the GPU tier says so in a line that
// CTest reads as "skipped" (tests/CMakeLists.txt) and exits with 77.
#define CATCH_CONFIG_RUNNER
#include <cstdio>
#include <cstring>

#include "solver/device_info.hpp"
#include "tests/catch.hpp"

int main(int argc, char** argv) {
#ifdef SEISRTM_GPU_TIER
  // Listing the tests (--list-tests, --list-test-names-only, --list-tags, -l) runs none: it needs
  // no GPU, so a machine without one can see what the tier holds.
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    listing = listing || std::strncmp(argv[i], "--list", 6) == 0 || !std::strcmp(argv[i], "-l");
  const seisrtm::GpuInfo g = seisrtm::query_gpu();
  if (!g.present && !listing) {
    std::printf("SKIPPED: [gpu] tests need a CUDA GPU: %s\n", g.reason.c_str());
    return 77;
  }
  if (g.present) std::printf("[gpu] tests on %s (compute capability %d.%d)\n", g.name.c_str(), g.cc_major, g.cc_minor);
#endif
  return Catch::Session().run(argc, argv);
}
