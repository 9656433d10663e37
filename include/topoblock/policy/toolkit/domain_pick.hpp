#pragma once

#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

// Choosing GPUs and nodes inside one domain, shared by the policies that pick
// a domain first and then the tightest spot in it.
namespace topoblock::toolkit {

// A domain's GPUs still open to the placement being built: usable in the
// state and not yet taken by earlier parts of the same placement.
template <std::size_t MaxNodes>
struct domain_scratch {
    std::array<gpu_mask, MaxNodes> open{};
    node_id first_node = 0;
    std::uint32_t node_count = 0;
    gpu_mask full = 0;
    std::uint32_t gpus_per_node = 0;

    bool wholly_open(std::uint32_t i) const noexcept { return open[i] == full; }
    std::uint32_t open_count(std::uint32_t i) const noexcept { return count_bits(open[i]); }
};

template <class State>
auto load_domain(const State& state, const placement& out, domain_id d) {
    domain_scratch<State::capacity_type::max_nodes_per_domain> s;
    const domain_shape info = state.topo().shape(d);
    s.first_node = info.first_node;
    s.node_count = info.node_count;
    s.gpus_per_node = info.gpus_per_node;
    s.full = full_gpu_mask(info.gpus_per_node);
    for (std::uint32_t i = 0; i < info.node_count; ++i) s.open[i] = state.usable_gpus(info.first_node + i);
    out.for_each_piece_in(info.first_node, info.end_node(),
                          [&](node_id n, gpu_mask gpus) { s.open[n - info.first_node] &= ~gpus; });
    return s;
}

// Chooses `count` nodes from `candidates` (a fixed_bitset of domain-local
// indexes), calling take(first, n) for each run taken: the first nodes of the
// shortest run that holds them all (lowest start on ties), else whole runs
// from the shortest up, so that long runs survive. False, taking nothing,
// when there are too few candidates.
template <class NodeSet, class Take>
bool choose_tightest_runs(const NodeSet& candidates, std::uint32_t count, Take&& take) {
    if (count == 0) return true;
    struct run {
        std::uint32_t start, length;
    };
    // Not zeroed: only the first run_count entries are used.
    std::array<run, (NodeSet::capacity + 1) / 2> runs;
    std::size_t run_count = 0;
    std::uint32_t total = 0;
    const run* tightest = nullptr;
    for (std::size_t i = candidates.find_first(); i < NodeSet::capacity;) {
        const std::size_t end = candidates.find_next_clear(i);
        runs[run_count] = {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(end - i)};
        const run& r = runs[run_count++];
        if (r.length >= count && (tightest == nullptr || r.length < tightest->length)) tightest = &r;
        total += r.length;
        i = candidates.find_next(end);
    }
    if (tightest != nullptr) {
        take(tightest->start, count);
        return true;
    }
    if (total < count) return false;
    std::sort(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(run_count), [](const run& a, const run& b) {
        return a.length != b.length ? a.length < b.length : a.start < b.start;
    });
    for (std::size_t r = 0; count > 0; ++r) {
        const std::uint32_t n = std::min(count, runs[r].length);
        take(runs[r].start, n);
        count -= n;
    }
    return true;
}

// Takes `count` wholly open nodes of the scratch by the tightest-run rule.
template <class Scratch>
bool take_whole_nodes(Scratch& s, std::uint32_t count, placement& out) {
    fixed_bitset<sizeof(s.open) / sizeof(gpu_mask)> wholly_open;
    for (std::uint32_t i = 0; i < s.node_count; ++i)
        if (s.wholly_open(i)) wholly_open.set(i);
    return choose_tightest_runs(wholly_open, count, [&](std::uint32_t start, std::uint32_t n) {
        for (std::uint32_t i = start; i < start + n; ++i) {
            out.add(s.first_node + i, s.open[i]);
            s.open[i] = 0;
        }
    });
}

// Takes `count` open GPUs: whole nodes for each full node's worth, the rest
// on the partly open node it fills most tightly, so wholly free nodes stay
// whole; when the open GPUs are too scattered for that, the nodes with the
// most open GPUs first. False, taking nothing, when fewer are open.
template <class Scratch>
bool take_gpus(Scratch& s, std::uint32_t count, placement& out) {
    std::uint32_t open = 0, wholly_open = 0;
    std::uint32_t partial = s.node_count;  // the tightest partly open node for the rest
    const std::uint32_t whole = count / s.gpus_per_node;
    const std::uint32_t rest = count % s.gpus_per_node;
    for (std::uint32_t i = 0; i < s.node_count; ++i) {
        const std::uint32_t f = s.open_count(i);
        open += f;
        if (f == s.gpus_per_node) ++wholly_open;
        else if (rest != 0 && f >= rest && (partial == s.node_count || f < s.open_count(partial))) partial = i;
    }
    if (open < count) return false;
    // The packed shape needs the whole nodes, plus a node for the rest: a
    // partly open one, else the first wholly open node left.
    if (whole <= wholly_open && (rest == 0 || partial < s.node_count || whole < wholly_open)) {
        take_whole_nodes(s, whole, out);
        if (rest != 0) {
            std::uint32_t node = partial;
            if (node == s.node_count)
                for (node = 0; !s.wholly_open(node); ++node) {
                }
            const gpu_mask mine = lowest_bits(s.open[node], rest);
            out.add(s.first_node + node, mine);
            s.open[node] &= ~mine;
        }
        return true;
    }
    while (count > 0) {
        std::uint32_t best = 0;
        for (std::uint32_t i = 1; i < s.node_count; ++i)
            if (s.open_count(i) > s.open_count(best)) best = i;
        const gpu_mask mine = lowest_bits(s.open[best], count);
        out.add(s.first_node + best, mine);
        s.open[best] &= ~mine;
        count -= count_bits(mine);
    }
    return true;
}

// Takes `units` of a request inside the domain (request_units' measure).
template <class Scratch>
bool take_units(Scratch& s, const request& req, std::uint32_t units, placement& out) {
    if (req.what == unit::nodes) return take_whole_nodes(s, units, out);
    if (req.whole_nodes) return take_whole_nodes(s, (units + s.gpus_per_node - 1) / s.gpus_per_node, out);
    return take_gpus(s, units, out);
}

}  // namespace topoblock::toolkit
