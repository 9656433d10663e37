#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

namespace topoblock::cli {

// `topoblock place`: see docs/place.md.
inline int place_main(const std::vector<std::string_view>&) {
    std::fputs("topoblock place: not built yet (issue: Slurm interop)\n", stderr);
    return 2;
}

}  // namespace topoblock::cli
