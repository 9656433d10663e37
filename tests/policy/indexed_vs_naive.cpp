// The indexed paths of a policy must decide exactly as its naive version,
// which scans every domain: two allocators run the same random operations in
// lockstep and must agree on every outcome and every piece.

#include "../reference_model.hpp"
#include "reference/best_fit.hpp"
#include "reference/buddy_split.hpp"
#include "reference/contiguous_block.hpp"
#include "reference/fragmentation_aware.hpp"
#include "reference/slurm_block.hpp"
#include "../walk_share.hpp"

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_cluster.hpp>
#include <topoblock/io/topology_conf.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/fragmentation_aware.hpp>
#include <topoblock/policy/slurm_block.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace test_policy_indexed_vs_naive {

using namespace topoblock;
using topoblock::test::rng;

namespace {

// Requests as a Slurm block cluster sees them, weighted towards what
// slurm-block answers from its summaries: 1-node GPU jobs of every size up
// to a node, whole-node jobs from one node to several base blocks (and past
// the largest level now and then), GPU jobs of whole nodes; a few exclusive
// or segmented ones, which slurm-block scans for.
request slurm_request(rng& r, const topology& t) {
    const std::uint32_t g = t.max_gpus_per_node(), s = t.max_domain_nodes();
    const std::uint32_t kind = r.between(1, 100);
    request q = kind <= 40   ? request::gpus(r.between(1, g))
                : kind <= 65 ? request::nodes(r.between(1, s))
                : kind <= 80 ? request::gpus(r.between(g + 1, s * g))
                : kind <= 95 ? request::nodes(r.between(s + 1, s * 8))
                             : request::nodes(r.between(s * 8, s * 20));
    q.whole_nodes = q.what == unit::gpus && r.chance(10);
    q.exclusive_domain = r.chance(2);
    if (r.chance(3)) q = q.with_segment(std::max<std::uint32_t>(1, q.count / r.between(1, 4)), r.chance(50));
    return q;
}

// Half of them jobs of two to eight whole domains' worth of GPUs, for the
// whole-domain windows of the block policies.
request multi_domain_request(rng& r, const topology& t) {
    if (r.chance(50)) return test::mixed_request(r, t);
    return request::gpus(r.between(t.max_domain_gpus() + 1, t.max_domain_gpus() * 8));
}

using request_maker = request (*)(rng&, const topology&);

// `allocations`: the percentage of operations that allocate (releases take
// the rest but 5%, health changes); below 60 the cluster often drains, so
// whole domains come free. `check_every`: operations between comparisons of
// the indexed side's summaries with a recount. Unoptimised builds walk
// test::walk_share of the operations.
// Returns the jobs placed; lockstep() also checks that enough were.
template <class Fast, class Reference>
std::size_t run_lockstep(const topology& topo, Fast indexed, Reference naive, std::uint64_t seed, std::size_t operations,
                         std::uint32_t allocations = 60, request_maker make = test::mixed_request,
                         std::size_t check_every = 4096) {
    CAPTURE(seed);
    operations /= test::walk_share;
    // Comparing a policy with itself would prove nothing.
    REQUIRE(std::string_view(naive.name()).ends_with("-reference"));
    REQUIRE_FALSE(std::string_view(indexed.name()).ends_with("-reference"));
    auto fast = std::move(*allocator<Fast>::create(topo, indexed));
    auto slow = std::move(*allocator<Reference>::create(topo, naive));
    rng r(seed);
    std::vector<std::pair<allocation_id, allocation_id>> live;
    std::size_t placed = 0;
    for (std::size_t op = 0; op < operations; ++op) {
        CAPTURE(op);
        const std::uint32_t kind = r.between(1, 100);
        if (kind <= allocations) {
            const request q = make(r, topo);
            auto a = fast.try_allocate(q);
            auto b = slow.try_allocate(q);
            REQUIRE(a.has_value() == b.has_value());
            if (a) {
                ++placed;
                REQUIRE(fast.find(*a)->pieces == slow.find(*b)->pieces);
                live.emplace_back(*a, *b);
            } else {
                REQUIRE(a.error() == b.error());
            }
        } else if (kind <= 95) {
            if (live.empty()) continue;
            const std::size_t i = r.between(0, static_cast<std::uint32_t>(live.size() - 1));
            REQUIRE(fast.release(live[i].first));
            REQUIRE(slow.release(live[i].second));
            live[i] = live.back();
            live.pop_back();
        } else {
            const node_id n = r.between(0, topo.node_count() - 1);
            const auto h = static_cast<node_health>(r.chance(60) ? 0 : r.between(1, 2));
            REQUIRE(fast.set_health(n, h));
            REQUIRE(slow.set_health(n, h));
        }
        // The indexed side's own summaries must also match the state.
        if (op % check_every == 0) {
            REQUIRE(testing::check_indexes(fast.policy(), fast.state()) == "");
            if constexpr (std::is_same_v<Fast, buddy_split>)
                REQUIRE(test::naive_buddy::levels_differ(fast.policy(), fast.state()) == "");
            if constexpr (std::is_same_v<Fast, fragmentation_aware>) REQUIRE(fast.policy().mix().check() == "");
        }
    }
    return placed;
}

template <class Fast, class Reference>
void lockstep(const topology& topo, Fast indexed, Reference naive, std::uint64_t seed, std::size_t operations,
              std::uint32_t allocations = 60, request_maker make = test::mixed_request, std::size_t check_every = 4096) {
    const std::size_t placed = run_lockstep(topo, indexed, naive, seed, operations, allocations, make, check_every);
    CHECK(placed > operations / test::walk_share * allocations / 300);
}

topology partial_racks_in_leaves() {
    topology_builder b;
    for (std::uint32_t rack = 1; rack <= 6; ++rack)
        b.add_numbered_domain("rack" + std::to_string(rack), 18 - rack % 3, 4, "r" + std::to_string(rack) + "n", 1, 2);
    b.add_level("leaf", {{"leaf1", {"rack1", "rack2", "rack3"}}, {"leaf2", {"rack4", "rack5", "rack6"}}});
    return *b.build();
}

// An empty domain and a stub of two trays ahead of partial racks: the first
// domains are smaller than a sub-block, and an empty one declares wider nodes.
topology racks_after_stubs() {
    topology_builder b;
    b.add_domain("empty", 8, {});
    b.add_numbered_domain("stub", 2, 4, "s", 1, 1);
    for (std::uint32_t rack = 1; rack <= 4; ++rack)
        b.add_numbered_domain("rack" + std::to_string(rack), 19 - rack, 4, "r" + std::to_string(rack) + "n", 1, 2);
    return *b.build();
}

// A random cluster: 1-12 domains of 0-40 nodes of 1, 2, 3, 4, 6 or 8 GPUs,
// alike or mixed, often behind a stub of 0-2 nodes (a first domain smaller
// than a sub-block, or empty and declaring other GPUs per node), with up to
// two group levels.
topology random_topology(rng& r) {
    const std::uint32_t per_node[] = {4, 4, 8, 8, 2, 1, 3, 6};
    for (;;) {
        topology_builder b;
        std::vector<std::string> names;
        const auto add = [&](std::uint32_t nodes, std::uint32_t gpus) {
            names.push_back("d" + std::to_string(names.size()));
            b.add_numbered_domain(names.back(), nodes, gpus, names.back() + "n", 1, 2);
        };
        if (r.chance(40)) add(r.between(0, 2), per_node[r.between(0, 7)]);
        const bool like_gpus = r.chance(60), like_nodes = r.chance(50);
        const std::uint32_t g = per_node[r.between(0, 7)], n = r.between(1, 40);
        for (std::uint32_t d = r.between(1, 12); d > 0; --d)
            add(like_nodes ? n : r.chance(15) ? 0 : r.between(1, 40), like_gpus ? g : per_node[r.between(0, 7)]);
        std::size_t per_group = 1;
        for (std::uint32_t level = r.between(0, 2); level > 0; --level) {
            per_group *= r.between(2, 4);
            std::vector<topology_builder::group_spec> groups;
            for (std::size_t d = 0; d < names.size(); ++d) {
                if (d % per_group == 0) groups.push_back({"l" + std::to_string(level) + "g" + std::to_string(d), {}});
                groups.back().domains.push_back(names[d]);
            }
            b.add_level("level" + std::to_string(level), std::move(groups));
        }
        if (auto t = b.build()) return std::move(*t);  // else every domain was empty: draw again
    }
}

// Random slurm-block settings: the default levels or a base size and some
// BlockSizes, every domain a base block or only the first ones, either version.
slurm_block random_slurm_block(rng& r, const topology& topo) {
    const std::uint32_t base = r.chance(50) ? 0 : r.between(1, 20);
    std::vector<std::uint32_t> sizes;
    for (std::uint32_t k = 0; base != 0 && k < 5; ++k)
        if (r.chance(50)) sizes.push_back(base << k);
    slurm_block p(base, sizes, r.chance(70) ? npos32 : r.between(0, topo.domain_count()));
    p.set_version(r.chance(50) ? slurm_version::v25_11 : slurm_version::v26_05);
    return p;
}

// A Slurm block topology: five base blocks of 8 four-GPU nodes, one of them
// empty, aggregated in 8, 16 and 32 nodes, and three nodes outside every
// block (used only when no block node can serve).
io::slurm_cluster slurm_style() {
    auto st = io::parse_topology_conf(
        "BlockName=b1 Nodes=n[01-08]\nBlockName=b2 Nodes=n[09-16]\nBlockName=gap\n"
        "BlockName=b3 Nodes=n[17-24]\nBlockName=b4 Nodes=n[25-32]\nBlockSizes=8,16,32\n");
    REQUIRE_MESSAGE(st.has_value(), st.error().to_string());
    const std::vector<std::string> order = io::expand_hostlist("n[01-35]").value();
    auto c = io::make_slurm_cluster(*st, 4, order);
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    return std::move(*c);
}

// A topology.conf cluster with sparse BlockSizes (levels 0, 2, 4 and 6):
// 288 base blocks of four 4-GPU nodes, so that level 2 has 72 groups (more
// than slurm-block scans) and level 6 five; two empty blocks and three nodes
// outside every block.
io::slurm_cluster sparse_block_sizes() {
    std::string conf;
    for (std::uint32_t b = 0; b < 288; ++b) {
        conf += "BlockName=b" + std::to_string(b) + " Nodes=n[" + std::to_string(b * 4 + 1000) + "-" +
                std::to_string(b * 4 + 1003) + "]\n";
        if (b == 100 || b == 200) conf += "BlockName=empty" + std::to_string(b) + "\n";
    }
    conf += "BlockSizes=4,16,64,256\n";
    auto st = io::parse_topology_conf(conf);
    REQUIRE_MESSAGE(st.has_value(), st.error().to_string());
    const std::vector<std::string> order = io::expand_hostlist("n[1000-2154]").value();
    auto c = io::make_slurm_cluster(*st, 4, order);
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    return std::move(*c);
}

}  // namespace

// 3 topologies x 40,000 operations: over 100,000 compared decisions.
TEST_CASE("best-fit: indexed and its reference decide identically") {
    lockstep(*parse_topology_spec("nvl72:8"), best_fit{}, test::best_fit_reference{}, 21, 40'000);
    lockstep(partial_racks_in_leaves(), best_fit{}, test::best_fit_reference{}, 22, 40'000);
    lockstep(*parse_topology_spec("nvl72:3+hgx8:8"), best_fit{}, test::best_fit_reference{}, 23, 40'000);
    // 37 groups of three racks (the last of one): multi-domain jobs look for
    // the tightest group through the state's group maxima, the naive side
    // by a pass over every group.
    lockstep(*parse_topology_spec("nvl72:109@3"), best_fit{}, test::best_fit_reference{}, 24, 8'000, 50,
             multi_domain_request, 500);
}

// Learned mixes (each side learns the same jobs) and a given one; the
// domain choice is compared over random operations, multi-domain and other
// jobs go to best-fit on both sides.
TEST_CASE("frag-aware: indexed and its reference decide identically") {
    lockstep(*parse_topology_spec("nvl72:8"), fragmentation_aware{}, test::fragmentation_aware_reference{}, 41, 30'000);
    lockstep(partial_racks_in_leaves(), fragmentation_aware{}, test::fragmentation_aware_reference{}, 42, 30'000);
    lockstep(*parse_topology_spec("nvl72:3+hgx8:8"), fragmentation_aware{}, test::fragmentation_aware_reference{}, 43,
             30'000);
    const std::vector<size_share> mix{{1, 5.0}, {4, 1.0}, {8, 2.0}, {16, 1.0}, {36, 0.5}, {64, 0.5}};
    lockstep(*parse_topology_spec("nvl72:8"), fragmentation_aware(mix), test::fragmentation_aware_reference(mix), 44,
             30'000);
}

// Four racks with more releases than allocations as well as eight busy
// ones: whole racks come free, the lowest ones too, for jobs that take a
// whole domain.

// 2 block sizes x 6 topologies x 15,000 operations, a 100-rack and a
// 300-rack run. Twenty-four racks in groups of four, mostly released, give
// the kept whole-domain windows (multi-domain jobs) windows of every size,
// inside groups and across them.
TEST_CASE("contiguous-block: decides as its reference") {
    std::uint64_t seed = 31;
    for (std::uint32_t block : {8U, 16U}) {
        CAPTURE(block);
        const contiguous_block p(block);
        const test::contiguous_block_reference ref(block);
        lockstep(*parse_topology_spec("nvl72:8"), p, ref, seed++, 15'000);
        lockstep(*parse_topology_spec("nvl72:4"), p, ref, seed++, 15'000, 45);
        lockstep(*parse_topology_spec("nvl72:24@4"), p, ref, seed + 100, 15'000, 45);
        lockstep(partial_racks_in_leaves(), p, ref, seed++, 15'000);
        lockstep(*parse_topology_spec("nvl72:3+hgx8:8"), p, ref, seed++, 15'000);
        lockstep(racks_after_stubs(), p, ref, seed + 300, 15'000);
        // Enough racks that the run-length buckets span two words.
        lockstep(*parse_topology_spec("nvl72:100"), p, ref, seed + 200, 8'000);
    }
    // Enough racks that the whole-domain windows of two and four racks are
    // filed by word (more than 64 of them) and the larger ones scanned.
    lockstep(*parse_topology_spec("nvl72:300@8"), contiguous_block(8), test::contiguous_block_reference(8), 39, 6'000, 40,
             multi_domain_request, 500);
}

// 5 topologies x 30,000 operations and a 300-rack run.
TEST_CASE("buddy-split: decides as its reference") {
    lockstep(*parse_topology_spec("nvl72:8"), buddy_split{}, test::buddy_split_reference{}, 41, 30'000);
    lockstep(*parse_topology_spec("nvl72:4"), buddy_split{}, test::buddy_split_reference{}, 44, 30'000, 45);
    lockstep(*parse_topology_spec("nvl72:24@4"), buddy_split{}, test::buddy_split_reference{}, 45, 30'000, 45);
    lockstep(partial_racks_in_leaves(), buddy_split{}, test::buddy_split_reference{}, 42, 30'000);
    lockstep(*parse_topology_spec("nvl72:3+hgx8:8"), buddy_split{}, test::buddy_split_reference{}, 43, 30'000);
    // Filed and scanned window sizes, as for contiguous-block.
    lockstep(*parse_topology_spec("nvl72:300@8"), buddy_split{}, test::buddy_split_reference{}, 46, 6'000, 40,
             multi_domain_request, 500);
}

// slurm-block following Slurm version v.
static slurm_block at_version(slurm_block p, slurm_version v) {
    p.set_version(v);
    return p;
}

// 4 topologies x 30,000 operations of the mix every policy gets, under each
// Slurm version (one-node jobs take the first free node from 26.05).
TEST_CASE("slurm-block: indexed and its reference decide identically") {
    for (const slurm_version v : {slurm_version::v25_11, slurm_version::v26_05}) {
        CAPTURE(to_string(v));
        const slurm_block p = at_version(slurm_block{}, v);
        lockstep(*parse_topology_spec("nvl72:8"), p, test::slurm_block_reference{p}, 51, 30'000);
        lockstep(partial_racks_in_leaves(), p, test::slurm_block_reference{p}, 52, 30'000);
        lockstep(*parse_topology_spec("nvl72:3+hgx8:8"), p, test::slurm_block_reference{p}, 53, 30'000);
        const io::slurm_cluster c = slurm_style();
        const slurm_block q = at_version(slurm_block(c.settings), v);
        lockstep(c.topo, q, test::slurm_block_reference{q}, 54, 30'000);
    }
}

// The summaries slurm-block decides from: eight runs of 6,000-20,000 operations of
// Slurm-like requests, summaries recounted every 500. 300 racks make five
// words per bucket and more than 64 groups at levels 1 and 2; 80 racks with
// more releases than allocations free whole groups for multi-block jobs;
// 1,100 racks, more than 64 groups at levels 3 and 4 as well (groups are
// filed when a multi-block decision reads them, or when 64 blocks are
// marked; the recounts compare them after filing).
TEST_CASE("slurm-block: indexed and its reference decide identically on the flat paths") {
    for (const slurm_version v : {slurm_version::v25_11, slurm_version::v26_05}) {
        CAPTURE(to_string(v));
        const slurm_block p = at_version(slurm_block{}, v);
        const test::slurm_block_reference ref{p};
        lockstep(*parse_topology_spec("nvl72:300"), p, ref, 55, 20'000, 60, slurm_request, 500);
        lockstep(*parse_topology_spec("nvl72:80"), p, ref, 56, 20'000, 45, slurm_request, 500);
        lockstep(*parse_topology_spec("nvl72:1100"), p, ref, 60, 6'000, 45, slurm_request, 500);
        lockstep(*parse_topology_spec("nvl72:3+hgx8:8"), p, ref, 57, 20'000, 60, slurm_request, 500);
        // Racks of as many nodes, of 4 and of 8 GPUs: only the 8-GPU ones are
        // full blocks when wholly free, also when a multi-block job gives them
        // back.
        lockstep(*parse_topology_spec("grid:6:18:4+grid:6:18:8"), p, ref, 61, 10'000, 45, slurm_request, 500);
        const io::slurm_cluster c = slurm_style();
        const slurm_block q = at_version(slurm_block(c.settings), v);
        lockstep(c.topo, q, test::slurm_block_reference{q}, 58, 20'000, 50, slurm_request, 500);
        const io::slurm_cluster sparse = sparse_block_sizes();
        const slurm_block r = at_version(slurm_block(sparse.settings), v);
        REQUIRE(r.shape(sparse.topo).levels == 0b1010101U);
        lockstep(sparse.topo, r, test::slurm_block_reference{r}, 59, 20'000, 50, slurm_request, 500);
    }
}

// 60 random clusters (random_topology) with random policy settings, 3,000
// operations per policy: what the fixed topologies above do not reach.
TEST_CASE("on random clusters, every policy and its reference decide identically") {
    std::size_t placed = 0, runs = 0;
    const std::uint32_t block_sizes[] = {1, 2, 4, 8, 12, 16, 24, 32};
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
        rng r(seed * 7919);
        const topology topo = random_topology(r);
        const contiguous_block blocks(block_sizes[r.between(0, 7)]);
        const slurm_block slurm = random_slurm_block(r, topo);
        placed += run_lockstep(topo, best_fit{}, test::best_fit_reference{}, seed, 3'000);
        placed += run_lockstep(topo, fragmentation_aware{}, test::fragmentation_aware_reference{}, seed, 3'000);
        placed += run_lockstep(topo, buddy_split{}, test::buddy_split_reference{}, seed, 3'000);
        runs += 3;
        if (blocks.validate(topo).empty()) {
            placed += run_lockstep(topo, blocks, test::contiguous_block_reference(blocks.block_gpus()), seed, 3'000);
            ++runs;
        }
        if (slurm.validate(topo).empty()) {
            placed += run_lockstep(topo, slurm, test::slurm_block_reference{slurm}, seed, 3'000);
            ++runs;
        }
    }
    // Some clusters hold few of the requests (nodes of 3 GPUs have no
    // buddies), but together they place plenty.
    CHECK(runs >= 60 * 4);
    CHECK(placed > runs * 3'000 / test::walk_share / 10);
}

}  // namespace test_policy_indexed_vs_naive
