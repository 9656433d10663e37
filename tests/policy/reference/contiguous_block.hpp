#pragma once

// contiguous-block's rule, naively: every decision scans every domain and
// recounts its free sub-blocks node by node, and chooses windows by trying
// every start. The lockstep test (tests/policy/indexed_vs_naive.cpp) and the
// policy's own tests compare the policy's summaries, run walks and indexes
// with this.

#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace topoblock::test {

// The free sub-blocks of domain `d`: every node up, wholly free, in an open
// domain and not held by `taken` (earlier segments of the same job), read
// node by node.
template <class State>
auto free_blocks_node_by_node(const State& state, domain_id d, const detail::block_layout& l, const placement& taken) {
    fixed_bitset<State::capacity_type::max_nodes_per_domain> free;
    if (!state.domain_open(d)) return free;
    const domain_shape info = state.topo().shape(d);
    for (std::uint32_t b = 0; b < l.count(); ++b) {
        bool all = true;
        for (std::uint32_t i = l.first_node(b); all && i < l.first_node(b) + l.nodes_of(b); ++i) {
            const node_id n = info.first_node + i;
            all = state.health(n) == node_health::up && state.unheld_gpus(n) == state.node_full_mask(n) &&
                  taken.taken_on(n) == 0;
        }
        if (all) free.set(b);
    }
    return free;
}

// The summary of free sub-blocks `free`, block by block.
template <class Blocks>
detail::block_summary summarize_block_by_block(const detail::block_layout& l, const Blocks& free) {
    detail::block_summary s;
    std::uint32_t run = 0;
    for (std::uint32_t b = 0; b < l.count(); ++b) {
        if (!free.test(b)) {
            run = 0;
            continue;
        }
        ++s.free_blocks;
        run += l.gpus_of(b);
        if (run > s.longest_run_gpus) s.longest_run_gpus = run;
    }
    return s;
}

// The run of free sub-blocks that holds `need` GPUs with the fewest GPUs,
// then inside the tightest free run, then the lowest start: every start of
// every free run tried.
template <class Blocks>
detail::block_window best_window_by_every_start(const detail::block_layout& l, const Blocks& free, std::uint64_t need) {
    detail::block_window best;
    if (need == 0) return best;
    for (std::uint32_t a = 0; a < l.count();) {
        if (!free.test(a)) {
            ++a;
            continue;
        }
        std::uint32_t e = a, run_gpus = 0;
        for (; e < l.count() && free.test(e); ++e) run_gpus += l.gpus_of(e);
        for (std::uint32_t s = a; s < e; ++s) {
            std::uint32_t j = s, gpus = 0;
            while (j < e && gpus < need) gpus += l.gpus_of(j++);
            if (gpus < need) break;  // later starts hold less
            if (best.blocks == 0 || gpus < best.gpus || (gpus == best.gpus && run_gpus < best.run_gpus))
                best = {s, j - s, gpus, run_gpus};
        }
        a = e;
    }
    return best;
}

class contiguous_block_reference {
public:
    explicit contiguous_block_reference(std::uint32_t block_gpus = 8) noexcept : block_gpus_(block_gpus) {}

    std::string_view name() const noexcept { return "contiguous-block-reference"; }
    std::string validate(const topology& topo) const { return contiguous_block(block_gpus_).validate(topo); }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        if (req.segmented()) {
            for (std::uint32_t s = 0; s < req.part_count(); ++s)
                if (!take_in_tightest(state, units, req.part_size(), out)) return units.shortfall(req.count);
            return errc::ok;
        }
        if (req.count <= units.largest_domain()) {
            if (take_in_tightest(state, units, req.count, out)) return errc::ok;
            if (req.where == locality::require) return units.shortfall(req.count);
        }
        std::vector<domain_id> chosen;
        if (!toolkit::pick_whole_domains(units, req.count, chosen)) return units.shortfall(req.count);
        const std::uint64_t covered = toolkit::take_all_but_last(units, chosen, out);
        take_best_window(state, chosen.back(), need_gpus(state, req, req.count - covered, chosen.back()), out);
        return errc::ok;
    }

private:
    template <class State>
    static std::uint64_t need_gpus(const State& state, const request& req, std::uint64_t units, domain_id d) {
        return req.what == unit::nodes ? units * state.topo().shape(d).gpus_per_node : units;
    }

    template <class State>
    void take_best_window(const State& state, domain_id d, std::uint64_t need, placement& out) const {
        const auto l = detail::block_layout::of(state.topo().shape(d), block_gpus_);
        const auto w = best_window_by_every_start(l, free_blocks_node_by_node(state, d, l, out), need);
        detail::take_window(state, d, l, w, out);
    }

    // `units` of the request into the allowed domain with the fewest free
    // sub-blocks left (counting what `out` holds) whose longest free run
    // holds them, lowest index on ties; false when none does.
    template <class State>
    bool take_in_tightest(const State& state, const toolkit::request_units<State>& units, std::uint64_t count,
                          placement& out) const {
        domain_id best = npos32;
        std::uint32_t best_free = npos32;
        for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
            const domain_shape info = state.topo().shape(d);
            if (!units.allowed(d) || (units.req.spread_segments && toolkit::touches_domain(out, info))) continue;
            const auto l = detail::block_layout::of(info, block_gpus_);
            const auto sum = summarize_block_by_block(l, free_blocks_node_by_node(state, d, l, out));
            if (sum.longest_run_gpus >= need_gpus(state, units.req, count, d) && sum.free_blocks < best_free) {
                best = d;
                best_free = sum.free_blocks;
            }
        }
        if (best == npos32) return false;
        take_best_window(state, best, need_gpus(state, units.req, count, best), out);
        return true;
    }

    std::uint32_t block_gpus_;
};

}  // namespace topoblock::test
