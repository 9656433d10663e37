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
