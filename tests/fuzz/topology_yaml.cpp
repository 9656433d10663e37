// Fuzz target: Slurm topology.yaml (io/topology_yaml.hpp). A file is read or
// refused with an error; what is read passed validate_topology_set, and
// written back (node lists sorted as the writer's hostlists sort them) it
// reads back the same.

#include "fuzz_support.hpp"

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_topology.hpp>
#include <topoblock/io/topology_yaml.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    auto set = io::parse_topology_yaml(fuzz::as_text(data, size), {fuzz::hostlist_names, fuzz::hostlist_bytes});
    if (!set) {
        fuzz::require(!set.error().message.empty(), "an error without a message");
        return 0;
    }
    fuzz::require(static_cast<bool>(io::validate_topology_set(*set)), "a topology set read does not validate");
    fuzz::require(set->default_index < set->topologies.size(), "the default names no topology");
    io::slurm_topology_set sorted = *set;
    for (auto& t : sorted.topologies) {
        for (auto& b : t.blocks) b.nodes = io::sort_hostnames(b.nodes);
        for (auto& s : t.switches) s.nodes = io::sort_hostnames(s.nodes);
    }
    if (!io::validate_topology_set(sorted)) return 0;  // sorting only reorders; a refusal here is not the reader's
    const std::string written = io::write_topology_yaml(sorted);
    auto again = io::parse_topology_yaml(written);
    fuzz::require(static_cast<bool>(again), "written topology.yaml does not read back:\n" + written);
    fuzz::require(again->topologies == sorted.topologies && again->default_index == sorted.default_index,
                  "written topology.yaml reads back different:\n" + written);
    return 0;
}
