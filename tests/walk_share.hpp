#pragma once

#include <cstddef>

namespace topoblock::test {

// Long randomized walks run a share of their steps in unoptimised builds
// (the clang and sanitizer presets: tests/CMakeLists.txt defines
// TOPOBLOCK_TESTS_SHORT_WALKS there), where every step's checks cost some
// ten times more; a fifth still takes every path, and the optimised test
// preset runs them whole.
#ifdef TOPOBLOCK_TESTS_SHORT_WALKS
inline constexpr std::size_t walk_share = 5;
#else
inline constexpr std::size_t walk_share = 1;
#endif

}  // namespace topoblock::test
