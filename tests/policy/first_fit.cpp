#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/first_fit.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace test_policy_first_fit {

using namespace topoblock;

TEST_CASE("first-fit takes the lowest-index free GPUs, across domain boundaries") {
    auto a = allocator<first_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    REQUIRE(a->try_allocate(request::gpus(70)));  // gb01..gb17 and 2 GPUs of gb18
    const auto split = *a->try_allocate(request::gpus(4));
    CHECK(a->find(split)->pieces == std::vector<piece>{{17, 0b1100}, {18, 0b0011}});
    CHECK(a->find(split)->domains == 2);  // the cost of ignoring topology
}

TEST_CASE("first-fit: whole nodes are the lowest-index wholly free ones") {
    auto a = allocator<first_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    REQUIRE(a->try_allocate(request::gpus(1)));
    const auto nodes = *a->try_allocate(request::nodes(2));
    CHECK(a->find(nodes)->pieces == std::vector<piece>{{1, 0b1111}, {2, 0b1111}});
    const auto whole = *a->try_allocate(request::gpus(5).with_whole_nodes());
    CHECK(a->find(whole)->pieces == std::vector<piece>{{3, 0b1111}, {4, 0b1111}});
    CHECK(a->find(whole)->held_gpus - a->find(whole)->requested_gpus == 3);
}

TEST_CASE("first-fit ignores locality and refuses what needs domains") {
    auto a = allocator<first_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    auto seg = a->try_allocate(request::gpus(16).with_segment(8));
    REQUIRE_FALSE(seg);
    CHECK(seg.error() == errc::unsupported_request);
    auto excl = a->try_allocate(request::gpus(8).with_exclusive_domain());
    REQUIRE_FALSE(excl);
    CHECK(excl.error() == errc::unsupported_request);
    // Every GPU free but one per node: no whole node is left.
    for (node_id n = 0; n < 36; ++n) {
        const piece p{n, 0b0001};
        REQUIRE(a->hold(std::span<const piece>(&p, 1)));
    }
    auto nodes = a->try_allocate(request::nodes(1));
    REQUIRE_FALSE(nodes);
    CHECK(nodes.error() == errc::fragmented);
    CHECK(a->try_allocate(request::gpus(100)));
}

TEST_CASE("first-fit keeps its node bitsets itself, through failures and releases") {
    auto a = allocator<first_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    const auto small = a->allocate(request::gpus(2));  // gb01's first 2 GPUs
    (void)a->allocate(request::gpus(10));              // gb01's other 2, gb02, gb03
    const auto& usable = a->policy().nodes_with_usable_gpus();
    const auto& wholly = a->policy().wholly_usable_nodes();
    CHECK(usable.find_first() == 3);  // gb01-gb03 are full
    CHECK(wholly.find_first() == 3);
    REQUIRE(a->down(3));
    CHECK(usable.find_first() == 4);
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
    REQUIRE(a->release(small));
    CHECK(usable.find_first() == 0);  // gb01's 2 GPUs are free again
    CHECK(wholly.find_first() == 4);  // but it is not wholly free
    REQUIRE(a->up(3));
    CHECK(wholly.find_first() == 3);
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
    // 36 nodes: a word and a summary word per bitset.
    CHECK(a->policy().memory_bytes() == 4 * sizeof(std::uint64_t));
}

}  // namespace test_policy_first_fit
