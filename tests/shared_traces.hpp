#pragma once

// The public traces shared beside the project (../shared/traces, see
// TOPOBLOCK_SHARED_TRACES_DIR in tests/CMakeLists.txt). A user's clone does
// not have them: a test that needs one then reports itself skipped, which
// CTest reads from the marker below (SKIP_REGULAR_EXPRESSION), rather than
// passing without having checked anything.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace topoblock::test {

inline constexpr const char* skipped_marker = "TOPOBLOCK_TEST_SKIPPED";

// The path of a shared trace file (or, with no name, of their directory);
// false after printing the skip marker when it is absent.
inline bool shared_trace_present(const std::filesystem::path& path) {
    if (std::filesystem::exists(path)) return true;
    const std::string note = std::string(skipped_marker) + ": " + path.string() + " is absent";
    MESSAGE(note);
    return false;
}

inline std::filesystem::path shared_trace(const std::string& file = {}) {
    const std::filesystem::path dir = TOPOBLOCK_SHARED_TRACES_DIR;
    return file.empty() ? dir : dir / file;
}

}  // namespace topoblock::test
