#pragma once

// best-fit's rule as plain scans, for the lockstep test
// (tests/policy/indexed_vs_naive.cpp): every question is answered by a pass
// over every domain (or group), counted from the state's per-domain counters;
// nothing is kept between decisions. Inside a domain it takes what the
// shared toolkit (policy/toolkit/domain_pick.hpp) takes, which is the rule.

#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::test {

struct best_fit_reference {
    std::string_view name() const noexcept { return "best-fit-reference"; }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        if (req.segmented()) return place_segments(state, units, out);
        const std::uint64_t size = req.count;
        if (size <= units.largest_domain()) {
            domain_id best = npos32;
            std::uint64_t best_free = ~std::uint64_t{0};
            for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
                const std::uint64_t f = units.free_in(d);
                if (f >= size && f < best_free && allowed(state, req, d)) {
                    best = d;
                    best_free = f;
                }
            }
            if (best != npos32) return take_in(state, req, best, size, out) ? errc::ok : errc::fragmented;
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

private:
    template <class State>
    static bool allowed(const State& state, const request& req, domain_id d) {
        return req.exclusive_domain ? state.domain(d).idle() : state.domain_open(d);
    }

    template <class State>
    static bool take_in(const State& state, const request& req, domain_id d, std::uint64_t size, placement& out) {
        auto scratch = toolkit::load_domain(state, out, d);
        return toolkit::take_units(scratch, req, static_cast<std::uint32_t>(size), out);
    }

    // The groups of each level that hold the job, tightest first (lowest
    // index on ties), then every domain.
    template <class State>
    static bool spread(const State& state, const toolkit::request_units<State>& units, std::uint64_t size,
                       std::uint64_t max_domains, placement& out) {
        const auto& levels = state.topo().levels();
        for (std::size_t l = 0; l < levels.size(); ++l) {
            std::vector<std::pair<std::uint64_t, group_id>> groups;
            for (group_id g = 0; g < levels[l].group_names.size(); ++g) {
                const auto& f = state.group_free(l, g);
                const std::uint64_t free = units.req.what == unit::nodes ? f.nodes : f.gpus;
                if (free >= size) groups.emplace_back(free, g);
            }
            std::sort(groups.begin(), groups.end());
            for (const auto& [free, g] : groups)
                if (spread_over(state, units, levels[l].domains_of_group[g], size, max_domains, out)) return true;
        }
        std::vector<domain_id> all(state.topo().domain_count());
        std::iota(all.begin(), all.end(), domain_id{0});
        return spread_over(state, units, all, size, max_domains, out);
    }

    // The candidates with the most free units until the job is covered, the
    // last of them swapped for the tightest candidate that holds the rest.
    template <class State>
    static bool spread_over(const State& state, const toolkit::request_units<State>& units,
                            const std::vector<domain_id>& candidates, std::uint64_t size, std::uint64_t max_domains,
                            placement& out) {
        std::vector<std::pair<std::uint64_t, domain_id>> by_free;
        for (domain_id d : candidates)
            if (const std::uint64_t f = units.free_in(d); f > 0 && allowed(state, units.req, d)) by_free.emplace_back(f, d);
        std::sort(by_free.begin(), by_free.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        std::uint64_t covered = 0;
        std::size_t k = 0;
        while (k < by_free.size() && covered < size) covered += by_free[k++].first;
        if (covered < size || k > max_domains) return false;
        const std::uint64_t rest = size - (covered - by_free[k - 1].first);
        std::size_t last = k - 1;
        for (std::size_t i = k; i < by_free.size(); ++i)
            if (by_free[i].first >= rest && by_free[i] < by_free[last]) last = i;
        const std::size_t mark = out.size();
        bool ok = true;
        for (std::size_t i = 0; ok && i + 1 < k; ++i) ok = take_in(state, units.req, by_free[i].second, by_free[i].first, out);
        if (ok && take_in(state, units.req, by_free[last].second, rest, out)) return true;
        out.truncate(mark);
        return false;
    }

    // Each segment into the tightest domain that holds it, counting what
    // earlier segments took there (spread segments: a domain each).
    template <class State>
    static errc place_segments(const State& state, const toolkit::request_units<State>& units, placement& out) {
        const request& req = units.req;
        const std::uint64_t part = req.part_size();
        std::vector<std::uint64_t> taken(state.topo().domain_count(), 0);
        std::vector<bool> used(state.topo().domain_count(), false);
        for (std::uint32_t s = 0; s < req.part_count(); ++s) {
            domain_id best = npos32;
            std::uint64_t best_free = ~std::uint64_t{0};
            for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
                if (!allowed(state, req, d) || (used[d] && req.spread_segments)) continue;
                const std::uint64_t f = units.free_in(d) - taken[d];
                if (f >= part && f < best_free) {
                    best = d;
                    best_free = f;
                }
            }
            if (best == npos32 || !take_in(state, req, best, part, out)) return units.shortfall(req.count);
            const std::uint32_t g = state.topo().shape(best).gpus_per_node;
            taken[best] += req.what == unit::gpus && req.whole_nodes ? (part + g - 1) / g * g : part;
            used[best] = true;
        }
        return errc::ok;
    }
};

}  // namespace topoblock::test
