// Fuzz target: Slurm topology.conf (io/topology_conf.hpp). A file is read or
// refused with an error; what is read passed validate_topology, and written
// back (node lists sorted as the writer's hostlists sort them) it reads back
// the same.

#include "fuzz_support.hpp"

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_topology.hpp>
#include <topoblock/io/topology_conf.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    auto topo = io::parse_topology_conf(fuzz::as_text(data, size), {fuzz::hostlist_names, fuzz::hostlist_bytes});
    if (!topo) {
        fuzz::require(!topo.error().message.empty(), "an error without a message");
        return 0;
    }
    fuzz::require(static_cast<bool>(io::validate_topology(*topo)), "a topology read does not validate");
    io::slurm_topology sorted = *topo;
    for (auto& b : sorted.blocks) b.nodes = io::sort_hostnames(b.nodes);
    for (auto& s : sorted.switches) s.nodes = io::sort_hostnames(s.nodes);
    if (!io::validate_topology(sorted)) return 0;  // sorting can only reorder; a refusal here is not the reader's
    const std::string written = io::write_topology_conf(sorted);
    auto again = io::parse_topology_conf(written);
    fuzz::require(static_cast<bool>(again), "written topology.conf does not read back:\n" + written);
    fuzz::require(*again == sorted, "written topology.conf reads back different:\n" + written);
    return 0;
}
