#pragma once
// Catch2 v2 (Debian 12: one header) or v3 (Ubuntu 24.04, the Dockerfile's image: a library with
// its own headers). The tests use the subset common to both.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
using Catch::Approx;
#define SEISRTM_CATCH_V3 1
#else
#include <catch2/catch.hpp>
#endif
