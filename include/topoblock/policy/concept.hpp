#pragma once

#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <concepts>
#include <span>
#include <string>
#include <string_view>

namespace topoblock {

// A placement policy decides where a request goes; it never changes the
// cluster. Required: p.place(state, req, out) -> errc appends req's pieces to
// `out` (empty on entry) and returns errc::ok, or says why not (out is then
// ignored). `state` is a const basic_cluster_state; the allocator has already
// rejected malformed requests and those larger than the free capacity, and it
// validates the pieces (a busy or unusable GPU is errc::policy_error).
// Optional members, called through policy_traits when present:
// - name() -> std::string_view, for reports ("custom" without it);
// - supports(req) -> bool: false makes the allocator answer
//   unsupported_request before any capacity check (a permanent refusal must
//   not look like a wait);
// - validate(topo) -> std::string: empty when the settings suit the topology,
//   else what is wrong (create() fails);
// - measure(state, req) -> toolkit::capacity_view: explain()'s numbers in the
//   policy's units (policy/toolkit/capacity_view.hpp); else per domain;
// - attach(state): once, when the allocator is built;
// - on_domain_change(state, d) after every change to domain d, and/or
//   on_domains_change(state, ds) for a change of several domains (each once),
//   so that a summary over several domains is refiled once.
// - indexes() -> a value comparable with ==: what attach and the change
//   hooks keep, which testing::check_indexes compares with a fresh attach's.
template <class P, class State>
concept placement_policy = std::copy_constructible<P> &&
    requires(const P& policy, const State& state, const request& req, placement& out) {
        { policy.place(state, req, out) } -> std::same_as<errc>;
    };

// Supplies the defaults for a policy's optional members.
template <class P>
struct policy_traits {
    static std::string_view name(const P& policy) {
        if constexpr (requires { { policy.name() } -> std::convertible_to<std::string_view>; })
            return policy.name();
        else
            return "custom";
    }
    static bool supports(const P& policy, const request& req) {
        if constexpr (requires { { policy.supports(req) } -> std::convertible_to<bool>; })
            return policy.supports(req);
        else
            return true;
    }
    static std::string validate(const P& policy, const topology& topo) {
        if constexpr (requires { { policy.validate(topo) } -> std::convertible_to<std::string>; })
            return policy.validate(topo);
        else
            return {};
    }
    template <class State>
    static void attach(P& policy, const State& state) {
        if constexpr (requires { policy.attach(state); }) policy.attach(state);
    }
    // A change of one domain goes to on_domain_change when the policy has it.
    template <class State>
    static void domains_changed(P& policy, const State& state, std::span<const domain_id> changed) {
        constexpr bool one = requires(domain_id d) { policy.on_domain_change(state, d); };
        constexpr bool several = requires { policy.on_domains_change(state, changed); };
        if constexpr (one && several) {
            if (changed.size() == 1) policy.on_domain_change(state, changed.front());
            else policy.on_domains_change(state, changed);
        } else if constexpr (several) {
            policy.on_domains_change(state, changed);
        } else if constexpr (one) {
            for (domain_id d : changed) policy.on_domain_change(state, d);
        }
    }
};

}  // namespace topoblock
