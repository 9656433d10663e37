#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/place_each_segment.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/support/bucket_index.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace topoblock {

// Best fit at every level of the hierarchy.
// - A job that fits in one domain goes to the usable domain with the least
//   free capacity that holds it (lowest index on ties); inside it to the
//   tightest run of wholly free nodes, and GPU-level jobs to the node they
//   fill most tightly, so partly used nodes fill first.
// - A larger job (or one allowed to spread) takes the domains with the most
//   free capacity, the last one chosen best-fit for the remainder, inside the
//   tightest group of each level that holds it (lowest level first), else
//   across the cluster. Under require, no more domains than the empty cluster
//   needs (topology::fewest_domains_for); prefer and any then try without.
// - Segments are placed one at a time, each best-fit in one domain.
// The open domains are filed in two bucket indexes, by free GPUs and by free
// whole nodes: a single-domain job costs a lookup plus a pass over its domain.
struct best_fit {
    std::string_view name() const noexcept { return "best-fit"; }

    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        by_free_gpus_ = bucket_index(topo.domain_count(), topo.max_domain_gpus());
        by_free_nodes_ = bucket_index(topo.domain_count(), topo.max_domain_nodes());
        for (domain_id d = 0; d < topo.domain_count(); ++d) on_domain_change(state, d);
    }

    // A full or closed domain is filed nowhere (no lookup asks for 0 units).
    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        TOPOBLOCK_ASSERT(d < by_free_gpus_.items());
        const bool open = state.domain_open(d);
        by_free_gpus_.assign_nonzero(d, open ? state.domain(d).free_gpus : 0);
        by_free_nodes_.assign_nonzero(d, open ? state.domain(d).free_nodes : 0);
    }

    // Domains filed by free GPUs / free whole nodes: the open ones with some.
    const bucket_index& domains_by_free_gpus() const noexcept { return by_free_gpus_; }
    const bucket_index& domains_by_free_nodes() const noexcept { return by_free_nodes_; }

    // The buckets that file domains in `req`'s units, and units per key; no
    // index for exclusive requests and whole nodes of mixed sizes.
    struct keyed_buckets {
        const bucket_index* index;
        std::uint64_t per_key;
    };
    keyed_buckets buckets_for(const topology& topo, const request& req) const noexcept {
        if (req.exclusive_domain) return {nullptr, 0};
        if (!req.takes_whole_nodes()) return {&by_free_gpus_, 1};
        const std::uint64_t per_key = req.what == unit::nodes ? 1 : topo.uniform_gpus_per_node();
        return {per_key == 0 ? nullptr : &by_free_nodes_, per_key};
    }

    // domain_view's numbers read from the buckets on a cluster of like
    // domains, so that explain() is not O(domains) there.
    template <class State>
    toolkit::capacity_view measure(const State& state, const request& req) const {
        const topology& topo = state.topo();
        const toolkit::request_units<State> units{state, req};
        const std::uint64_t part = req.part_size();
        const auto [index, per_key] = buckets_for(topo, req);
        if (index == nullptr || !toolkit::like_domains(topo)) return toolkit::domain_view(state, req);
        std::uint32_t emptied = toolkit::holding_if_emptied_at_once(units, part);
        if (emptied == npos32)
            emptied = toolkit::holding_if_emptied_on_like_domains(state, units.capacity_of(0) >= part, [&](domain_id d) {
                return toolkit::up_units_in(units, d) >= part;
            });
        toolkit::capacity_view view;
        view.unit = toolkit::unit_name(req);
        view.need = part;
        view.free = units.available();
        const std::uint32_t top = index->previous_key(index->max_key());
        view.most = top == npos32 ? 0 : top * per_key;
        const std::uint64_t need_key = (part + per_key - 1) / per_key;
        if (need_key <= index->max_key()) view.holding_now = index->count_at_least(static_cast<std::uint32_t>(need_key));
        view.holding_if_emptied = emptied;
        view.wholly_free = by_free_nodes_.count(topo.max_domain_nodes());
        view.scopes = topo.domain_count();
        return view;
    }

    // Heap bytes besides the state's, for the memory benchmark.
    std::size_t memory_bytes() const noexcept {
        return by_free_gpus_.memory_bytes() + by_free_nodes_.memory_bytes() + heap_bytes(groups_) + heap_bytes(all_domains_) +
               heap_bytes(by_free_);
    }

    // What attach and on_domain_change keep (testing::check_indexes).
    auto indexes() const noexcept { return std::tie(by_free_gpus_, by_free_nodes_); }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        TOPOBLOCK_ASSERT(by_free_gpus_.items() == state.topo().domain_count());  // attached to this state
        const toolkit::request_units<State> units{state, req};
        if (req.segmented()) return place_segments(state, units, out);
        const std::uint64_t size = req.count;
        if (size <= units.largest_domain()) {
            const domain_id d = tightest_domain(state, units, size);
            if (d != npos32) return take_in(state, units, d, size, out, true) ? errc::ok : errc::fragmented;
            if (req.where == locality::require) return units.shortfall(size);
            return spread(state, units, size, npos32, out) ? errc::ok : units.shortfall(size);
        }
        const std::uint64_t fewest = state.topo().fewest_domains_for(size, req.what == unit::nodes);
        if (spread(state, units, size, fewest, out)) return errc::ok;
        if (req.where != locality::require) {
            out.clear();
            if (spread(state, units, size, npos32, out)) return errc::ok;
        }
        return units.shortfall(size);
    }

    // Places a job domain d holds (not segmented, not exclusive) in d by
    // best-fit's rule inside a domain, for policies that choose the domain.
    template <class State>
    errc place_in(const State& state, const request& req, domain_id d, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        return take_in(state, units, d, req.count, out, true) ? errc::ok : errc::fragmented;
    }

private:
    // The usable domain with the least free capacity >= size, or npos32.
    template <class State>
    domain_id tightest_domain(const State& state, const toolkit::request_units<State>& units, std::uint64_t size) const {
        if (const auto [index, per_key] = buckets_for(state.topo(), units.req); index != nullptr)
            return index->find_at_least(static_cast<std::uint32_t>((size + per_key - 1) / per_key));
        domain_id best = npos32;
        std::uint64_t best_free = ~std::uint64_t{0};
        for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
            const std::uint64_t f = units.free_in(d);
            if (f >= size && f < best_free && units.allowed(d)) {
                best = d;
                best_free = f;
            }
        }
        return best;
    }

    // `fresh`: the placement holds nothing in domain d yet.
    template <class State>
    static bool take_in(const State& state, const toolkit::request_units<State>& units, domain_id d,
                        std::uint64_t size, placement& out, bool fresh) {
        if (fresh && take_in_fresh_domain(state, units.req, d, static_cast<std::uint32_t>(size), out))
            return true;
        auto scratch = toolkit::load_domain(state, out, d);
        return toolkit::take_units(scratch, units.req, static_cast<std::uint32_t>(size), out);
    }

    // take_units' choice for the common shapes, read from the state's
    // per-domain indexes instead of a loaded domain (the single-domain fast
    // path: loading the domain instead nearly doubles a one-rack job's
    // cost). False, adding nothing, for the scattered cases.
    template <class State>
    static bool take_in_fresh_domain(const State& state, const request& req, domain_id d, std::uint32_t size,
                                     placement& out) {
        const domain_shape info = state.topo().shape(d);
        const std::uint32_t g = info.gpus_per_node;
        std::uint32_t nodes = 0;
        node_id partial = npos32;  // the tightest partly free node, for the GPUs beyond whole nodes
        bool rest_on_free_node = false;  // else the first wholly free node the whole nodes leave
        if (req.what == unit::nodes) {
            nodes = size;
        } else if (req.whole_nodes) {
            nodes = (size + g - 1) / g;
        } else {
            nodes = size / g;
            if (size % g != 0) {
                partial = state.tightest_node(d, size % g);
                if (partial == npos32) return false;
                rest_on_free_node = count_bits(state.usable_gpus(partial)) == g;
                if (rest_on_free_node && nodes >= state.domain(d).free_nodes) return false;
            }
        }
        const gpu_mask full = full_gpu_mask(g);
        auto left = state.free_nodes_in(d);
        const bool taken = toolkit::choose_tightest_runs(left, nodes, [&](std::uint32_t start, std::uint32_t n) {
            out.add_nodes(info.first_node + start, n, full);
            left.reset_range(start, n);
        });
        if (!taken) return false;
        if (rest_on_free_node) partial = info.first_node + static_cast<node_id>(left.find_first());
        if (partial != npos32) out.add(partial, lowest_bits(state.usable_gpus(partial), size % g));
        return true;
    }

    // Spreads `size` units over at most `max_domains` domains (npos32: no
    // limit), in the tightest group of each level, else the cluster.
    template <class State>
    bool spread(const State& state, const toolkit::request_units<State>& units, std::uint64_t size,
                       std::uint64_t max_domains, placement& out) const {
        const auto& levels = state.topo().levels();
        for (std::size_t l = 0; l < levels.size(); ++l) {
            groups_.clear();
            units.for_each_group_holding(l, size, [&](group_id g, std::uint64_t free) { groups_.emplace_back(free, g); });
            std::sort(groups_.begin(), groups_.end());
            for (const auto& [free, g] : groups_)
                if (spread_over(state, units, levels[l].domains_of_group[g], size, max_domains, out)) return true;
        }
        if (const int done = spread_indexed(state, units, size, max_domains, out); done >= 0) return done == 1;
        if (all_domains_.size() != state.topo().domain_count()) {  // every domain in order, written once
            all_domains_.resize(state.topo().domain_count());
            std::iota(all_domains_.begin(), all_domains_.end(), domain_id{0});
        }
        return spread_over(state, units, all_domains_, size, max_domains, out);
    }

    // spread_over across the cluster from the buckets, O(domains taken +
    // keys), not a sort of every domain. 1 when placed, 0 when it cannot be,
    // -1 when the units have no bucket (exclusive, mixed node sizes).
    template <class State>
    int spread_indexed(const State& state, const toolkit::request_units<State>& units, std::uint64_t size,
                              std::uint64_t max_domains, placement& out) const {
        const auto [found, scale] = buckets_for(state.topo(), units.req);
        if (found == nullptr) return -1;
        const bucket_index& index = *found;
        // The largest domains (lowest index among equals) that cover the job.
        auto& chosen = by_free_;
        chosen.clear();
        std::uint64_t covered = 0;
        for (std::uint32_t key = index.previous_key(index.max_key()); key != npos32 && key > 0 && covered < size;
             key = index.previous_key(key - 1)) {
            for (std::uint32_t d = index.first_in(key, 0); d != npos32 && covered < size; d = index.first_in(key, d + 1)) {
                if (chosen.size() == max_domains) return 0;
                chosen.emplace_back(key * scale, d);
                covered += key * scale;
            }
        }
        if (covered < size) return 0;
        const auto [edge_units, edge] = chosen.back();
        const std::uint64_t rest = size - (covered - edge_units);
        // The last (the edge) makes way for the tightest unchosen domain
        // that holds the rest: the first of the smallest key that does when
        // that key is below the edge's, else the edge itself.
        const auto edge_key = static_cast<std::uint32_t>(edge_units / scale);
        const std::uint32_t tightest_key = index.next_key(static_cast<std::uint32_t>((rest + scale - 1) / scale));
        const domain_id last = tightest_key < edge_key ? index.first_in(tightest_key, 0) : edge;
        return take_chosen(state, units, chosen.size() - 1, last, rest, out) ? 1 : 0;
    }

    // Takes by_free_'s first `count` entries and `rest` in domain `last`;
    // false, leaving nothing, when one cannot be taken.
    template <class State>
    bool take_chosen(const State& state, const toolkit::request_units<State>& units, std::size_t count, domain_id last,
                     std::uint64_t rest, placement& out) const {
        const std::size_t mark = out.size();
        bool taken = true;
        for (std::size_t i = 0; i < count && taken; ++i) {
            const auto [free, d] = by_free_[i];
            if (free == units.capacity_of(d)) toolkit::take_whole_domain(state, d, out);
            else taken = take_in(state, units, d, free, out, true);
        }
        if (taken && take_in(state, units, last, rest, out, true)) return true;
        out.truncate(mark);
        return false;
    }

    // Greedy over `candidates`: the domains with the most free capacity until
    // the job is covered, the last swapped for the tightest that holds the rest.
    template <class State>
    bool spread_over(const State& state, const toolkit::request_units<State>& units,
                     const std::vector<domain_id>& candidates, std::uint64_t size, std::uint64_t max_domains,
                     placement& out) const {
        auto& by_free = by_free_;
        by_free.clear();
        for (domain_id d : candidates) {
            const std::uint64_t f = units.free_in(d);
            if (f > 0 && units.allowed(d)) by_free.emplace_back(f, d);
        }
        std::sort(by_free.begin(), by_free.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        std::uint64_t covered = 0;
        std::size_t k = 0;
        while (k < by_free.size() && covered < size) covered += by_free[k++].first;
        if (covered < size || k > max_domains) return false;
        covered -= by_free[k - 1].first;
        const std::uint64_t rest = size - covered;
        // In this order, the first of the last free count that holds the rest.
        std::size_t last = k - 1;
        while (last + 1 < by_free.size() && by_free[last + 1].first >= rest) ++last;
        while (last >= k && by_free[last - 1].first == by_free[last].first) --last;
        return take_chosen(state, units, k - 1, by_free[last].second, rest, out);
    }

    // Each segment best-fit into one domain, net of earlier segments.
    template <class State>
    errc place_segments(const State& state, const toolkit::request_units<State>& units, placement& out) const {
        const std::uint64_t part = units.req.part_size();
        const auto score = [&](domain_id d, bool touched) {
            const std::uint64_t f = units.free_in(d) - (touched ? held_in(units, out, d) : 0);
            return f >= part ? f : toolkit::no_fit;
        };
        const auto take = [&](domain_id d) {
            const bool fresh = !toolkit::touches_domain(out, state.topo().shape(d));
            [[maybe_unused]] const bool taken = take_in(state, units, d, part, out, fresh);
            TOPOBLOCK_ASSERT(taken);  // the score counted its free units
        };
        return toolkit::place_each_segment(units, out, score, take);
    }

    // The request's units the placement holds in domain d.
    template <class State>
    static std::uint64_t held_in(const toolkit::request_units<State>& units, const placement& out, domain_id d) {
        const domain_shape info = units.state.topo().shape(d);
        std::uint64_t held = 0;
        out.for_each_piece_in(info.first_node, info.end_node(),
                              [&](node_id, gpu_mask gpus) { held += units.req.what == unit::nodes ? 1 : count_bits(gpus); });
        return held;
    }

    bucket_index by_free_gpus_;
    bucket_index by_free_nodes_;
    // A multi-domain decision's scratch, so that a warm decision does not
    // allocate (one allocator, one thread: see basic_allocator).
    mutable std::vector<std::pair<std::uint64_t, group_id>> groups_;
    mutable std::vector<domain_id> all_domains_;
    mutable std::vector<std::pair<std::uint64_t, domain_id>> by_free_;
};

}  // namespace topoblock
