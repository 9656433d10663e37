#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace topoblock {

// What keeps a request from being placed now, first that binds.
enum class binding_constraint : std::uint8_t {
    none,               // placeable now
    invalid_request,    // malformed: zero size, a segment that does not divide it
    unsupported,        // the policy cannot honour its constraints (segments, exclusive domains)
    cluster_size,       // larger than the whole cluster
    domain_size,        // a part that must stay in one domain is larger than every domain
    health,             // larger than the nodes that are up hold
    insufficient_free,  // not enough free at all: wait for releases
    exclusive,          // no idle domain would take an exclusive part
    segments,           // not every segment finds a domain of its own
    scattered,          // enough free, but no one domain has enough of it for a part
    domains,            // a job larger than a domain: not enough domains free together
    policy_rule,        // a domain has room, but the policy allows no placement of this shape now
};

constexpr std::string_view to_string(binding_constraint b) noexcept {
    switch (b) {
        case binding_constraint::none: return "none";
        case binding_constraint::invalid_request: return "invalid_request";
        case binding_constraint::unsupported: return "unsupported";
        case binding_constraint::cluster_size: return "cluster_size";
        case binding_constraint::domain_size: return "domain_size";
        case binding_constraint::health: return "health";
        case binding_constraint::insufficient_free: return "insufficient_free";
        case binding_constraint::exclusive: return "exclusive";
        case binding_constraint::segments: return "segments";
        case binding_constraint::scattered: return "scattered";
        case binding_constraint::domains: return "domains";
        case binding_constraint::policy_rule: return "policy_rule";
    }
    return "unknown";
}

// Why a request can or cannot be placed now, with the numbers behind it.
// Counts named `asked`, `total`, `up`, `free` and `largest_domain` are in the
// request's own units (GPUs, or whole nodes for a node request); `view`
// counts in the policy's units (toolkit/capacity_view.hpp).
struct explanation {
    // The allocator's answer: ok exactly when try_allocate would succeed now.
    errc code = errc::ok;
    binding_constraint binding = binding_constraint::none;
    std::string_view policy;
    unit asked_unit = unit::gpus;
    std::uint32_t asked = 0;           // the request's count
    std::uint32_t part = 0;            // what one domain must hold (the whole job without segments)
    std::uint32_t parts = 0;
    std::uint64_t total = 0;           // the whole cluster
    std::uint64_t up = 0;              // on nodes that are up
    std::uint64_t free = 0;            // free for a new job (up nodes, open domains)
    std::uint64_t free_gpus = 0;       // the same in GPUs (for node requests: wholly free nodes or not)
    std::uint64_t closed_free_gpus = 0;  // unheld GPUs on up nodes of domains closed by exclusive jobs
    std::uint64_t largest_domain = 0;  // the largest domain of the topology
    std::uint32_t domains_needed = 0;  // the fewest domains the job spans on the empty cluster
    std::uint32_t idle_domains = 0;    // open, up nodes, nothing held: what exclusive jobs take
    // Filled when the refusal is one of the moment (health, insufficient
    // free, fragmented); empty otherwise, placeable requests included.
    bool measured = false;
    toolkit::capacity_view view;

    bool placeable() const noexcept { return code == errc::ok; }
};

// The policy's own measure when it has one (policy/toolkit/capacity_view.hpp),
// else GPUs or whole nodes per domain.
template <class Policy, class State>
toolkit::capacity_view measure(const Policy& policy, const State& state, const request& req) {
    if constexpr (requires { { policy.measure(state, req) } -> std::same_as<toolkit::capacity_view>; })
        return policy.measure(state, req);
    else
        return toolkit::domain_view(state, req);
}

namespace detail {

inline binding_constraint static_binding(errc code) noexcept {
    switch (code) {
        case errc::ok: return binding_constraint::none;
        case errc::invalid_request: return binding_constraint::invalid_request;
        case errc::unsupported_request: return binding_constraint::unsupported;
        case errc::exceeds_cluster: return binding_constraint::cluster_size;
        case errc::exceeds_domain: return binding_constraint::domain_size;
        case errc::exceeds_healthy: return binding_constraint::health;
        case errc::insufficient_free: return binding_constraint::insufficient_free;
        default: return binding_constraint::policy_rule;
    }
}

// Which constraint binds a request the policy refused as fragmented: an
// exclusive part no idle domain takes; segments; a job larger than a domain
// that finds too few domains; a part no domain has room for; else the
// policy's own rule.
inline binding_constraint fragmented_binding(const request& req, const explanation& e) noexcept {
    if (req.exclusive_domain && e.view.holding_now == 0) return binding_constraint::exclusive;
    if (req.segmented()) return binding_constraint::segments;
    if (req.count > e.largest_domain) return binding_constraint::domains;
    if (e.view.holding_now == 0) return binding_constraint::scattered;
    return binding_constraint::policy_rule;
}

}  // namespace detail

// Why `req` can or cannot be placed now under the allocator's policy.
// placeable() agrees with try_allocate by construction: the code is the
// policy's own dry run (plan). Cost: one plan, and for a refusal of the
// moment one measure (the default measure: O(domains), a few counter reads
// each). `scratch` holds the dry run's placement (reused, so a caller that
// keeps one does not allocate); nothing else changes.
template <class Allocator>
explanation explain(const Allocator& alloc, const request& req, placement& scratch) {
    explanation e;
    const auto& state = alloc.state();
    const topology& topo = state.topo();
    const bool nodes = req.what == unit::nodes;
    e.code = alloc.plan(req, scratch);
    e.binding = detail::static_binding(e.code);
    e.policy = alloc.policy_name();
    e.asked_unit = req.what;
    e.asked = req.count;
    e.part = req.part_size();
    e.parts = req.part_count();
    e.total = nodes ? topo.node_count() : topo.gpu_count();
    e.up = nodes ? state.up_nodes() : state.up_gpus();
    e.free = nodes ? state.available().nodes : state.available().gpus;
    e.free_gpus = state.available().gpus;
    e.closed_free_gpus = state.unheld_up_gpus() - state.available().gpus;
    e.largest_domain = nodes ? topo.max_domain_nodes() : topo.max_domain_gpus();
    const std::uint32_t fewest = topo.fewest_domains_for(req.count, nodes);
    e.domains_needed = fewest == npos32 ? 0 : fewest;
    e.idle_domains = static_cast<std::uint32_t>(state.idle_domains().count());
    if (!may_succeed_later(e.code)) return e;
    e.measured = true;
    e.view = measure(alloc.policy(), state, req);
    // A policy's own rules may refuse as insufficient what the free count
    // would cover: judged as a fragmented refusal.
    if (e.code == errc::fragmented || e.free >= req.count) e.binding = detail::fragmented_binding(req, e);
    return e;
}

template <class Allocator>
explanation explain(const Allocator& alloc, const request& req) {
    placement scratch;
    return explain(alloc, req, scratch);
}

namespace detail {

inline std::string counted(std::uint64_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// "8-GPU sub-blocks", "GPUs".
inline std::string unit_words(const toolkit::capacity_view& v) {
    return v.unit_gpus != 0 ? std::to_string(v.unit_gpus) + "-GPU " + std::string(v.unit) : std::string(v.unit);
}

}  // namespace detail

// One sentence for a person, with the numbers behind the binding constraint.
inline std::string to_string(const explanation& e) {
    const std::string unit = e.asked_unit == unit::nodes ? "nodes" : "GPUs";
    const toolkit::capacity_view& v = e.view;
    const std::string scope(v.scope);
    const std::string scopes = scope + "s";
    const std::string units = detail::unit_words(v);
    const std::string if_emptied =
        detail::counted(v.holding_if_emptied, scope, scopes) + " would hold it if their jobs ended";
    switch (e.binding) {
        case binding_constraint::none: return "placeable now";
        case binding_constraint::invalid_request:
        case binding_constraint::unsupported:
            return std::string(e.policy) + ": " + std::string(describe(e.code));
        case binding_constraint::cluster_size:
            return "asks " + std::to_string(e.asked) + " " + unit + ", the whole cluster has " + std::to_string(e.total);
        case binding_constraint::domain_size:
            return "a part of " + std::to_string(e.part) + " " + unit + " must stay in one NVLink domain, the largest has " +
                   std::to_string(e.largest_domain);
        case binding_constraint::health:
            return "asks " + std::to_string(e.asked) + " " + unit + ", the nodes that are up have " + std::to_string(e.up) +
                   " of " + std::to_string(e.total);
        case binding_constraint::insufficient_free: {
            std::string s = "asks " + std::to_string(e.asked) + " " + unit + ", " + std::to_string(e.free) + " free";
            if (e.closed_free_gpus != 0)
                s += " (and " + std::to_string(e.closed_free_gpus) + " GPUs unheld in domains closed by exclusive jobs)";
            return s;
        }
        case binding_constraint::exclusive:
            return "needs an idle " + scope + " per part: " + detail::counted(e.idle_domains, "is", "are") +
                   " idle, none holds " + std::to_string(v.need) + " " + units + "; " + if_emptied;
        case binding_constraint::segments:
            return std::to_string(e.parts) + " segments of " + std::to_string(e.part) + " " + unit + ", each in one " +
                   scope + ": " + detail::counted(v.holding_now, scope + " holds", scopes + " hold") + " a segment now (" +
                   std::string(v.most_is) + " in one is " + std::to_string(v.most) + " " + units + ", a segment needs " +
                   std::to_string(v.need) + ")";
        case binding_constraint::domains:
            return "needs " + detail::counted(e.domains_needed, scope, scopes) + " together: " +
                   detail::counted(v.wholly_free, scope + " is", scopes + " are") + " wholly free, " +
                   std::to_string(e.free) + " " + unit + " free in all";
        case binding_constraint::scattered:
            if (v.scopes == 1)  // a policy that ignores domains
                return "needs " + std::to_string(v.need) + " " + units + ", " + std::to_string(v.most) + " are free (" +
                       std::to_string(e.free) + " " + unit + " free in all)";
            return std::to_string(v.free) + " " + units + " free, but " + std::string(v.most_is) + " in one " + scope +
                   " is " + std::to_string(v.most) + " (needs " + std::to_string(v.need) + "); " + if_emptied +
                   (v.unit != "GPUs" || v.unit_gpus != 0 ? " (" + std::to_string(e.free_gpus) + " GPUs free in all)" : "");
        case binding_constraint::policy_rule:
            return std::to_string(e.free) + " " + unit + " free and " +
                   detail::counted(v.holding_now, scope + " has", scopes + " have") + " room for it, but " +
                   std::string(e.policy) + " allows no placement of this shape now";
    }
    return "unknown";
}

}  // namespace topoblock
