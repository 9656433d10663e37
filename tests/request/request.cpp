// A request's shape predicates: segmented() and malformed() skip the division
// for jobs of one part, and must still say what their definitions say.

#include <topoblock/request/request.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace test_request_request {

using namespace topoblock;

namespace {

// What segmented() and malformed() say that their definitions (with the
// divisions) do not, for a request of `count` units in segments of
// `segment`; empty when they agree.
std::string disagreement(request r, std::uint32_t segment) {
    r.segment = segment;
    const bool segmented = r.part_count() > 1;
    const bool malformed = r.count == 0 || r.count % r.part_size() != 0;
    if (r.segmented() == segmented && r.malformed() == malformed) return {};
    return "count " + std::to_string(r.count) + ", segment " + std::to_string(segment);
}

// Up to 2^32 - 1, spread over every bit width.
std::uint32_t any_width(std::mt19937_64& rng) {
    const auto shift = static_cast<std::uint32_t>(32 + rng() % 32);
    return static_cast<std::uint32_t>(rng() >> shift);
}

}  // namespace

TEST_CASE("request: segmented and malformed agree with part_count over every small shape") {
    for (std::uint32_t count = 0; count <= 64; ++count)
        for (std::uint32_t segment = 0; segment <= 70; ++segment) CHECK(disagreement(request::nodes(count), segment) == "");
}

TEST_CASE("request: segmented and malformed agree with part_count on random and extreme shapes") {
    constexpr std::uint32_t top = std::numeric_limits<std::uint32_t>::max();
    const std::uint32_t edges[] = {0, 1, 2, 3, top / 2, top / 2 + 1, top - 1, top};
    for (std::uint32_t count : edges)
        for (std::uint32_t segment : edges) CHECK(disagreement(request::gpus(count), segment) == "");
    std::mt19937_64 rng(11);
    for (int i = 0; i < 100000; ++i) {
        const std::uint32_t count = any_width(rng);
        REQUIRE(disagreement(request::gpus(count), any_width(rng)) == "");
    }
}

TEST_CASE("request: the hash tells apart requests that differ in any one field") {
    // Every combination of small values of every field: distinct requests,
    // distinct hashes (a field the hash ignored would collide here).
    std::vector<request> all;
    for (std::uint32_t count = 1; count <= 24; ++count)
        for (std::uint32_t segment : {0u, 1u, 2u, 3u, 4u, 8u})
            for (unit what : {unit::gpus, unit::nodes})
                for (locality where : {locality::require, locality::prefer, locality::any})
                    for (int flags = 0; flags < 8; ++flags) {
                        request r = what == unit::gpus ? request::gpus(count) : request::nodes(count);
                        r = r.with_locality(where).with_whole_nodes((flags & 1) != 0).with_exclusive_domain((flags & 2) != 0);
                        r.segment = segment;
                        r.spread_segments = (flags & 4) != 0;
                        all.push_back(r);
                    }
    const std::hash<request> hash;
    std::set<std::size_t> hashes;
    for (const request& r : all) hashes.insert(hash(r));
    CHECK(hashes.size() == all.size());
    // Equal requests, however built, hash alike.
    CHECK(hash(request::gpus(8).with_whole_nodes()) == hash(request{8, unit::gpus, true}));
    // Random large counts and segments: no collisions among 100,000.
    std::mt19937_64 rng(3);
    std::set<std::size_t> random_hashes;
    std::set<request> random_requests;
    for (int i = 0; i < 100000; ++i) {
        request r = request::gpus(any_width(rng));
        r.segment = any_width(rng);
        if (random_requests.insert(r).second) random_hashes.insert(hash(r));
    }
    CHECK(random_hashes.size() == random_requests.size());
}

}  // namespace test_request_request
