#pragma once

#include <topoblock/policy/concept.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>

#include <bit>
#include <cstdint>
#include <string_view>

namespace topoblock {

// The topology-oblivious baseline: a traditional scheduler that sees a flat
// list of nodes. It takes the lowest-index usable GPUs (or wholly free nodes)
// across the whole cluster, ignoring domains; locality is not honoured, and
// segments and exclusive domains, which need domains, are unsupported.
// Cost: O(nodes it takes + empty index words skipped).
struct first_fit {
    std::string_view name() const noexcept { return "first-fit"; }
    bool supports(const request& req) const noexcept { return !req.segmented() && !req.exclusive_domain; }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const topology& topo = state.topo();
        if (req.takes_whole_nodes()) {
            const auto& nodes = state.wholly_usable_nodes();
            std::uint32_t taken = 0;  // nodes, or GPUs for a whole-node GPU request
            for (std::size_t n = nodes.find_first(); taken < req.count && n < nodes.size(); n = nodes.find_next(n + 1)) {
                const auto id = static_cast<node_id>(n);
                out.add(id, state.usable_gpus(id));
                taken += req.what == unit::nodes ? 1 : topo.node(id).gpus;
            }
            return taken >= req.count ? errc::ok : errc::fragmented;
        }
        const auto& nodes = state.nodes_with_usable_gpus();
        std::uint32_t missing = req.count;
        for (std::size_t n = nodes.find_first(); missing > 0 && n < nodes.size(); n = nodes.find_next(n + 1)) {
            const auto id = static_cast<node_id>(n);
            const gpu_mask mine = lowest_bits(state.usable_gpus(id), missing);
            out.add(id, mine);
            missing -= count_bits(mine);
        }
        return missing == 0 ? errc::ok : errc::insufficient_free;
    }
};

}  // namespace topoblock
