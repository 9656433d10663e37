#pragma once

#include <topoblock/policy/detail/request_units.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

// Jobs placed as whole NVLink domains, shared by the block policies: the
// aggregated blocks of Slurm's topology/block (BlockSizes), 2^k consecutive
// base blocks, with a domain standing for a base block.
namespace topoblock::detail {

// Up, wholly free and open to this request (idle for an exclusive one): a
// domain a job may take whole. Empty domains never are.
template <class State>
bool wholly_free(const request_units<State>& units, domain_id d) noexcept {
    const domain_info& info = units.state.topo().domain(d);
    return info.node_count != 0 && units.state.domain(d).free_nodes == info.node_count && units.allowed(d);
}

// Chooses wholly free domains that together hold `size` units. Rule: the
// smallest aligned window of 2^k consecutive domains (k = 0, 1, 2, ...; a
// window starts at a multiple of its size, and the last one spans the whole
// cluster) whose wholly free domains hold the job; among windows of that
// size, first those inside one group of the nearest level, then the one with
// the least wholly free capacity (best fit), then the lowest. The chosen
// domains are that window's wholly free domains in index order until `size`
// is covered, so `chosen` is ascending. Returns false when no window holds
// the job. Cost: O(domains x log domains); a lookup for a job one domain
// holds on a cluster of like domains.
template <class State>
bool pick_whole_domains(const request_units<State>& units, std::uint64_t size, std::vector<domain_id>& chosen) {
    const topology& topo = units.state.topo();
    const std::uint32_t domains = topo.domain_count();
    const group_level* level = topo.levels().empty() ? nullptr : &topo.levels().front();
    chosen.clear();
    // A job one domain holds, when every domain has the same nodes: any
    // window that holds it contains a wholly free domain that holds it alone,
    // so the rule ends at windows of one domain with the lowest wholly free
    // one. The state files open domains by free nodes, a wholly free domain
    // under its node count (and wholly free is idle), so no scan is needed:
    // this keeps 65-72 GPU buddy jobs and refusals off an O(domains) path.
    const std::uint32_t nodes = topo.max_domain_nodes();
    if (units.indexed && nodes != 0 && topo.uniform_gpus_per_node() != 0 &&
        topo.node_count() == std::uint64_t{domains} * nodes && size <= units.capacity_of(0)) {
        const std::uint32_t d = units.state.domains_by_free_nodes().first_in(nodes, 0);
        if (d == npos32) return false;
        chosen.push_back(d);
        return true;
    }
    for (std::uint64_t p = 1;; p *= 2) {
        std::uint64_t best_start = npos32, best_free = 0;
        bool best_one_group = false;
        for (std::uint64_t start = 0; start < domains; start += p) {
            const std::uint64_t end = start + p < domains ? start + p : domains;
            std::uint64_t free = 0;
            bool one_group = true;
            for (std::uint64_t d = start; d < end; ++d) {
                if (wholly_free(units, static_cast<domain_id>(d))) free += units.capacity_of(static_cast<domain_id>(d));
                if (level != nullptr && level->group_of_domain[d] != level->group_of_domain[start]) one_group = false;
            }
            if (free < size) continue;
            const bool better = best_start == npos32 || (one_group && !best_one_group) ||
                                (one_group == best_one_group && free < best_free);
            if (better) {
                best_start = start;
                best_free = free;
                best_one_group = one_group;
            }
        }
        if (best_start != npos32) {
            std::uint64_t covered = 0;
            for (std::uint64_t d = best_start; covered < size; ++d) {
                const auto id = static_cast<domain_id>(d);
                if (!wholly_free(units, id)) continue;
                chosen.push_back(id);
                covered += units.capacity_of(id);
            }
            return true;
        }
        if (p >= domains) return false;
    }
}

// Adds every node of domain `d`, whole, to the placement.
template <class State>
void take_whole_domain(const State& state, domain_id d, placement& out) {
    const domain_info& info = state.topo().domain(d);
    for (node_id n = info.first_node; n < info.end_node(); ++n) out.add(n, state.usable_gpus(n));
}

// The placement already holds a node of the domain (an earlier segment).
inline bool touches_domain(const placement& out, const domain_info& info) noexcept {
    for (const auto& p : out.pieces())
        if (p.node >= info.first_node && p.node < info.end_node()) return true;
    return false;
}

}  // namespace topoblock::detail
