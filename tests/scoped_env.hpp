#pragma once
// An environment variable set for a scope, and what it was restored on leaving it (a failed
// REQUIRE included): the A/B variables the tests set (SEISRTM_TMA_SHAPE, SEISRTM_TMA_CHUNK_ROWS,
// SEISRTM_TMA_L2_HINT) never outlive the case that set them.
#include <cstdlib>
#include <string>

struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char* n, const std::string& value) : name(n), had(std::getenv(n) != nullptr) {
    if (had) old = std::getenv(n);
    ::setenv(n, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had)
      ::setenv(name.c_str(), old.c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};
