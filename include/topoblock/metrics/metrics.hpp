#pragma once

#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>

#include <cstdint>
#include <span>
#include <utility>

namespace topoblock {

// Held GPUs on healthy (not down) nodes over the GPUs of healthy nodes.
// O(1).
template <class State>
double utilization(const State& state) noexcept {
    const std::uint64_t healthy = state.healthy_gpus();
    if (healthy == 0) return 0.0;
    return static_cast<double>(state.held_gpus() - state.held_gpus_on_down_nodes()) / static_cast<double>(healthy);
}

// GPUs held beyond what the jobs asked for (rounding up to nodes or blocks).
struct internal_fragmentation {
    std::uint64_t idle_held_gpus = 0;
    // idle_held_gpus / held GPUs; 0 when nothing is held.
    double share_of_held = 0.0;
};

// O(1).
template <class State>
internal_fragmentation internal_fragmentation_of(const State& state) noexcept {
    internal_fragmentation f;
    f.idle_held_gpus = state.held_gpus() - state.requested_gpus();
    if (state.held_gpus() != 0)
        f.share_of_held = static_cast<double>(f.idle_held_gpus) / static_cast<double>(state.held_gpus());
    return f;
}

// The share of free GPUs that cannot serve request `req` under the
// allocator's own policy: copies of `req` are placed on a scratch copy until
// the policy refuses; the GPUs they would hold count as serving, the rest of
// the free GPUs as fragmented. 0 when nothing is free. Cost: a copy of the
// state plus one placement per copy that fits.
template <class Allocator>
double external_fragmentation(const Allocator& alloc, const request& req) {
    const std::uint64_t free = alloc.state().available().gpus;
    if (free == 0) return 0.0;
    Allocator scratch = alloc;
    std::uint64_t served = 0;
    while (true) {
        const auto id = scratch.try_allocate(req);
        if (!id) break;
        served += scratch.find(*id)->held_gpus;
    }
    return 1.0 - static_cast<double>(served) / static_cast<double>(free);
}

// One size of a workload's mix and its weight (for instance its share of
// jobs or of GPU-hours).
struct size_weight {
    request req;
    double weight = 0.0;
};

// External fragmentation weighted by a workload's size mix, as the FGD paper
// (Weng et al., ATC'23) weighs a node's fragmentation by the expected task
// distribution: sum of weight * external_fragmentation(req) over sum of
// weights.
template <class Allocator>
double weighted_external_fragmentation(const Allocator& alloc, std::span<const size_weight> mix) {
    double total = 0.0, weights = 0.0;
    for (const auto& m : mix) {
        total += m.weight * external_fragmentation(alloc, m.req);
        weights += m.weight;
    }
    return weights > 0.0 ? total / weights : 0.0;
}

// The largest count the policy could place right now for requests shaped like
// `shape` (its count is ignored): 0 when none. Exact: tries every count from
// the free capacity downwards, since placeability need not be monotone in
// size. Cost: up to (free capacity) dry runs.
template <class Allocator>
std::uint32_t largest_placeable(const Allocator& alloc, request shape = request::gpus(1)) {
    const auto& available = alloc.state().available();
    const std::uint64_t free = shape.what == unit::nodes ? available.nodes : available.gpus;
    placement scratch;
    for (std::uint64_t n = free; n > 0; --n) {
        shape.count = static_cast<std::uint32_t>(n);
        shape.segment = 0;
        if (alloc.plan(shape, scratch) == errc::ok) return shape.count;
    }
    return 0;
}

// How live allocations spread over NVLink domains.
struct domain_spread {
    std::uint64_t allocations = 0;
    // Allocations on more than one domain.
    std::uint64_t multi_domain = 0;
    // Multi-domain allocations that would have fitted in one domain of the
    // topology: the avoidable splits.
    std::uint64_t split_but_fit = 0;
    double mean_domains = 0.0;
};

template <class State>
domain_spread domain_spread_of(const State& state) {
    domain_spread s;
    std::uint64_t domains = 0;
    const std::uint64_t largest_gpus = state.topo().max_domain_gpus();
    state.for_each_allocation([&](allocation_id, const allocation_record& r) {
        ++s.allocations;
        domains += r.domains;
        if (r.domains > 1) {
            ++s.multi_domain;
            if (r.held_gpus <= largest_gpus) ++s.split_but_fit;
        }
    });
    if (s.allocations != 0) s.mean_domains = static_cast<double>(domains) / static_cast<double>(s.allocations);
    return s;
}

}  // namespace topoblock
