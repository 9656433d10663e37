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
// cluster. The expression table:
//
// | expression                 | result | meaning                                   |
// | -------------------------- | ------ | ----------------------------------------- |
// | p.place(state, req, out)   | errc   | append the pieces for req to out (empty   |
// |                            |        | on entry) and return errc::ok, or return  |
// |                            |        | why not; out is then ignored              |
//
// `state` is a const basic_cluster_state: every counter and index the library
// keeps is there to read. The allocator has already rejected malformed
// requests and requests larger than the free capacity, and it validates the
// pieces (a busy or unusable GPU is errc::policy_error, nothing changes).
//
// Optional members, called through policy_traits when present:
//
// | expression                        | when                                    |
// | --------------------------------- | --------------------------------------- |
// | p.name()                          | -> std::string_view, for reports        |
// | p.supports(req)                   | -> bool: false makes the allocator      |
// |                                   | answer unsupported_request before any   |
// |                                   | capacity check (a permanent refusal     |
// |                                   | must not look like a wait)              |
// | p.validate(topo)                  | -> std::string, when the allocator is   |
// |                                   | built, before attach: empty when the    |
// |                                   | policy's settings suit the topology,    |
// |                                   | else what is wrong (create() fails)     |
// | p.measure(state, req)             | -> toolkit::capacity_view: explain()'s  |
// |                                   | numbers in the policy's own units       |
// |                                   | (policy/toolkit/capacity_view.hpp);     |
// |                                   | without it, GPUs or nodes per domain    |
// | p.attach(state)                   | once, when the allocator is built       |
// | p.on_domain_change(state, d)      | after every change to domain d, for     |
// |                                   | policies that keep their own summaries  |
// | p.on_domains_change(state, ds)    | instead, for a change of several        |
// |                                   | domains (a span, each once; all changes |
// |                                   | without on_domain_change): a summary    |
// |                                   | over several domains is refiled once,   |
// |                                   | not once per domain                     |
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
    // A change of one domain (most of them) goes to on_domain_change when
    // the policy has it.
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
