#pragma once

#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstdint>

namespace topoblock::toolkit {

// A score place_each_segment never chooses: the domain cannot hold the segment.
inline constexpr std::uint64_t no_fit = ~std::uint64_t{0};

// Places each segment in turn: take(d) for the allowed domain with the
// smallest score(d, touched) (lowest index on ties; no_fit: it cannot hold
// the segment), `touched` when earlier segments took some of it (skipped
// under spread_segments). The shortfall when one fits nowhere. O(domains).
template <class State, class Score, class Take>
errc place_each_segment(const request_units<State>& units, placement& out, Score&& score, Take&& take) {
    const request& req = units.req;
    const topology& topo = units.state.topo();
    for (std::uint32_t s = 0; s < req.part_count(); ++s) {
        domain_id best = npos32;
        std::uint64_t best_score = no_fit;
        for (domain_id d = 0; d < topo.domain_count(); ++d) {
            if (!units.allowed(d)) continue;
            const bool touched = touches_domain(out, topo.shape(d));
            if (req.spread_segments && touched) continue;
            if (const std::uint64_t sc = score(d, touched); sc < best_score) {
                best = d;
                best_score = sc;
            }
        }
        if (best == npos32) return units.shortfall(req.count);
        take(best);
    }
    return errc::ok;
}

}  // namespace topoblock::toolkit
