#include <topoblock/allocator/allocator.hpp>
#include <topoblock/metrics/metrics.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/first_fit.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <vector>

namespace test_metrics_metrics {

using namespace topoblock;

TEST_CASE("utilization counts held GPUs over healthy GPUs") {
    auto a = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    CHECK(utilization(a->state()) == 0.0);
    REQUIRE(a->try_allocate(request::gpus(36)));
    CHECK(utilization(a->state()) == doctest::Approx(36.0 / 144.0));
    REQUIRE(a->down(35));  // an idle tray in rack02 fails: 140 healthy GPUs
    CHECK(utilization(a->state()) == doctest::Approx(36.0 / 140.0));
    REQUIRE(a->down(0));   // a busy tray fails: its 4 held GPUs leave both sides
    CHECK(utilization(a->state()) == doctest::Approx(32.0 / 136.0));
}

TEST_CASE("internal fragmentation is what rounding holds beyond the request") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    REQUIRE(a->try_allocate(request::gpus(3).with_whole_nodes()));   // 1 idle
    REQUIRE(a->try_allocate(request::gpus(10).with_whole_nodes()));  // 2 idle
    REQUIRE(a->try_allocate(request::gpus(5)));                      // shared: none
    const auto f = internal_fragmentation_of(a->state());
    CHECK(f.idle_held_gpus == 3);
    CHECK(f.share_of_held == doctest::Approx(3.0 / 21.0));
}

TEST_CASE("external fragmentation is judged under the policy's own rules") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    // One GPU held on every tray: 54 free GPUs, no whole tray.
    for (node_id n = 0; n < 18; ++n) {
        const piece p{n, 0b0001};
        REQUIRE(a->hold(std::span<const piece>(&p, 1)));
    }
    CHECK(external_fragmentation(*a, request::nodes(1)) == 1.0);
    // Thirteen 4-GPU jobs fit (GPUs of a domain may come from several trays):
    // 2 of the 54 free GPUs serve none.
    CHECK(external_fragmentation(*a, request::gpus(4)) == doctest::Approx(2.0 / 54.0));
    CHECK(external_fragmentation(*a, request::gpus(3)) == 0.0);
    const std::vector<size_weight> mix{{request::gpus(3), 3.0}, {request::nodes(1), 1.0}};
    CHECK(weighted_external_fragmentation(*a, mix) == doctest::Approx(0.25));
    // The scratch copy leaves the allocator untouched.
    CHECK(a->state().available().gpus == 54);
}

TEST_CASE("the largest placeable request") {
    auto a = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    CHECK(largest_placeable(*a) == 144);
    REQUIRE(a->try_allocate(request::gpus(10)));
    REQUIRE(a->try_allocate(request::gpus(10)));  // rack01: 52 free, rack02: 72
    // Under require a job of up to 72 must fit one domain, and a larger one
    // takes two: 124 free in two domains is placeable.
    CHECK(largest_placeable(*a) == 124);
    CHECK(largest_placeable(*a, request::nodes(1)) == 31);
    REQUIRE(a->try_allocate(request::gpus(72)));  // rack02 full
    CHECK(largest_placeable(*a) == 52);
    auto ff = allocator<first_fit>::create(gb200_nvl72(1));
    REQUIRE(ff);
    REQUIRE(ff->try_allocate(request::gpus(71)));
    CHECK(largest_placeable(*ff) == 1);
    CHECK(largest_placeable(*ff, request::nodes(1)) == 0);
}

TEST_CASE("domain spread counts avoidable splits") {
    auto a = allocator<first_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    REQUIRE(a->try_allocate(request::gpus(70)));
    REQUIRE(a->try_allocate(request::gpus(4)));    // split over both racks, though it fits one
    REQUIRE(a->try_allocate(request::gpus(70)));   // the rest of rack02
    const auto s = domain_spread_of(a->state());
    CHECK(s.allocations == 3);
    CHECK(s.multi_domain == 1);
    CHECK(s.split_but_fit == 1);
    CHECK(s.mean_domains == doctest::Approx(4.0 / 3.0));
}

}  // namespace test_metrics_metrics
