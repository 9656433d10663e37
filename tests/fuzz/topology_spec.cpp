// Fuzz target: topology spec strings (topology/presets.hpp). A spec builds a
// topology or is refused with an error; a built topology's domains add up to
// it and every node is found by its name.
//
// Specs whose counts would build more than 2^16 nodes are skipped: they are
// legal (up to topology_builder::max_nodes) and only slow the search down.
// Counts too large for 32 bits are kept: refusing them is what is tested.

#include "fuzz_support.hpp"

#include <topoblock/topology/presets.hpp>

#include <cstddef>
#include <cstdint>

namespace {

// An upper bound on the nodes a spec asks for: per '+' part, the product of
// its numbers times 18 (the most nodes of a preset domain).
bool asks_for_many_nodes(std::string_view spec) {
    spec = spec.substr(0, spec.find('@'));
    std::uint64_t total = 0, product = 18;
    std::uint64_t number = 0;
    bool in_number = false, huge = false;
    for (std::size_t i = 0; i <= spec.size(); ++i) {
        const char c = i < spec.size() ? spec[i] : '+';
        if (c >= '0' && c <= '9') {
            number = number * 10 + static_cast<std::uint64_t>(c - '0');
            huge = huge || number > 0xFFFFFFFFULL;
            if (huge) number = 0xFFFFFFFFULL;
            in_number = true;
            continue;
        }
        if (in_number && !huge) product = product * number > (1ULL << 40) ? (1ULL << 40) : product * number;
        in_number = false;
        number = 0;
        huge = false;
        if (c == '+') {
            total += product;
            product = 18;
        }
        if (total > (1U << 16)) return true;
    }
    return total > (1U << 16);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    const std::string_view spec = fuzz::as_text(data, size);
    if (asks_for_many_nodes(spec)) return 0;
    auto topo = parse_topology_spec(spec);
    if (!topo) {
        fuzz::require(!topo.error().message.empty(), "an error without a message");
        return 0;
    }
    std::uint64_t nodes = 0, gpus = 0;
    for (const auto& d : topo->domains()) {
        nodes += d.node_count;
        gpus += d.gpu_count();
    }
    fuzz::require(nodes == topo->node_count() && gpus == topo->gpu_count(), "domains do not add up to the cluster");
    for (node_id n = 0; n < topo->node_count(); ++n)
        fuzz::require(topo->find_node(topo->node(n).name) == n, "a node cannot be found by its name");
    return 0;
}
