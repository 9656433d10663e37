#pragma once

// A policy's kept indexes against those a fresh attach builds from the same
// state: one definition of "in step" for every policy, the one a restart
// uses. A policy opts in with an `indexes()` member that returns what
// attach and its change hooks keep, comparable with ==.

#include <topoblock/policy/concept.hpp>

#include <string>

namespace topoblock::testing {

// Empty when `policy`'s indexes equal a fresh copy's attached to `state`
// (or when it keeps none), else what differs. O(what attach costs).
template <class Policy, class State>
std::string check_indexes(const Policy& policy, const State& state) {
    if constexpr (requires { policy.indexes() == policy.indexes(); }) {
        Policy fresh = policy;
        policy_traits<Policy>::attach(fresh, state);
        if (!(fresh.indexes() == policy.indexes()))
            return std::string(policy_traits<Policy>::name(policy)) + ": its indexes differ from a fresh attach's";
    }
    return {};
}

}  // namespace topoblock::testing
