#pragma once

// The one place the version is written; CMakeLists.txt reads it from here.
#define TOPOBLOCK_VERSION_MAJOR 0
#define TOPOBLOCK_VERSION_MINOR 1
#define TOPOBLOCK_VERSION_PATCH 0

namespace topoblock {
inline constexpr int version_major = TOPOBLOCK_VERSION_MAJOR;
inline constexpr int version_minor = TOPOBLOCK_VERSION_MINOR;
inline constexpr int version_patch = TOPOBLOCK_VERSION_PATCH;
}  // namespace topoblock
