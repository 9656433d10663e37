// Fuzz target: `kubectl get nodes --show-labels` listings (io/k8s_nodes.hpp).
// A listing is read or refused with an error; what is read is a topology an
// allocator accepts, with one health per node, and the nodes marked down or
// draining take those states.

#include "fuzz_support.hpp"
#include "k8s_cluster_checks.hpp"

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
    fuzz::check_k8s_cluster(cluster);
    return 0;
}
