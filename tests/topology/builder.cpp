#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace test_topology_builder {

using namespace topoblock;

namespace {
bool mentions(const error& e, const std::string& text) { return e.message.find(text) != std::string::npos; }

// place(n) and shape(d), stored or computed, say what node(n) and domain(d)
// say for every node and domain.
// One check per topology (big ones have hundreds of thousands of nodes),
// naming the first node or domain that disagrees.
void check_places(const topology& t) {
    constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    node_id wrong_node = none;
    for (node_id n = 0; n < t.node_count() && wrong_node == none; ++n) {
        const node_info& info = t.node(n);
        if (!(t.place(n) == node_place{info.domain, info.index_in_domain, info.gpus, info.first_gpu})) wrong_node = n;
    }
    CHECK(wrong_node == none);
    domain_id wrong_domain = none;
    for (domain_id d = 0; d < t.domain_count() && wrong_domain == none; ++d) {
        const domain_info& info = t.domain(d);
        if (!(t.shape(d) == domain_shape{info.first_node, info.node_count, info.gpus_per_node})) wrong_domain = d;
    }
    CHECK(wrong_domain == none);
}

topology built(topology_builder& b) {
    auto t = b.build();
    REQUIRE(t);
    return std::move(*t);
}
}  // namespace

TEST_CASE("a built topology numbers nodes and GPUs in domain order") {
    topology_builder b;
    b.add_domain("rack1", 4, {"a1", "a2"}).add_domain("empty", 4, {}).add_domain("hgx", 8, {"h1"});
    const auto t = b.build();
    REQUIRE(t);
    CHECK(t->node_count() == 3);
    CHECK(t->domain_count() == 3);
    CHECK(t->gpu_count() == 16);
    CHECK(t->node(2).first_gpu == 8);
    CHECK(t->node(2).domain == 2);
    CHECK(t->domain(1).node_count == 0);
    CHECK(t->domain(2).first_node == 2);
    CHECK(t->max_domain_gpus() == 8);
    CHECK(t->max_domain_nodes() == 2);
    CHECK(t->uniform_gpus_per_node() == 0);
    CHECK(t->find_node("h1") == 2U);
    CHECK_FALSE(t->find_node("nope"));
    CHECK(t->find_domain("hgx") == 2U);
    check_places(*t);
}

// Clusters of like domains compute places from the node id; every other
// shape reads them from a table. Both must agree with the nodes.
TEST_CASE("a node's place and a domain's shape are right whether computed or stored") {
    SUBCASE("like domains") {
        topology_builder b;
        b.add_domain("r1", 4, {"a1", "a2", "a3"}).add_domain("r2", 4, {"b1", "b2", "b3"}).add_domain("r3", 4, {"c1", "c2", "c3"});
        check_places(built(b));
    }
    SUBCASE("a short last domain") {
        topology_builder b;
        b.add_domain("r1", 4, {"a1", "a2", "a3"}).add_domain("r2", 4, {"b1", "b2"});
        check_places(built(b));
    }
    SUBCASE("a short first domain") {
        topology_builder b;
        b.add_domain("r1", 4, {"a1"}).add_domain("r2", 4, {"b1", "b2"}).add_domain("r3", 4, {"c1", "c2"});
        check_places(built(b));
    }
    SUBCASE("an empty domain between like ones") {
        topology_builder b;
        b.add_domain("r1", 4, {"a1", "a2"}).add_domain("gap", 4, {}).add_domain("r3", 4, {"c1", "c2"});
        check_places(built(b));
    }
    SUBCASE("an empty domain after like ones") {
        topology_builder b;
        b.add_domain("r1", 4, {"a1", "a2"}).add_domain("r2", 4, {"b1", "b2"}).add_domain("spare", 4, {});
        check_places(built(b));
    }
    SUBCASE("like node counts, different GPUs") {
        topology_builder b;
        b.add_domain("r1", 4, {"a1", "a2"}).add_domain("r2", 8, {"b1", "b2"});
        check_places(built(b));
    }
    SUBCASE("presets") {
        check_places(gb200_nvl72(5, 2));
        check_places(nvl36x2(3));
        check_places(hgx8(4));
    }
    SUBCASE("big clusters: the domain of a node is a multiply and a shift") {
        // The largest node ids are where an inexact reciprocal would show.
        check_places(gb200_nvl72(8000));
        for (const std::uint32_t per_domain : {7U, 64U}) {
            CAPTURE(per_domain);
            topology_builder b;
            for (std::uint32_t d = 0; d < 200000 / per_domain; ++d)
                b.add_numbered_domain("d" + std::to_string(d), per_domain, 4, "d" + std::to_string(d) + "n", 0, 1);
            const topology t = built(b);
            check_places(t);
            CHECK(t.place(t.node_count() - 1).domain == t.domain_count() - 1);
        }
    }
    SUBCASE("one node per domain") {
        topology_builder b;
        b.add_domain("h1", 8, {"a1"}).add_domain("h2", 8, {"b1"}).add_domain("h3", 8, {"c1"});
        check_places(built(b));
    }
}

TEST_CASE("bad descriptions are errors that name what and where") {
    SUBCASE("no nodes") {
        topology_builder b;
        b.add_domain("rack1", 4, {});
        const auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "no nodes"));
    }
    SUBCASE("zero GPUs per node") {
        topology_builder b;
        b.add_domain("rack1", 0, {"n1"});
        const auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "domain 'rack1'"));
        CHECK(mentions(t.error(), "at least one GPU"));
    }
    SUBCASE("too many GPUs per node") {
        topology_builder b;
        b.add_domain("big", 65, {"n1"});
        const auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "65 GPUs per node"));
    }
    SUBCASE("duplicate node names across domains") {
        topology_builder b;
        b.add_domain("rack1", 4, {"n1", "n2"}).add_domain("rack2", 4, {"n3", "n2"});
        const auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "'n2'"));
        CHECK(mentions(t.error(), "rack1"));
        CHECK(mentions(t.error(), "rack2"));
    }
    SUBCASE("duplicate domain names") {
        topology_builder b;
        b.add_domain("rack1", 4, {"n1"}).add_domain("rack1", 4, {"n2"});
        const auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "duplicate domain name 'rack1'"));
    }
    SUBCASE("a level that misses a domain or names an unknown one") {
        topology_builder b;
        b.add_domain("rack1", 4, {"n1"}).add_domain("rack2", 4, {"n2"});
        b.add_level("leaf", {{"leaf1", {"rack1"}}});
        auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "'rack2' is in no group"));
        topology_builder c;
        c.add_domain("rack1", 4, {"n1"});
        c.add_level("leaf", {{"leaf1", {"rack1", "rack9"}}});
        t = c.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "unknown domain 'rack9'"));
    }
    SUBCASE("a domain in two groups of one level") {
        topology_builder b;
        b.add_domain("rack1", 4, {"n1"});
        b.add_level("leaf", {{"leaf1", {"rack1"}}, {"leaf2", {"rack1"}}});
        const auto t = b.build();
        REQUIRE_FALSE(t);
        CHECK(mentions(t.error(), "group 'leaf1' and group 'leaf2'"));
    }
}

TEST_CASE("group levels map every domain to one group") {
    topology_builder b;
    b.add_numbered_domain("r1", 2, 4, "a", 1, 2).add_numbered_domain("r2", 2, 4, "b", 1, 2).add_numbered_domain("r3", 2, 4, "c", 1, 2);
    b.add_level("leaf", {{"l1", {"r1", "r3"}}, {"l2", {"r2"}}});
    const auto t = b.build();
    REQUIRE(t);
    REQUIRE(t->levels().size() == 1);
    CHECK(t->levels()[0].group_of_domain == std::vector<group_id>{0, 1, 0});
    CHECK(t->levels()[0].domains_of_group[0] == std::vector<domain_id>{0, 2});
    CHECK(t->node(0).name == "a01");
}

}  // namespace test_topology_builder
