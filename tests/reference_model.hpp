#pragma once

// What the randomized tests share: the partial racks they run on, their
// random numbers, and the brute-force reference model, which is the public
// one (topoblock/testing/reference_model.hpp).

#include <topoblock/testing/reference_model.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstdint>
#include <random>

namespace topoblock::test {

// Three NVL72 racks with 16, 18 and 17 trays installed, under two leaves:
// the partial racks the randomized tests run on.
inline topology partial_racks() {
    topology_builder b;
    b.add_numbered_domain("rack1", 16, 4, "a", 1, 2);
    b.add_numbered_domain("rack2", 18, 4, "b", 1, 2);
    b.add_numbered_domain("rack3", 17, 4, "c", 1, 2);
    b.add_level("leaf", {{"leaf1", {"rack1", "rack2"}}, {"leaf2", {"rack3"}}});
    return *b.build();
}

// Deterministic on every platform: std::mt19937_64 is specified exactly; the
// std:: distributions are not, so ranges are mapped by hand.
class rng {
public:
    explicit rng(std::uint64_t seed) : engine_(seed) {}
    // Uniform in [lo, hi].
    std::uint32_t between(std::uint32_t lo, std::uint32_t hi) {
        return lo + static_cast<std::uint32_t>(engine_() % (std::uint64_t{hi} - lo + 1));
    }
    bool chance(std::uint32_t percent) { return between(1, 100) <= percent; }
    std::uint64_t next() { return engine_(); }

private:
    std::mt19937_64 engine_;
};

using testing::reference_model;

}  // namespace topoblock::test
