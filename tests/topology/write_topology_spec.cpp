#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <string>

namespace test_topology_write_topology_spec {

using namespace topoblock;

TEST_CASE("write_topology_spec: a spec's topology writes back as a spec that makes the same topology") {
    for (const std::string spec : {"nvl72:16", "nvl72:16@4", "gb300:3", "nvl36x2:2", "hgx8:12@5", "grid:4:18:4",
                                   "nvl72:2+hgx8:8", "grid:2:3:8+grid:1:2:4", "nvl72:1+nvl72:2@2", "gb200:2",
                                   "nvl72:1+gb300:1+nvl72:1"}) {
        CAPTURE(spec);
        const auto t = parse_topology_spec(spec);
        REQUIRE(t.has_value());
        const auto written = write_topology_spec(*t);
        REQUIRE_MESSAGE(written.has_value(), written.error().to_string());
        const auto back = parse_topology_spec(*written);
        REQUIRE(back.has_value());
        CHECK(detail::first_difference(*t, *back).empty());
    }
    // Canonical: parts of one family merge, gb200 is written nvl72.
    CHECK(write_topology_spec(*parse_topology_spec("nvl72:1+nvl72:2@2")).value() == "nvl72:3@2");
    CHECK(write_topology_spec(*parse_topology_spec("gb200:2")).value() == "nvl72:2");
    CHECK(write_topology_spec(*parse_topology_spec("grid:2:3:8+grid:1:2:4")).value() == "grid:2:3:8+grid:1:2:4");
}

TEST_CASE("write_topology_spec: a topology no spec makes is refused, saying what differs") {
    topology_builder b;
    b.add_domain("b1", 4, {"n1", "n2"});
    b.add_domain("b2", 4, {"n3", "n4"});
    const auto named = b.build();
    REQUIRE(named.has_value());
    const auto e = write_topology_spec(*named);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message == "no spec makes this topology: the nearest, 'grid:2:2:4', differs (domain 'b1' is named 'd01')");
    // Two levels: no spec has them.
    topology_builder two;
    two.add_domain("d01", 4, {"n01"});
    two.add_level("leaf", {{"l1", {"d01"}}});
    two.add_level("spine", {{"s1", {"d01"}}});
    const auto levels = two.build();
    REQUIRE(levels.has_value());
    CHECK(write_topology_spec(*levels).error().message.find("one level at most") != std::string::npos);
}

}  // namespace test_topology_write_topology_spec
