// Exhaustive small worlds: on tiny topologies, every sequence of operations
// from a fixed alphabet up to a fixed depth, for every built-in policy, each
// step checked against the reference model (tests/checked_world.hpp): owners,
// free masks and counters after every step, nothing changed by a failed call.
// The randomized walk (differential.cpp) goes deep on larger clusters; this
// leaves no short sequence out.

#include "../checked_world.hpp"

#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace test_allocator_exhaustive {

using namespace topoblock;
using topoblock::test::checked_world;

namespace {

// The requests of the alphabet: a few of each kind.
struct named_request {
    const char* name;
    request q;
};
const named_request alphabet_requests[] = {
    {"gpus=1", request::gpus(1)},
    {"gpus=3", request::gpus(3)},
    {"gpus=2 whole-nodes", request::gpus(2).with_whole_nodes()},
    {"gpus=4 locality=any", request::gpus(4).with_locality(locality::any)},
    {"nodes=1", request::nodes(1)},
    {"nodes=3 locality=prefer", request::nodes(3).with_locality(locality::prefer)},
    {"nodes=2 segment=1 spread", request::nodes(2).with_segment(1, true)},
    {"gpus=2 exclusive", request::gpus(2).with_exclusive_domain()},
};

// Never issued: ids count up from 1.
constexpr allocation_id never_issued{~std::uint64_t{0}};

// The depth of every sequence. The alphabet has 8 requests, a release of each
// live allocation, a release of an unknown id (and of the last released one
// once there is one), and node down / node up of each node: 19 to 26
// operations a step on these topologies.
constexpr int depth = 3;

struct tally {
    std::size_t sequences = 0;  // of the full depth
    std::size_t steps = 0;      // operations applied, prefixes shared
};

template <class Policy>
void explore(const checked_world<Policy>& world, int left, std::vector<std::string>& path, tally& count) {
    if (left == 0) {
        ++count.sequences;
        return;
    }
    const auto step = [&](const std::string& name, auto&& apply) {
        checked_world<Policy> next = world;
        path.push_back(name);
        ++count.steps;
        const std::string why = apply(next);
        if (!why.empty()) {
            std::string sequence;
            for (const auto& p : path) sequence += p + "; ";
            FAIL_CHECK(why << " after: " << sequence);
        } else {
            explore(next, left - 1, path, count);
        }
        path.pop_back();
    };
    for (const auto& r : alphabet_requests) step(r.name, [&](auto& w) { return w.allocate(r.q); });
    for (std::size_t i = 0; i < world.live_count(); ++i)
        step("release live #" + std::to_string(i), [&](auto& w) { return w.release_live(i); });
    step("release never-issued", [&](auto& w) { return w.release_unknown(never_issued); });
    if (!world.released().empty())
        step("release stale", [&](auto& w) { return w.release_unknown(world.released().back()); });
    const node_id nodes = world.allocator().topo().node_count();
    for (node_id n = 0; n < nodes; ++n) {
        step("down " + std::to_string(n), [&](auto& w) { return w.set_health(n, node_health::down); });
        step("up " + std::to_string(n), [&](auto& w) { return w.set_health(n, node_health::up); });
    }
}

// 2 domains x 3 nodes x 2 GPUs.
topology two_by_three() { return *parse_topology_spec("grid:2:3:2"); }
// 1 domain x 4 nodes x 1 GPU.
topology one_by_four() { return *parse_topology_spec("grid:1:4:1"); }
// Unequal domains: 2 nodes of 2 GPUs, and 1 node of 4.
topology unequal() { return *parse_topology_spec("grid:1:2:2+grid:1:1:4"); }

template <class Policy>
tally explore_all(const topology& topo, Policy policy) {
    const checked_world<Policy> world(topo, std::move(policy));
    REQUIRE(world.check().empty());
    std::vector<std::string> path;
    tally count;
    explore(world, depth, path, count);
    return count;
}

// contiguous-block with sub-blocks that fit these tiny domains (its default
// of 8 GPUs is larger than every one of them, which create() refuses):
// 2 GPUs (one node of 2, two of 1) and 4 (two nodes of 2).
struct contiguous_block_2 : contiguous_block {
    contiguous_block_2() : contiguous_block(2) {}
};
struct contiguous_block_4 : contiguous_block {
    contiguous_block_4() : contiguous_block(4) {}
};

}  // namespace

#define TOPOBLOCK_EXHAUSTIVE_POLICIES first_fit, best_fit, contiguous_block_2, contiguous_block_4, buddy_split, slurm_block

TEST_CASE_TEMPLATE("exhaustive: every short sequence on tiny topologies", Policy, TOPOBLOCK_EXHAUSTIVE_POLICIES) {
    std::size_t sequences = 0, steps = 0;
    for (const topology& topo : {two_by_three(), one_by_four(), unequal()}) {
        const tally t = explore_all(topo, Policy{});
        // The alphabet never shrinks below its requests, the unknown release
        // and a down and an up of each node.
        std::size_t at_least = 1;
        for (int i = 0; i < depth; ++i) at_least *= std::size(alphabet_requests) + 1 + 2 * topo.node_count();
        CHECK(t.sequences >= at_least);
        sequences += t.sequences;
        steps += t.steps;
    }
    MESSAGE(sequences << " sequences of " << depth << " operations, " << steps << " steps");
}

#undef TOPOBLOCK_EXHAUSTIVE_POLICIES

}  // namespace test_allocator_exhaustive
