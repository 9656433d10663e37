// free_capacity_tree must report the same groups as a pass over all of them,
// whatever the order of changes, and keep its maxima exact.

#include "../reference_model.hpp"

#include <topoblock/state/free_capacity.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace test_state_free_capacity {

using namespace topoblock;

TEST_CASE("free_capacity_tree lists the groups holding a size like a pass over every group") {
    test::rng r(17);
    for (std::size_t groups : {1U, 2U, 3U, 7U, 8U, 9U, 64U, 125U, 500U}) {
        CAPTURE(groups);
        free_capacity_tree tree(groups);
        std::vector<free_capacity> model(groups);
        CHECK(tree.size() == groups);
        for (int op = 0; op < 3000; ++op) {
            const std::size_t g = r.between(0, static_cast<std::uint32_t>(groups - 1));
            // Up or down, as domains of the group are taken and given back;
            // a decrease arrives as a wrapped addition, as the state sends it.
            const std::uint64_t gpus = r.chance(50) ? r.between(0, 300) : 0 - std::uint64_t{r.between(0, static_cast<std::uint32_t>(model[g].gpus))};
            const std::uint64_t nodes = r.chance(50) ? r.between(0, 40) : 0 - std::uint64_t{r.between(0, static_cast<std::uint32_t>(model[g].nodes))};
            tree.add(g, gpus, nodes);
            model[g].gpus += gpus;
            model[g].nodes += nodes;
            REQUIRE(tree[g] == model[g]);
            const bool by_nodes = r.chance(50);
            const std::uint64_t at_least = r.chance(10) ? 0 : r.between(1, by_nodes ? 200 : 1500);
            std::vector<std::size_t> expected, listed;
            for (std::size_t k = 0; k < groups; ++k)
                if ((by_nodes ? model[k].nodes : model[k].gpus) >= at_least) expected.push_back(k);
            tree.for_each_at_least(by_nodes, at_least, [&](std::size_t k) { listed.push_back(k); });
            REQUIRE(listed == expected);
        }
        // Its maxima are those a tree built from the totals at once has.
        free_capacity_tree fresh(groups);
        for (std::size_t k = 0; k < groups; ++k) fresh.add(k, model[k].gpus, model[k].nodes);
        CHECK(fresh == tree);
    }
}

}  // namespace test_state_free_capacity
