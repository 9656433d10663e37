// Fuzz target: `kubectl get nodes --show-labels` listings (io/k8s_nodes.hpp).
// A listing is read or refused with an error; what is read is a topology an
// allocator accepts, with one health per node, and the nodes marked down or
// draining take those states.

#include "fuzz_support.hpp"

#include <topoblock/io/k8s_nodes.hpp>
#include <topoblock/topoblock.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    if (size == 0) return 0;
    // The first byte: GPUs of a labelled node without nvidia.com/gpu.count.
    const std::uint32_t default_gpus = data[0] % 9;
    auto cluster = io::read_k8s_nodes(fuzz::as_text(data + 1, size - 1), default_gpus == 0 ? 4 : default_gpus);
    if (!cluster) {
        fuzz::require(!cluster.error().message.empty(), "an error without a message");
        return 0;
    }
    const topology& topo = cluster->topo;
    fuzz::require(cluster->health.size() == topo.node_count(), "one health per node");
    std::uint64_t nodes = 0, gpus = 0;
    for (const auto& d : topo.domains()) {
        nodes += d.node_count;
        gpus += d.gpu_count();
    }
    fuzz::require(nodes == topo.node_count() && gpus == topo.gpu_count(), "domains do not add up to the cluster");
    auto a = basic_allocator<first_fit, default_capacity>::create(topo);
    if (!a) return 0;  // beyond the compile-time capacity: refused, not wrong
    for (node_id n = 0; n < topo.node_count(); ++n) {
        fuzz::require(topo.find_node(topo.node(n).name) == n, "a node cannot be found by its name");
        fuzz::require(static_cast<bool>(a->set_health(n, cluster->health[n])), "a listed node's health is refused");
    }
    fuzz::require(a->state().verify().empty(), "the state is inconsistent after the listing's health");
    return 0;
}
