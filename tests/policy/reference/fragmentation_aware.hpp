#pragma once

// frag-aware's rule as a plain scan, for the lockstep test
// (tests/policy/indexed_vs_naive.cpp): a one-domain job looks at every
// domain, counts its free units from the state's counters and the loss from
// the mix's weights (not the policy's value table); the rest goes to
// best-fit's reference. The mix is learned as the policy learns it (the
// same detail::size_mix, whose own table is tested against its weights).

#include "best_fit.hpp"

#include <topoblock/policy/fragmentation_aware.hpp>
#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/topology/topology.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace topoblock::test {

struct fragmentation_aware_reference {
    fragmentation_aware_reference() = default;
    explicit fragmentation_aware_reference(std::span<const size_share> mix) : given_(mix.begin(), mix.end()), learning_(false) {}

    std::string_view name() const noexcept { return "frag-aware-reference"; }

    template <class State>
    void attach(const State& state) {
        mix_.reset(state.topo().max_domain_gpus());
        double total = 0.0;
        for (const size_share& s : given_) total += s.weight;
        for (const size_share& s : given_)
            mix_.add(s.gpus, static_cast<std::uint64_t>(std::llround(s.weight / total * 1073741824.0)));
        if (learning_)
            state.for_each_allocation([&](allocation_id, const allocation_record& r) { mix_.learn(r.requested_gpus); });
        allocations_ = state.allocation_count();
        requested_ = state.requested_gpus();
    }
    // Called once per changed domain: the first call of a change sees the
    // new job, the others nothing new.
    template <class State>
    void on_domain_change(const State& state, domain_id) {
        if (learning_ && state.allocation_count() == allocations_ + 1 && state.requested_gpus() > requested_)
            mix_.learn(static_cast<std::uint32_t>(state.requested_gpus() - requested_));
        allocations_ = state.allocation_count();
        requested_ = state.requested_gpus();
    }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        const std::uint32_t g = state.topo().uniform_gpus_per_node();
        const bool by_nodes = req.what == unit::nodes || req.whole_nodes;
        if (req.segmented() || req.exclusive_domain || req.count > units.largest_domain() || (by_nodes && g == 0))
            return best_fit_reference{}.place(state, req, out);
        // Units the job needs, and the GPUs it takes away from a domain.
        const std::uint64_t need = !by_nodes ? req.count : req.what == unit::nodes ? req.count : (req.count + g - 1) / g;
        const std::uint64_t takes = by_nodes ? need * g : need;
        // Wholly free domains of the largest size come after every other,
        // as if their loss were above any.
        const std::uint64_t largest = by_nodes ? state.topo().max_domain_nodes() : state.topo().max_domain_gpus();
        domain_id best = npos32;
        std::uint64_t best_loss = 0, best_free = 0;
        bool best_whole = false;
        for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
            if (!state.domain_open(d)) continue;
            const std::uint64_t free = by_nodes ? state.domain(d).free_nodes : state.domain(d).free_gpus;
            if (free < need) continue;
            const std::uint64_t f = by_nodes ? free * g : free;
            const std::uint64_t loss = mix_.value_of(f) - mix_.value_of(f - takes);
            const bool whole = free == largest;
            const bool better = best == npos32 || (whole != best_whole ? !whole
                                                   : loss != best_loss ? loss < best_loss
                                                                       : free < best_free);
            if (better) {
                best_whole = whole;
                best = d;
                best_loss = loss;
                best_free = free;
            }
        }
        if (best == npos32) return best_fit_reference{}.place(state, req, out);
        auto scratch = toolkit::load_domain(state, out, best);
        return toolkit::take_units(scratch, req, req.count, out) ? errc::ok : errc::fragmented;
    }

private:
    topoblock::detail::size_mix mix_;
    std::vector<size_share> given_;
    bool learning_ = true;
    std::size_t allocations_ = 0;
    std::uint64_t requested_ = 0;
};

}  // namespace topoblock::test
