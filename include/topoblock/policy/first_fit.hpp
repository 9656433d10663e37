#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

namespace topoblock {

// The topology-oblivious baseline: the lowest-index usable GPUs (or wholly
// free nodes) across the cluster, ignoring domains; locality is not honoured,
// and segments and exclusive domains are unsupported. It keeps two
// cluster-wide node bitsets of its own (only first-fit pays for their upkeep).
// Cost: O(nodes it takes + empty index words skipped).
struct first_fit {
    std::string_view name() const noexcept { return "first-fit"; }
    bool supports(const request& req) const noexcept { return !req.segmented() && !req.exclusive_domain; }

    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        with_usable_ = indexed_bitset(topo.node_count());
        wholly_usable_ = indexed_bitset(topo.node_count());
        for (domain_id d = 0; d < topo.domain_count(); ++d) on_domain_change(state, d);
    }

    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        TOPOBLOCK_ASSERT(d < state.topo().domain_count());
        const domain_shape s = state.topo().shape(d);
        const bool open = state.domain_open(d);
        // A bound known when compiled: no loop for domains of <= 64 nodes.
        for (std::size_t w = 0; w < State::node_set::word_count && w * 64 < s.node_count; ++w) {
            std::uint64_t whole = 0, usable = 0;
            if (open) {
                whole = state.nodes_with_unheld(d, s.gpus_per_node).word(w);
                usable = whole;
                for (std::uint32_t k = 1; k < s.gpus_per_node; ++k) usable |= state.nodes_with_unheld(d, k).word(w);
            }
            const std::size_t count = std::min<std::size_t>(64, s.node_count - w * 64);
            wholly_usable_.assign_bits(s.first_node + w * 64, count, whole);
            with_usable_.assign_bits(s.first_node + w * 64, count, usable);
        }
    }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const topology& topo = state.topo();
        TOPOBLOCK_ASSERT(with_usable_.size() == topo.node_count());  // attached to this state
        // Wholly usable nodes in a row are taken a run at a time.
        if (req.takes_whole_nodes()) {
            std::uint32_t missing = req.count;  // nodes, or GPUs for a whole-node GPU request
            for (std::size_t n = wholly_usable_.find_first(); missing > 0 && n < wholly_usable_.size();
                 n = wholly_usable_.find_next(n)) {
                const node_place place = topo.place(static_cast<node_id>(n));
                const std::uint32_t per_node = req.what == unit::nodes ? 1 : place.gpus;
                const std::size_t start = n;
                n = take_whole_run(topo, place, n, (missing + per_node - 1) / per_node, out);
                missing -= static_cast<std::uint32_t>(std::min<std::uint64_t>(missing, std::uint64_t{n - start} * per_node));
            }
            return missing == 0 ? errc::ok : errc::fragmented;
        }
        std::uint32_t missing = req.count;
        for (std::size_t n = with_usable_.find_first(); missing > 0 && n < with_usable_.size(); n = with_usable_.find_next(n)) {
            const auto id = static_cast<node_id>(n);
            const node_place place = topo.place(id);
            const std::uint32_t gpus = place.gpus;
            if (missing >= gpus && wholly_usable_.test(n)) {
                const std::size_t end = take_whole_run(topo, place, n, missing / gpus, out);
                missing -= static_cast<std::uint32_t>(end - n) * gpus;
                n = end;
                continue;
            }
            const gpu_mask mine = lowest_bits(state.usable_gpus(id), missing);
            out.add(id, mine);
            missing -= count_bits(mine);
            ++n;
        }
        return missing == 0 ? errc::ok : errc::insufficient_free;
    }

    // explain()'s numbers: the cluster is first-fit's one scope.
    template <class State>
    toolkit::capacity_view measure(const State& state, const request& req) const {
        toolkit::capacity_view view;
        view.scope = "cluster";
        view.unit = toolkit::unit_name(req);
        view.need = req.count;
        toolkit::scope_offer o;
        if (req.what == unit::nodes) {
            o.free = state.available().nodes;
        } else if (!req.whole_nodes) {
            o.free = state.available().gpus;
        } else if (const std::uint32_t g = state.topo().uniform_gpus_per_node(); g != 0) {
            o.free = state.available().nodes * g;
        } else {
            for (std::size_t n = wholly_usable_.find_first(); n < wholly_usable_.size(); n = wholly_usable_.find_next(n + 1))
                o.free += state.topo().place(static_cast<node_id>(n)).gpus;
        }
        o.most = o.free;
        o.holds_now = o.free >= req.count;
        o.holds_if_emptied = (req.what == unit::nodes ? state.up_nodes() : state.up_gpus()) >= req.count;
        view.add(o);
        return view;
    }

    // Nodes (cluster-wide ids) with usable GPUs / wholly usable, as kept.
    const indexed_bitset& nodes_with_usable_gpus() const noexcept { return with_usable_; }
    const indexed_bitset& wholly_usable_nodes() const noexcept { return wholly_usable_; }

    // Heap bytes besides the state's, for the memory benchmark.
    std::size_t memory_bytes() const noexcept { return with_usable_.memory_bytes() + wholly_usable_.memory_bytes(); }

    // What attach and on_domain_change keep (testing::check_indexes).
    auto indexes() const noexcept { return std::tie(with_usable_, wholly_usable_); }

private:
    // Adds wholly usable node n and those after it in its domain, at most
    // `most` in all; returns the node after the last one taken.
    std::size_t take_whole_run(const topology& topo, const node_place& place, std::size_t n, std::size_t most,
                               placement& out) const {
        const std::size_t end =
            std::min({wholly_usable_.find_next_clear(n), std::size_t{topo.shape(place.domain).end_node()}, n + most});
        out.add_nodes(static_cast<node_id>(n), static_cast<std::uint32_t>(end - n), full_gpu_mask(place.gpus));
        return end;
    }

    indexed_bitset with_usable_;
    indexed_bitset wholly_usable_;
};

}  // namespace topoblock
