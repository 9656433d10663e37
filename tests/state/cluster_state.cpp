#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/state/cluster_state.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace test_state_cluster_state {

using namespace topoblock;

namespace {

// Every GPU of nodes [first, end) is owned by `id` (a null id: unheld).
template <class State>
bool owned_by(const State& state, node_id first, node_id end, allocation_id id) {
    for (node_id n = first; n < end; ++n)
        for (std::uint32_t g = 0; g < state.topo().node(n).gpus; ++g)
            if (state.owner(n, g) != id) return false;
    return true;
}

}  // namespace

// A multi-domain job takes racks whole: the state names the holder once per
// rack instead of once per GPU, and every answer about owners must not tell.
TEST_CASE("racks taken whole name their holder for every GPU, through a failure and a release") {
    auto a = *allocator<best_fit>::create(gb200_nvl72(3));
    const auto id = *a.try_allocate(request::gpus(144));
    const auto& record = *a.find(id);
    REQUIRE(record.domains == 2);
    const domain_id first_rack = a.topo().node(record.pieces.front().node).domain;
    const domain_id second_rack = a.topo().node(record.pieces.back().node).domain;
    for (const domain_id d : {first_rack, second_rack}) {
        CHECK(owned_by(a.state(), a.topo().domain(d).first_node, a.topo().domain(d).end_node(), id));
        CHECK(a.state().domain(d).held_gpus == 72);
    }
    CHECK(a.state().verify().empty());

    // A failed tray of a rack held whole reports its holder once.
    const node_id tray = a.topo().domain(second_rack).first_node + 5;
    const auto hit = *a.down(tray);
    REQUIRE(hit.size() == 1);
    CHECK(hit[0] == id);
    CHECK(a.find(id)->hit_by_failure);
    CHECK(a.state().verify().empty());

    // Released with the tray down: the rack goes back around it.
    REQUIRE(a.release(id));
    CHECK(owned_by(a.state(), 0, a.topo().node_count(), allocation_id{}));
    CHECK(a.state().verify().empty());
    REQUIRE(a.up(tray));

    // The racks taken whole again, by another job, then one GPU job beside.
    const auto again = *a.try_allocate(request::gpus(144));
    const auto small = *a.try_allocate(request::gpus(3));
    const auto& placed = *a.find(again);
    for (const piece p : placed.pieces) CHECK(owned_by(a.state(), p.node, p.node + 1, again));
    const piece s = a.find(small)->pieces.front();
    for (std::uint32_t g = 0; g < 4; ++g)
        CHECK(a.state().owner(s.node, g) == (((s.gpus >> g) & 1U) != 0 ? small : allocation_id{}));
    CHECK(a.state().verify().empty());
}

// An empty domain may declare more GPUs per node than any node has (a gap
// in a Slurm block list, say): its node sets are its own and empty, not
// another domain's or past the table's end.
TEST_CASE("an empty domain with more GPUs per node than any node has no nodes in any set") {
    topology_builder b;
    b.add_numbered_domain("rack1", 2, 8, "a", 1, 1);
    b.add_domain("gap", 17, {});
    b.add_numbered_domain("rack2", 2, 8, "b", 1, 1);
    b.add_domain("tail", 64, {});
    auto a = *allocator<best_fit>::create(*b.build());
    const auto& state = a.state();
    for (const domain_id d : {domain_id{1}, domain_id{3}}) {
        CHECK(state.free_nodes_in(d).none());
        for (std::uint32_t k = 0; k <= a.topo().domain(d).gpus_per_node; ++k) CHECK(state.nodes_with_unheld(d, k).none());
        CHECK(state.tightest_node(d, 1) == npos32);
    }
    CHECK(state.free_nodes_in(2).count() == 2);
    REQUIRE(a.try_allocate(request::gpus(8)));
    CHECK(state.verify().empty());
}

// A domain held whole whose up nodes are all alone between down ones is
// given back a node at a time, not as a stretch: the holder must go too.
TEST_CASE("a domain held whole and given back a node at a time keeps no holder") {
    topology_builder b;
    for (int d = 0; d < 3; ++d) b.add_numbered_domain("d" + std::to_string(d), 3, 4, "d" + std::to_string(d) + "n", 0, 1);
    auto a = *allocator<best_fit>::create(*b.build());
    const auto id = *a.try_allocate(request::gpus(24));
    REQUIRE(a.find(id)->domains == 2);
    const domain_id d = a.topo().node(a.find(id)->pieces.front().node).domain;
    const node_id middle = a.topo().domain(d).first_node + 1;
    CHECK(owned_by(a.state(), a.topo().domain(d).first_node, a.topo().domain(d).end_node(), id));
    REQUIRE(a.down(middle));
    REQUIRE(a.release(id));
    CHECK(owned_by(a.state(), 0, a.topo().node_count(), allocation_id{}));
    CHECK(a.state().verify().empty());
    REQUIRE(a.up(middle));
    // One node of the domain, held by a job of its own: the only owner there.
    const piece p{middle, full_gpu_mask(4)};
    const auto held = *a.hold(std::span<const piece>(&p, 1));
    CHECK(owned_by(a.state(), middle, middle + 1, held));
    CHECK(owned_by(a.state(), a.topo().domain(d).first_node, middle, allocation_id{}));
    CHECK(a.state().verify().empty());
}

// A job that holds a rack whose tray was draining when it took it wrote an
// owner per GPU; released once the tray is up, the rack goes back as a whole
// domain, and those owners must go with it.
TEST_CASE("a rack taken while a tray drained and given back whole once it is up leaves no owner") {
    auto a = *allocator<best_fit>::create(gb200_nvl72(2));
    const domain_info& rack = a.topo().domain(1);
    const node_id tray = rack.first_node + 7;
    REQUIRE(a.drain(tray));
    std::vector<piece> all;
    for (node_id n = rack.first_node; n < rack.end_node(); ++n) all.push_back({n, full_gpu_mask(4)});
    const auto id = *a.hold(all);
    CHECK(owned_by(a.state(), rack.first_node, rack.end_node(), id));
    REQUIRE(a.up(tray));
    CHECK(a.state().verify().empty());
    REQUIRE(a.release(id));
    CHECK(owned_by(a.state(), 0, a.topo().node_count(), allocation_id{}));
    CHECK(a.state().domain(1).free_gpus == 72);
    CHECK(a.state().domain_idle(1));
    CHECK(a.state().verify().empty());
    // Taken whole again by a job of rack size: the holder is the new job.
    const auto again = *a.try_allocate(request::gpus(144));
    CHECK(owned_by(a.state(), 0, a.topo().node_count(), again));
    CHECK(a.state().verify().empty());
}

// An id is a slot's 32-bit generation and the slot: after 2^31 uses of one
// slot the generation would wrap and give an old id again, so that a stale
// id released somebody else's allocation. The slot is retired instead. The
// restore path starts a slot near the wrap without 2^31 real cycles.
TEST_CASE("a slot whose generation would wrap is retired, and no id repeats") {
    auto state = *cluster_state::create(gb200_nvl72(1));
    const allocation_id last{(std::uint64_t{0xffffffffU} << 32) | 1U};
    const piece_run tray{0, 1, 0xf};
    REQUIRE(state.restore_allocation(last, request::gpus(4), std::span<const piece_run>(&tray, 1), 0, false));
    // Slot 1 free, one generation before its last live one.
    const std::pair<std::uint32_t, std::uint32_t> free_slot{1, 0xfffffffeU};
    REQUIRE(state.restore_free_slots(2, std::span(&free_slot, 1)));
    CHECK(state.verify().empty());
    auto a = allocator<best_fit>::adopt(std::move(state));
    CHECK(a.find(last) != nullptr);

    std::vector<allocation_id> seen{last};
    REQUIRE(a.release(last));
    CHECK(a.state().retired_slots() == 1);
    const allocation_id next = *a.try_allocate(request::gpus(4));
    CHECK(next.value == ((std::uint64_t{0xffffffffU} << 32) | 2U));  // slot 1's last generation
    seen.push_back(next);
    REQUIRE(a.release(next));
    CHECK(a.state().retired_slots() == 2);
    CHECK(a.state().verify().empty());
    for (int i = 0; i < 4; ++i) {
        const allocation_id fresh = *a.try_allocate(request::gpus(4));
        for (const allocation_id old : seen) CHECK(fresh != old);
        // Stale ids stay unknown, whatever slot serves the new job.
        for (const allocation_id old : seen)
            if (old != fresh) CHECK(a.release(old).error() == errc::unknown_allocation);
        CHECK(a.find(fresh) != nullptr);
        seen.push_back(fresh);
        REQUIRE(a.release(fresh));
    }
    CHECK(a.state().slot_count() == 3);  // the retired slots never came back
    CHECK(a.state().verify().empty());
}

TEST_CASE("restoring allocations checks them as commit does, and changes nothing on error") {
    auto state = *cluster_state::create(gb200_nvl72(2));
    const piece_run trays{0, 2, 0xf};
    const auto runs = std::span<const piece_run>(&trays, 1);
    const allocation_id first{(std::uint64_t{3} << 32) | 2U};
    REQUIRE(state.restore_allocation(first, request::nodes(2), runs, 8, false));
    CHECK(state.slot_count() == 2);
    CHECK(state.retired_slots() == 1);
    // The same GPUs again, under another id: the commit's check refuses it.
    const piece_run overlap{1, 1, 0x1};
    auto twice = state.restore_allocation(allocation_id{(std::uint64_t{1} << 32) | 1U}, request::gpus(1),
                                          std::span<const piece_run>(&overlap, 1), 0, false);
    REQUIRE_FALSE(twice);
    CHECK(twice.error().message.find("another allocation holds") != std::string::npos);
    CHECK(state.allocation_count() == 1);
    CHECK(state.retired_slots() == 1);
    CHECK(state.verify().empty());
    // The same id twice; an even generation; a node out of range.
    const piece_run other{5, 1, 0x1};
    CHECK_FALSE(state.restore_allocation(first, request::gpus(1), std::span<const piece_run>(&other, 1), 0, false));
    CHECK_FALSE(state.restore_allocation(allocation_id{(std::uint64_t{2} << 32) | 1U}, request::gpus(1),
                                         std::span<const piece_run>(&other, 1), 0, false));
    const piece_run far{36, 1, 0x1};
    auto out = state.restore_allocation(allocation_id{(std::uint64_t{1} << 32) | 1U}, request::gpus(1),
                                        std::span<const piece_run>(&far, 1), 0, false);
    REQUIRE_FALSE(out);
    CHECK(out.error().message.find("out of range") != std::string::npos);
    CHECK(state.verify().empty());
    // The free list: a live slot, a slot named twice, an odd generation.
    const std::pair<std::uint32_t, std::uint32_t> live_slot{1, 4};
    CHECK_FALSE(state.restore_free_slots(3, std::span(&live_slot, 1)));
    const std::pair<std::uint32_t, std::uint32_t> twice_listed[] = {{0, 2}, {0, 2}};
    CHECK_FALSE(state.restore_free_slots(3, twice_listed));
    const std::pair<std::uint32_t, std::uint32_t> odd{0, 5};
    CHECK_FALSE(state.restore_free_slots(3, std::span(&odd, 1)));
    CHECK_FALSE(state.restore_free_slots(1, {}));  // fewer slots than in use
    CHECK(state.slot_count() == 2);
    CHECK(state.verify().empty());
    const std::pair<std::uint32_t, std::uint32_t> order[] = {{2, 6}, {0, 2}};
    REQUIRE(state.restore_free_slots(3, order));
    CHECK(state.verify().empty());
    auto a = allocator<best_fit>::adopt(std::move(state));
    CHECK(a.try_allocate(request::gpus(1))->value == ((std::uint64_t{7} << 32) | 3U));
    CHECK(a.try_allocate(request::gpus(1))->value == ((std::uint64_t{3} << 32) | 1U));
    CHECK(a.try_allocate(request::gpus(1))->value == ((std::uint64_t{1} << 32) | 4U));
}

}  // namespace test_state_cluster_state
