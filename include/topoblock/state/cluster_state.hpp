#pragma once

#include <topoblock/config.hpp>
#include <topoblock/fwd.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/state/free_capacity.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/support/noinline.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace topoblock {

// Compile-time limits of a state: the most nodes one domain may hold fixes the
// width of each domain's node masks.
template <std::size_t MaxNodesPerDomain>
struct capacity {
    static_assert(MaxNodesPerDomain > 0, "a domain must be able to hold at least one node");
    static constexpr std::size_t max_nodes_per_domain = MaxNodesPerDomain;
};

// Counters of one domain, kept exact after every operation.
struct domain_counters {
    std::uint32_t free_gpus = 0;   // not held, on nodes that are up
    std::uint32_t free_nodes = 0;  // up and wholly free
    std::uint32_t up_gpus = 0;     // on nodes that are up
    std::uint32_t up_nodes = 0;
    std::uint32_t held_gpus = 0;   // held by allocations, on any node
    std::uint32_t exclusive_holders = 0;  // > 0: closed to other jobs
    // Open, with up nodes and nothing held: an exclusive job may take it.
    constexpr bool idle() const noexcept { return exclusive_holders == 0 && held_gpus == 0 && up_nodes > 0; }
    friend constexpr bool operator==(const domain_counters&, const domain_counters&) = default;
};

// The mutable occupancy of a cluster: who holds which GPU, node health, and
// the indexes that make placement questions cheap. Policies read it; only the
// allocator changes it. Every mutation validates first or rolls back, so a
// failed call leaves it as it was.
template <class Capacity>
class basic_cluster_state {
public:
    using capacity_type = Capacity;
    using node_set = fixed_bitset<Capacity::max_nodes_per_domain>;

    static expected<basic_cluster_state, error> create(topology topo) {
        for (const auto& d : topo.domains())
            if (d.node_count > Capacity::max_nodes_per_domain)
                return unexpected(make_error("domain '" + d.name + "' has " + std::to_string(d.node_count) +
                                             " nodes, more than this build's capacity of " +
                                             std::to_string(Capacity::max_nodes_per_domain) +
                                             " nodes per domain (use a larger topoblock::capacity<N>)"));
        return basic_cluster_state(std::move(topo));
    }

    // ---- topology ----------------------------------------------------------
    const topology& topo() const noexcept { return topo_; }

    // ---- nodes -------------------------------------------------------------
    // Preconditions of the readers below (TOPOBLOCK_ASSERT): node ids below
    // topo().node_count(), domain ids below topo().domain_count(), levels
    // and groups of the topology, GPU indexes below the node's GPUs.
    // GPUs of the node no allocation holds, whatever its health.
    gpu_mask unheld_gpus(node_id n) const noexcept {
        TOPOBLOCK_ASSERT(n < node_free_.size());
        return node_free_[n];
    }
    // GPUs a new job may take: unheld, on an up node, in an open domain.
    gpu_mask usable_gpus(node_id n) const noexcept {
        return health(n) == node_health::up && domain_open(topo_.place(n).domain) ? node_free_[n] : 0;
    }
    node_health health(node_id n) const noexcept {
        TOPOBLOCK_ASSERT(n < health_.size());
        return health_[n];
    }
    gpu_mask node_full_mask(node_id n) const noexcept { return full_gpu_mask(topo_.place(n).gpus); }
    // The allocation holding GPU `gpu` of node `n`, or a null id.
    allocation_id owner(node_id n, std::uint32_t gpu) const noexcept {
        const node_place place = topo_.place(n);
        TOPOBLOCK_ASSERT(gpu < place.gpus);
        const std::uint32_t slot = slot_holding(place.first_gpu + gpu, place.domain);
        return slot == npos32 ? allocation_id{} : id_of(slot);
    }

    // ---- domains -----------------------------------------------------------
    const domain_counters& domain(domain_id d) const noexcept {
        TOPOBLOCK_ASSERT(d < domains_.size());
        return domains_[d];
    }
    bool domain_open(domain_id d) const noexcept { return domain(d).exclusive_holders == 0; }
    // Open, with up nodes and nothing held: an exclusive job may take it.
    bool domain_idle(domain_id d) const noexcept {
        TOPOBLOCK_ASSERT(d < domains_.size());
        return idle_domains_.test(d);
    }
    // Up, wholly free nodes of the domain, by index inside the domain.
    const node_set& free_nodes_in(domain_id d) const noexcept {
        return nodes_with_unheld(d, topo_.shape(d).gpus_per_node);
    }
    // Up nodes of the domain with exactly `k` unheld GPUs, by index inside the
    // domain (k from 0 to the most GPUs per node any domain has, an empty one
    // too; empty above the domain's GPUs per node).
    const node_set& nodes_with_unheld(domain_id d, std::uint32_t k) const noexcept {
        TOPOBLOCK_ASSERT(d < domains_.size() && k < stride_);
        return nodes_by_unheld_[d * stride_ + k];
    }
    // The up node of the domain with the fewest unheld GPUs that still has
    // `need` (the lowest index among equals), or npos32. O(GPUs per node).
    node_id tightest_node(domain_id d, std::uint32_t need) const noexcept {
        const domain_shape info = topo_.shape(d);
        for (std::uint32_t k = need == 0 ? 1 : need; k <= info.gpus_per_node; ++k) {
            const std::size_t i = nodes_by_unheld_[d * stride_ + k].find_first();
            if (i < node_set::capacity) return info.first_node + static_cast<node_id>(i);
        }
        return npos32;
    }
    const indexed_bitset& idle_domains() const noexcept { return idle_domains_; }

    // ---- groups and the cluster -------------------------------------------
    const free_capacity& group_free(std::size_t level, group_id g) const noexcept {
        TOPOBLOCK_ASSERT(level < group_free_.size() && g < group_free_[level].size());
        return group_free_[level][g];
    }
    // Calls f(group) for each group of the level with at least `at_least`
    // free GPUs (by_nodes: free nodes), in group order, visiting only groups
    // that qualify and the paths to them.
    template <class F>
    void for_each_group_with_free(std::size_t level, bool by_nodes, std::uint64_t at_least, F&& f) const {
        TOPOBLOCK_ASSERT(level < group_free_.size());
        group_free_[level].for_each_at_least(by_nodes, at_least, [&](std::size_t g) { f(static_cast<group_id>(g)); });
    }
    // What a new job can use, cluster-wide.
    const free_capacity& available() const noexcept { return available_; }

    std::uint64_t up_gpus() const noexcept { return up_gpus_; }
    std::uint64_t up_nodes() const noexcept { return up_nodes_; }
    // GPUs on nodes that are not down (up or draining).
    std::uint64_t healthy_gpus() const noexcept { return healthy_gpus_; }
    std::uint64_t held_gpus() const noexcept { return held_gpus_; }
    std::uint64_t held_gpus_on_down_nodes() const noexcept { return held_on_down_; }
    // Unheld GPUs of up nodes, in closed domains too (available() counts
    // only open ones).
    std::uint64_t unheld_up_gpus() const noexcept { return unheld_up_gpus_; }
    std::uint64_t requested_gpus() const noexcept { return requested_gpus_; }

    // ---- allocations -------------------------------------------------------
    std::size_t allocation_count() const noexcept { return live_; }
    // The record keeps its address until the allocation is released (new
    // allocations do not move it).
    const allocation_record* find(allocation_id id) const noexcept {
        const std::uint32_t slot = slot_of(id);
        return slot == npos32 ? nullptr : &at(slot).record;
    }
    // Calls f(allocation_id, const allocation_record&) for each live one, in
    // slot order.
    template <class F>
    void for_each_allocation(F&& f) const {
        for (std::uint32_t s = 0; s < slot_count_; ++s)
            if (at(s).live()) f(id_of(s), at(s).record);
    }
    // Heap and object bytes of the mutable state, split into what scales with
    // the cluster and with live allocations; the topology is not counted.
    struct memory_use {
        std::size_t cluster_bytes = 0;
        std::size_t allocation_bytes = 0;
    };
    memory_use memory() const noexcept {
        memory_use m;
        m.cluster_bytes = sizeof(*this) + heap_bytes(node_free_) + heap_bytes(health_) + heap_bytes(owner_) +
                          heap_bytes(domains_) + heap_bytes(whole_holder_) + heap_bytes(nodes_by_unheld_) +
                          idle_domains_.memory_bytes() + heap_bytes(touched_) + heap_bytes(touch_mark_) +
                          nested_heap_bytes(group_free_);
        m.allocation_bytes = heap_bytes(slot_chunks_);
        for (const auto& chunk : slot_chunks_) m.allocation_bytes += heap_bytes(chunk);
        for (std::uint32_t s = 0; s < slot_count_; ++s) m.allocation_bytes += at(s).record.pieces.heap_bytes();
        return m;
    }

    // Domains the last mutation changed, each once.
    std::span<const domain_id> touched_domains() const noexcept { return {touched_.data(), touched_count_}; }

    // ---- mutation (the allocator's) ---------------------------------------
    struct commit_options {
        // hold(): adopt usage made elsewhere, which may sit on draining nodes.
        bool allow_draining = false;
        // reinstate(): put back what a release took, which may sit on nodes
        // that went down while it ran.
        bool allow_down = false;
        // When set, the GPUs the job asked for; otherwise the GPUs held.
        std::uint32_t requested_gpus = 0;
    };

    // Records `where` as a new allocation for `asked`. Checks every piece:
    // node in range, GPUs exist and are unheld, node up (or draining when
    // allowed), domain open, and for an exclusive request every domain idle.
    // On any failure nothing changes. O(runs + domains + nodes outside stretches).
    expected<allocation_id, errc> commit(const request& asked, std::span<const piece_run> where,
                                         const commit_options& options) {
        begin_change();
        if (where.empty()) return unexpected(errc::policy_error);
        const errc bad = options.allow_draining ? errc::not_free : errc::policy_error;
        // Ranges first: a node out of range is named as such whatever else
        // is wrong, and nothing below reads past the state.
        for (const piece_run& r : where) {
            if (r.first >= topo_.node_count() || r.nodes > topo_.node_count() - r.first)
                return unexpected(errc::node_out_of_range);
            if (r.nodes == 0 || r.gpus == 0) return unexpected(bad);
        }
        // Everything that may allocate (and throw) happens before the first
        // change: the record's pieces and the slot.
        auto pieces = piece_list(where);
        const std::uint32_t slot = acquire_slot();
        std::size_t applied = 0;
        std::uint32_t held = 0;
        cluster_change totals_change;
        // A domain this job has not touched yet still holds what others hold:
        // an exclusive job needs it to hold nothing.
        const auto closed_to_job = [&](domain_id d) {
            return !domain_open(d) || (asked.exclusive_domain && touch_mark_[d] != change_ && domains_[d].held_gpus != 0);
        };
        // Whole, wholly free racks name their holder once per rack, not per
        // GPU, which keeps multi-domain jobs cheap; else, a fresh change.
        if (where.front().nodes >= topo_.max_domain_nodes()) {
            if (commit_racks(asked, pieces, slot, options)) return id_of(slot);
            begin_change();
        }
        // Each piece is checked as it is taken (unheld GPUs are within the
        // node); on the first that fails, what was taken is given back.
        const bool all = for_each_stretch(
            pieces.runs(),
            [&](const piece& p) {
                const node_place place = topo_.place(p.node);
                const node_health h = health_[p.node];
                if ((p.gpus & ~node_free_[p.node]) != 0 || closed_to_job(place.domain)) return false;
                if (h == node_health::drain && !options.allow_draining) return false;
                if (h == node_health::down && !options.allow_down) return false;
                move_piece<true>(p, place, slot, totals_change);
                ++applied;
                held += count_bits(p.gpus);
                return true;
            },
            [&](const stretch& s) {
                if (closed_to_job(s.place.domain) || !move_whole_nodes<true>(s, slot, totals_change)) return false;
                applied += s.count;
                held += s.count * s.place.gpus;
                return true;
            });
        if (!all) {
            // The give-backs cancel the takes in totals_change too.
            give_back(pieces.runs(), totals_change, applied);
            begin_change();
            release_slot(slot);
            return unexpected(bad);
        }
        finish_commit(asked, slot, pieces, held, options, totals_change);
        return id_of(slot);
    }

    expected<void, errc> release(allocation_id id) {
        begin_change();
        const std::uint32_t slot = slot_of(id);
        if (slot == npos32) return unexpected(errc::unknown_allocation);
        auto& record = at(slot).record;
        cluster_change totals_change;
        give_back(record.pieces.runs(), totals_change);
        add_to_cluster(totals_change);
        if (record.asked.exclusive_domain)
            for (domain_id d : touched_domains())
                if (--domains_[d].exclusive_holders == 0) closed_or_opened(d, +1);
        requested_gpus_ -= record.requested_gpus;
        release_slot(slot);
        return {};
    }

    // Puts back the allocation `id` that release() just took away (`saved`:
    // its record copied before), with the same id, GPUs and slot table, so
    // later ids and decisions are as without the release. Several are put
    // back last first, with no change between (allocator's with_released).
    // The commit then cannot fail; it may throw std::bad_alloc.
    void reinstate(allocation_id id, const allocation_record& saved) {
        TOPOBLOCK_ASSERT((id.value & 0xffffffffULL) - 1 < slot_count_);
        [[maybe_unused]] const auto again = commit_in_slot(id, saved.asked, saved.pieces.runs(), saved.requested_gpus, true);
        TOPOBLOCK_ASSERT(again && *again == id);
        at(slot_of(id)).record.hit_by_failure = saved.hit_by_failure;
    }

    // Changes a node's health. Allocations holding GPUs of a node that goes
    // down stay live, keep those GPUs and are marked hit_by_failure; they are
    // appended to `hit`. Releasing them later frees their GPUs, which count as
    // usable again only once the node is up.
    expected<void, errc> set_health(node_id n, node_health to, std::vector<allocation_id>* hit = nullptr) {
        begin_change();
        if (n >= topo_.node_count()) return unexpected(errc::node_out_of_range);
        const node_health from = health_[n];
        if (from == to) return {};
        const node_place place = topo_.place(n);
        const domain_id d = place.domain;
        if (hit != nullptr && to == node_health::down && node_free_[n] != node_full_mask(n))
            hit->reserve(hit->size() + place.gpus);
        const std::uint32_t gpus = place.gpus;
        const std::uint32_t held = gpus - count_bits(node_free_[n]);
        count_up_node(n, from, -1);
        health_[n] = to;
        count_up_node(n, to, +1);
        if (from == node_health::down) {
            healthy_gpus_ += gpus;
            held_on_down_ -= held;
        }
        if (to == node_health::down) {
            healthy_gpus_ -= gpus;
            held_on_down_ += held;
            mark_owners_hit(n, hit);
        }
        touch(d);
        settle_idle(d);
        return {};
    }

    // ---- the slot table (snapshots) ----------------------------------------
    // An id is a slot's generation (odd while live) and the slot: generation
    // << 32 | slot + 1. A released slot goes to the front of the free list,
    // which the next allocation takes; a slot whose generation would wrap is
    // retired instead, so no id repeats. A snapshot saves the slot count,
    // the free list in order and the live allocations.
    std::uint32_t slot_count() const noexcept { return slot_count_; }
    // Slots neither live nor free: their generation ran out.
    std::uint32_t retired_slots() const noexcept { return retired_; }
    // Calls f(slot, generation) for each free slot, the next one taken
    // first. O(free slots).
    template <class F>
    void for_each_free_slot(F&& f) const {
        for (std::uint32_t s = free_head_; s != npos32; s = at(s).next_free) f(s, at(s).generation);
    }

    // ---- restoring a snapshot (io/snapshot.hpp) ----------------------------
    // On a fresh state: restore_allocation for each live allocation, then
    // restore_free_slots once, then set_health for each node not up.

    // Commits `where` as the live allocation `id`, in the slot and generation
    // the id names, through commit's own checks. requested_gpus 0 means the
    // GPUs held. The table grows to the id's slot; slots no allocation fills
    // stay retired until restore_free_slots lists them. On error the state
    // is as before, but for such grown slots.
    expected<void, error> restore_allocation(allocation_id id, const request& asked, std::span<const piece_run> where,
                                             std::uint32_t requested_gpus, bool hit_by_failure) {
        const std::uint64_t low = id.value & 0xffffffffULL;
        if (low == 0 || low == 0xffffffffULL || ((id.value >> 32) & 1U) == 0)
            return unexpected(make_error("allocation id " + std::to_string(id.value) +
                                         " is not a live one (its slot part is 0 or its generation even)"));
        if (free_head_ != npos32)
            return unexpected(make_error("restore_allocation after restore_free_slots: free slots are listed already"));
        const auto s = static_cast<std::uint32_t>(low - 1);
        for (; slot_count_ <= s; ++retired_) new_slot();
        slot& into = at(s);
        if (into.live()) return unexpected(make_error("allocation id " + std::to_string(id.value) + " is live already"));
        const std::uint32_t was = into.generation;
        auto done = commit_in_slot(id, asked, where, requested_gpus, false);
        if (!done) {
            // commit() freed the slot again (to the list, or retired it when
            // the generation wrapped): take it back to what it was.
            if (free_head_ == s) {
                free_head_ = npos32;
                ++retired_;
            }
            into.generation = was;
            return unexpected(make_error(done.error() == errc::node_out_of_range
                                             ? "a piece names a node out of range"
                                             : "a piece names a GPU that does not exist, or one another allocation "
                                               "holds, or a domain another allocation holds exclusively, or an exclusive "
                                               "allocation's domain that another allocation uses"));
        }
        into.record.hit_by_failure = hit_by_failure;
        return {};
    }

    // Ends the slot table of a restore: `slot_count` slots in all, `free`
    // the free slots and their generations in list order (each not live,
    // named once, generation even and at least 2); every other slot not
    // live is retired. Only once. On error nothing changes.
    expected<void, error> restore_free_slots(std::uint32_t slot_count,
                                             std::span<const std::pair<std::uint32_t, std::uint32_t>> free) {
        if (free_head_ != npos32) return unexpected(make_error("restore_free_slots on a state that lists free slots already"));
        if (slot_count < slot_count_ || slot_count == npos32)
            return unexpected(make_error("a slot table of " + std::to_string(slot_count) + " slots, but " +
                                         std::to_string(slot_count_) + " are in use"));
        if (free.size() > slot_count)
            return unexpected(make_error("more free slots than the table's " + std::to_string(slot_count)));
        std::vector<bool> listed(slot_count, false);
        for (const auto& [s, generation] : free) {
            const std::string which = "free slot " + std::to_string(s);
            if (s >= slot_count) return unexpected(make_error(which + " is beyond the table's " + std::to_string(slot_count) + " slots"));
            if (s < slot_count_ && at(s).live()) return unexpected(make_error(which + " holds a live allocation"));
            if (listed[s]) return unexpected(make_error(which + " is listed twice"));
            if ((generation & 1U) != 0 || generation == 0)
                return unexpected(make_error(which + " has generation " + std::to_string(generation) +
                                             " (a free slot's is even and at least 2)"));
            listed[s] = true;
        }
        // Grows first (a throw leaves only more retired slots), then pushes
        // each onto the front of the list, the last first.
        for (; slot_count_ < slot_count; ++retired_) new_slot();
        for (auto it = free.rbegin(); it != free.rend(); ++it) {
            push_free(it->first, it->second);
            --retired_;
        }
        return {};
    }

    // Rebuilds the state on a fresh one from the records and node health,
    // through the code that counts, and compares every counter and index;
    // checks the slot table. Returns what disagrees, or "". O(cluster).
    std::string verify() const {
        basic_cluster_state fresh(topo_);
        for (std::uint32_t s = 0; s < slot_count_; ++s) {
            if (!at(s).live()) continue;
            const allocation_record& r = at(s).record;
            const std::string which = "allocation " + std::to_string(id_of(s).value);
            if (auto done = fresh.restore_allocation(id_of(s), r.asked, r.pieces.runs(), r.requested_gpus, false); !done)
                return which + ": " + done.error().message;
            const allocation_record& again = fresh.at(s).record;
            if (again.held_gpus != r.held_gpus || again.domains != r.domains || again.requested_gpus != r.requested_gpus)
                return which + ": its GPU or domain counts disagree with its pieces";
        }
        for (node_id n = 0; n < topo_.node_count(); ++n) (void)fresh.set_health(n, health_[n]);
        if (fresh.live_ != live_) return "live allocation count is wrong";
        std::size_t free_listed = 0;
        for (std::uint32_t s = free_head_; s != npos32 && free_listed <= slot_count_; s = at(s).next_free) {
            if (at(s).live() || at(s).generation == 0) return "a live or retired slot is on the free list";
            ++free_listed;
        }
        if (free_listed + live_ + retired_ != slot_count_) return "free slot list or retired slot count is wrong";
        if (fresh.requested_gpus_ != requested_gpus_) return "requested GPU total is wrong";
        for (node_id n = 0; n < topo_.node_count(); ++n) {
            const node_place place = topo_.place(n);
            if (node_free_[n] != fresh.node_free_[n])
                return "free mask of node '" + topo_.node(n).name + "' disagrees with the allocations";
            for (std::uint32_t g = place.first_gpu; g < place.first_gpu + place.gpus; ++g) {
                if (slot_holding(g, place.domain) != fresh.slot_holding(g, place.domain))
                    return "GPU owner table disagrees with the allocations";
                if (whole_holder_[place.domain] != npos32 && owner_[g] != npos32)
                    return "domain '" + topo_.domain(place.domain).name + "' is held whole but lists GPU owners";
            }
        }
        if (up_gpus_ != fresh.up_gpus_ || up_nodes_ != fresh.up_nodes_ || healthy_gpus_ != fresh.healthy_gpus_)
            return "health totals are wrong";
        if (held_gpus_ != fresh.held_gpus_ || held_on_down_ != fresh.held_on_down_) return "held totals are wrong";
        for (domain_id d = 0; d < topo_.domain_count(); ++d) {
            const std::string& name = topo_.domain(d).name;
            if (!(domains_[d] == fresh.domains_[d])) return "counters of domain '" + name + "' are wrong";
            for (std::uint32_t k = 0; k < stride_; ++k)
                if (!(nodes_with_unheld(d, k) == fresh.nodes_with_unheld(d, k)))
                    return "nodes with " + std::to_string(k) + " unheld GPUs in domain '" + name + "' are wrong";
            if (idle_domains_.test(d) != domains_[d].idle()) return "idle set is wrong for '" + name + "'";
        }
        if (!(available_ == fresh.available_)) return "available totals are wrong";
        if (unheld_up_gpus_ != fresh.unheld_up_gpus_) return "unheld GPU total is wrong";
        if (group_free_ != fresh.group_free_) return "group totals or their maxima are wrong";
        return {};
    }

private:
    // What one commit's or release's pieces change in the cluster-wide
    // counts, added once (add_to_cluster).
    struct cluster_change {
        free_capacity available;
        std::uint64_t held = 0;
        std::uint64_t unheld_up = 0;
    };
    // Odd generations are live. Free slots form a list through next_free; a
    // slot neither live nor on it is retired.
    struct slot {
        std::uint32_t generation = 0;
        std::uint32_t next_free = npos32;
        allocation_record record;
        bool live() const noexcept { return (generation & 1U) != 0; }
    };
    // Slots live in chunks that never move, so records keep their address.
    static constexpr std::uint32_t slot_chunk_bits = 7;
    static constexpr std::uint32_t slot_chunk = std::uint32_t{1} << slot_chunk_bits;
    slot& at(std::uint32_t s) noexcept { return slot_chunks_[s >> slot_chunk_bits][s & (slot_chunk - 1)]; }
    const slot& at(std::uint32_t s) const noexcept { return slot_chunks_[s >> slot_chunk_bits][s & (slot_chunk - 1)]; }

    explicit basic_cluster_state(topology topo)
        : topo_(std::move(topo)),
          node_free_(topo_.node_count()),
          health_(topo_.node_count(), node_health::up),
          owner_(topo_.gpu_count(), npos32),
          domains_(topo_.domain_count()),
          whole_holder_(topo_.domain_count(), npos32),
          stride_(node_set_stride(topo_)),
          nodes_by_unheld_(std::size_t{topo_.domain_count()} * stride_),
          idle_domains_(topo_.domain_count()),
          touched_(topo_.domain_count()),
          touch_mark_(topo_.domain_count(), 0) {
        for (const auto& level : topo_.levels()) group_free_.emplace_back(level.group_names.size());
        for (node_id n = 0; n < topo_.node_count(); ++n) {
            node_free_[n] = node_full_mask(n);
            count_up_node(n, node_health::up, +1);
            healthy_gpus_ += topo_.node(n).gpus;
        }
        for (domain_id d = 0; d < topo_.domain_count(); ++d) settle_idle(d);
    }

    // Node sets per domain: one per unheld count up to the domain's GPUs per
    // node (its nodes' count), which an empty domain may set above every node's.
    static std::size_t node_set_stride(const topology& topo) noexcept {
        std::uint32_t most = 0;
        for (const auto& d : topo.domains()) most = std::max(most, d.gpus_per_node);
        return std::size_t{most} + 1;
    }

    // Adds (sign +1) or removes (-1) an up node's share of the counters.
    void count_up_node(node_id n, node_health h, int sign) {
        if (h != node_health::up) return;
        const node_place place = topo_.place(n);
        auto& c = domains_[place.domain];
        const std::uint32_t free = count_bits(node_free_[n]);
        const std::uint32_t whole = node_free_[n] == full_gpu_mask(place.gpus) ? 1 : 0;
        nodes_by_unheld_[place.domain * stride_ + free].assign(place.index_in_domain, sign > 0);
        // The counters wrap, so a removal adds the amount's negative.
        const auto signed_amount = [&](std::uint64_t amount) { return sign > 0 ? amount : minus(amount); };
        c.up_gpus += static_cast<std::uint32_t>(signed_amount(place.gpus));
        c.up_nodes += static_cast<std::uint32_t>(signed_amount(1));
        c.free_gpus += static_cast<std::uint32_t>(signed_amount(free));
        unheld_up_gpus_ += signed_amount(free);
        c.free_nodes += static_cast<std::uint32_t>(signed_amount(whole));
        up_gpus_ += signed_amount(place.gpus);
        up_nodes_ += signed_amount(1);
        if (c.exclusive_holders == 0) add_to_totals(available_, place.domain, signed_amount(free), signed_amount(whole));
    }

    // One piece's GPUs become held by `slot` (Taking), or are given back
    // (slot npos32): the node's mask, node sets, counters and owners. A piece
    // may be given back in a closed domain (an exclusive job releasing it).
    template <bool Taking>
    void move_piece(const piece& p, const node_place& info, std::uint32_t slot, cluster_change& totals_change) {
        TOPOBLOCK_ASSERT(Taking == (slot != npos32));
        const gpu_mask full = full_gpu_mask(info.gpus);
        const gpu_mask before = node_free_[p.node];
        TOPOBLOCK_ASSERT(p.gpus != 0 && (p.gpus & ~full) == 0 && (p.gpus & (Taking ? ~before : before)) == 0);
        const gpu_mask after = before ^ p.gpus;
        node_free_[p.node] = after;
        const std::uint32_t n = count_bits(p.gpus);
        const node_health h = health_[p.node];
        if (h == node_health::up) {
            const std::uint32_t free_before = count_bits(before);
            nodes_by_unheld_[info.domain * stride_ + free_before].reset(info.index_in_domain);
            nodes_by_unheld_[info.domain * stride_ + (Taking ? free_before - n : free_before + n)].set(info.index_in_domain);
        } else if (h == node_health::down) {
            held_on_down_ += Taking ? n : minus(n);
        }
        count_freed<Taking>(info.domain, n, std::uint64_t{after == full} - std::uint64_t{before == full},
                            h == node_health::up, totals_change);
        for (gpu_mask m = p.gpus; m != 0; m &= m - 1)
            owner_[info.first_gpu + static_cast<std::uint32_t>(std::countr_zero(m))] = slot;
        if (!Taking) whole_holder_[info.domain] = npos32;  // its holder gives a domain held whole back
    }

    // `gpus` GPUs and the change in wholly free nodes (wrapping) leave
    // (Taking) or join domain d's free ones; `up`: they are on up nodes.
    // Forced inline: a job of many partly free nodes runs it once per node.
    template <bool Taking>
    TOPOBLOCK_ALWAYS_INLINE void count_freed(domain_id d, std::uint32_t gpus, std::uint64_t freed_nodes, bool up, cluster_change& totals_change) {
        const std::uint64_t freed = Taking ? minus(gpus) : gpus;  // the counters wrap
        domain_counters& c = domains_[d];
        if (up) {
            c.free_gpus += static_cast<std::uint32_t>(freed);
            c.free_nodes += static_cast<std::uint32_t>(freed_nodes);
            totals_change.unheld_up += freed;
            if (c.exclusive_holders == 0) add_to_totals(totals_change.available, d, freed, freed_nodes);
        }
        const bool was_unheld = c.held_gpus == 0;
        c.held_gpus -= static_cast<std::uint32_t>(freed);
        totals_change.held -= freed;
        if (was_unheld != (c.held_gpus == 0)) settle_idle(d);
        touch(d);
    }

    // Commits into the slot `id` names, free (at the front of the list, as
    // a release leaves it) or retired: the slot goes to the front of the
    // list, one generation before id's, where commit() takes it.
    expected<allocation_id, errc> commit_in_slot(allocation_id id, const request& asked, std::span<const piece_run> where,
                                                 std::uint32_t requested_gpus, bool allow_down) {
        const auto s = static_cast<std::uint32_t>((id.value & 0xffffffffULL) - 1);
        TOPOBLOCK_ASSERT(!at(s).live());
        if (free_head_ == s) free_head_ = at(s).next_free;
        else --retired_;
        push_free(s, static_cast<std::uint32_t>(id.value >> 32) - 1);
        commit_options options;
        options.allow_draining = true;
        options.allow_down = allow_down;
        options.requested_gpus = requested_gpus;
        return commit(asked, where, options);
    }

    // The record of a commit whose pieces are taken, and what follows it.
    void finish_commit(const request& asked, std::uint32_t slot, piece_list& pieces, std::uint32_t held,
                       const commit_options& options, const cluster_change& totals_change) {
        auto& record = at(slot).record;
        record.asked = asked;
        record.held_gpus = held;
        record.requested_gpus = options.requested_gpus != 0 ? options.requested_gpus : held;
        record.domains = static_cast<std::uint32_t>(touched_count_);
        record.hit_by_failure = false;
        record.pieces = std::move(pieces);
        requested_gpus_ += record.requested_gpus;
        add_to_cluster(totals_change);
        if (asked.exclusive_domain)
            for (domain_id d : touched_domains())
                if (domains_[d].exclusive_holders++ == 0) closed_or_opened(d, -1);
    }

    // commit() for runs of whole, wholly free domains, each named once
    // (so up, open and idle), its counters set outright. Otherwise changes
    // nothing but the touch marks, and returns false.
    TOPOBLOCK_NOINLINE bool commit_racks(const request& asked, piece_list& pieces, std::uint32_t slot,
                                         const commit_options& options) {
        for (const piece_run& r : pieces.runs())
            for (node_id n = r.first; n < r.first + r.nodes;) {
                const node_place place = topo_.place(n);
                const domain_shape shape = topo_.shape(place.domain);
                if (place.index_in_domain != 0 || shape.node_count > r.first + r.nodes - n ||
                    r.gpus != full_gpu_mask(place.gpus) || domains_[place.domain].free_nodes != shape.node_count ||
                    touch_mark_[place.domain] == change_)
                    return false;
                touch(place.domain);
                n += shape.node_count;
            }
        std::uint32_t held = 0;
        cluster_change totals_change;
        for (const domain_id d : touched_domains()) {
            const domain_shape shape = topo_.shape(d);
            domain_counters& c = domains_[d];
            const std::uint32_t gpus = c.free_gpus;
            std::fill_n(node_free_.data() + shape.first_node, shape.node_count, gpu_mask{0});
            whole_holder_[d] = slot;
            c.free_gpus = c.free_nodes = 0;
            c.held_gpus = gpus;
            totals_change.held += gpus;
            totals_change.unheld_up += minus(gpus);
            add_to_totals(totals_change.available, d, minus(gpus), minus(shape.node_count));
            idle_domains_.reset(d);
            node_set* by_unheld = nodes_by_unheld_.data() + d * stride_;
            by_unheld[0] = by_unheld[shape.gpus_per_node];
            by_unheld[shape.gpus_per_node].clear();
            held += gpus;
        }
        finish_commit(asked, slot, pieces, held, options, totals_change);
        return true;
    }

    // Whole, up nodes of one domain in a row, taken and given back in one
    // step: `count` nodes from `first`, `place` the first one's. Fewer than
    // two nodes are no stretch.
    struct stretch {
        node_id first = 0;
        std::uint32_t count = 0;
        node_place place;
    };

    // Goes over the pieces in order: on_whole(stretch) for each stretch,
    // on_node(piece) for each node between them. Stops when one returns
    // false; returns whether it went through.
    template <class OnNode, class OnWhole>
    bool for_each_stretch(std::span<const piece_run> runs, OnNode&& on_node, OnWhole&& on_whole) const {
        for (const piece_run& r : runs)
            for (node_id n = r.first; n < r.first + r.nodes;) {
                const stretch s = stretch_at(n, r.first + r.nodes - n, r.gpus);
                if (s.count >= 2) {
                    if (!on_whole(s)) return false;
                    n += s.count;
                    continue;
                }
                if (!on_node(piece{n, r.gpus})) return false;
                ++n;
            }
        return true;
    }
    // The stretch that starts the `count` nodes from `first`: as many of
    // them as are whole (every GPU in `gpus`), up and in first's domain, in
    // a row; its count is below two when there is none.
    stretch stretch_at(node_id first, std::uint32_t count, gpu_mask gpus) const noexcept {
        stretch s;
        s.first = first;
        if (count < 2) return s;
        s.place = topo_.place(first);
        if (gpus != full_gpu_mask(s.place.gpus)) return s;
        const domain_shape shape = topo_.shape(s.place.domain);
        const std::uint32_t length = std::min(count, shape.node_count - s.place.index_in_domain);
        // A domain whose nodes are all up (nearly every one) needs no look per node.
        if (domains_[s.place.domain].up_nodes == shape.node_count) s.count = length;
        while (s.count < length && health_[first + s.count] == node_health::up) ++s.count;
        return s;
    }

    // move_piece() for a stretch. Taking, its nodes must all be wholly
    // unheld, or it returns false and changes nothing.
    template <bool Taking>
    bool move_whole_nodes(const stretch& s, std::uint32_t slot, cluster_change& totals_change) {
        TOPOBLOCK_ASSERT(Taking == (slot != npos32));
        const node_place& info = s.place;
        // Its nodes are up: wholly unheld is a word test of the node set.
        node_set& wholly_unheld = nodes_by_unheld_[info.domain * stride_ + info.gpus];
        node_set& wholly_held = nodes_by_unheld_[info.domain * stride_];
        if (Taking && !wholly_unheld.all_set(info.index_in_domain, s.count)) return false;
        const std::uint32_t gpus = s.count * info.gpus;
        fill(node_free_.data() + s.first, s.count, Taking ? gpu_mask{0} : full_gpu_mask(info.gpus));
        // A domain held whole lists no GPU owner (a node of it may have been
        // given back alone since, which clears the holder).
        if (!Taking && whole_holder_[info.domain] != npos32) whole_holder_[info.domain] = npos32;
        else fill(owner_.data() + info.first_gpu, gpus, slot);
        count_freed<Taking>(info.domain, gpus, Taking ? minus(s.count) : s.count, true, totals_change);
        (Taking ? wholly_unheld : wholly_held).reset_range(info.index_in_domain, s.count);
        (Taking ? wholly_held : wholly_unheld).set_range(info.index_in_domain, s.count);
        return true;
    }

    // Gives back the first `nodes` nodes of `runs`, or all of them: a
    // commit's takes are undone in the same stretches, in the same order.
    TOPOBLOCK_ALWAYS_INLINE void give_back(std::span<const piece_run> runs, cluster_change& totals_change,
                                           std::size_t nodes = ~std::size_t{0}) {
        for_each_stretch(
            runs,
            [&](const piece& p) {
                if (nodes == 0) return false;
                move_piece<false>(p, topo_.place(p.node), npos32, totals_change);
                --nodes;
                return true;
            },
            [&](const stretch& s) {
                if (nodes == 0) return false;
                move_whole_nodes<false>(s, npos32, totals_change);
                nodes -= s.count;
                return true;
            });
    }

    // std::fill_n, 32 bytes a step (GCC -O2 vectorizes no fill of unknown count).
    template <class T>
    static void fill(T* at, std::size_t count, T value) noexcept {
        constexpr std::size_t step = 32 / sizeof(T);
        if (count < step) {
            std::fill_n(at, count, value);
            return;
        }
        T pattern[step];
        std::fill_n(pattern, step, value);
        // Whole steps, then the last step, overlapping what was written.
        T* const last = at + count - step;
        for (; at < last; at += step) std::memcpy(at, pattern, sizeof pattern);
        std::memcpy(last, pattern, sizeof pattern);
    }

    // Starts a mutation: touched_ lists the domains it changes, each once
    // (marked with the mutation's number); it has room for every domain.
    void begin_change() {
        touched_count_ = 0;
        if (++change_ == 0) {
            std::fill(touch_mark_.begin(), touch_mark_.end(), std::uint16_t{0});
            change_ = 1;
        }
    }
    void touch(domain_id d) {
        if (touch_mark_[d] == change_) return;
        touch_mark_[d] = change_;
        touched_[touched_count_++] = d;
    }

    // The cluster's and the groups' totals count open domains only: a
    // domain that closes or opens takes out or brings in all of its own
    // (closed_or_opened). Changes wrap modulo 2^64 (a decrease is minus()).
    // A commit or release sums the cluster-wide part in a cluster_change and
    // adds it once, not once per piece.
    static constexpr std::uint64_t minus(std::uint64_t amount) noexcept { return std::uint64_t{0} - amount; }
    void add_to_totals(free_capacity& into, domain_id d, std::uint64_t gpus_change, std::uint64_t nodes_change) {
        into.gpus += gpus_change;
        into.nodes += nodes_change;
        if (!group_free_.empty()) add_to_groups(d, gpus_change, nodes_change);
    }
    void add_to_cluster(const cluster_change& change) noexcept {
        available_.gpus += change.available.gpus;
        available_.nodes += change.available.nodes;
        held_gpus_ += change.held;
        unheld_up_gpus_ += change.unheld_up;
    }
    // Domain d was just closed (sign -1: its first exclusive holder) or
    // opened (+1: its last one left).
    void closed_or_opened(domain_id d, int sign) {
        const domain_counters& c = domains_[d];
        if (sign > 0) add_to_totals(available_, d, c.free_gpus, c.free_nodes);
        else add_to_totals(available_, d, minus(c.free_gpus), minus(c.free_nodes));
        settle_idle(d);
    }
    // The idle bit follows the counters: called where held GPUs reach or
    // leave zero, up nodes change, or the domain closes or opens.
    TOPOBLOCK_ALWAYS_INLINE void settle_idle(domain_id d) {
        const bool idle = domains_[d].idle();
        if (idle_domains_.test(d) != idle) idle_domains_.assign(d, idle);
    }
    // Out of line, so add_to_totals inlines for a cluster without levels.
    TOPOBLOCK_NOINLINE void add_to_groups(domain_id d, std::uint64_t gpus_change, std::uint64_t nodes_change) {
        for (std::size_t l = 0; l < group_free_.size(); ++l)
            group_free_[l].add(topo_.levels()[l].group_of_domain[d], gpus_change, nodes_change);
    }

    // The slot holding GPU `gpu` (cluster-wide index) of domain d, or npos32.
    std::uint32_t slot_holding(std::uint32_t gpu, domain_id d) const noexcept {
        return owner_[gpu] != npos32 ? owner_[gpu] : whole_holder_[d];
    }

    // Marks each allocation holding a GPU of node n hit, and lists it once.
    void mark_owners_hit(node_id n, std::vector<allocation_id>* hit) {
        const node_place place = topo_.place(n);
        for (std::uint32_t g = 0; g < place.gpus; ++g) {
            const std::uint32_t s = slot_holding(place.first_gpu + g, place.domain);
            bool seen = false;
            for (std::uint32_t h = 0; h < g; ++h) seen = seen || slot_holding(place.first_gpu + h, place.domain) == s;
            if (s == npos32 || seen) continue;
            at(s).record.hit_by_failure = true;
            if (hit != nullptr) hit->push_back(id_of(s));
        }
    }

    std::uint32_t acquire_slot() {
        std::uint32_t s = free_head_;
        if (s != npos32) [[likely]]
            free_head_ = at(s).next_free;
        else
            s = new_slot();
        ++at(s).generation;
        ++live_;
        return s;
    }
    // Out of line, so the reuse of a freed slot inlines into commit.
    TOPOBLOCK_NOINLINE std::uint32_t new_slot() {
        // Grows first, counts after: a failed allocation changes nothing.
        const std::uint32_t s = slot_count_;
        if ((s & (slot_chunk - 1)) == 0) {
            std::vector<slot> chunk;
            chunk.reserve(slot_chunk);
            slot_chunks_.push_back(std::move(chunk));
        }
        // A copied state's chunks hold only what was copied.
        if (slot_chunks_.back().capacity() < slot_chunk) slot_chunks_.back().reserve(slot_chunk);
        slot_chunks_.back().emplace_back();
        ++slot_count_;
        return s;
    }
    void release_slot(std::uint32_t s) {
        slot& freed = at(s);
        freed.record.pieces.clear();
        --live_;
        // Past the last odd generation the next id would be one given
        // before: the slot is retired, never taken again.
        if (++freed.generation == 0) [[unlikely]]
            ++retired_;
        else
            push_free(s, freed.generation);
    }
    void push_free(std::uint32_t s, std::uint32_t generation) noexcept {
        at(s).generation = generation;
        at(s).next_free = free_head_;
        free_head_ = s;
    }
    allocation_id id_of(std::uint32_t s) const noexcept {
        return allocation_id{(std::uint64_t{at(s).generation} << 32) | (std::uint64_t{s} + 1)};
    }
    std::uint32_t slot_of(allocation_id id) const noexcept {
        const std::uint64_t low = id.value & 0xffffffffULL;
        if (low == 0 || low > slot_count_) return npos32;
        const auto s = static_cast<std::uint32_t>(low - 1);
        const auto generation = static_cast<std::uint32_t>(id.value >> 32);
        return at(s).live() && at(s).generation == generation ? s : npos32;
    }

    topology topo_;
    std::vector<gpu_mask> node_free_;
    std::vector<node_health> health_;
    std::vector<std::uint32_t> owner_;  // slot per GPU, npos32 = unheld
    std::vector<domain_counters> domains_;
    // Per domain: the slot holding all of it when commit_racks took it, else
    // npos32; its owner_ entries then stay npos32.
    std::vector<std::uint32_t> whole_holder_;
    std::size_t stride_;
    std::vector<node_set> nodes_by_unheld_;  // [domain * stride_ + unheld count]
    std::vector<free_capacity_tree> group_free_;  // per level
    indexed_bitset idle_domains_;
    free_capacity available_;
    std::uint64_t up_gpus_ = 0;
    std::uint64_t up_nodes_ = 0;
    std::uint64_t healthy_gpus_ = 0;
    std::uint64_t held_gpus_ = 0;
    std::uint64_t unheld_up_gpus_ = 0;  // unheld GPUs of up nodes, open domains or not
    std::uint64_t held_on_down_ = 0;
    std::uint64_t requested_gpus_ = 0;
    std::vector<std::vector<slot>> slot_chunks_;
    std::uint32_t slot_count_ = 0;
    std::uint32_t free_head_ = npos32;
    std::uint32_t retired_ = 0;
    std::size_t live_ = 0;
    std::vector<domain_id> touched_;  // one entry per domain; the first touched_count_ are this change's
    std::size_t touched_count_ = 0;
    // Per domain: the change that last touched it (16 bits: 8 bytes per GPU).
    std::vector<std::uint16_t> touch_mark_;
    std::uint16_t change_ = 0;
};

}  // namespace topoblock
