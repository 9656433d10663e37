#include "../reference_model.hpp"

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/metrics/allocatable.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace test_metrics_allocatable {

using namespace topoblock;
using topoblock::test::rng;

TEST_CASE("allocatable by size counts jobs each inside one domain") {
    auto a = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    REQUIRE(a->try_allocate(request::gpus(70)));  // rack01: 2 GPUs free on one tray
    REQUIRE(a->try_allocate(request::gpus(9)));   // rack02: 63 free, 15 whole trays
    const auto n = allocatable_of(a->state());
    REQUIRE(n.gpus.size() == 72);
    REQUIRE(n.nodes.size() == 18);
    CHECK(n.gpus[0] == 65);       // 1 GPU: 2 + 63
    CHECK(n.gpus[1] == 1 + 31);   // 2 GPUs
    CHECK(n.gpus[7] == 7);        // 8 GPUs: rack02 only
    CHECK(n.gpus[63] == 0);       // 64 GPUs: no rack has them
    CHECK(n.nodes[0] == 15);
    CHECK(n.nodes[14] == 1);
    CHECK(n.nodes[15] == 0);
    const auto c = compaction_of(a->state());
    CHECK(c.held_gpus == 79);
    CHECK(c.occupied_domains == 2);
    CHECK(c.fewest_domains == 2);
    // An exclusive job closes its domain: nothing there can start.
    auto b = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(b);
    REQUIRE(b->try_allocate(request::gpus(4).with_exclusive_domain()));
    CHECK(allocatable_of(b->state()).gpus[0] == 72);
    CHECK(compaction_of(b->state()).ratio == 1.0);
    REQUIRE(b->try_allocate(request::gpus(4)));
    const auto spread = compaction_of(b->state());
    CHECK(spread.occupied_domains == 2);
    CHECK(spread.fewest_domains == 1);
    CHECK(spread.ratio == 0.5);
}

TEST_CASE("allocatable by size and compaction agree with a recount node by node") {
    // Racks of 4-GPU trays beside 8-GPU servers.
    const topology topo = *parse_topology_spec("nvl72:2+hgx8:3");
    auto a = std::move(*allocator<best_fit>::create(topo));
    rng r(5);
    std::vector<allocation_id> live;
    for (int step = 0; step < 3000; ++step) {
        CAPTURE(step);
        const std::uint32_t kind = r.between(1, 100);
        if (kind <= 55) {
            request q = r.chance(20) ? request::nodes(r.between(1, 6)) : request::gpus(r.between(1, 40));
            q.exclusive_domain = r.chance(5);
            if (auto id = a.try_allocate(q)) live.push_back(*id);
        } else if (kind <= 94) {
            if (live.empty()) continue;
            const std::size_t i = r.between(0, static_cast<std::uint32_t>(live.size() - 1));
            REQUIRE(a.release(live[i]));
            live[i] = live.back();
            live.pop_back();
        } else {
            REQUIRE(a.set_health(r.between(0, topo.node_count() - 1), static_cast<node_health>(r.between(0, 2))));
        }
        // The recount: which domains exclusive jobs close, then each node.
        std::vector<bool> open(topo.domain_count(), true);
        a.state().for_each_allocation([&](allocation_id, const allocation_record& rec) {
            if (rec.asked.exclusive_domain)
                for (const piece p : detail::run_pieces{rec.pieces.runs()}) open[topo.node(p.node).domain] = false;
        });
        std::vector<std::uint64_t> gpu_jobs(topo.max_domain_gpus(), 0), node_jobs(topo.max_domain_nodes(), 0);
        std::uint64_t held = 0;
        std::uint32_t occupied = 0;
        std::vector<std::uint64_t> sizes;
        for (domain_id d = 0; d < topo.domain_count(); ++d) {
            const auto& info = topo.domain(d);
            std::uint64_t free_gpus = 0, free_nodes = 0, held_here = 0;
            for (node_id n = info.first_node; n < info.end_node(); ++n) {
                const gpu_mask unheld = a.state().unheld_gpus(n);
                held_here += info.gpus_per_node - static_cast<std::uint64_t>(std::popcount(unheld));
                if (a.state().health(n) != node_health::up || !open[d]) continue;
                free_gpus += static_cast<std::uint64_t>(std::popcount(unheld));
                free_nodes += unheld == full_gpu_mask(info.gpus_per_node) ? 1 : 0;
            }
            for (std::uint64_t s = 1; s <= gpu_jobs.size(); ++s) gpu_jobs[s - 1] += free_gpus / s;
            for (std::uint64_t k = 1; k <= node_jobs.size(); ++k) node_jobs[k - 1] += free_nodes / k;
            held += held_here;
            occupied += held_here != 0 ? 1U : 0U;
            sizes.push_back(info.gpu_count());
        }
        const auto n = allocatable_of(a.state());
        CHECK(n.gpus == gpu_jobs);
        CHECK(n.nodes == node_jobs);
        std::sort(sizes.begin(), sizes.end(), std::greater<>());
        std::uint32_t fewest = 0;
        for (std::uint64_t covered = 0; covered < held; covered += sizes[fewest++]) {}
        const auto c = compaction_of(a.state());
        CHECK(c.held_gpus == held);
        CHECK(c.occupied_domains == occupied);
        CHECK(c.fewest_domains == fewest);
    }
}

}  // namespace test_metrics_allocatable
