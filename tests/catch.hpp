#pragma once
// Catch2 v2 (Debian 12: one header) or v3 (Ubuntu 24.04, the Dockerfile's image: a library with
// its own headers). The tests use the subset common to both, written as v2 spells it; the v3
// branch below maps the two names that moved (Approx, Contains).
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#include <concepts>
#include <string>
#include <utility>

using Catch::Approx;  // v2 has it in the global namespace as well
#define SEISRTM_CATCH_V3 1

namespace Catch::Matchers {
// v2's Contains(string) is a substring match; v3 renamed that ContainsSubstring and made
// Contains(x) "the range holds an element equal to x", which for a string argument compares
// single chars with the whole needle and does not compile. This overload restores v2's meaning
// for every argument that converts implicitly to std::string (literals, std::string). It has
// the same parameter list as v3's unconstrained Contains(T&&) and is more constrained, so
// overload resolution picks it; matchers and other element types still reach v3's.
template <std::convertible_to<std::string> Needle>
StringContainsMatcher Contains(Needle&& needle) {
  return ContainsSubstring(std::string(std::forward<Needle>(needle)));
}
}  // namespace Catch::Matchers
#else
#include <catch2/catch.hpp>
#endif
