#pragma once

// buddy-split's rule, naively: every decision scans every domain and derives
// its free buddies from its GPUs as a scratch holds them, by a recursive walk
// of each root, GPU by GPU (naive_buddy below), independent of the policy's
// word operations. The lockstep test (tests/policy/indexed_vs_naive.cpp)
// compares the policy's decisions and its free-level summaries with this.

#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/place_each_segment.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace topoblock::test {

namespace naive_buddy {

// A buddy: the GPUs [offset, offset + 2^level) of one domain, its GPUs
// numbered node-major (GPU j of node i is i * gpus_per_node + j), so that a
// buddy of a node's size or more is a run of whole nodes.
struct buddy {
    std::uint32_t offset = 0;
    std::uint32_t level = 0;
};

// 0: no GPU of the buddy is open; 1: some; 2: all.
template <class Scratch>
int buddy_openness(const Scratch& s, std::uint32_t offset, std::uint32_t level) noexcept {
    const std::uint32_t size = std::uint32_t{1} << level;
    const std::uint32_t g = s.gpus_per_node;
    if (size >= g) {
        bool any = false, all = true;
        for (std::uint32_t i = offset / g; i < (offset + size) / g; ++i) {
            any = any || s.open[i] != 0;
            all = all && s.wholly_open(i);
        }
        return all ? 2 : (any ? 1 : 0);
    }
    const gpu_mask m = full_gpu_mask(size) << (offset % g);
    const gpu_mask open = s.open[offset / g] & m;
    return open == m ? 2 : (open != 0 ? 1 : 0);
}

template <class Scratch, class F>
void visit_buddies(const Scratch& s, std::uint32_t offset, std::uint32_t level, F& f) {
    const int open = buddy_openness(s, offset, level);
    if (open == 2) {
        f(buddy{offset, level});
    } else if (open == 1 && level > 0) {
        visit_buddies(s, offset, level - 1, f);
        visit_buddies(s, offset + (std::uint32_t{1} << (level - 1)), level - 1, f);
    }
}

// Calls f(buddy) for each free buddy whose parent is not free (the buddy
// allocator's free lists), by offset. A domain's GPUs form a forest of
// maximal aligned power-of-two roots (72 = 64 + 8: 16 trays + 2 trays).
// Derived from the open GPUs, so free buddies are always coalesced.
template <class Scratch, class F>
void for_each_free_buddy(const Scratch& s, F&& f) {
    if (s.node_count == 0 || !std::has_single_bit(s.gpus_per_node)) return;
    const std::uint32_t total = s.node_count * s.gpus_per_node;
    for (std::uint32_t offset = 0; offset < total;) {
        const std::uint32_t size = std::bit_floor(total - offset);
        visit_buddies(s, offset, static_cast<std::uint32_t>(std::countr_zero(size)), f);
        offset += size;
    }
}

// The free buddies' levels as a mask (bit L: some free buddy of 2^L GPUs).
template <class Scratch>
std::uint64_t free_buddy_levels(const Scratch& s) {
    std::uint64_t levels = 0;
    for_each_free_buddy(s, [&](buddy b) { levels |= std::uint64_t{1} << b.level; });
    return levels;
}

// Takes the lowest 2^need GPUs of the smallest free buddy that holds them
// (lowest offset on ties): the buddy allocator's split. Returns false when no
// free buddy is large enough.
template <class Scratch>
bool take_buddy(const Scratch& s, std::uint32_t need, placement& out) {
    buddy best{0, detail::no_level};
    for_each_free_buddy(s, [&](buddy b) {
        if (b.level >= need && b.level < best.level) best = b;
    });
    if (best.level == detail::no_level) return false;
    const std::uint32_t size = std::uint32_t{1} << need;
    const std::uint32_t g = s.gpus_per_node;
    if (size >= g) {
        for (std::uint32_t i = best.offset / g; i < (best.offset + size) / g; ++i) out.add(s.first_node + i, s.open[i]);
    } else {
        out.add(s.first_node + best.offset / g, full_gpu_mask(size) << (best.offset % g));
    }
    return true;
}

// The policy's free-level summaries against this walk, domain by domain:
// empty, or the first domain whose summary differs.
template <class State>
std::string levels_differ(const buddy_split& policy, const State& state) {
    const std::vector<std::uint64_t>& kept = std::get<0>(policy.indexes());
    for (domain_id d = 0; d < state.topo().domain_count(); ++d)
        if (kept.at(d) != free_buddy_levels(toolkit::load_domain(state, placement{}, d)))
            return "buddy-split: stale free-level summary in domain '" + state.topo().domain(d).name + "'";
    return {};
}

}  // namespace naive_buddy

class buddy_split_reference {
public:
    std::string_view name() const noexcept { return "buddy-split-reference"; }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        if (req.segmented()) return place_segments(state, units, out);
        if (fits_a_buddy(state.topo(), req, req.count)) {
            domain_id best = npos32;
            std::uint32_t best_level = detail::no_level;
            for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
                if (!units.allowed(d)) continue;
                const std::uint32_t l = detail::smallest_level_at_least(
                    naive_buddy::free_buddy_levels(toolkit::load_domain(state, placement{}, d)), need(state, req, req.count, d));
                if (l < best_level) {
                    best = d;
                    best_level = l;
                }
            }
            if (best != npos32) {
                naive_buddy::take_buddy(toolkit::load_domain(state, out, best), need(state, req, req.count, best), out);
                return errc::ok;
            }
            if (req.where == locality::require) return units.shortfall(req.count);
        }
        std::vector<domain_id> chosen;
        if (!toolkit::pick_whole_domains(units, req.count, chosen)) return units.shortfall(req.count);
        for (domain_id d : chosen) toolkit::take_whole_domain(state, d, out);
        return errc::ok;
    }

private:
    template <class State>
    static std::uint32_t need(const State& state, const request& req, std::uint64_t count, domain_id d) {
        return detail::buddy_level(req, count, state.topo().shape(d).gpus_per_node);
    }

    // Some domain of the topology has a buddy large enough.
    static bool fits_a_buddy(const topology& topo, const request& req, std::uint64_t count) {
        for (const auto& info : topo.domains()) {
            const std::uint32_t root = detail::root_level(info);
            if (root != detail::no_level && detail::buddy_level(req, count, info.gpus_per_node) <= root) return true;
        }
        return false;
    }

    // Each segment in turn as a buddy of the domain whose smallest
    // sufficient free buddy, after the earlier segments, is smallest (a
    // whole wholly free domain, the smallest, when no buddy can hold one).
    template <class State>
    errc place_segments(const State& state, const toolkit::request_units<State>& units, placement& out) const {
        const request& req = units.req;
        const std::uint64_t part = req.part_size();
        const bool as_buddy = fits_a_buddy(state.topo(), req, part);
        const auto score = [&](domain_id d, bool touched) {
            if (as_buddy) {
                const std::uint32_t l = detail::smallest_level_at_least(
                    naive_buddy::free_buddy_levels(toolkit::load_domain(state, out, d)), need(state, req, part, d));
                return l != detail::no_level ? std::uint64_t{1} << l : toolkit::no_fit;
            }
            return !touched && toolkit::wholly_free(units, d) && units.capacity_of(d) >= part ? units.capacity_of(d)
                                                                                            : toolkit::no_fit;
        };
        const auto take = [&](domain_id d) {
            if (as_buddy) naive_buddy::take_buddy(toolkit::load_domain(state, out, d), need(state, req, part, d), out);
            else toolkit::take_whole_domain(state, d, out);
        };
        return toolkit::place_each_segment(units, out, score, take);
    }

};

}  // namespace topoblock::test
