#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_cluster.hpp>
#include <topoblock/io/topology_conf.hpp>
#include <topoblock/io/topology_yaml.hpp>
#include <topoblock/policy/slurm_block.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace test_io_slurm_cluster {

using namespace topoblock;
using names = std::vector<std::string>;

namespace {

io::slurm_topology conf(std::string_view text) {
    auto parsed = io::parse_topology_conf(text);
    REQUIRE_MESSAGE(parsed.has_value(), parsed.error().to_string());
    return *parsed;
}

names node_names(const topology& t, domain_id d) {
    names out;
    for (node_id n = t.domain(d).first_node; n < t.domain(d).end_node(); ++n) out.push_back(t.node(n).name);
    return out;
}

names domain_names(const topology& t) {
    names out;
    for (const auto& d : t.domains()) out.push_back(d.name);
    return out;
}

}  // namespace

TEST_CASE("slurm cluster: one domain per base block in config order, empty blocks kept") {
    const auto st = conf("BlockName=z Nodes=n[5-8]\nBlockName=gap\nBlockName=a Nodes=n[1-4]\nBlockSizes=4,8\n");
    auto c = io::make_slurm_cluster(st, 4);
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    CHECK(domain_names(c->topo) == names{"z", "gap", "a"});
    CHECK(c->topo.domain(1).node_count == 0);
    CHECK(node_names(c->topo, 0) == names{"n5", "n6", "n7", "n8"});
    CHECK(c->topo.gpu_count() == 32);
    CHECK(slurm_block(c->settings).shape(c->topo) == slurm_block_shape{4, 3, 0b11});
}

TEST_CASE("slurm cluster: node order is the block list's, or slurm.conf's when given") {
    const auto st = conf("BlockName=b1 Nodes=n3,n1,n2\nBlockName=b2 Nodes=n[4-5]\n");
    auto listed = io::make_slurm_cluster(st, 4);
    REQUIRE(listed.has_value());
    CHECK(node_names(listed->topo, 0) == names{"n3", "n1", "n2"});
    const names order = io::expand_hostlist("n[0-6]").value();
    auto ordered = io::make_slurm_cluster(st, 8, order);
    REQUIRE(ordered.has_value());
    CHECK(node_names(ordered->topo, 0) == names{"n1", "n2", "n3"});
    // n0 and n6 are in no block: one-node domains after the blocks.
    CHECK(domain_names(ordered->topo) == names{"b1", "b2", "n0", "n6"});
    CHECK(ordered->topo.node(0).gpus == 8);
    // Default levels (all five, though two blocks span the cluster), S = 3
    // (the first block), two base blocks.
    CHECK(slurm_block(ordered->settings).shape(ordered->topo) == slurm_block_shape{3, 2, 0b11111});
}

TEST_CASE("slurm cluster: a node outside the blocks may share a block's name") {
    // Slurm keeps block names and node names apart; so do the domains.
    auto c = io::make_slurm_cluster(conf("BlockName=n5 Nodes=n[1-4]\n"), 4, io::expand_hostlist("n[1-5]").value());
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    CHECK(domain_names(c->topo) == names{"n5", "node:n5"});
    CHECK(node_names(c->topo, 1) == names{"n5"});
}

TEST_CASE("slurm cluster: errors") {
    const auto st = conf("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\n");
    const names partial{"n1", "n2", "n3"};
    auto missing = io::make_slurm_cluster(st, 4, partial);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message == "node 'n4' of block 'b2' is not in the cluster's node list");
    CHECK(missing.error().line == 2);
    auto tree = io::make_slurm_cluster(conf("SwitchName=s1 Nodes=n[1-2]\n"), 4);
    REQUIRE_FALSE(tree.has_value());
    CHECK(tree.error().message.find("block topology") != std::string::npos);
    CHECK_FALSE(io::make_slurm_cluster(st, 0).has_value());
    const names twice{"n1", "n2", "n3", "n4", "n2"};
    auto repeated = io::make_slurm_cluster(st, 4, twice);
    REQUIRE_FALSE(repeated.has_value());
    CHECK(repeated.error().message == "node 'n2' is listed twice in the cluster's node list");
    // A node outside the blocks becomes a node of the cluster: its name must
    // read back from a hostlist, and the message shows it escaped.
    const names control{"n1", "n2", "n3", "n4", "x\x1b[2J"};
    auto bad_name = io::make_slurm_cluster(st, 4, control);
    REQUIRE_FALSE(bad_name.has_value());
    CHECK(bad_name.error().message == "the cluster's node list: node name 'x\\x1b[2J' contains a blank, a control or "
                                     "non-ASCII byte, or one of # = , [ ] \" ' \\");
    CHECK_FALSE(io::make_slurm_cluster(st, 65).has_value());
}

TEST_CASE("slurm cluster: topology.yaml takes its default topology") {
    auto set = io::parse_topology_yaml(
        "- topology: fabric\n"
        "  tree:\n"
        "    switches:\n"
        "      - switch: leaf\n"
        "        nodes: n[01-08]\n"
        "- topology: racks\n"
        "  cluster_default: true\n"
        "  block:\n"
        "    block_sizes: [4]\n"
        "    blocks:\n"
        "      - block: r1\n"
        "        nodes: n[01-04]\n"
        "      - block: r2\n"
        "        nodes: n[05-08]\n");
    REQUIRE_MESSAGE(set.has_value(), set.error().to_string());
    auto c = io::make_slurm_cluster(*set, 4);
    REQUIRE_MESSAGE(c.has_value(), c.error().to_string());
    CHECK(domain_names(c->topo) == names{"r1", "r2"});
    CHECK(slurm_block(c->settings).shape(c->topo) == slurm_block_shape{4, 2, 0b1});
    set->default_index = 0;
    auto tree = io::make_slurm_cluster(*set, 4);
    REQUIRE_FALSE(tree.has_value());
    CHECK(tree.error().message.rfind("topology 'fabric': ", 0) == 0);
}

}  // namespace test_io_slurm_cluster
