// A placement keeps its pieces as runs: it must read back exactly the pieces
// added, in order, with no two runs that could be one, and truncate to a
// piece count as a vector would; sorted by node, it lists a set of distinct
// nodes one way, however they were added.

#include "../reference_model.hpp"

#include <topoblock/request/placement.hpp>
#include <topoblock/state/piece_list.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

namespace test_request_placement {

using namespace topoblock;

namespace {

std::vector<piece> read_back(const placement& p) {
    std::vector<piece> out;
    for (const piece q : p.pieces()) out.push_back(q);
    return out;
}

gpu_mask taken_on_model(const std::vector<piece>& model, node_id node) {
    gpu_mask taken = 0;
    for (const piece& q : model)
        if (q.node == node) taken |= q.gpus;
    return taken;
}

}  // namespace

TEST_CASE("placement: consecutive nodes with the same GPUs are one run") {
    placement p;
    p.add_nodes(10, 3, 0xf);  // 10-12
    p.add(13, 0xf);           // continues the run
    p.add(14, 0x3);           // other GPUs: a new run
    p.add_nodes(20, 0, 0xf);  // nothing
    p.add_nodes(15, 2, 0x3);  // continues the second
    REQUIRE(p.runs().size() == 2);
    CHECK(p.runs()[0] == piece_run{10, 4, 0xf});
    CHECK(p.runs()[1] == piece_run{14, 3, 0x3});
    CHECK(p.size() == 7);
    CHECK(p.taken_on(12) == 0xf);
    CHECK(p.taken_on(16) == 0x3);
    CHECK(p.taken_on(17) == 0);
    CHECK(p.taken_on(9) == 0);
    p.truncate(5);  // 10-13 and 14
    REQUIRE(p.runs().size() == 2);
    CHECK(p.runs()[1] == piece_run{14, 1, 0x3});
    p.truncate(2);
    REQUIRE(p.runs().size() == 1);
    CHECK(p.runs()[0] == piece_run{10, 2, 0xf});
    p.truncate(9);  // more than it holds: no change
    CHECK(p.size() == 2);
    p.clear();
    CHECK(p.empty());
    CHECK(p.runs().empty());
}

TEST_CASE("placement: add, add_nodes and truncate against a vector of pieces") {
    test::rng r(5);
    placement p;
    std::vector<piece> model;
    for (int step = 0; step < 20000; ++step) {
        const std::uint32_t action = r.between(0, 9);
        if (action < 5) {
            const node_id node = model.empty() || r.chance(30) ? r.between(0, 60) : model.back().node + r.between(0, 2);
            const gpu_mask gpus = r.chance(70) ? 0xfULL : r.between(1, 15);
            p.add(node, gpus);
            model.push_back({node, gpus});
        } else if (action < 8) {
            const node_id first = r.between(0, 60);
            const std::uint32_t count = r.between(0, 5);
            const gpu_mask gpus = r.chance(70) ? 0xfULL : r.between(1, 15);
            p.add_nodes(first, count, gpus);
            for (std::uint32_t i = 0; i < count; ++i) model.push_back({first + i, gpus});
        } else if (action == 8) {
            const std::size_t keep = r.between(0, static_cast<std::uint32_t>(model.size()) + 1);
            p.truncate(keep);
            if (keep < model.size()) model.resize(keep);
        } else if (r.chance(10)) {
            p.clear();
            model.clear();
        }
        REQUIRE(p.size() == model.size());
        REQUIRE(p.empty() == model.empty());
        REQUIRE(read_back(p) == model);
        for (std::size_t i = 1; i < p.runs().size(); ++i) {
            const piece_run& before = p.runs()[i - 1];
            REQUIRE_FALSE(before.followed_by({p.runs()[i].first, p.runs()[i].gpus}));
        }
        const node_id probe = r.between(0, 70);
        REQUIRE(p.taken_on(probe) == taken_on_model(model, probe));
        // An allocation record built from the runs reads back the same pieces.
        REQUIRE(piece_list(p.runs()) == model);
    }
}

TEST_CASE("placement: sort_by_node lists distinct nodes in node order, runs joined") {
    test::rng r(11);
    for (int round = 0; round < 2000; ++round) {
        // Distinct nodes of 0..79, added in a random order, some as runs.
        std::vector<piece> model;
        placement p;
        std::vector<std::uint8_t> used(80, 0);
        const std::uint32_t adds = r.between(0, 12);
        for (std::uint32_t a = 0; a < adds; ++a) {
            const node_id first = r.between(0, 79);
            std::uint32_t count = r.between(1, 6);
            const gpu_mask gpus = r.chance(70) ? 0xfULL : r.between(1, 15);
            for (std::uint32_t i = 0; i < count; ++i)
                if (first + i >= used.size() || used[first + i] != 0) count = i;
            for (std::uint32_t i = 0; i < count; ++i) {
                used[first + i] = 1;
                model.push_back({first + i, gpus});
            }
            p.add_nodes(first, count, gpus);
        }
        p.sort_by_node();
        std::sort(model.begin(), model.end(), [](const piece& x, const piece& y) { return x.node < y.node; });
        REQUIRE(read_back(p) == model);
        REQUIRE(p.size() == model.size());
        for (std::size_t i = 1; i < p.runs().size(); ++i) {
            const piece_run& before = p.runs()[i - 1];
            REQUIRE(before.first + before.nodes <= p.runs()[i].first);
            REQUIRE_FALSE(before.followed_by({p.runs()[i].first, p.runs()[i].gpus}));
        }
        // The listing is the set's: the same pieces one at a time, in
        // reverse, sort to the same runs.
        placement one_by_one;
        for (std::size_t i = model.size(); i-- > 0;) one_by_one.add(model[i].node, model[i].gpus);
        one_by_one.sort_by_node();
        REQUIRE(std::vector<piece_run>(one_by_one.runs().begin(), one_by_one.runs().end()) ==
                std::vector<piece_run>(p.runs().begin(), p.runs().end()));
    }
}

}  // namespace test_request_placement
