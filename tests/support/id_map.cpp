#include <topoblock/support/id_map.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace test_support_id_map {

using topoblock::id_map;

TEST_CASE("id_map: inserts, replaces, finds and erases") {
    id_map m;
    CHECK(m.empty());
    CHECK(m.find(7) == nullptr);
    CHECK_FALSE(m.erase(7));
    m.insert(7, 70);
    m.insert(8, 80);
    m.insert(7, 71);
    CHECK(m.size() == 2);
    CHECK(m.at(7) == 71);
    CHECK(*m.find(8) == 80);
    CHECK_THROWS_AS((void)m.at(9), std::out_of_range);
    CHECK_THROWS_AS(m.insert(0, 1), std::invalid_argument);
    CHECK(m.size() == 2);
    CHECK(m.erase(7));
    CHECK_FALSE(m.erase(7));
    CHECK(m.find(7) == nullptr);
    CHECK(m.at(8) == 80);
    m.clear();
    CHECK(m.empty());
    CHECK(m.find(8) == nullptr);
}

// Against std::unordered_map: ids drawn from a small universe, so that runs
// collide, wrap around the table's end and are cut by erasures; and ids
// shaped like allocation ids (a generation above, a slot below).
TEST_CASE("id_map: randomized against std::unordered_map") {
    std::mt19937_64 rng(5);
    for (int round = 0; round < 40; ++round) {
        const bool allocation_like = round % 2 == 1;
        const std::uint64_t universe = 8 + rng() % 400;
        const auto draw = [&]() -> std::uint64_t {
            const std::uint64_t k = 1 + rng() % universe;
            return allocation_like ? ((k % 7) << 32) | (k / 7 + 1) : k;
        };
        id_map m;
        std::unordered_map<std::uint64_t, std::uint32_t> model;
        for (int op = 0; op < 4000; ++op) {
            const std::uint64_t id = draw();
            const auto r = rng() % 10;
            if (r < 5) {
                const auto v = static_cast<std::uint32_t>(rng());
                m.insert(id, v);
                model[id] = v;
            } else if (r < 9) {
                CHECK(m.erase(id) == (model.erase(id) == 1));
            } else {
                const std::uint32_t* v = m.find(id);
                const auto it = model.find(id);
                REQUIRE((v != nullptr) == (it != model.end()));
                if (v != nullptr) CHECK(*v == it->second);
            }
            REQUIRE(m.size() == model.size());
        }
        for (std::uint64_t k = 1; k <= universe; ++k) {
            const std::uint64_t id = allocation_like ? ((k % 7) << 32) | (k / 7 + 1) : k;
            const std::uint32_t* v = m.find(id);
            const auto it = model.find(id);
            REQUIRE((v != nullptr) == (it != model.end()));
            if (v != nullptr) CHECK(*v == it->second);
        }
    }
}

}  // namespace test_support_id_map
