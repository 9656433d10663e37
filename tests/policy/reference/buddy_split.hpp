#pragma once

// buddy-split's rule, naively: every decision scans every domain and derives
// its free buddies from its GPUs as a scratch holds them (detail::free_buddy_levels,
// detail::take_buddy). The lockstep test (tests/policy/indexed_vs_naive.cpp)
// compares the policy's level sets and the state's node sets with this; the
// policy's check() compares the buddies with a brute force.

#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/place_each_segment.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace topoblock::test {

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
                    detail::free_buddy_levels(toolkit::load_domain(state, placement{}, d)), need(state, req, req.count, d));
                if (l < best_level) {
                    best = d;
                    best_level = l;
                }
            }
            if (best != npos32) {
                detail::take_buddy(toolkit::load_domain(state, out, best), need(state, req, req.count, best), out);
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
                    detail::free_buddy_levels(toolkit::load_domain(state, out, d)), need(state, req, part, d));
                return l != detail::no_level ? std::uint64_t{1} << l : toolkit::no_fit;
            }
            return !touched && toolkit::wholly_free(units, d) && units.capacity_of(d) >= part ? units.capacity_of(d)
                                                                                            : toolkit::no_fit;
        };
        const auto take = [&](domain_id d) {
            if (as_buddy) detail::take_buddy(toolkit::load_domain(state, out, d), need(state, req, part, d), out);
            else toolkit::take_whole_domain(state, d, out);
        };
        return toolkit::place_each_segment(units, out, score, take);
    }

};

}  // namespace topoblock::test
