#pragma once

#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

namespace topoblock {

// GPUs of one node that an allocation holds.
struct piece {
    node_id node = 0;
    gpu_mask gpus = 0;
    friend constexpr bool operator==(const piece&, const piece&) = default;
};

// `nodes` consecutive nodes from `first`, each giving the same GPUs: how
// placements and allocation records store pieces, so that a job's whole
// trays (or whole domains) cost one entry, not one per node.
struct piece_run {
    node_id first = 0;
    std::uint32_t nodes = 0;  // >= 1
    gpu_mask gpus = 0;
    friend constexpr bool operator==(const piece_run&, const piece_run&) = default;
    bool followed_by(const piece& p) const noexcept { return p.node == first + nodes && p.gpus == gpus; }
};

namespace detail {

// Reads runs as the pieces they hold, in order.
class run_piece_iterator {
public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = piece;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = piece;

    run_piece_iterator() = default;
    run_piece_iterator(const piece_run* run, std::uint32_t offset) noexcept : run_(run), offset_(offset) {}
    piece operator*() const noexcept { return {run_->first + offset_, run_->gpus}; }
    run_piece_iterator& operator++() noexcept {
        if (++offset_ == run_->nodes) {
            ++run_;
            offset_ = 0;
        }
        return *this;
    }
    run_piece_iterator operator++(int) noexcept {
        run_piece_iterator before = *this;
        ++*this;
        return before;
    }
    friend bool operator==(const run_piece_iterator& a, const run_piece_iterator& b) noexcept {
        return a.run_ == b.run_ && a.offset_ == b.offset_;
    }

private:
    const piece_run* run_ = nullptr;
    std::uint32_t offset_ = 0;
};

// Runs seen as a range of pieces.
struct run_pieces {
    std::span<const piece_run> runs;
    run_piece_iterator begin() const noexcept { return {runs.data(), 0}; }
    run_piece_iterator end() const noexcept { return {runs.data() + runs.size(), 0}; }
};

}  // namespace detail

// Where a request goes: the pieces, in the order the policy chose them,
// kept as runs (a piece that continues the last run extends it). The
// allocator reuses one placement for every call, so a policy appends to it
// and never allocates once its capacity has grown.
class placement {
public:
    void clear() noexcept {
        runs_.clear();
        size_ = 0;
    }
    // Keeps the first `count` pieces, dropping those added after them (an
    // attempt given up).
    void truncate(std::size_t count) noexcept {
        while (size_ > count) {
            piece_run& last = runs_.back();
            const std::size_t drop = std::min<std::size_t>(last.nodes, size_ - count);
            size_ -= drop;
            last.nodes -= static_cast<std::uint32_t>(drop);
            if (last.nodes == 0) runs_.pop_back();
        }
    }
    void add(node_id node, gpu_mask gpus) { add_nodes(node, 1, gpus); }
    // The same GPUs on each of `count` nodes from `first`.
    void add_nodes(node_id first, std::uint32_t count, gpu_mask gpus) {
        if (count == 0) return;
        if (!runs_.empty() && runs_.back().followed_by({first, gpus})) runs_.back().nodes += count;
        else runs_.push_back({first, count, gpus});
        size_ += count;
    }
    // Lists the pieces in node order, runs that continue one another joined:
    // for a policy whose order of choice means nothing (a Slurm job holds
    // a set of nodes). O(runs) when they are in order already, as they
    // mostly are; O(runs x log) otherwise.
    void sort_by_node() {
        if (runs_.size() < 2) return;
        // A total order, so that the listing does not depend on how the sort
        // goes (a node held twice is in two runs with one first node);
        // std::sort does not allocate.
        const auto by_node = [](const piece_run& a, const piece_run& b) {
            return a.first != b.first ? a.first < b.first : a.nodes != b.nodes ? a.nodes < b.nodes : a.gpus < b.gpus;
        };
        if (!std::is_sorted(runs_.begin(), runs_.end(), by_node)) std::sort(runs_.begin(), runs_.end(), by_node);
        std::size_t kept = 0;
        for (std::size_t i = 1; i < runs_.size(); ++i) {
            if (runs_[kept].followed_by({runs_[i].first, runs_[i].gpus})) runs_[kept].nodes += runs_[i].nodes;
            else runs_[++kept] = runs_[i];
        }
        runs_.resize(kept + 1);
    }
    std::span<const piece_run> runs() const noexcept { return runs_; }
    detail::run_pieces pieces() const noexcept { return {runs_}; }
    bool empty() const noexcept { return size_ == 0; }
    // Pieces (nodes), not runs.
    std::size_t size() const noexcept { return size_; }
    // Calls f(node, gpus) for each piece on a node of [begin, end), run by
    // run: what a policy placing several parts in turn already took in one
    // domain.
    template <class F>
    void for_each_piece_in(node_id begin, node_id end, F&& f) const {
        for (const piece_run& r : runs_)
            for (node_id n = std::max(r.first, begin); n < std::min(r.first + r.nodes, end); ++n) f(n, r.gpus);
    }
    // GPUs already taken on `node` by this placement (policies that place
    // several parts in turn use it to avoid taking a GPU twice).
    gpu_mask taken_on(node_id node) const noexcept {
        gpu_mask taken = 0;
        for (const auto& r : runs_)
            if (node >= r.first && node - r.first < r.nodes) taken |= r.gpus;
        return taken;
    }

private:
    std::vector<piece_run> runs_;
    std::size_t size_ = 0;
};

}  // namespace topoblock
