#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

using namespace topoblock;

TEST_CASE("a spec with two grid parts names each part's domains and nodes apart") {
    // The second part's names are built at run time; they must outlive the
    // shape that refers to them (clang's -Wdangling-gsl caught a dangling view).
    const auto t = parse_topology_spec("grid:1:2:4+grid:2:2:8");
    REQUIRE(t.has_value());
    REQUIRE(t->domain_count() == 3);
    CHECK(t->domain(0).name == "d01");
    CHECK(t->domain(1).name == "g2d01");
    CHECK(t->domain(2).name == "g2d02");
    CHECK(t->node(2).name == "g2n01");
    CHECK(t->gpu_count() == 8 + 32);
}
