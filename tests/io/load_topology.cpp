#include <topoblock/io/load_topology.hpp>

#include "../scratch_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace test_io_load_topology {

using namespace topoblock;
using topoblock::test::scratch_file;
using io::topology_format;

namespace {

io::loaded_topology load_ok(const std::string& source, const io::topology_load_options& o = {}) {
    auto got = io::load_topology(source, o);
    REQUIRE_MESSAGE(got.has_value(), got.error().to_string());
    return std::move(*got);
}

error load_error(const std::string& source, const io::topology_load_options& o = {}) {
    auto got = io::load_topology(source, o);
    REQUIRE_FALSE(got.has_value());
    return got.error();
}

const std::string conf_text = "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n";
const std::string yaml_text =
    "- topology: racks\n  cluster_default: true\n  block:\n    block_sizes: [2]\n    blocks:\n"
    "      - block: r1\n        nodes: n[1-2]\n      - block: r2\n        nodes: n[3-4]\n";
const std::string labels_text =
    "NAME STATUS LABELS\n"
    "gb-01 Ready nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
    "gb-02 Ready,SchedulingDisabled nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
    "hgx-1 NotReady nvidia.com/gpu.count=8\n";
const std::string json_text =
    "{\"kind\": \"List\", \"items\": [\n"
    " {\"metadata\": {\"name\": \"gb-01\", \"labels\": {\"nvidia.com/gpu.clique\": \"u1.1\"}},\n"
    "  \"status\": {\"capacity\": {\"nvidia.com/gpu\": \"4\"}, \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}},\n"
    " {\"metadata\": {\"name\": \"gb-02\", \"labels\": {\"nvidia.com/gpu.clique\": \"u1.1\"}}, \"spec\": {\"unschedulable\": true},\n"
    "  \"status\": {\"capacity\": {\"nvidia.com/gpu\": \"4\"}, \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}]}\n";

}  // namespace

TEST_CASE("load_topology: the format is told from the name, else from the content") {
    CHECK(io::sniff_topology_format("a.yaml", "") == topology_format::topology_yaml);
    CHECK(io::sniff_topology_format("a.yml", conf_text) == topology_format::topology_yaml);
    CHECK(io::sniff_topology_format("a.json", "") == topology_format::kubectl_json);
    CHECK(io::sniff_topology_format("a.conf", "nvl72:2") == topology_format::topology_conf);
    CHECK(io::sniff_topology_format("x", conf_text) == topology_format::topology_conf);
    CHECK(io::sniff_topology_format("x", "# c\n\n" + yaml_text) == topology_format::topology_yaml);
    CHECK(io::sniff_topology_format("x", labels_text) == topology_format::kubectl_labels);
    CHECK(io::sniff_topology_format("x", "\xEF\xBB\xBF  \n" + json_text) == topology_format::kubectl_json);
    CHECK(io::sniff_topology_format("x", "# two racks\nnvl72:2 + hgx8:4\n") == topology_format::spec);
    // Not spec characters: topology.conf, whose reader names the line.
    CHECK(io::sniff_topology_format("x", "BlockName b1\n") == topology_format::topology_conf);
    CHECK(io::sniff_topology_format("x", "") == topology_format::topology_conf);
}

TEST_CASE("load_topology: every source, from a file named without an extension") {
    io::topology_load_options eight;
    eight.gpus_per_node = 8;
    const scratch_file conf("racks", conf_text);
    const auto c = load_ok(conf.string(), eight);
    CHECK(c.format == topology_format::topology_conf);
    CHECK(c.topo.domain_count() == 2);
    CHECK(c.topo.gpu_count() == 64);
    REQUIRE(c.slurm.has_value());
    CHECK(*c.slurm == io::slurm_block_settings{4, {4, 8}, 2});
    CHECK(c.health.empty());

    const scratch_file yaml("racks_yaml", yaml_text);
    const auto y = load_ok(yaml.string());
    CHECK(y.format == topology_format::topology_yaml);
    CHECK(y.topo.domain(1).name == "r2");
    REQUIRE(y.slurm.has_value());
    CHECK(*y.slurm == io::slurm_block_settings{2, {2}, 2});

    const scratch_file labels("nodes", labels_text);
    const auto l = load_ok(labels.string());
    CHECK(l.format == topology_format::kubectl_labels);
    CHECK(l.topo.gpu_count() == 16);
    CHECK(l.health == std::vector<node_health>{node_health::up, node_health::drain, node_health::down});
    CHECK_FALSE(l.slurm.has_value());

    const scratch_file json("nodes_json", json_text);
    const auto j = load_ok(json.string());
    CHECK(j.format == topology_format::kubectl_json);
    CHECK(j.topo.domain_count() == 1);
    CHECK(j.health == std::vector<node_health>{node_health::up, node_health::drain});

    const scratch_file spec("cluster.spec", "\xEF\xBB\xBF# two racks\nnvl72:2\n");
    const auto s = load_ok(spec.string());
    CHECK(s.format == topology_format::spec);
    CHECK(s.topo.domain_count() == 2);
    const auto preset = load_ok("nvl72:3@3");
    CHECK(preset.topo.domain_count() == 3);
    CHECK(preset.topo.levels().size() == 1);
    CHECK_FALSE(preset.slurm.has_value());
}

TEST_CASE("load_topology: a node order applies to Slurm files only") {
    io::topology_load_options order;
    order.node_order = {"n8", "n7", "n6", "n5", "n4", "n3", "n2", "n1", "spare"};
    const scratch_file conf("racks", conf_text);
    const auto c = load_ok(conf.string(), order);
    CHECK(c.topo.node(0).name == "n4");
    CHECK(c.topo.domain_count() == 3);  // the spare node is a domain of its own
    const scratch_file labels("nodes", labels_text);
    CHECK(load_error(labels.string(), order).to_string() ==
          labels.string() + ": a node order applies to Slurm topology files, not to a kubectl node labels");
    CHECK(load_error("nvl72:1", order).message.find("not to a spec") != std::string::npos);
}

TEST_CASE("load_topology: errors name the file, the line and what was wrong") {
    const scratch_file conf("bad", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodse=n[5-8]\n");
    const error e = load_error(conf.string());
    CHECK(e.file == conf.string());
    CHECK(e.line == 2);
    CHECK(e.message.find("Nodse") != std::string::npos);
    const scratch_file tree("tree.conf", "SwitchName=s1 Nodes=n[1-2]\n");
    CHECK(load_error(tree.string()).to_string().starts_with(tree.string() + ": a cluster from a Slurm topology needs a block topology"));
    const scratch_file json("cut.json", "{\"items\": [\n  {\"metadata\": }");
    CHECK(load_error(json.string()).to_string().starts_with(json.string() + ", line 2, column 16: expected a value"));
    const scratch_file labels("nodes", "NAME STATUS LABELS\ngb-01 Ready nvidia.com/gpu.count=x\n");
    CHECK(load_error(labels.string()).to_string().starts_with(labels.string() + ", line 2, column 34: "));
    // A bad spec in a file: the file, then the spec quoted (its column
    // counts in the spec, not the file).
    const scratch_file spec("bad.spec", "# c\n\n# d\nnvl72:x\n");
    CHECK(load_error(spec.string()).to_string().starts_with(spec.string() + ": spec 'nvl72:x' (column 7): "));
    // A huge spec in a file is quoted short, its control bytes escaped.
    const scratch_file huge("huge", "nvl72:\x1b" + std::string(1'000'000, '9') + "\n");
    const error h = load_error(huge.string());
    CHECK(h.message.size() < 300);
    CHECK(h.message.find("\x1b") == std::string::npos);
    // Neither a file nor a spec; a directory.
    CHECK(load_error("/no/such/racks").message ==
          "'/no/such/racks' is neither a readable file nor a topology spec (line 1, column 1: unknown topology "
          "'/no/such/racks': expected nvl72:R, gb300:R, nvl36x2:P, hgx8:S or grid:D:N:G)");
    const std::string directory = std::filesystem::temp_directory_path().string();
    CHECK(load_error(directory).message == "'" + directory + "' is not a regular file");
}

}  // namespace test_io_load_topology
