#include <topoblock/topology/presets.hpp>
#include <topoblock/topology/topology.hpp>

#include <doctest/doctest.h>

#include <string>
#include <utility>

namespace test_topology_topology {

using namespace topoblock;

namespace {

// Everything a copy must carry: sizes, names both ways, places.
void check_same(const topology& copy, const topology& original) {
    REQUIRE(copy.node_count() == original.node_count());
    REQUIRE(copy.domain_count() == original.domain_count());
    CHECK(copy.gpu_count() == original.gpu_count());
    CHECK(copy.levels().size() == original.levels().size());
    for (node_id n = 0; n < original.node_count(); ++n) {
        CAPTURE(n);
        CHECK(copy.node(n).name == original.node(n).name);
        CHECK(copy.find_node(original.node(n).name) == n);
        CHECK(copy.place(n) == original.place(n));
    }
}

}  // namespace

TEST_CASE("a topology copied into another, or moved: every copy is the topology it was copied from") {
    const topology two = gb200_nvl72(2);
    const topology three = gb200_nvl72(3, 2);
    topology x = two;
    x = two;
    check_same(x, two);
    x = three;
    check_same(x, three);
    x = two;
    check_same(x, two);

    // A move copies the shared tables: the topology moved from stays whole.
    topology moved_to = std::move(x);
    check_same(moved_to, two);
    check_same(x, two);  // NOLINT(bugprone-use-after-move): documented to stay whole
    x = std::move(moved_to);
    check_same(x, two);
    check_same(moved_to, two);  // NOLINT(bugprone-use-after-move)

    // Two builds of the same description, and a default topology.
    topology other_two = gb200_nvl72(2);
    other_two = three;
    check_same(other_two, three);
    topology none;
    CHECK(none.node_count() == 0);
    CHECK(none.nodes().empty());
    CHECK_FALSE(none.find_node("x").has_value());
    none = two;
    check_same(none, two);
}

}  // namespace test_topology_topology
