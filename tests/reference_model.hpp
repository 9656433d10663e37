#pragma once

// What the randomized tests share: the partial racks they run on, their
// random numbers and requests, and the brute-force reference model, which is the public
// one (topoblock/testing/reference_model.hpp).

#include <topoblock/request/request.hpp>
#include <topoblock/testing/reference_model.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
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

// A request of every kind the policies take, sizes weighted towards the
// common ones (a domain's worth and less), now and then several domains'
// worth, segmented, exclusive, or whole-node.
inline request mixed_request(rng& r, const topology& t) {
    const std::uint32_t sizes[] = {1, 1, 1, 2, 3, 4, 4, 6, 8, 8, 12, 16, 32, 64, 72};
    request q = r.chance(20) ? request::nodes(r.chance(80) ? r.between(1, 8) : r.between(1, t.max_domain_nodes() * 3))
                             : request::gpus(r.chance(85) ? sizes[r.between(0, 14)] : r.between(1, t.max_domain_gpus() * 4));
    q.whole_nodes = q.what == unit::gpus && r.chance(15);
    q.where = static_cast<locality>(r.between(0, 2));
    q.exclusive_domain = r.chance(3);
    if (r.chance(5)) q = q.with_segment(std::max<std::uint32_t>(1, q.count / r.between(1, 4)), r.chance(50));
    return q;
}

}  // namespace topoblock::test
