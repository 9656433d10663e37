#pragma once

#include <cstdint>
#include <string_view>

namespace topoblock {

// Why a call did not happen. Every failing call leaves the state unchanged.
enum class errc : std::uint8_t {
    ok = 0,
    // The request itself is wrong: zero GPUs, a segment size that does not
    // divide the job, ...; for hold(), no pieces, or a piece naming no GPU
    // or a GPU its node does not have.
    invalid_request,
    // The policy has no way to honour this kind of request (segments under a
    // topology-oblivious policy).
    unsupported_request,
    // More than the whole cluster holds, even with every node up.
    exceeds_cluster,
    // A part that must stay inside one domain is larger than every domain.
    exceeds_domain,
    // More than the nodes now up can give, even with nothing running.
    exceeds_healthy,
    // Not enough free GPUs (or whole nodes) right now: wait for releases.
    insufficient_free,
    // Enough free GPUs, but no placement that this policy allows: the free
    // capacity is fragmented (or held in exclusive domains).
    fragmented,
    // A policy proposed a placement that breaks the allocator's rules (a busy
    // GPU, a node that is not up): a bug in that policy, nothing was changed.
    policy_error,
    // A release or lookup named an allocation that does not exist (never made
    // or already released).
    unknown_allocation,
    // A node id beyond the topology.
    node_out_of_range,
    // hold(): a named GPU is already held (or named twice), its node is
    // down, or its domain is closed.
    not_free,
};

constexpr std::string_view to_string(errc code) noexcept {
    switch (code) {
        case errc::ok: return "ok";
        case errc::invalid_request: return "invalid_request";
        case errc::unsupported_request: return "unsupported_request";
        case errc::exceeds_cluster: return "exceeds_cluster";
        case errc::exceeds_domain: return "exceeds_domain";
        case errc::exceeds_healthy: return "exceeds_healthy";
        case errc::insufficient_free: return "insufficient_free";
        case errc::fragmented: return "fragmented";
        case errc::policy_error: return "policy_error";
        case errc::unknown_allocation: return "unknown_allocation";
        case errc::node_out_of_range: return "node_out_of_range";
        case errc::not_free: return "not_free";
    }
    return "unknown";
}

// Whether a try_allocate() refused for `code` may succeed later, once jobs
// release or nodes come back up (insufficient_free, fragmented,
// exceeds_healthy); false for refusals no later moment changes (a malformed
// request, one larger than the cluster or than every domain, ...).
constexpr bool may_succeed_later(errc code) noexcept {
    return code == errc::insufficient_free || code == errc::fragmented || code == errc::exceeds_healthy;
}

// One sentence for a person.
constexpr std::string_view describe(errc code) noexcept {
    switch (code) {
        case errc::ok: return "done";
        case errc::invalid_request: return "the request is malformed (zero size, or a segment size that does not divide it)";
        case errc::unsupported_request: return "this policy cannot honour the request's topology constraints";
        case errc::exceeds_cluster: return "the request is larger than the whole cluster";
        case errc::exceeds_domain: return "a part that must stay in one NVLink domain is larger than every domain";
        case errc::exceeds_healthy: return "the request is larger than the healthy (up) part of the cluster";
        case errc::insufficient_free: return "not enough free GPUs now";
        case errc::fragmented: return "enough GPUs are free, but not in a shape this policy may use";
        case errc::policy_error: return "the policy proposed GPUs that are busy or unusable";
        case errc::unknown_allocation: return "no such allocation (never made, or already released)";
        case errc::node_out_of_range: return "node id out of range";
        case errc::not_free: return "a named GPU is already held or its node is down";
    }
    return "unknown error";
}

}  // namespace topoblock
