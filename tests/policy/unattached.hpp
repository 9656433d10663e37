#pragma once

// Shared by the policy tests: a policy placed without the allocator's
// attach() must decide as the attached one does.

#include "../reference_model.hpp"

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace topoblock::test {

// Places random requests with `kept` (attached by an allocator, whose state
// also changes at random) and with a fresh, never attached copy of the
// policy: the same errc and the same runs every time.
template <class Policy>
void same_without_attach(Policy fresh, std::uint64_t seed) {
    auto a = allocator<Policy>::create(gb200_nvl72(3), fresh);
    REQUIRE(a);
    rng r(seed);
    std::vector<allocation_id> live;
    for (int op = 0; op < 400; ++op) {
        CAPTURE(op);
        const request req = r.chance(30) ? request::nodes(r.between(1, 20)) : request::gpus(r.between(1, 100));
        placement kept, scanned;
        const errc e = a->policy().place(a->state(), req, kept);
        REQUIRE(fresh.place(a->state(), req, scanned) == e);
        REQUIRE(std::ranges::equal(kept.runs(), scanned.runs()));
        if (r.chance(10)) {
            const auto n = static_cast<node_id>(r.between(0, a->topo().node_count() - 1));
            REQUIRE(a->set_health(n, r.chance(50) ? node_health::down : node_health::up));
        } else if (!live.empty() && r.chance(45)) {
            const std::size_t i = r.between(0, static_cast<std::uint32_t>(live.size() - 1));
            REQUIRE(a->release(live[i]));
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        } else if (auto id = a->try_allocate(req)) {
            live.push_back(*id);
        }
    }
}

}  // namespace topoblock::test
