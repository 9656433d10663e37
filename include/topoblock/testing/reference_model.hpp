#pragma once

// A brute-force model of a cluster's occupancy, written as plainly as
// possible and sharing no code with the library beyond the topology. The
// conformance harness (testing/conformance.hpp) applies every successful
// operation to it and compares the allocator's state with it; a test of
// one's own can do the same. Every query is a walk over the nodes or GPUs it
// concerns: slow, and meant to be.

#include <topoblock/topology/topology.hpp>

#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace topoblock::testing {

// Owners, health and exclusive jobs, GPU by GPU. A job is a key (any
// non-negative number the caller chooses); `owner` is -1 for a free GPU.
// The model keeps a pointer to the topology, which must outlive it.
struct reference_model {
    enum class health { up, drain, down };
    const topology* topo;
    std::vector<std::vector<std::int64_t>> owner;  // node -> GPU -> job key, -1 free
    std::vector<health> node_health;
    std::map<std::int64_t, bool> exclusive_jobs;   // live job key -> exclusive
    mutable std::vector<bool> closed;
    mutable bool closed_valid = false;

    explicit reference_model(const topology& t) : topo(&t) {
        for (const auto& n : t.nodes()) owner.emplace_back(n.gpus, -1);
        node_health.assign(t.node_count(), health::up);
    }

    // Recomputed from the owners after every change, by brute force.
    bool domain_closed(domain_id d) const {
        if (!closed_valid) {
            closed.assign(topo->domain_count(), false);
            for (domain_id x = 0; x < topo->domain_count(); ++x) {
                const auto& info = topo->domain(x);
                for (node_id n = info.first_node; n < info.end_node(); ++n)
                    for (auto o : owner[n])
                        if (o >= 0 && exclusive_jobs.at(o)) closed[x] = true;
            }
            closed_valid = true;
        }
        return closed[d];
    }
    bool domain_idle(domain_id d) const {
        const auto& info = topo->domain(d);
        bool any_up = false;
        for (node_id n = info.first_node; n < info.end_node(); ++n) {
            any_up = any_up || node_health[n] == health::up;
            for (auto o : owner[n])
                if (o >= 0) return false;
        }
        return any_up;
    }
    bool usable(node_id n) const { return node_health[n] == health::up && !domain_closed(topo->node(n).domain); }
    std::uint64_t usable_mask(node_id n) const {
        if (!usable(n)) return 0;
        return unheld_mask(n);
    }
    std::uint64_t unheld_mask(node_id n) const {
        std::uint64_t m = 0;
        for (std::uint32_t g = 0; g < owner[n].size(); ++g)
            if (owner[n][g] < 0) m |= std::uint64_t{1} << g;
        return m;
    }
    bool wholly_usable(node_id n) const {
        return usable(n) && unheld_mask(n) == (owner[n].size() == 64 ? ~0ULL : ((1ULL << owner[n].size()) - 1));
    }
    // usable_mask of each node of domain d, deciding once whether it is closed.
    std::vector<std::uint64_t> usable_masks(domain_id d) const {
        const auto& info = topo->domain(d);
        const bool closed = domain_closed(d);
        std::vector<std::uint64_t> masks;
        for (node_id n = info.first_node; n < info.end_node(); ++n)
            masks.push_back(!closed && node_health[n] == health::up ? unheld_mask(n) : 0);
        return masks;
    }
    std::uint64_t domain_free_gpus(domain_id d) const {
        std::uint64_t f = 0;
        for (auto mask : usable_masks(d)) f += static_cast<std::uint64_t>(std::popcount(mask));
        return f;
    }
    std::uint64_t domain_free_nodes(domain_id d) const {
        std::uint64_t f = 0;
        const auto& info = topo->domain(d);
        const auto masks = usable_masks(d);
        for (std::size_t i = 0; i < masks.size(); ++i)
            f += masks[i] == (info.gpus_per_node >= 64 ? ~0ULL : ((1ULL << info.gpus_per_node) - 1)) ? 1 : 0;
        return f;
    }
    std::uint64_t free_gpus() const {
        std::uint64_t f = 0;
        for (domain_id d = 0; d < topo->domain_count(); ++d) f += domain_free_gpus(d);
        return f;
    }
    std::uint64_t free_nodes() const {
        std::uint64_t f = 0;
        for (domain_id d = 0; d < topo->domain_count(); ++d) f += domain_free_nodes(d);
        return f;
    }

    // Returns an empty string, or why the pieces cannot be taken by a new job.
    std::string apply(std::int64_t key, const std::vector<std::pair<node_id, std::uint64_t>>& pieces, bool exclusive,
                      bool allow_draining) {
        for (const auto& [n, mask] : pieces) {
            if (n >= topo->node_count()) return "node out of range";
            if (node_health[n] == health::down) return "placed on a down node";
            if (node_health[n] == health::drain && !allow_draining) return "placed on a draining node";
            if (domain_closed(topo->node(n).domain)) return "placed in an exclusive domain";
            for (std::uint32_t g = 0; g < 64; ++g)
                if ((mask >> g) & 1U) {
                    if (g >= owner[n].size()) return "GPU beyond the node";
                    if (owner[n][g] >= 0) return "GPU held twice";
                }
        }
        for (const auto& [n, mask] : pieces)
            for (std::uint32_t g = 0; g < owner[n].size(); ++g)
                if ((mask >> g) & 1U) owner[n][g] = key;
        exclusive_jobs[key] = exclusive;
        closed_valid = false;
        return {};
    }
    void release(std::int64_t key) {
        for (auto& node : owner)
            for (auto& o : node)
                if (o == key) o = -1;
        exclusive_jobs.erase(key);
        closed_valid = false;
    }
};

}  // namespace topoblock::testing
