#pragma once

// drain_plan(): for nodes about to be drained (a node, a rack), where each
// allocation on them could run elsewhere now under the same policy, or why
// it could not (docs/advice.md).

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace topoblock {

// One allocation on the drained nodes.
struct drain_move {
    allocation_id id;
    // ok: `where` is where the policy would place the allocation's request
    // now, off the drained nodes; otherwise why it would not (fragmented,
    // insufficient_free, ...).
    errc result = errc::ok;
    placement where;
};

// For each allocation holding GPUs on `nodes`, in increasing id order: where
// the policy would place its request (the one it was made for) now, with
// those nodes draining (taking no new job) and everything else as it is.
// Each allocation is asked about alone: the answers do not reserve GPUs
// from one another, and its own GPUs stay held while it is asked about.
// Computed on a copy of the allocator; `alloc` is not touched.
// Errors: a node id beyond the topology, or named twice (the error names it).
// Cost: a copy of the allocator, then one plan() per allocation.
template <class Policy, class Capacity>
expected<std::vector<drain_move>, error> drain_plan(const basic_allocator<Policy, Capacity>& alloc,
                                                     std::span<const node_id> nodes) {
    const topology& t = alloc.topo();
    std::vector<bool> named(t.node_count(), false);
    for (const node_id n : nodes) {
        if (n >= t.node_count())
            return unexpected(make_error("drain_plan: node id " + std::to_string(n) + " is beyond the topology's " +
                                         std::to_string(t.node_count()) + " nodes"));
        if (named[n]) return unexpected(make_error("drain_plan: node '" + t.node(n).name + "' is named twice"));
        named[n] = true;
    }
    std::vector<allocation_id> on;
    const auto& state = alloc.state();
    for (const node_id n : nodes) {
        const gpu_mask held = state.node_full_mask(n) & ~state.unheld_gpus(n);
        for (gpu_mask m = held; m != 0; m &= m - 1) on.push_back(state.owner(n, static_cast<std::uint32_t>(std::countr_zero(m))));
    }
    std::sort(on.begin(), on.end());
    on.erase(std::unique(on.begin(), on.end()), on.end());
    std::vector<drain_move> out;
    if (on.empty()) return out;
    auto trial = alloc;
    for (const node_id n : nodes)
        if (state.health(n) == node_health::up) (void)trial.set_health(n, node_health::drain);
    out.reserve(on.size());
    for (const allocation_id id : on) {
        drain_move move;
        move.id = id;
        move.result = trial.plan(alloc.find(id)->asked, move.where);
        if (move.result != errc::ok) move.where.clear();
        out.push_back(std::move(move));
    }
    return out;
}

// The same for every node of domain `d` (a rack being drained).
// Errors: a domain id beyond the topology.
template <class Policy, class Capacity>
expected<std::vector<drain_move>, error> drain_plan_for_domain(const basic_allocator<Policy, Capacity>& alloc,
                                                                domain_id d) {
    const topology& t = alloc.topo();
    if (d >= t.domain_count())
        return unexpected(make_error("drain_plan_for_domain: domain id " + std::to_string(d) + " is beyond the topology's " +
                                     std::to_string(t.domain_count()) + " domains"));
    const domain_shape shape = t.shape(d);
    std::vector<node_id> nodes(shape.node_count);
    for (std::uint32_t i = 0; i < shape.node_count; ++i) nodes[i] = shape.first_node + i;
    return drain_plan(alloc, std::span<const node_id>(nodes));
}

}  // namespace topoblock
