#pragma once

#include <topoblock/config.hpp>
#include <topoblock/fwd.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/state/cluster_state.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/topology/topology.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace topoblock {

// Thrown by the throwing conveniences (allocate, release_or_throw); the
// try_ functions return the same reason as a value.
class allocation_error : public std::runtime_error {
public:
    explicit allocation_error(errc code)
        : std::runtime_error(std::string(to_string(code)) + ": " + std::string(describe(code))), code_(code) {}
    errc code() const noexcept { return code_; }

private:
    errc code_;
};

namespace detail {
[[noreturn]] inline void throw_allocation_error(errc code) { throw allocation_error(code); }

// The GPUs a request asked for, given where it landed: its count for a GPU
// request; for a node request the GPUs of the first `count` nodes placed, so
// that a policy rounding a node request up (to a sub-block, to a power of
// two) leaves the extra nodes counted as internal fragmentation. Policies
// list one piece per node for node requests.
inline std::uint32_t requested_gpus_of(const topology& topo, const request& req, std::span<const piece_run> where) {
    if (req.what == unit::gpus) return req.count;
    std::uint64_t gpus = 0, held = 0, pieces = 0;
    for (const piece_run& r : where) {
        held += std::uint64_t{r.nodes} * static_cast<std::uint32_t>(std::popcount(r.gpus));
        for (std::uint32_t i = 0; i < r.nodes && pieces < req.count; ++i, ++pieces)
            if (r.first + i < topo.node_count()) gpus += topo.node(r.first + i).gpus;
    }
    return static_cast<std::uint32_t>(gpus < held ? gpus : held);  // hold() may name part of a node
}
}  // namespace detail

// Ties a cluster state to a placement policy. Every call either does all of
// what it says or nothing (the strong guarantee, also against a policy that
// proposes busy GPUs), and no GPU is ever held by two allocations. Not thread
// safe: one allocator belongs to one scheduler thread.
template <class Policy, class Capacity>
class basic_allocator {
public:
    using policy_type = Policy;
    using state_type = basic_cluster_state<Capacity>;
    static_assert(placement_policy<Policy, state_type>,
                  "Policy must provide `errc place(const State&, const request&, placement&) const` and be copyable; "
                  "see policy/concept.hpp");

    // Fails when the topology exceeds the compile-time capacity, or when the
    // policy's settings do not suit it (a sub-block larger than every
    // domain, ...: the policy's validate, see policy/concept.hpp).
    static expected<basic_allocator, error> create(topology topo, Policy policy = Policy{}) {
        auto state = state_type::create(std::move(topo));
        if (!state) return unexpected(std::move(state).error());
        if (std::string wrong = policy_traits<Policy>::validate(policy, state->topo()); !wrong.empty())
            return unexpected(make_error(std::move(wrong)));
        return basic_allocator(std::move(*state), std::move(policy));
    }

    // An allocator over a state built elsewhere (a snapshot restored by
    // io/snapshot.hpp): the policy attaches to it as it does to a fresh one.
    // Precondition (TOPOBLOCK_ASSERT, O(cluster)): the state is consistent
    // (verify() finds nothing), as every state the library hands out is.
    static basic_allocator adopt(state_type state, Policy policy = Policy{}) {
        TOPOBLOCK_ASSERT(state.verify().empty());
        return basic_allocator(std::move(state), std::move(policy));
    }

    // Places a request. O(policy decision + GPUs taken).
    // Errors: invalid_request, exceeds_cluster, exceeds_domain,
    // exceeds_healthy, insufficient_free, fragmented, unsupported_request,
    // policy_error. On error nothing changes.
    expected<allocation_id, errc> try_allocate(const request& req) {
        if (const errc e = plan(req, scratch_); e != errc::ok) return unexpected(e);
        typename state_type::commit_options options;
        options.requested_gpus = detail::requested_gpus_of(state_.topo(), req, scratch_.runs());
        auto id = state_.commit(req, scratch_.runs(), options);
        if (id) notify_policy();
        return id;
    }
    allocation_id allocate(const request& req) {
        auto id = try_allocate(req);
        if (!id) detail::throw_allocation_error(id.error());
        return *id;
    }

    // Where the policy would place `req` now, without placing it.
    errc plan(const request& req, placement& out) const {
        out.clear();
        if (const errc e = precheck(req); e != errc::ok) return e;
        return policy_.place(state_, req, out);
    }

    // Records usage made elsewhere (a running cluster's jobs): exactly these
    // GPUs, which must be unheld on nodes that are up or draining, in open
    // domains. `asked` is the request recorded (count 0: the GPUs named).
    // Errors, in this order, so that the answer does not depend on the
    // order of the pieces: node_out_of_range (any piece's node beyond the
    // topology); invalid_request (no pieces, a piece naming no GPU or a GPU
    // beyond its node's, a malformed `asked`); not_free (a named GPU held,
    // its node down, its domain closed). On error nothing changes.
    expected<allocation_id, errc> hold(std::span<const piece> pieces, request asked = {}) {
        const topology& topo = state_.topo();
        for (const auto& p : pieces)
            if (p.node >= topo.node_count()) return unexpected(errc::node_out_of_range);
        if (pieces.empty()) return unexpected(errc::invalid_request);
        std::uint64_t gpus = 0;
        for (const auto& p : pieces) {
            if (p.gpus == 0 || (p.gpus & ~state_.node_full_mask(p.node)) != 0) return unexpected(errc::invalid_request);
            gpus += count_bits(p.gpus);
        }
        // More GPUs than a request counts can only name some GPU twice.
        if (gpus > std::numeric_limits<std::uint32_t>::max()) return unexpected(errc::not_free);
        if (asked.count == 0) asked = request::gpus(static_cast<std::uint32_t>(gpus));
        if (asked.malformed()) return unexpected(errc::invalid_request);
        typename state_type::commit_options options;
        options.allow_draining = true;
        scratch_.clear();
        for (const auto& p : pieces) scratch_.add(p.node, p.gpus);
        options.requested_gpus = detail::requested_gpus_of(state_.topo(), asked, scratch_.runs());
        auto id = state_.commit(asked, scratch_.runs(), options);
        if (id) notify_policy();
        return id;
    }

    // Errors: unknown_allocation (never made, or already released).
    expected<void, errc> release(allocation_id id) {
        auto done = state_.release(id);
        if (done) notify_policy();
        return done;
    }

    // A what-if: releases the allocations `ids`, calls f(const allocator&)
    // (to plan() a request, read the state), and puts them back exactly as
    // they were: the same ids and records, and the same ids and decisions
    // afterwards, as though nothing had happened (the policy hears of every
    // change both ways). Returns what f returns. Also when f throws, the
    // allocations come back. Errors: unknown_allocation (an id not live, or
    // named twice), before anything changes. Cost: each release and its
    // undoing cost what release and allocate do, plus f.
    template <class F>
    auto with_released(std::span<const allocation_id> ids, F&& f)
        -> expected<std::invoke_result_t<F&, const basic_allocator&>, errc> {
        using result = std::invoke_result_t<F&, const basic_allocator&>;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (state_.find(ids[i]) == nullptr) return unexpected(errc::unknown_allocation);
            for (std::size_t j = 0; j < i; ++j)
                if (ids[j] == ids[i]) return unexpected(errc::unknown_allocation);
        }
        std::vector<allocation_record> saved;
        saved.reserve(ids.size());
        for (const allocation_id id : ids) saved.push_back(*state_.find(id));
        // A policy that learns from the jobs it sees (fragmentation_aware)
        // must not learn the put-back allocations as new jobs.
        using checkpoint = decltype(learning_checkpoint());
        // Puts back, last first, the ones released so far.
        struct put_back {
            basic_allocator& self;
            std::span<const allocation_id> ids;
            const std::vector<allocation_record>& saved;
            checkpoint learned;
            std::size_t released = 0;
            ~put_back() {
                while (released > 0) {
                    --released;
                    self.state_.reinstate(ids[released], saved[released]);
                    self.notify_policy();
                }
                if constexpr (!std::is_same_v<checkpoint, no_learning>) self.policy_.restore_learning(std::move(learned));
            }
        } guard{*this, ids, saved, learning_checkpoint()};
        for (const allocation_id id : ids) {
            (void)state_.release(id);
            notify_policy();
            ++guard.released;
        }
        if constexpr (std::is_void_v<result>) {
            f(std::as_const(*this));
            return {};
        } else {
            return f(std::as_const(*this));
        }
    }

    // Changes a node's health and returns the allocations that hold GPUs on a
    // node going down (they stay live and are marked hit_by_failure; the
    // caller decides whether to release and requeue them).
    // Errors: node_out_of_range.
    expected<std::vector<allocation_id>, errc> set_health(node_id n, node_health h) {
        std::vector<allocation_id> hit;
        auto done = set_health(n, h, hit);
        if (!done) return unexpected(done.error());
        return hit;
    }
    expected<std::vector<allocation_id>, errc> drain(node_id n) { return set_health(n, node_health::drain); }
    expected<std::vector<allocation_id>, errc> down(node_id n) { return set_health(n, node_health::down); }
    expected<std::vector<allocation_id>, errc> up(node_id n) { return set_health(n, node_health::up); }

    // The same, appending the hit allocations to `hit` (kept as it was on
    // error, or when nothing is hit): a scheduler that handles health events
    // in a loop keeps one buffer, and the call allocates nothing once the
    // buffer has grown to the GPUs of a node. The vector-returning forms
    // allocate a vector per call.
    expected<void, errc> set_health(node_id n, node_health h, std::vector<allocation_id>& hit) {
        auto done = state_.set_health(n, h, &hit);
        if (!done) return done;
        notify_policy();
        return {};
    }
    expected<void, errc> drain(node_id n, std::vector<allocation_id>& hit) { return set_health(n, node_health::drain, hit); }
    expected<void, errc> down(node_id n, std::vector<allocation_id>& hit) { return set_health(n, node_health::down, hit); }
    expected<void, errc> up(node_id n, std::vector<allocation_id>& hit) { return set_health(n, node_health::up, hit); }

    const state_type& state() const noexcept { return state_; }
    const topology& topo() const noexcept { return state_.topo(); }
    const Policy& policy() const noexcept { return policy_; }
    std::string_view policy_name() const { return policy_traits<Policy>::name(policy_); }
    const allocation_record* find(allocation_id id) const noexcept { return state_.find(id); }

private:
    basic_allocator(state_type state, Policy policy) : state_(std::move(state)), policy_(std::move(policy)) {
        policy_traits<Policy>::attach(policy_, state_);
    }

    // The checks every policy shares, cheapest first.
    errc precheck(const request& req) const noexcept {
        if (req.malformed()) return errc::invalid_request;
        if (!policy_traits<Policy>::supports(policy_, req)) return errc::unsupported_request;
        const topology& topo = state_.topo();
        const bool nodes = req.what == unit::nodes;
        const std::uint64_t total = nodes ? topo.node_count() : topo.gpu_count();
        if (req.count > total) return errc::exceeds_cluster;
        if (req.segmented() && req.part_size() > (nodes ? topo.max_domain_nodes() : topo.max_domain_gpus()))
            return errc::exceeds_domain;
        if (req.count > (nodes ? state_.up_nodes() : state_.up_gpus())) return errc::exceeds_healthy;
        if (nodes && req.count > state_.available().nodes) {
            // Free GPUs enough for the nodes, but scattered over partly used
            // nodes: waiting for releases is not the whole story.
            const std::uint64_t g = topo.uniform_gpus_per_node();
            return g != 0 && state_.available().gpus >= req.count * g ? errc::fragmented : errc::insufficient_free;
        }
        if (!nodes && req.count > state_.available().gpus) return errc::insufficient_free;
        return errc::ok;
    }

    // What with_released keeps of a policy that learns (an optional member
    // pair, learning_checkpoint() and restore_learning(saved)).
    struct no_learning {};
    auto learning_checkpoint() const {
        if constexpr (requires { policy_.learning_checkpoint(); })
            return policy_.learning_checkpoint();
        else
            return no_learning{};
    }

    void notify_policy() {
        policy_traits<Policy>::domains_changed(policy_, state_, state_.touched_domains());
    }

    state_type state_;
    Policy policy_;
    placement scratch_;
};

}  // namespace topoblock
