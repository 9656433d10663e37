// Two placement policies compared on one workload with the simulator
// library: the code docs/simulate.md shows.

#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/report.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/topoblock.hpp>

#include <cstdio>
#include <vector>

int main() {
    const auto topo = topoblock::gb200_nvl72(16);
    const auto jobs = topoblock::sim::generate(topoblock::sim::helios_mix(), {.jobs = 5000, .cluster_gpus = topo.gpu_count()});
    std::vector<topoblock::sim::policy_result> results;
    results.push_back(topoblock::sim::simulate(*topoblock::allocator<topoblock::best_fit>::create(topo), jobs));
    results.push_back(topoblock::sim::simulate(*topoblock::allocator<topoblock::first_fit>::create(topo), jobs, {},
                                               topoblock::sim::fifo{}));
    std::fputs(topoblock::sim::format_table(results).c_str(), stdout);
    return results[0].totals.conserved && results[1].totals.conserved ? 0 : 1;
}
