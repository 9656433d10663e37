// A placement policy of one's own (custom_policy.hpp), run through the
// conformance harness, placed with, and compared with best-fit in the
// simulator: the walk-through docs/custom-policy.md gives.

#include "custom_policy.hpp"

#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/report.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/testing/conformance.hpp>
#include <topoblock/topoblock.hpp>

#include <cstdio>
#include <vector>

int main() {
    using namespace topoblock;

    // 1. The harness, on racks of three sizes and on racks beside HGX servers.
    topology_builder partial;
    partial.add_numbered_domain("rack1", 16, 4, "a", 1, 2);
    partial.add_numbered_domain("rack2", 18, 4, "b", 1, 2);
    partial.add_numbered_domain("rack3", 17, 4, "c", 1, 2);
    const std::vector<topology> clusters{gb200_nvl72(4, 2), *partial.build(), *parse_topology_spec("nvl72:2+hgx8:6")};
    for (const topology& topo : clusters) {
        const testing::conformance_report report = testing::check_policy(topo, pack_fullest{});
        std::printf("conformance on %u domains: %s (%llu operations, %llu placed, %llu refused)\n", topo.domain_count(),
                    report.ok ? "passed" : report.first_failure.c_str(),
                    static_cast<unsigned long long>(report.operations), static_cast<unsigned long long>(report.placed),
                    static_cast<unsigned long long>(report.refused));
        if (!report) return 1;
    }

    // 2. The allocator: a 16-GPU job goes to the fuller of two racks.
    auto cluster = allocator<pack_fullest>::create(gb200_nvl72(2));
    if (!cluster) return 1;
    const auto small = cluster->try_allocate(request::gpus(8));
    const auto job = cluster->try_allocate(request::gpus(16));
    if (!small || !job) return 1;
    const node_id first = cluster->find(*job)->pieces.front().node;
    std::printf("16 GPUs placed from %s, in %s\n", cluster->topo().node(first).name.c_str(),
                cluster->topo().domain(cluster->topo().node(first).domain).name.c_str());

    // 3. The simulator: the same workload under pack-fullest and best-fit.
    const topology racks = gb200_nvl72(8);
    const auto jobs = sim::generate(sim::helios_mix(), {.jobs = 2000, .cluster_gpus = racks.gpu_count()});
    std::vector<sim::policy_result> results;
    results.push_back(sim::simulate(*allocator<pack_fullest>::create(racks), jobs));
    results.push_back(sim::simulate(*allocator<best_fit>::create(racks), jobs));
    std::fputs(sim::format_table(results).c_str(), stdout);
    return results[0].totals.conserved && results[1].totals.conserved ? 0 : 1;
}
