#pragma once

#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

// The numbers behind explain() (advice/explain.hpp): what a request needs
// against what the cluster offers it now, in a policy's units (its optional
// measure(state, req) member); without one, domain_view below.
namespace topoblock::toolkit {

// What one scope (an NVLink domain, say) offers one part of a request.
struct scope_offer {
    std::uint64_t free = 0;         // units free there for the request (0 when closed to it)
    std::uint64_t most = 0;         // the most units one part could take there now
    bool holds_now = false;         // a part fits there now, by the policy's rule for one scope
    bool holds_if_emptied = false;  // a part would fit there were its jobs ended (health as now)
};

// The cluster seen through one policy's units for one request.
struct capacity_view {
    std::string_view unit = "GPUs";           // what the counts count, plural
    std::uint32_t unit_gpus = 0;              // > 0: each unit is a block of so many GPUs ("8-GPU sub-blocks")
    std::string_view scope = "NVLink domain";  // what one part must stay inside
    std::string_view most_is = "the most";     // how `most` reads: "the longest run", "the largest free buddy"
    std::uint64_t need = 0;                   // units one part needs in one scope (the fewest, over scopes)
    std::uint64_t free = 0;                   // units free for the request, cluster-wide
    std::uint64_t most = 0;                   // the most units one part could take in one scope now
    std::uint32_t holding_now = 0;            // scopes a part fits in now
    std::uint32_t holding_if_emptied = 0;     // scopes a part would fit in were their jobs ended
    std::uint32_t wholly_free = 0;            // scopes wholly free and open (what multi-domain block jobs take)
    std::uint32_t scopes = 0;                 // scopes in all

    void add(const scope_offer& o) noexcept {
        free += o.free;
        most = std::max(most, o.most);
        holding_now += o.holds_now ? 1U : 0U;
        holding_if_emptied += o.holds_if_emptied ? 1U : 0U;
        ++scopes;
    }
};

// What request_units counts, for capacity_view::unit.
inline std::string_view unit_name(const request& req) noexcept {
    return req.what == unit::nodes ? "whole nodes" : req.whole_nodes ? "GPUs of wholly free nodes" : "GPUs";
}

// Units of `req` on the up nodes of domain d, whatever is held there.
template <class State>
std::uint64_t up_units_in(const request_units<State>& units, domain_id d) noexcept {
    const auto& c = units.state.domain(d);
    if (units.req.what == unit::nodes) return c.up_nodes;
    if (units.req.whole_nodes) return std::uint64_t{c.up_nodes} * units.state.topo().shape(d).gpus_per_node;
    return c.up_gpus;
}

// capacity_view::holding_if_emptied for the default units without a pass
// over the domains: like domains, and too few units down in the cluster to
// bring any domain below the part. npos32 when unsure.
template <class State>
std::uint32_t holding_if_emptied_at_once(const request_units<State>& units, std::uint64_t part) noexcept {
    const topology& topo = units.state.topo();
    if (!like_domains(topo) || topo.domain_count() == 0) return npos32;
    const std::uint64_t capacity = units.capacity_of(0);
    if (capacity < part) return 0;
    const std::uint64_t down_nodes = topo.node_count() - units.state.up_nodes();
    const std::uint64_t missing = units.req.what == unit::nodes ? down_nodes
                                  : units.req.whole_nodes       ? down_nodes * topo.uniform_gpus_per_node()
                                                                : topo.gpu_count() - units.state.up_gpus();
    return missing <= capacity - part ? topo.domain_count() : npos32;
}

// capacity_view::holding_if_emptied on a cluster of like domains, where a
// domain with every node up holds a part exactly when `whole_holds`; the
// others are asked holds_with_up_nodes(d). O(1) when every node is up.
template <class State, class Holds>
std::uint32_t holding_if_emptied_on_like_domains(const State& state, bool whole_holds, Holds&& holds_with_up_nodes) {
    const topology& topo = state.topo();
    if (!whole_holds) return 0;
    std::uint32_t n = topo.domain_count();
    if (state.up_nodes() == topo.node_count()) return n;
    const std::uint32_t nodes = topo.max_domain_nodes();
    for (domain_id d = 0; d < topo.domain_count(); ++d)
        if (state.domain(d).up_nodes != nodes && !holds_with_up_nodes(d)) --n;
    return n;
}

// Adds up offer(d) over the domains; counts the wholly free, open domains.
template <class State, class Offer>
capacity_view scan_domains(const State& state, capacity_view view, Offer&& offer) {
    for (domain_id d = 0; d < state.topo().domain_count(); ++d) {
        view.add(offer(d));
        if (wholly_free_and_open(state, d)) ++view.wholly_free;
    }
    return view;
}

// The default measure: request units per domain (request_units::free_in),
// a part fitting a domain that has as many free for it. O(domains).
template <class State>
capacity_view domain_view(const State& state, const request& req) {
    const request_units<State> units{state, req};
    const std::uint64_t part = req.part_size();
    capacity_view view;
    view.unit = unit_name(req);
    view.need = part;
    return scan_domains(state, view, [&](domain_id d) {
        scope_offer o;
        o.free = units.allowed(d) ? units.free_in(d) : 0;
        o.most = o.free;
        o.holds_now = o.free >= part;
        o.holds_if_emptied = up_units_in(units, d) >= part;
        return o;
    });
}

}  // namespace topoblock::toolkit
