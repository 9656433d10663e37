#include <topoblock/topology/presets.hpp>
#include <topoblock/topology/topology.hpp>

#include <doctest/doctest.h>

#include <string>
#include <utility>

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

TEST_CASE("a topology copied into a copy of the same build, one moved from, or another build") {
    const topology two = gb200_nvl72(2);
    const topology three = gb200_nvl72(3, 2);
    topology x = two;
    x = two;  // the same build: already equal
    check_same(x, two);
    x = three;  // another build
    check_same(x, three);
    x = two;
    check_same(x, two);

    // Moved from, a topology is no build: copying the build it came from
    // into it copies everything again.
    topology moved_to = std::move(x);
    check_same(moved_to, two);
    x = two;
    check_same(x, two);
    x = std::move(moved_to);
    moved_to = x;
    check_same(moved_to, two);

    // Two builds of the same description are not one build, and copy.
    topology other_two = gb200_nvl72(2);
    other_two = two;
    check_same(other_two, two);
}
