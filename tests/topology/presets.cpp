#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <string>

namespace test_topology_presets {

using namespace topoblock;

TEST_CASE("GB200 and GB300 NVL72: one domain per rack, 18 trays of 4 GPUs") {
    const topology t = gb200_nvl72(4);
    CHECK(t.domain_count() == 4);
    CHECK(t.node_count() == 72);
    CHECK(t.gpu_count() == 288);
    CHECK(t.max_domain_gpus() == 72);
    CHECK(t.uniform_gpus_per_node() == 4);
    CHECK(t.node(0).name == "gb01");
    CHECK(t.node(71).name == "gb72");
    CHECK(t.domain(3).name == "rack04");
    CHECK(t.domain(1).first_node == 18);
    CHECK(gb300_nvl72(1).gpu_count() == 72);
}

TEST_CASE("NVL36x2 joins two 9-tray racks into one 72-GPU domain") {
    const topology t = nvl36x2(2);
    CHECK(t.domain_count() == 2);
    CHECK(t.domain(0).node_count == 18);
    CHECK(t.domain(0).gpu_count() == 72);
}

TEST_CASE("HGX-8: every server its own domain") {
    const topology t = hgx8(16, 4);
    CHECK(t.domain_count() == 16);
    CHECK(t.node_count() == 16);
    CHECK(t.max_domain_gpus() == 8);
    CHECK(t.domain(0).name == t.node(0).name);
    REQUIRE(t.levels().size() == 1);
    CHECK(t.levels()[0].group_names.size() == 4);
}

TEST_CASE("topology specs") {
    auto t = parse_topology_spec("nvl72:16");
    REQUIRE(t);
    CHECK(t->gpu_count() == 16 * 72);
    CHECK(t->node(0).name == "gb001");

    t = parse_topology_spec("nvl72:2+hgx8:4@3");
    REQUIRE(t);
    CHECK(t->domain_count() == 6);
    CHECK(t->uniform_gpus_per_node() == 0);
    CHECK(t->levels()[0].group_names.size() == 2);

    t = parse_topology_spec("grid:3:5:2");
    REQUIRE(t);
    CHECK(t->domain_count() == 3);
    CHECK(t->gpu_count() == 30);

    t = parse_topology_spec("grid:1:2:4+grid:2:2:8");  // two grid parts keep distinct names
    REQUIRE(t);
    CHECK(t->node(0).name == "n01");
    CHECK(t->node(2).name == "g2n01");
    CHECK(t->domain(1).name == "g2d01");

    // Parts of one family continue its numbering (gb200 is nvl72), at the
    // width of the family's whole count.
    t = parse_topology_spec("nvl72:1+hgx8:2+gb200:2");
    REQUIRE(t.has_value());
    CHECK(t->domain_count() == 5);
    CHECK(t->domain(0).name == "rack01");
    CHECK(t->domain(3).name == "rack02");
    CHECK(t->domain(4).name == "rack03");
    CHECK(t->node(t->domain(3).first_node).name == "gb19");
    CHECK(t->node(t->domain(4).end_node() - 1).name == "gb54");
    t = parse_topology_spec("nvl72:9+nvl72:1");
    REQUIRE(t.has_value());
    CHECK(t->domain(0).name == "rack01");
    CHECK(t->domain(9).name == "rack10");
    CHECK(t->node(0).name == "gb001");
    CHECK(t->node(179).name == "gb180");
    for (const char* bad : {"nvl72", "nvl72:0", "nvl72:x", "tpu:4", "grid:1:2", "nvl72:4@", "nvl72:2+"}) {
        CAPTURE(bad);
        const auto r = parse_topology_spec(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().column >= 1);
    }
    const auto r = parse_topology_spec("nvl72:2+tpu:4");
    REQUIRE_FALSE(r);
    CHECK(r.error().column == 9);
    CHECK(r.error().message.find("unknown topology 'tpu:4'") != std::string::npos);
}

TEST_CASE("topology specs too large are refused before any node is named") {
    // Each would build millions of names (or billions) before the builder's
    // own limit; the count is checked first, whole parts included.
    for (const char* huge : {"grid:1:4294967295:1", "grid:4294967295:1:1", "nvl72:1000000", "hgx8:16777217"}) {
        CAPTURE(huge);
        const auto r = parse_topology_spec(huge);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("more than 16777216 nodes in all") != std::string::npos);
        CHECK(r.error().column == 1);
    }
    const auto sum = parse_topology_spec("hgx8:16777200+grid:1:17:4");  // each fits, not both
    REQUIRE_FALSE(sum);
    CHECK(sum.error().message == "topology 'grid:1:17:4': more than 16777216 nodes in all");
    CHECK(sum.error().column == 15);
}

TEST_CASE("a spec of 160,000 parts is read in one pass per part, not one per pair") {
    // The review's spec took 23 s: each part summed its family over every
    // part. Numbering still continues across the parts of a family. Mostly
    // one-node servers, so that the parts, not the nodes, are many.
    constexpr std::uint32_t parts = 160'000;
    std::string spec;
    for (std::uint32_t p = 0; p < parts; ++p) spec += p % 1000 == 999 ? "nvl72:1+" : "hgx8:1+";
    spec.pop_back();
    const auto t = parse_topology_spec(spec);
    REQUIRE_MESSAGE(t.has_value(), t.error().to_string());
    CHECK(t->domain_count() == parts);
    CHECK(t->domain(0).name == "hgx000001");  // 159,840 servers: six digits
    CHECK(t->domain(parts - 2).name == "hgx159840");
    CHECK(t->domain(999).name == "rack001");
    CHECK(t->domain(parts - 1).name == "rack160");
    CHECK(t->node(t->domain(parts - 1).end_node() - 1).name == "gb2880");
}

TEST_CASE("spec errors quote a few dozen bytes, escaped") {
    const auto long_family = parse_topology_spec(std::string(100'000, 't') + ":4");
    REQUIRE_FALSE(long_family);
    CHECK(long_family.error().message.size() < 200);
    CHECK(long_family.error().message.starts_with("unknown topology '" + std::string(32, 't') + "...'"));
    const auto control = parse_topology_spec("nvl72:\x1b[2J");
    REQUIRE_FALSE(control);
    CHECK(control.error().message == "expected a positive number for 'nvl72', got '\\x1b[2J'");
    CHECK(control.error().column == 7);
    const auto count = parse_topology_spec("nvl72:4@" + std::string(1'000, '9'));
    REQUIRE_FALSE(count);
    CHECK(count.error().message == "expected a positive number for domains per group, got '" +
                                       std::string(32, '9') + "...'");
}

}  // namespace test_topology_presets
