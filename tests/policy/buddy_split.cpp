// buddy-split: worked examples on GB200 NVL72 racks (18 trays x 4 GPUs,
// gb01-gb18 in rack01). A rack's 72 GPUs are two buddy roots: 64 (gb01-gb16)
// and 8 (gb17-gb18).

#include "describe.hpp"
#include "reference/buddy_split.hpp"

#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace test_policy_buddy_split {

using namespace topoblock;
using topoblock::test::place;

namespace {

allocator<buddy_split> racks(std::string_view spec) {
    auto a = allocator<buddy_split>::create(*parse_topology_spec(spec));
    REQUIRE(a);
    REQUIRE(testing::check_indexes(a->policy(), a->state()).empty());
    return std::move(*a);
}

// The kept summaries equal a fresh attach's and the naive walk's.
void require_exact(const allocator<buddy_split>& a) {
    const std::string why = testing::check_indexes(a.policy(), a.state()) + test::naive_buddy::levels_differ(a.policy(), a.state());
    REQUIRE_MESSAGE(why.empty(), why);
}

}  // namespace

TEST_CASE("buddy-split: requests round up to powers of two") {
    CHECK(detail::buddy_level(request::gpus(3), 3, 4) == 2);
    CHECK(detail::buddy_level(request::gpus(5), 5, 4) == 3);             // two trays
    CHECK(detail::buddy_level(request::nodes(3), 3, 4) == 4);            // four trays
    CHECK(detail::buddy_level(request::gpus(2).with_whole_nodes(), 2, 4) == 2);
    CHECK(detail::buddy_level(request::gpus(2), 2, 6) == detail::no_level);
    CHECK(detail::root_level(domain_info{"rack01", 0, 18, 4}) == 6);     // 64 of 72

    auto a = racks("nvl72:1");
    const auto three = a.try_allocate(request::gpus(3));
    REQUIRE(three);
    // The smallest free buddy holding 4 GPUs is the 8-GPU root gb17-gb18;
    // its lower half is taken.
    CHECK(topoblock::test::describe(a.topo(), a.find(*three)->pieces) == "gb17");
    CHECK(a.find(*three)->held_gpus == 4);
    CHECK(a.find(*three)->requested_gpus == 3);
    CHECK(place(a, request::gpus(5)) == "gb01 gb02");
    const auto nodes = a.try_allocate(request::nodes(3));
    REQUIRE(nodes);
    // Free now: gb03-04 (8), gb05-08 (16), gb09-16 (32), gb18 (4).
    CHECK(topoblock::test::describe(a.topo(), a.find(*nodes)->pieces) == "gb05 gb06 gb07 gb08");
    CHECK(a.find(*nodes)->requested_gpus == 12);
    CHECK(internal_fragmentation_of(a.state()).idle_held_gpus == 1 + 3 + 4);
    require_exact(a);
}

TEST_CASE("buddy-split: an 18-tray rack is a forest of 16 + 2 trays") {
    auto a = racks("nvl72:1");
    CHECK(place(a, request::gpus(1)) == "gb17[0]");
    CHECK(place(a, request::gpus(1)) == "gb17[1]");
    CHECK(place(a, request::gpus(2)) == "gb17[2,3]");
    CHECK(place(a, request::gpus(1)) == "gb18[0]");
    // Nothing smaller than the 64-GPU root holds 8 GPUs now.
    CHECK(place(a, request::gpus(8)) == "gb01 gb02");
    require_exact(a);
}

TEST_CASE("buddy-split: released buddies coalesce back to the roots") {
    auto a = racks("nvl72:1");
    std::vector<allocation_id> ids;
    for (std::uint32_t n : {1U, 2U, 1U, 4U, 8U, 1U, 16U, 2U}) {
        ids.push_back(a.allocate(request::gpus(n)));
        require_exact(a);
    }
    for (std::size_t i : {3U, 0U, 6U, 1U, 7U, 5U, 2U, 4U}) {
        REQUIRE(a.release(ids[i]));
        require_exact(a);
    }
    CHECK(place(a, request::gpus(8)) == "gb17 gb18");
    const auto big = a.try_allocate(request::gpus(64));
    REQUIRE(big);
    CHECK(a.find(*big)->pieces.size() == 16);
    require_exact(a);
}

TEST_CASE("buddy-split: a 72-GPU job needs a whole rack, and a drained tray stops it") {
    auto one = racks("nvl72:1");
    REQUIRE(one.drain(4));
    CHECK(one.try_allocate(request::gpus(72)).error() == errc::exceeds_healthy);

    auto two = racks("nvl72:2");
    REQUIRE(two.drain(4));  // gb05
    // 72 GPUs fit no buddy (the largest is 64): the job takes a whole rack.
    const auto id = two.try_allocate(request::gpus(72));
    REQUIRE(id);
    CHECK(two.topo().node(two.find(*id)->pieces.front().node).name == "gb19");
    CHECK(two.find(*id)->held_gpus == 72);
    // rack01 has 68 free GPUs but not a whole rack.
    CHECK(two.try_allocate(request::gpus(68)).error() == errc::fragmented);
    REQUIRE(two.up(4));
    require_exact(two);
    CHECK(two.try_allocate(request::gpus(68)));
}

TEST_CASE("buddy-split: an 80-GPU job holds two whole racks") {
    auto a = racks("nvl72:4@2");
    REQUIRE(a.try_allocate(request::gpus(1)));  // rack01 is no longer whole
    const auto id = a.try_allocate(request::gpus(80));
    REQUIRE(id);
    const allocation_record* r = a.find(*id);
    CHECK(r->domains == 2);
    CHECK(r->held_gpus == 144);
    CHECK(r->requested_gpus == 80);
    // The aligned pair rack03-04, not rack02-03.
    CHECK(a.topo().node(r->pieces.front().node).name == "gb37");
    CHECK(internal_fragmentation_of(a.state()).idle_held_gpus == 64);
    require_exact(a);
}

TEST_CASE("buddy-split: usage adopted with hold() need not be aligned") {
    auto a = racks("nvl72:1");
    const piece p{0, 0xE};  // gb01 GPUs 1-3
    REQUIRE(a.hold(std::span<const piece>(&p, 1)));
    require_exact(a);
    // gb01 GPU 0 is a free 1-GPU buddy whose own buddy is held.
    CHECK(place(a, request::gpus(1)) == "gb01[0]");
    CHECK(place(a, request::gpus(2)) == "gb02[0,1]");
    require_exact(a);
}

TEST_CASE("buddy-split: node failures split buddies until the node is back") {
    auto a = racks("nvl72:1");
    const auto id = a.try_allocate(request::gpus(8));
    REQUIRE(id);
    CHECK(topoblock::test::describe(a.topo(), a.find(*id)->pieces) == "gb17 gb18");
    const auto hit = a.down(17);  // gb18
    REQUIRE(hit);
    CHECK(hit->size() == 1);
    REQUIRE(a.release(*id));
    require_exact(a);
    // gb17 alone is a free 4-GPU buddy; 8 GPUs must split the 64 root.
    CHECK(place(a, request::gpus(8)) == "gb01 gb02");
    REQUIRE(a.up(17));
    require_exact(a);
    // gb17-gb18 coalesced again: the second 8-GPU buddy after gb03-gb04.
    CHECK(place(a, request::gpus(8)) == "gb03 gb04");
    CHECK(place(a, request::gpus(8)) == "gb17 gb18");
}

TEST_CASE("buddy-split: fragmented when GPUs are free but no buddy is large enough") {
    auto a = racks("nvl72:1");
    for (node_id n = 0; n < 18; ++n) {
        const piece p{n, 0x8};
        REQUIRE(a.hold(std::span<const piece>(&p, 1)));
    }
    CHECK(a.state().available().gpus == 54);
    CHECK(a.try_allocate(request::gpus(4)).error() == errc::fragmented);
    CHECK(largest_placeable(a) == 2);
    CHECK(place(a, request::gpus(2)) == "gb01[0,1]");
    require_exact(a);
}

TEST_CASE("buddy-split: summaries that do not match the state are reported") {
    auto a = racks("nvl72:1");
    auto b = racks("nvl72:1");
    REQUIRE(b.try_allocate(request::gpus(4)));
    CHECK(testing::check_indexes(a.policy(), b.state()) == "buddy-split: its indexes differ from a fresh attach's");
    CHECK(test::naive_buddy::levels_differ(a.policy(), b.state()) ==
          "buddy-split: stale free-level summary in domain 'rack01'");
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    CHECK(test::naive_buddy::levels_differ(a.policy(), a.state()).empty());
    const buddy_split detached;
    CHECK(!testing::check_indexes(detached, a.state()).empty());
}

TEST_CASE("buddy-split: segments and exclusive racks") {
    auto a = racks("nvl72:2");
    // Two 4-GPU segments: each the smallest free buddy in turn.
    CHECK(place(a, request::gpus(8).with_segment(4)) == "gb17 gb18");
    CHECK(place(a, request::gpus(8).with_segment(4, true)) == "gb35 gb01");
    REQUIRE(a.try_allocate(request::gpus(1)));
    CHECK(place(a, request::gpus(4).with_exclusive_domain()) == "fragmented");
    auto b = racks("nvl72:2");
    REQUIRE(b.try_allocate(request::gpus(1)));
    CHECK(place(b, request::gpus(4).with_exclusive_domain()) == "gb35");
    require_exact(b);
}

// Regression: a wholly free 64-node domain (or 64-GPU node) made the parent
// chunk's shift reach 64, undefined behaviour (the sanitized build reports
// it). The buddies stay right on whole words.
TEST_CASE("buddy-split: domains of 64 nodes and nodes of 64 GPUs") {
    auto a = racks("grid:4:64:1");
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    const auto one = a.try_allocate(request::gpus(1));
    REQUIRE(one);
    CHECK(a.find(*one)->pieces.front().node == 0);
    const auto whole = a.try_allocate(request::gpus(64));  // the root of a wholly free domain
    REQUIRE(whole);
    CHECK(a.find(*whole)->pieces.front().node == 64);
    const auto half = a.try_allocate(request::gpus(32));  // the upper half of domain 0's split
    REQUIRE(half);
    CHECK(a.find(*half)->pieces.front().node == 32);
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    REQUIRE(a.release(*one));
    REQUIRE(a.release(*whole));
    CHECK(testing::check_indexes(a.policy(), a.state()).empty());
    auto wide = racks("grid:2:2:64");
    const auto gpus = wide.try_allocate(request::gpus(3));  // a buddy of 4 GPUs in a 64-GPU node
    REQUIRE(gpus);
    CHECK(wide.find(*gpus)->pieces.front().gpus == 0xF);
    CHECK(testing::check_indexes(wide.policy(), wide.state()).empty());
    REQUIRE(wide.release(*gpus));
    CHECK(testing::check_indexes(wide.policy(), wide.state()).empty());
}

// Domains of more than 64 nodes (a larger capacity): the buddies of 64
// nodes and more are whole words of the node sets (this did not compile).
TEST_CASE("buddy-split: domains of more than 64 nodes") {
    auto a = basic_allocator<buddy_split, capacity<144>>::create(*parse_topology_spec("grid:2:144:4"));
    REQUIRE(a);
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
    const auto big = a->try_allocate(request::gpus(512));  // the 128-node root of domain 0
    REQUIRE(big);
    CHECK(a->find(*big)->pieces.front().node == 0);
    const auto small = a->try_allocate(request::gpus(3));  // the split of the 16-node root
    REQUIRE(small);
    CHECK(a->find(*small)->pieces.front().node == 128);
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
    REQUIRE(a->release(*big));
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
}

}  // namespace test_policy_buddy_split
