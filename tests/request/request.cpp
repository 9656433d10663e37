// A request's shape predicates: segmented() and malformed() skip the division
// for jobs of one part, and must still say what their definitions say.

#include <topoblock/request/request.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>

using namespace topoblock;

namespace {

// The definitions, with the divisions.
bool segmented_by_definition(const request& r) { return r.part_count() > 1; }
bool malformed_by_definition(const request& r) { return r.count == 0 || r.count % r.part_size() != 0; }

}  // namespace

TEST_CASE("request: segmented and malformed agree with part_count over every small shape") {
    for (std::uint32_t count = 0; count <= 64; ++count)
        for (std::uint32_t segment = 0; segment <= 70; ++segment) {
            request r = request::nodes(count);
            r.segment = segment;
            CAPTURE(count);
            CAPTURE(segment);
            CHECK(r.segmented() == segmented_by_definition(r));
            CHECK(r.malformed() == malformed_by_definition(r));
        }
}

TEST_CASE("request: segmented and malformed agree with part_count on random and extreme shapes") {
    constexpr std::uint32_t top = std::numeric_limits<std::uint32_t>::max();
    const std::uint32_t edges[] = {0, 1, 2, 3, top / 2, top / 2 + 1, top - 1, top};
    for (std::uint32_t count : edges)
        for (std::uint32_t segment : edges) {
            request r = request::gpus(count);
            r.segment = segment;
            CAPTURE(count);
            CAPTURE(segment);
            CHECK(r.segmented() == segmented_by_definition(r));
            CHECK(r.malformed() == malformed_by_definition(r));
        }
    std::mt19937_64 rng(11);
    for (int i = 0; i < 100000; ++i) {
        request r = request::gpus(static_cast<std::uint32_t>(rng() >> (32 + rng() % 32)));
        r.segment = static_cast<std::uint32_t>(rng() >> (32 + rng() % 32));
        CAPTURE(r.count);
        CAPTURE(r.segment);
        REQUIRE(r.segmented() == segmented_by_definition(r));
        REQUIRE(r.malformed() == malformed_by_definition(r));
    }
}
