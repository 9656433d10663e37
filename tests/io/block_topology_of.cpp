// io::block_topology_of (slurm_cluster.hpp) with the topology.conf and
// topology.yaml writers: a cluster written as a Slurm file and read back is
// the same cluster.

#include <topoblock/io/slurm_cluster.hpp>
#include <topoblock/io/topology_conf.hpp>
#include <topoblock/io/topology_yaml.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <string>

namespace test_io_block_topology_of {

using namespace topoblock;

namespace {

topology without_levels(const topology& t) {
    topology_builder b;
    for (const domain_info& d : t.domains()) {
        std::vector<std::string> nodes;
        for (node_id n = d.first_node; n < d.end_node(); ++n) nodes.push_back(t.node(n).name);
        b.add_domain(d.name, d.gpus_per_node, std::move(nodes));
    }
    return b.build().value();
}

}  // namespace

TEST_CASE("block_topology_of: a spec's cluster through topology.conf and topology.yaml and back") {
    for (const std::string spec : {"nvl72:4", "hgx8:6", "grid:3:5:8", "nvl36x2:2@2"}) {
        CAPTURE(spec);
        const topology t = parse_topology_spec(spec).value();
        const io::slurm_topology st = io::block_topology_of(t);
        REQUIRE(io::validate_topology(st).has_value());
        const std::uint32_t gpus = t.uniform_gpus_per_node();

        const auto conf = io::parse_topology_conf(io::write_topology_conf(st));
        REQUIRE_MESSAGE(conf.has_value(), conf.error().to_string());
        CHECK(*conf == st);
        const auto from_conf = io::make_slurm_cluster(*conf, gpus);
        REQUIRE(from_conf.has_value());
        // Slurm files have no levels: everything else comes back.
        CHECK(detail::first_difference(without_levels(t), from_conf->topo) == "");

        io::slurm_topology named = st;
        named.name = "cluster";
        const auto yaml = io::parse_topology_yaml(io::write_topology_yaml({{named}, 0}));
        REQUIRE_MESSAGE(yaml.has_value(), yaml.error().to_string());
        const auto from_yaml = io::make_slurm_cluster(*yaml, gpus);
        REQUIRE(from_yaml.has_value());
        CHECK(detail::first_difference(without_levels(t), from_yaml->topo) == "");
    }
}

TEST_CASE("block_topology_of: a Slurm cluster gives back its file, BlockSizes kept, nodes outside blocks left out") {
    const std::string text = "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n";
    const io::slurm_topology st = io::parse_topology_conf(text).value();
    const std::vector<std::string> order = {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "spare1"};
    const auto cluster = io::make_slurm_cluster(st, 4, order);
    REQUIRE(cluster.has_value());
    CHECK(cluster->topo.domain_count() == 3);
    const io::slurm_block_settings settings = io::block_settings(st);
    const io::slurm_topology back = io::block_topology_of(cluster->topo, &settings);
    CHECK(back == st);
    CHECK(io::write_topology_conf(back) == text);
    // Without the settings every domain is a block.
    CHECK(io::block_topology_of(cluster->topo).blocks.size() == 3);
}

}  // namespace test_io_block_topology_of
