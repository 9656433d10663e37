#pragma once

// Placements as short text for the worked examples: node names, a node
// held in part followed by its GPUs ("gb18[0,1]").

#include <topoblock/topoblock.hpp>

#include <string>

namespace topoblock::test {

template <class Pieces>
std::string describe(const topology& topo, const Pieces& pieces) {
    std::string text;
    for (const piece p : pieces) {
        if (!text.empty()) text += ' ';
        text += topo.node(p.node).name;
        if (p.gpus == full_gpu_mask(topo.node(p.node).gpus)) continue;
        text += '[';
        bool first = true;
        for (std::uint32_t g = 0; g < 64; ++g)
            if ((p.gpus >> g) & 1U) {
                if (!first) text += ',';
                text += std::to_string(g);
                first = false;
            }
        text += ']';
    }
    return text;
}

// Allocates `req` and describes where it went, or names the error.
template <class Alloc>
std::string place(Alloc& a, const request& req) {
    const auto id = a.try_allocate(req);
    if (!id) return std::string(to_string(id.error()));
    return describe(a.topo(), a.find(*id)->pieces);
}

}  // namespace topoblock::test
