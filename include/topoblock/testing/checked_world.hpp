#pragma once

// An allocator and the brute-force reference model side by side: every
// operation is applied to both and the two compared after it, node by node
// and GPU by GPU. Each operation returns an empty string, or the property it
// broke. The conformance harness (testing/conformance.hpp) drives one with
// random operations; a test of one's own can drive one by hand. No test
// framework is needed.

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/fwd.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/state/cluster_state.hpp>
#include <topoblock/state/free_capacity.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/state/piece_list.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/testing/reference_model.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace topoblock::testing {

using model_pieces = std::vector<std::pair<node_id, std::uint64_t>>;

template <class Pieces>
model_pieces to_pairs(const Pieces& ps) {
    model_pieces out;
    for (const piece p : ps) out.emplace_back(p.node, p.gpus);
    return out;
}

// Compares the allocator's state with the model, node by node and GPU by
// GPU (owners included), and the free counters. `live` pairs each live
// allocation with its model key.
template <class Alloc>
std::string compare(const Alloc& a, const reference_model& m,
                    const std::vector<std::pair<allocation_id, std::int64_t>>& live) {
    if (auto why = a.state().verify(); !why.empty()) return why;
    if (a.state().allocation_count() != live.size()) return "live allocation count differs from the model";
    std::int64_t keys = 0;
    for (const auto& entry : live) keys = std::max(keys, entry.second + 1);
    std::vector<allocation_id> id_of_key(static_cast<std::size_t>(keys));
    for (const auto& [id, key] : live) id_of_key[static_cast<std::size_t>(key)] = id;
    for (domain_id d = 0; d < m.topo->domain_count(); ++d) {
        const auto usable = m.usable_masks(d);
        for (node_id n = m.topo->domain(d).first_node; n < m.topo->domain(d).end_node(); ++n) {
            if (a.state().unheld_gpus(n) != m.unheld_mask(n)) return "node " + m.topo->node(n).name + " differs from the model";
            if (a.state().usable_gpus(n) != usable[n - m.topo->domain(d).first_node])
                return "usable GPUs of " + m.topo->node(n).name + " differ";
            for (std::uint32_t g = 0; g < m.owner[n].size(); ++g) {
                const std::int64_t key = m.owner[n][g];
                if (a.state().owner(n, g) != (key < 0 ? allocation_id{} : id_of_key[static_cast<std::size_t>(key)]))
                    return "owner of GPU " + std::to_string(g) + " of " + m.topo->node(n).name + " differs from the model";
            }
        }
    }
    if (a.state().available().gpus != m.free_gpus()) return "available GPUs differ from the model";
    if (a.state().available().nodes != m.free_nodes()) return "available nodes differ from the model";
    return "";
}

// Everything a failed call must leave as it was, as the state shows it:
// each node's unheld GPUs and health, each domain's counters, every live
// allocation's record, and the cluster's totals. GPU owners are not kept
// here: checked_world compares them with the model after every call, and
// a failed call leaves the model as it was.
struct fingerprint {
    struct record {
        allocation_id id;
        allocation_record held;
        bool operator==(const record&) const = default;
    };
    std::vector<gpu_mask> unheld;
    std::vector<node_health> health;
    std::vector<domain_counters> domains;
    std::vector<record> live;
    free_capacity available;
    std::uint64_t up_gpus = 0, up_nodes = 0, held_gpus = 0, requested_gpus = 0;
    bool operator==(const fingerprint&) const = default;
};
template <class Alloc>
fingerprint fingerprint_of(const Alloc& a) {
    const auto& s = a.state();
    fingerprint f;
    f.available = s.available();
    f.up_gpus = s.up_gpus();
    f.up_nodes = s.up_nodes();
    f.held_gpus = s.held_gpus();
    f.requested_gpus = s.requested_gpus();
    for (node_id n = 0; n < a.topo().node_count(); ++n) {
        f.unheld.push_back(s.unheld_gpus(n));
        f.health.push_back(s.health(n));
    }
    for (domain_id d = 0; d < a.topo().domain_count(); ++d) f.domains.push_back(s.domain(d));
    s.for_each_allocation([&](allocation_id id, const allocation_record& r) {
        f.live.push_back({id, r});
    });
    return f;
}

// The allocator and the model in step. The model reads `topo`, which must
// outlive the world (and its copies: copying a world is how the exhaustive
// test branches).
template <class Policy, class Capacity = default_capacity>
class checked_world {
public:
    using allocator_type = basic_allocator<Policy, Capacity>;

    checked_world(const topology& topo, Policy policy) : a_(make(topo, std::move(policy))), m_(topo) {}

    const allocator_type& allocator() const noexcept { return a_; }
    const reference_model& model() const noexcept { return m_; }
    std::size_t live_count() const noexcept { return live_.size(); }
    allocation_id live_id(std::size_t i) const noexcept { return live_[i].first; }
    const std::vector<allocation_id>& released() const noexcept { return released_; }

    // Places q; on success the placement must be legal in the model, on
    // failure nothing may change. `placed` tells which happened.
    std::string allocate(const request& q, bool* placed = nullptr) {
        const fingerprint before = fingerprint_of(a_);
        auto id = a_.try_allocate(q);
        if (placed != nullptr) *placed = static_cast<bool>(id);
        if (!id) {
            if (fingerprint_of(a_) != before) return "a failed allocation changed the state";
            const errc e = id.error();
            if (q.malformed() && e != errc::invalid_request) return "a malformed request was not invalid_request";
            if (e == errc::policy_error) return "the policy proposed an illegal placement";
            if (e == errc::ok) return "a failed allocation reported ok";
            return check();
        }
        const allocation_record* rec = a_.find(*id);
        if (rec == nullptr) return "a new allocation cannot be found";
        if (q.malformed()) return "a malformed request was placed";
        const model_pieces got = to_pairs(rec->pieces);
        std::uint64_t held = 0;
        for (const auto& [n, mask] : got) {
            if (n >= a_.topo().node_count()) return "a piece names a node out of range";
            held += static_cast<std::uint64_t>(std::popcount(mask));
        }
        if (held != rec->held_gpus) return "held GPUs differ from the pieces";
        if (rec->held_gpus < rec->requested_gpus) return "holds fewer GPUs than it asked for";
        if (q.what == unit::gpus && held < q.count) return "holds fewer GPUs than the request";
        if (q.takes_whole_nodes())
            for (const auto& [n, mask] : got)
                if (mask != full_gpu_mask(a_.topo().node(n).gpus)) return "a whole-node request took part of a node";
        if (q.what == unit::nodes && got.size() < q.count) return "holds fewer nodes than the request";
        if (q.exclusive_domain)
            for (const auto& [n, mask] : got)
                if (!m_.domain_idle(a_.topo().node(n).domain)) return "an exclusive job took a busy domain";
        if (auto why = m_.apply(next_key_, got, q.exclusive_domain, false); !why.empty()) return why;
        live_.emplace_back(*id, next_key_++);
        return check();
    }

    // Releases the i-th live allocation, which must succeed.
    std::string release_live(std::size_t i) {
        if (auto done = a_.release(live_[i].first); !done) return "releasing a live allocation failed";
        m_.release(live_[i].second);
        released_.push_back(live_[i].first);
        live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
        return check();
    }

    // Releases an id that is not live, which must fail and change nothing.
    std::string release_unknown(allocation_id id) {
        for (const auto& entry : live_)
            if (entry.first == id) return release_live(static_cast<std::size_t>(&entry - live_.data()));
        const fingerprint before = fingerprint_of(a_);
        auto done = a_.release(id);
        if (done) return "released an unknown allocation";
        if (done.error() != errc::unknown_allocation) return "an unknown release was not unknown_allocation";
        if (fingerprint_of(a_) != before) return "a failed release changed the state";
        return check();
    }

    // Changes a node's health; a node out of range must fail and change
    // nothing. The allocations hit are those holding GPUs on a node going down.
    std::string set_health(node_id n, node_health h) {
        const fingerprint before = fingerprint_of(a_);
        auto hit = a_.set_health(n, h);
        if (n >= a_.topo().node_count()) {
            if (hit) return "a node out of range changed health";
            if (hit.error() != errc::node_out_of_range) return "a node out of range was not node_out_of_range";
            if (fingerprint_of(a_) != before) return "a failed health change changed the state";
            return check();
        }
        if (!hit) return "a health change of a known node failed";
        const bool was_down = m_.node_health[n] == reference_model::health::down;
        m_.node_health[n] = static_cast<reference_model::health>(h);
        m_.closed_valid = false;
        for (const auto& id : *hit) {
            const allocation_record* rec = a_.find(id);
            if (rec == nullptr || !rec->hit_by_failure) return "a hit allocation is not marked hit_by_failure";
        }
        std::size_t owners = 0;
        if (h == node_health::down && !was_down)
            for (const auto& [id, key] : live_)
                owners += std::find(m_.owner[n].begin(), m_.owner[n].end(), key) != m_.owner[n].end() ? 1 : 0;
        if (hit->size() != owners) return "the allocations hit differ from the model's";
        return check();
    }

    // Adopts GPUs used elsewhere: legal exactly when the model takes them.
    std::string hold(std::span<const piece> pieces) {
        const fingerprint before = fingerprint_of(a_);
        auto id = a_.hold(pieces);
        const model_pieces asked = to_pairs(pieces);
        std::string why = asked.empty() ? "empty" : "";
        for (const auto& [n, mask] : asked) {
            if (mask == 0) why = "empty piece";
            for (const auto& [other, other_mask] : asked)
                if (&other != &n && other == n && (mask & other_mask) != 0) why = "GPU named twice";
        }
        if (why.empty()) {
            reference_model trial = m_;
            why = trial.apply(next_key_, asked, false, true);
        }
        if (!id) {
            if (why.empty()) return "hold refused GPUs the model holds legal";
            if (fingerprint_of(a_) != before) return "a failed hold changed the state";
            return check();
        }
        if (!why.empty()) return "hold took GPUs the model refuses: " + why;
        m_.apply(next_key_, asked, false, true);
        live_.emplace_back(*id, next_key_++);
        return check();
    }

    std::string check() const {
        if (auto why = compare(a_, m_, live_); !why.empty()) return why;
        return check_indexes(a_.policy(), a_.state());
    }

private:
    static allocator_type make(const topology& topo, Policy policy) {
        auto made = allocator_type::create(topo, std::move(policy));
        if (!made) throw std::runtime_error(made.error().to_string());
        return std::move(*made);
    }

    allocator_type a_;
    reference_model m_;
    std::vector<std::pair<allocation_id, std::int64_t>> live_;
    std::vector<allocation_id> released_;
    std::int64_t next_key_ = 0;
};

}  // namespace topoblock::testing
