#pragma once

// What every Kubernetes node listing that is read must be, whichever form it
// came in (labels or JSON): an error with a message, or a topology whose
// domains add up to the cluster, with one health per node, that an
// allocator accepts with those healths.

#include "fuzz_support.hpp"

#include <topoblock/io/k8s_nodes.hpp>
#include <topoblock/topoblock.hpp>

#include <cstdint>

namespace topoblock::fuzz {

inline void check_k8s_cluster(const expected<io::k8s_cluster, error>& cluster) {
    if (!cluster) {
        require(!cluster.error().message.empty(), "an error without a message");
        return;
    }
    const topology& topo = cluster->topo;
    require(cluster->health.size() == topo.node_count(), "one health per node");
    std::uint64_t nodes = 0, gpus = 0;
    for (const auto& d : topo.domains()) {
        nodes += d.node_count;
        gpus += d.gpu_count();
    }
    require(nodes == topo.node_count() && gpus == topo.gpu_count(), "domains do not add up to the cluster");
    auto a = basic_allocator<first_fit, default_capacity>::create(topo);
    if (!a) return;  // beyond the compile-time capacity: refused, not wrong
    for (node_id n = 0; n < topo.node_count(); ++n) {
        require(topo.find_node(topo.node(n).name) == n, "a node cannot be found by its name");
        require(static_cast<bool>(a->set_health(n, cluster->health[n])), "a listed node's health is refused");
    }
    require(a->state().verify().empty(), "the state is inconsistent after the listing's health");
}

}  // namespace topoblock::fuzz
