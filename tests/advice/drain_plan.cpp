// drain_plan() on random states, every built-in policy: each answer is what
// the policy decides on a copy drained by hand, places nothing on the
// drained nodes, and leaves the allocator as it was.

#include "../reference_model.hpp"

#include <topoblock/advice/drain_plan.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace test_advice_drain_plan {

using namespace topoblock;

namespace {

template <class Policy>
int check_policy(Policy policy, std::uint64_t seed) {
    const topology t = *parse_topology_spec("grid:4:4:4");
    test::rng r(seed);
    int movable = 0;
    for (int round = 0; round < 40; ++round) {
        auto a = *allocator<Policy>::create(t, policy);
        for (int k = 0; k < 30 && a.state().held_gpus() < t.gpu_count() / 2; ++k)
            (void)a.try_allocate(r.chance(20) ? request::nodes(r.between(1, 2)) : request::gpus(r.between(1, 6)));
        if (r.chance(30)) (void)a.set_health(r.between(0, t.node_count() - 1), node_health::down);
        std::vector<node_id> nodes;
        if (r.chance(50)) {
            const domain_id d = r.between(0, t.domain_count() - 1);
            for (node_id n = t.shape(d).first_node; n < t.shape(d).end_node(); ++n) nodes.push_back(n);
        } else {
            nodes.push_back(r.between(0, t.node_count() - 1));
        }
        const auto before = a;
        const auto plan = nodes.size() == 1 ? drain_plan(a, std::span<const node_id>(nodes))
                                            : drain_plan_for_domain(a, t.node(nodes.front()).domain);
        REQUIRE(plan);
        CHECK(a.state().verify() == "");
        // The allocations on the nodes, each once, in id order.
        std::vector<allocation_id> on;
        a.state().for_each_allocation([&](allocation_id id, const allocation_record& rec) {
            for (const piece p : rec.pieces)
                if (std::find(nodes.begin(), nodes.end(), p.node) != nodes.end()) {
                    on.push_back(id);
                    break;
                }
        });
        std::sort(on.begin(), on.end());
        REQUIRE(plan->size() == on.size());
        auto by_hand = before;
        for (const node_id n : nodes)
            if (by_hand.state().health(n) == node_health::up) REQUIRE(by_hand.drain(n));
        for (std::size_t i = 0; i < on.size(); ++i) {
            const drain_move& m = (*plan)[i];
            CHECK(m.id == on[i]);
            auto copy = by_hand;
            const auto placed = copy.try_allocate(a.find(m.id)->asked);
            CHECK(placed.has_value() == (m.result == errc::ok));
            if (!placed) {
                CHECK(m.result == placed.error());
                CHECK(m.where.empty());
                continue;
            }
            ++movable;
            std::vector<piece> want(copy.find(*placed)->pieces.begin(), copy.find(*placed)->pieces.end());
            std::vector<piece> got(m.where.pieces().begin(), m.where.pieces().end());
            CHECK(want == got);
            for (const piece p : got) CHECK(std::find(nodes.begin(), nodes.end(), p.node) == nodes.end());
        }
    }
    return movable;
}

}  // namespace

TEST_CASE("drain_plan: what the policy decides with the nodes drained, every policy") {
    for (const std::string_view name : policy_names) {
        CAPTURE(name);
        policy_settings settings;
        settings.block_gpus = 4;
        with_policy(name, settings, [&](auto policy) { CHECK(check_policy(policy, 11) > 0); });
    }
}

TEST_CASE("drain_plan: bad node and domain ids are named") {
    auto a = *allocator<best_fit>::create(*parse_topology_spec("grid:2:2:4"));
    const std::vector<node_id> beyond{9};
    CHECK(drain_plan(a, std::span<const node_id>(beyond)).error().message ==
          "drain_plan: node id 9 is beyond the topology's 4 nodes");
    const std::vector<node_id> twice{1, 1};
    CHECK(drain_plan(a, std::span<const node_id>(twice)).error().message.find("named twice") != std::string::npos);
    CHECK(!drain_plan_for_domain(a, 2));
    CHECK(drain_plan_for_domain(a, 1)->empty());
}

}  // namespace test_advice_drain_plan
