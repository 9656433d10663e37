#pragma once

#include <topoblock/support/heap_bytes.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace topoblock {

// Free capacity a new job can use: free GPUs on up nodes of open domains.
struct free_capacity {
    std::uint64_t gpus = 0;
    std::uint64_t nodes = 0;
    friend constexpr bool operator==(const free_capacity&, const free_capacity&) = default;
};

// The free capacity of each group of one topology level, under a max tree
// of free GPUs and free nodes: "which groups can hold N?" visits only the
// subtrees whose maximum reaches N (a job no group holds is answered at the
// root), and a change climbs only as far as a maximum changes.
class free_capacity_tree {
public:
    free_capacity_tree() = default;
    explicit free_capacity_tree(std::size_t groups)
        : groups_(groups), leaves_(std::bit_ceil(std::max<std::size_t>(groups, 1))), entries_(2 * leaves_) {}

    std::size_t size() const noexcept { return groups_; }
    const free_capacity& operator[](std::size_t g) const noexcept { return entries_[leaves_ + g]; }

    // Adds to group g's totals; the changes wrap modulo 2^64, so a decrease
    // is the two's complement of the amount.
    void add(std::size_t g, std::uint64_t gpus_change, std::uint64_t nodes_change) noexcept {
        std::size_t i = leaves_ + g;
        entries_[i].gpus += gpus_change;
        entries_[i].nodes += nodes_change;
        for (i /= 2; i >= 1; i /= 2) {
            const free_capacity larger = max_of(entries_[2 * i], entries_[2 * i + 1]);
            if (larger == entries_[i]) break;
            entries_[i] = larger;
        }
    }

    // Calls f(group) for each group whose free GPUs (by_nodes: free nodes)
    // are at least `at_least`, in group order. O(groups called * log groups).
    template <class F>
    void for_each_at_least(bool by_nodes, std::uint64_t at_least, F&& f) const {
        const auto value = [&](std::size_t i) { return by_nodes ? entries_[i].nodes : entries_[i].gpus; };
        std::size_t pending[64];  // a path from the root: at most one sibling per level
        std::size_t top = 0;
        if (value(1) >= at_least) pending[top++] = 1;
        while (top > 0) {
            const std::size_t i = pending[--top];
            if (i >= leaves_) {
                if (i - leaves_ < groups_) f(i - leaves_);  // not a padding leaf
                continue;
            }
            // The right child first onto the stack, so the left is visited first.
            if (value(2 * i + 1) >= at_least) pending[top++] = 2 * i + 1;
            if (value(2 * i) >= at_least) pending[top++] = 2 * i;
        }
    }

    std::size_t memory_bytes() const noexcept { return heap_bytes(entries_); }
    // The same totals (a change climbs until a maximum stands, so the maxima follow from them).
    friend bool operator==(const free_capacity_tree&, const free_capacity_tree&) = default;

private:
    static free_capacity max_of(const free_capacity& a, const free_capacity& b) noexcept {
        return {std::max(a.gpus, b.gpus), std::max(a.nodes, b.nodes)};
    }

    std::size_t groups_ = 0;
    std::size_t leaves_ = 1;
    std::vector<free_capacity> entries_ = std::vector<free_capacity>(2);  // [1]: the root; leaves from leaves_
};

}  // namespace topoblock
