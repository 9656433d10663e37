#include <topoblock/allocator/allocator.hpp>
#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_cluster.hpp>
#include <topoblock/io/topology_conf.hpp>
#include <topoblock/policy/slurm_block.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace test_policy_slurm_block {

using namespace topoblock;

namespace {

using slurm_allocator = basic_allocator<slurm_block, default_capacity>;

slurm_allocator from_conf(std::string_view conf, std::vector<std::string> node_order = {},
                          slurm_version version = newest_slurm_version) {
    auto parsed = io::parse_topology_conf(conf);
    REQUIRE_MESSAGE(parsed.has_value(), parsed.error().to_string());
    auto cluster = io::make_slurm_cluster(*parsed, 4, node_order);
    REQUIRE_MESSAGE(cluster.has_value(), cluster.error().to_string());
    slurm_block policy(cluster->settings);
    policy.set_version(version);
    auto a = slurm_allocator::create(std::move(cluster->topo), std::move(policy));
    REQUIRE(a.has_value());
    return std::move(*a);
}

// The Slurm answer for a request: the compressed hostlist, or PENDING and why.
std::string place(slurm_allocator& a, const request& q, allocation_id* id = nullptr) {
    auto got = a.try_allocate(q);
    if (!got) return "PENDING " + std::string(to_string(got.error()));
    if (id != nullptr) *id = *got;
    std::vector<std::string> names;
    for (const auto& p : a.find(*got)->pieces) names.push_back(a.topo().node(p.node).name);
    return io::compress_hostlist(names);
}
std::string nodes(slurm_allocator& a, std::uint32_t n) { return place(a, request::nodes(n)); }

void set_down(slurm_allocator& a, std::string_view name) { REQUIRE(a.down(*a.topo().find_node(name))); }

constexpr std::string_view eight_nodes =
    "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n";
constexpr std::string_view four_racks =
    "BlockName=r1 Nodes=n[01-18]\nBlockName=r2 Nodes=n[19-36]\n"
    "BlockName=r3 Nodes=n[37-54]\nBlockName=r4 Nodes=n[55-72]\nBlockSizes=18\n";

}  // namespace

TEST_CASE("slurm-block: Slurm's examples on two blocks of four nodes") {
    SUBCASE("2, 3, 3 nodes: the later block on a tie, the block that holds the job, then a wait") {
        auto a = from_conf(eight_nodes);
        CHECK(nodes(a, 2) == "node[5-6]");
        CHECK(nodes(a, 3) == "node[1-3]");
        CHECK(nodes(a, 3) == "PENDING fragmented");
    }
    SUBCASE("3 then 5 nodes: the 8-node level, the fuller block first") {
        auto a = from_conf(eight_nodes);
        CHECK(nodes(a, 3) == "node[5-7]");
        CHECK(nodes(a, 5) == "node[1-4,8]");
    }
    SUBCASE("4 nodes in segments of 2") {
        auto a = from_conf(eight_nodes);
        CHECK(place(a, request::nodes(4).with_segment(2)) == "node[5-8]");
    }
    SUBCASE("5 nodes in segments of 2 is an invalid request") {
        auto a = from_conf(eight_nodes);
        CHECK(place(a, request::nodes(5).with_segment(2)) == "PENDING invalid_request");
    }
}

TEST_CASE("slurm-block: Slurm's example on four 18-node racks with BlockSizes=18") {
    auto a = from_conf(four_racks);
    CHECK(nodes(a, 4) == "n[55-58]");
    CHECK(nodes(a, 8) == "n[59-66]");
    CHECK(nodes(a, 18) == "n[37-54]");
    CHECK(nodes(a, 6) == "n[67-72]");
    CHECK(nodes(a, 12) == "n[19-30]");
    // 19 nodes: no enabled level holds them, so the whole cluster is the
    // group; the fuller rack first, then the tightest that holds the rest.
    CHECK(nodes(a, 19) == "n[01-18,31]");
}

TEST_CASE("slurm-block: a job that no group holds waits and is never promoted") {
    auto a = from_conf(eight_nodes);
    set_down(a, "node1");
    set_down(a, "node5");
    // 6 free nodes, 3 in each block: a 4-node job is a level-0 job.
    CHECK(nodes(a, 4) == "PENDING fragmented");
    CHECK(nodes(a, 6) == "node[2-4,6-8]");
}

TEST_CASE("slurm-block: a job may touch at most ceil(N / (2^LL * S)) level-LL blocks") {
    // Four blocks of 2 nodes, levels 0 and 2: a 3-node job uses level 2 (all
    // four blocks) but at most ceil(3 / 2) = 2 base blocks.
    for (const slurm_version v : {slurm_version::v25_11, slurm_version::v26_05}) {
        CAPTURE(to_string(v));
        auto a = from_conf(
            "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockName=b3 Nodes=n[5-6]\n"
            "BlockName=b4 Nodes=n[7-8]\nBlockSizes=2,8\n",
            {}, v);
        for (std::string_view n : {"n1", "n3", "n5"}) set_down(a, n);
        // Free: n2 | n4 | n6 | n7,n8: two base blocks hold at most 3.
        CHECK(nodes(a, 3) == "n[6-8]");
        // 25.11: n2 and n4 tie, the later block; 26.05: the first free node.
        CHECK(nodes(a, 1) == (v == slurm_version::v25_11 ? "n4" : "n2"));
    }
    auto b = from_conf(
        "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockName=b3 Nodes=n[5-6]\n"
        "BlockName=b4 Nodes=n[7-8]\nBlockSizes=2,8\n");
    for (std::string_view n : {"n1", "n3", "n5", "n7"}) set_down(b, n);
    // Four free nodes, one per block: two blocks hold only 2.
    CHECK(nodes(b, 3) == "PENDING fragmented");
    CHECK(nodes(b, 2) == "PENDING fragmented");  // a level-0 job: no base block has two
}

TEST_CASE("slurm-block: segments, spread segments and partial last groups") {
    SUBCASE("spread segments avoid base blocks the job already uses") {
        auto a = from_conf(eight_nodes);
        CHECK(place(a, request::nodes(4).with_segment(2, true)) == "node[1-2,5-6]");
        // Two blocks with two free nodes each cannot give three spread segments.
        CHECK(place(a, request::nodes(3).with_segment(1, true)) == "PENDING fragmented");
        CHECK(place(a, request::nodes(3).with_segment(1)) == "node[3,7-8]");
    }
    SUBCASE("each segment waits for a block of its own size") {
        auto a = from_conf(four_racks, {}, slurm_version::v25_11);
        CHECK(place(a, request::nodes(36).with_segment(18)) == "n[37-72]");
        CHECK(nodes(a, 1) == "n19");  // r1 and r2 tie: the later
        CHECK(place(a, request::nodes(36).with_segment(18)) == "PENDING insufficient_free");
        CHECK(place(a, request::nodes(34).with_segment(17)) == "n[01-17,20-36]");
    }
    SUBCASE("from 26.05 the one-node job takes the first free node, the segments the other racks' rest") {
        auto a = from_conf(four_racks, {}, slurm_version::v26_05);
        CHECK(place(a, request::nodes(36).with_segment(18)) == "n[37-72]");
        CHECK(nodes(a, 1) == "n01");
        CHECK(place(a, request::nodes(36).with_segment(18)) == "PENDING insufficient_free");
        // r1 holds 17 (the tighter block), then r2 gives 17 of its 18.
        CHECK(place(a, request::nodes(34).with_segment(17)) == "n[02-35]");
    }
    SUBCASE("three blocks under BlockSizes=4,8: the last group is partial") {
        auto a = from_conf(
            "BlockName=b1 Nodes=x[1-4]\nBlockName=b2 Nodes=x[5-8]\nBlockName=b3 Nodes=x[9-12]\nBlockSizes=4,8\n");
        // The group of b3 alone has 4 nodes; in b1+b2 the later of two
        // equally free blocks first, then the rest from b1.
        CHECK(nodes(a, 5) == "x[1,5-8]");
        CHECK(nodes(a, 3) == "x[2-4]");  // b1 has 3 left: the tighter block
        CHECK(nodes(a, 6) == "PENDING insufficient_free");
    }
}

TEST_CASE("slurm-block: exclusive topology closes a base block") {
    auto a = from_conf(eight_nodes);
    CHECK(place(a, request::nodes(2).with_exclusive_domain()) == "node[5-6]");
    CHECK(nodes(a, 2) == "node[1-2]");  // b2 is closed to others
    CHECK(place(a, request::nodes(1).with_exclusive_domain()) == "PENDING fragmented");
}

TEST_CASE("slurm-block: down and drained nodes are not free") {
    auto a = from_conf(eight_nodes);
    set_down(a, "node5");
    REQUIRE(a.drain(*a.topo().find_node("node6")));
    CHECK(nodes(a, 2) == "node[7-8]");  // b2 has 2 usable: the tighter block
    CHECK(nodes(a, 1) == "node1");
}

TEST_CASE("slurm-block: single-node jobs follow the block rules of eval_nodes_block up to 25.11") {
    auto a = from_conf(eight_nodes, {}, slurm_version::v25_11);
    CHECK(nodes(a, 1) == "node5");  // both blocks tie: the later one, its first free node
    CHECK(nodes(a, 1) == "node6");  // b2 is now the tighter block
}

TEST_CASE("slurm-block: from 26.05 a single-node job takes the first free node (_get_one_res)") {
    auto a = from_conf(eight_nodes);
    CHECK(a.policy().version() == slurm_version::v26_05);  // the default: the newest
    CHECK(nodes(a, 1) == "node1");  // blocks ignored: node order
    CHECK(nodes(a, 1) == "node2");
    set_down(a, "node3");
    CHECK(nodes(a, 1) == "node4");  // the first node that is up and wholly free
    CHECK(place(a, request::gpus(1)) == "node5");  // a GPU job sets no node limit: the block rules
    CHECK(nodes(a, 1) == "node6");  // node5 is not wholly free
    // An exclusive job closes b2; one-node jobs skip its free nodes.
    auto b = from_conf(eight_nodes);
    CHECK(place(b, request::nodes(1).with_exclusive_domain()) == "node5");  // the block rules: an idle block
    CHECK(nodes(b, 3) == "node[1-3]");
    CHECK(nodes(b, 1) == "node4");
    // node[6-8] are free but in a closed block: not available to others.
    CHECK(nodes(b, 1) == "PENDING insufficient_free");
    CHECK(place(b, request::nodes(1).with_exclusive_domain()) == "PENDING insufficient_free");
}

TEST_CASE("slurm-block: nodes outside every block serve only when no block node can") {
    auto a = from_conf(eight_nodes, io::expand_hostlist("node[1-10]").value());
    CHECK(a.topo().domain_count() == 4);
    CHECK(nodes(a, 8) == "node[1-8]");
    CHECK(nodes(a, 1) == "node9");
    CHECK(nodes(a, 1) == "node10");
    CHECK(nodes(a, 1) == "PENDING insufficient_free");
}

TEST_CASE("slurm-block: GPU requests share nodes like cons_tres with gres/gpu") {
    auto a = from_conf(eight_nodes);
    allocation_id id;
    CHECK(place(a, request::gpus(2), &id) == "node5");
    CHECK(a.find(id)->pieces.front().gpus == 0b0011);
    CHECK(place(a, request::gpus(2), &id) == "node5");  // node5 still qualifies; b2 is the later tie
    CHECK(a.find(id)->pieces.front().gpus == 0b1100);
    CHECK(place(a, request::gpus(6), &id) == "node[6-7]");  // two nodes, two GPUs of the last
    CHECK(a.find(id)->pieces.back().gpus == 0b0011);
    CHECK(place(a, request::gpus(3).with_whole_nodes(), &id) == "node8");  // b2's last free node
    CHECK(a.find(id)->held_gpus == 4);
    CHECK_FALSE(a.policy().supports(request::gpus(8).with_segment(4)));
}

TEST_CASE("slurm-block: wholly free racks, kept apart from the counts, tie with partly used racks as Slurm's counts do") {
    // Four racks of 18 four-GPU nodes. The indexed mode files a wholly free
    // rack under no count, only in a set of its own: each answer below
    // weighs that set against the counted racks.
    auto a = from_conf(four_racks);
    const auto consistent = [&] { CHECK(testing::check_indexes(a.policy(), a.state()).empty()); };
    CHECK(place(a, request::gpus(1)) == "n55");  // every rack has 18 nodes with a free GPU: the later
    consistent();
    CHECK(place(a, request::gpus(1)) == "n55");  // r4, counted, still ties the wholly free racks at 18
    CHECK(nodes(a, 18) == "n[37-54]");           // r4 has 17 wholly free nodes: the later free rack
    consistent();
    set_down(a, "n19");                          // r2: 17 nodes up
    CHECK(nodes(a, 18) == "n[01-18]");
    CHECK(nodes(a, 1) == "n20");                 // from 26.05: the first free node
    consistent();
    CHECK(nodes(a, 18) == "PENDING fragmented");
    REQUIRE(a.up(*a.topo().find_node("n19")));   // r2 has 17 free again, r4 17
    consistent();
    CHECK(nodes(a, 18) == "PENDING fragmented");
    consistent();
}

TEST_CASE("slurm-block: up to 25.11 a one-node job ties partly used racks by their counts") {
    auto a = from_conf(four_racks, {}, slurm_version::v25_11);
    const auto consistent = [&] { CHECK(testing::check_indexes(a.policy(), a.state()).empty()); };
    CHECK(place(a, request::gpus(1)) == "n55");
    CHECK(place(a, request::gpus(1)) == "n55");
    CHECK(nodes(a, 18) == "n[37-54]");
    set_down(a, "n19");                          // r2: 17 nodes up
    CHECK(nodes(a, 18) == "n[01-18]");
    CHECK(nodes(a, 1) == "n56");                 // r2 and r4 tie at 17: the later
    consistent();
    CHECK(nodes(a, 18) == "PENDING fragmented");
    REQUIRE(a.up(*a.topo().find_node("n19")));   // r2 is wholly free again
    consistent();
    CHECK(nodes(a, 18) == "n[19-36]");
    consistent();
}

TEST_CASE("slurm-block: a job's pieces are listed in node order, the short last node where Slurm took it") {
    // Four wholly free racks of 18 four-GPU nodes, one 4-rack group. 250
    // GPUs are 63 nodes, the last with 2 GPUs: Slurm takes r4, r3, r2 whole
    // (the later first) and then the first 9 nodes of r1, the 9th last.
    // The nodes are listed in index order, a run per stretch.
    auto cluster = io::make_slurm_cluster(*io::parse_topology_conf(four_racks), 4);
    REQUIRE(cluster.has_value());
    auto a = *slurm_allocator::create(std::move(cluster->topo), slurm_block(cluster->settings));
    const auto id = a.try_allocate(request::gpus(250));
    REQUIRE(id.has_value());
    const auto runs = a.find(*id)->pieces.runs();
    REQUIRE(runs.size() == 3);
    CHECK(runs[0] == piece_run{0, 8, 0xf});
    CHECK(runs[1] == piece_run{8, 1, 0x3});
    CHECK(runs[2] == piece_run{18, 54, 0xf});
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    // Given back, the racks are whole again, and a 3-rack job takes the
    // last three as one run.
    REQUIRE(a.release(*id));
    const auto again = a.try_allocate(request::gpus(3 * 72));
    REQUIRE(again.has_value());
    const auto whole = a.find(*again)->pieces.runs();
    REQUIRE(whole.size() == 1);
    CHECK(whole[0] == piece_run{18, 54, 0xf});
}

TEST_CASE("slurm-block: a level larger than the cluster still makes one group of every block, as in Slurm") {
    // Half a first rack: S = 9, three base blocks, the default levels. A
    // 37-node job wants 8 base blocks (level 3, past the 4 that already span
    // all three): one group of every block, at most 2 level-2 blocks, which
    // the group is, so its 45 free nodes qualify it. No block holds 37: the
    // fullest first, the later on ties (r3, then r2), then the one that holds
    // the last node. Dropping the levels past 4 left it pending.
    const std::string_view half_rack = "BlockName=r1 Nodes=gb[01-09]\nBlockName=r2 Nodes=gb[10-27]\nBlockName=r3 Nodes=gb[28-45]\n";
    auto a = from_conf(half_rack);
    CHECK(nodes(a, 37) == "gb[01,10-45]");
    auto b = from_conf(half_rack);
    CHECK(nodes(b, 40) == "gb[01-04,10-45]");
    auto c = from_conf(half_rack);
    CHECK(nodes(c, 36) == "gb[10-45]");  // level 2: the same either way
    CHECK(nodes(c, 10) == "PENDING insufficient_free");  // 9 free
    // BlockSizes past the cluster: 2 base blocks of S = 2 nodes per 8-node
    // block, levels 0 to 3 on three blocks.
    auto d = from_conf("BlockName=b1 Nodes=n[1-8]\nBlockName=b2 Nodes=n[9-16]\nBlockName=b3 Nodes=n[17-24]\nBlockSizes=2,4,8,16\n");
    CHECK(d.policy().shape(d.topo()).levels == 0b1111);
    CHECK(nodes(d, 9) == "n[9,17-24]");
    CHECK(nodes(d, 15) == "n[1-8,10-16]");  // the 15 left: the fuller block first
}

TEST_CASE("slurm-block: defaults for a preset, every level kept past the cluster size") {
    const slurm_block defaults;
    const topology racks = gb200_nvl72(4);
    const slurm_block_shape s = defaults.shape(racks);
    CHECK(s.base_nodes == 18);
    CHECK(s.block_count == 4);
    CHECK(s.levels == 0b11111);  // 1 to 16 racks, although 4 span all blocks
    CHECK(slurm_block(18, {18, 72}).shape(racks).levels == 0b101);
    CHECK(slurm_block(18, {18, 54, 144}).shape(racks).levels == 0b1001);  // 54 is no power-of-two multiple
    CHECK(slurm_block(18, {18, 36, 72, 144, 288}).shape(racks).levels == 0b11111);
    CHECK(slurm_block(0, {}, 2).shape(racks) == slurm_block_shape{18, 2, 0b11111});
    auto a = std::move(*slurm_allocator::create(racks));
    // Level 1: racks 3 and 4 tie with racks 1 and 2, the later pair wins;
    // inside it the later of two equal racks first.
    CHECK(place(a, request::nodes(20)) == "gb[37-38,55-72]");
}

// Regression: block sizes that are no power-of-two multiple of the base
// block were left out without a word when given through the API (files are
// checked by their reader); the allocator now refuses them by name.
TEST_CASE("slurm-block: block sizes it cannot use are refused by create") {
    const topology racks = gb200_nvl72(4);
    auto bad = slurm_allocator::create(racks, slurm_block(18, {18, 54, 144}));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().to_string() ==
          "slurm-block: block size 54 is not 18 (the base size) times a power of two up to 2^15");
    CHECK_FALSE(slurm_allocator::create(racks, slurm_block(18, {18, 18U << 16})).has_value());
    CHECK_FALSE(slurm_allocator::create(racks, slurm_block(0, {0})).has_value());
    CHECK(slurm_allocator::create(racks, slurm_block(18, {18, 36, 72, 144, 288})).has_value());
    CHECK(slurm_allocator::create(racks, slurm_block(0, {}, 2)).has_value());
    // The one rule the Slurm file readers also apply (io::validate_block_sizes).
    const std::vector<std::uint32_t> sizes{4, 8, 4U << 15};
    CHECK(slurm_block::block_size_error(4, sizes).empty());
    CHECK(slurm_block::block_size_error(4, std::vector<std::uint32_t>{4, 4U << 16}) ==
          "262144 is not 4 (the base size) times a power of two up to 2^15");
    CHECK(slurm_block::block_size_error(4, std::vector<std::uint32_t>{12}) ==
          "12 is not 4 (the base size) times a power of two up to 2^15");
}

}  // namespace test_policy_slurm_block
