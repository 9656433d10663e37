#pragma once

#include <topoblock/topology/topology.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

// The figures operators chart for a running cluster: how many jobs of each
// size could start now ("idle segments by segment size"), and how compactly
// the running jobs sit.
namespace topoblock {

// How many jobs of each size could start now, each inside one NVLink
// domain, were they placed one after another in the free capacity: per
// domain open to new jobs, its free GPUs divided by the size (rounded down),
// summed over the domains. A job of GPUs may take GPUs of several nodes of
// its domain; a job of whole nodes takes wholly free nodes.
struct allocatable_by_size {
    std::vector<std::uint64_t> gpus;   // [s - 1]: jobs of s GPUs, s = 1 .. the largest domain's GPUs
    std::vector<std::uint64_t> nodes;  // [k - 1]: jobs of k whole nodes, k = 1 .. the largest domain's nodes
};

// O(domains + largest domain's GPUs x distinct free counts): the domains
// are counted by their free GPUs (and free nodes) first, and each size
// visits only the counts some domain has (the simulator samples this on
// clusters whose one domain holds thousands of GPUs).
template <class State>
allocatable_by_size allocatable_of(const State& state) {
    const topology& topo = state.topo();
    std::vector<std::uint64_t> by_free_gpus(std::size_t{topo.max_domain_gpus()} + 1, 0);
    std::vector<std::uint64_t> by_free_nodes(std::size_t{topo.max_domain_nodes()} + 1, 0);
    for (domain_id d = 0; d < topo.domain_count(); ++d) {
        if (!state.domain_open(d)) continue;
        ++by_free_gpus[state.domain(d).free_gpus];
        ++by_free_nodes[state.domain(d).free_nodes];
    }
    const auto jobs = [](const std::vector<std::uint64_t>& domains_with) {
        std::vector<std::size_t> present;  // free counts some domain has, ascending
        for (std::size_t free = 1; free < domains_with.size(); ++free)
            if (domains_with[free] != 0) present.push_back(free);
        std::vector<std::uint64_t> out(domains_with.size() - 1, 0);
        for (std::size_t size = 1; size < domains_with.size(); ++size)
            for (auto free = present.rbegin(); free != present.rend() && *free >= size; ++free)
                out[size - 1] += domains_with[*free] * (*free / size);
        return out;
    };
    return {jobs(by_free_gpus), jobs(by_free_nodes)};
}

// How compactly the running jobs sit: the domains where they hold GPUs,
// against the fewest domains that could hold their GPUs were they packed
// anew (the largest domains first; a bound no packing beats, as it counts
// GPUs, not jobs).
struct compaction {
    std::uint64_t held_gpus = 0;
    std::uint32_t occupied_domains = 0;  // domains with a GPU held (on any node)
    std::uint32_t fewest_domains = 0;    // the fewest domains whose GPUs add up to held_gpus
    // fewest_domains / occupied_domains: 1 when packed as tightly as the
    // GPUs allow; 1 when nothing runs.
    double ratio = 1.0;
};

// O(domains).
template <class State>
compaction compaction_of(const State& state) {
    const topology& topo = state.topo();
    compaction c;
    c.held_gpus = state.held_gpus();
    for (domain_id d = 0; d < topo.domain_count(); ++d) c.occupied_domains += state.domain(d).held_gpus != 0 ? 1U : 0U;
    c.fewest_domains = topo.fewest_domains_for(c.held_gpus, false);
    if (c.occupied_domains != 0) c.ratio = static_cast<double>(c.fewest_domains) / static_cast<double>(c.occupied_domains);
    return c;
}

}  // namespace topoblock
