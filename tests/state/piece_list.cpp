// piece_list must read back exactly the pieces it was given, in order, and
// keep single-run allocations off the heap.

#include "../reference_model.hpp"

#include <topoblock/state/allocation.hpp>
#include <topoblock/state/piece_list.hpp>

#include <doctest/doctest.h>

#include <utility>
#include <vector>

namespace test_state_piece_list {

using namespace topoblock;

TEST_CASE("piece_list: runs of whole nodes stay inline, other shapes spill and read back") {
    const std::vector<piece> one_node{{7, 0b0100}};
    const std::vector<piece> trays{{4, 0xf}, {5, 0xf}, {6, 0xf}, {7, 0xf}};
    const std::vector<piece> trays_and_rest{{4, 0xf}, {5, 0xf}, {9, 0b0011}};
    for (const auto* given : {&one_node, &trays, &trays_and_rest}) {
        const piece_list list(*given);
        CHECK(list == *given);
        CHECK(list.to_vector() == *given);
        CHECK(list.size() == given->size());
        CHECK(list.front() == given->front());
        CHECK(list.back() == given->back());
        for (std::size_t i = 0; i < given->size(); ++i) CHECK(list[i] == (*given)[i]);
    }
    CHECK(piece_list(one_node).heap_bytes() == 0);
    CHECK(piece_list(trays).heap_bytes() == 0);
    CHECK(piece_list(trays_and_rest).heap_bytes() > 0);
    CHECK(piece_list().empty());
    CHECK(piece_list() == std::vector<piece>{});
    // Equal masks on consecutive nodes merge; a different mask starts a run.
    const std::vector<piece> split{{1, 0x3}, {2, 0xf}, {3, 0xf}};
    CHECK(piece_list(split) == split);
    CHECK(piece_list(split).heap_bytes() > 0);
}

TEST_CASE("piece_list: copies, moves and reassignments against a vector model") {
    test::rng r(11);
    std::vector<std::pair<piece_list, std::vector<piece>>> lists;
    for (int round = 0; round < 3000; ++round) {
        std::vector<piece> given;
        const std::uint32_t count = r.between(0, 12);
        node_id node = r.between(0, 50);
        for (std::uint32_t i = 0; i < count; ++i) {
            node += r.chance(70) ? 1 : r.between(2, 9);
            given.push_back({node, r.chance(70) ? 0xfULL : r.between(1, 15)});
        }
        const std::uint32_t action = r.between(0, 3);
        if (action == 0 || lists.empty()) {
            lists.emplace_back(piece_list(given), given);
        } else {
            auto& [list, model] = lists[r.between(0, static_cast<std::uint32_t>(lists.size() - 1))];
            if (action == 1) {
                list.assign(given);
                model = given;
            } else if (action == 2) {
                piece_list copy = list;
                REQUIRE(copy == model);
                piece_list moved = std::move(copy);
                REQUIRE(moved == model);
                list = moved;
            } else {
                list.clear();
                model.clear();
            }
        }
        for (const auto& [list, model] : lists) REQUIRE(list == model);
    }
}

TEST_CASE("allocation_record: a live allocation's record fits a cache line") {
    CHECK(sizeof(piece_list) == 16);
    CHECK(sizeof(allocation_record) <= 48);
}

}  // namespace test_state_piece_list
