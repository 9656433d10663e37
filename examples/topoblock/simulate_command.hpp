#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

namespace topoblock::cli {

// `topoblock simulate`: see docs/simulate.md.
inline int simulate_main(const std::vector<std::string_view>&) {
    std::fputs("topoblock simulate: not built yet (issue: trace-replay simulator)\n", stderr);
    return 2;
}

}  // namespace topoblock::cli
