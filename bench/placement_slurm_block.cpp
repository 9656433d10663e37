// The placement kernels of bench/placement.hpp for slurm-block, in
// a file of their own (placement.hpp says why), and one-node jobs under
// each Slurm version (26.05's first-free-node fast path, 25.11's block
// rules).

#include "placement.hpp"

#include <string>
#include <vector>

namespace {

using namespace topoblock;
using namespace topoblock::bench;

// nodes=1, placed and released, on the 90%-occupied cluster.
void one_node(benchmark::State& st, std::uint32_t racks, slurm_version version) {
    slurm_block policy;
    policy.set_version(version);
    auto f = make_fixture<slurm_block>(racks, occupancy, policy);
    const std::vector<request> requests{request::nodes(1)};
    place_and_release(st, f.alloc, requests);
}

bool register_one_node() {
    for (const slurm_version v : {slurm_version::v25_11, slurm_version::v26_05})
        for (std::uint32_t racks : {125U, 2000U})
            benchmark::RegisterBenchmark(("one_node/slurm-block-" + std::string(to_string(v)) + "/" + std::to_string(racks)).c_str(),
                                         one_node, racks, v);
    return true;
}

const bool placement_slurm_block_registered = register_policy("slurm-block", slurm_block{}) && register_one_node();

}  // namespace
