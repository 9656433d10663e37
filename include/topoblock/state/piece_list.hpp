#pragma once

#include <topoblock/request/placement.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

namespace topoblock {

// The pieces of one allocation, read as a range of `piece` values in the
// order the policy chose them. Stored as runs: consecutive nodes holding the
// same GPUs (a job's whole trays, one after another) are one 16-byte run, and
// an allocation of a single run (most jobs: part of one node, or one stretch
// of whole nodes) keeps it inline, with no heap block. That keeps a live
// allocation's record within one cache line; see docs/performance.md.
class piece_list {
    using run = piece_run;
    // The heap form: `zero` shares its place with run::nodes, which is never
    // 0 for an inline run, and tells the two forms apart.
    struct spilled {
        std::uint32_t count = 0;
        std::uint32_t zero = 0;
        run* runs = nullptr;
    };

public:
    using iterator = detail::run_piece_iterator;

    piece_list() noexcept : many_{} {}
    explicit piece_list(std::span<const piece> pieces) : piece_list() { assign(pieces); }
    explicit piece_list(std::span<const piece_run> runs) : piece_list() { assign(runs); }
    piece_list(const piece_list& other) : piece_list() { assign(other.runs()); }
    piece_list(piece_list&& other) noexcept : piece_list() { *this = std::move(other); }
    piece_list& operator=(const piece_list& other) {
        if (this != &other) assign(other.runs());
        return *this;
    }
    piece_list& operator=(piece_list&& other) noexcept {
        if (this == &other) return *this;
        clear();
        if (other.inline_run()) one_ = other.one_;
        else many_ = other.many_;
        other.many_ = spilled{};
        return *this;
    }
    ~piece_list() { clear(); }

    iterator begin() const noexcept { return {run_data(), 0}; }
    iterator end() const noexcept { return {run_data() + run_count(), 0}; }
    bool empty() const noexcept { return run_count() == 0; }
    // Pieces (nodes), not runs. O(runs).
    std::size_t size() const noexcept {
        std::size_t n = 0;
        for (const run& r : runs()) n += r.nodes;
        return n;
    }
    // The i-th piece. O(runs).
    piece operator[](std::size_t i) const noexcept {
        const run* r = run_data();
        while (i >= r->nodes) i -= r++->nodes;
        return {r->first + static_cast<node_id>(i), r->gpus};
    }
    piece front() const noexcept { return *begin(); }
    piece back() const noexcept {
        const run& last = run_data()[run_count() - 1];
        return {last.first + last.nodes - 1, last.gpus};
    }
    std::vector<piece> to_vector() const { return {begin(), end()}; }
    // Consecutive nodes holding the same GPUs, in order; no two runs could
    // be one.
    std::span<const piece_run> runs() const noexcept { return {run_data(), run_count()}; }
    // Heap bytes beyond the object itself.
    std::size_t heap_bytes() const noexcept { return inline_run() ? 0 : many_.count * sizeof(run); }

    // Replaces the contents; the same pieces read back, in the same order.
    void assign(std::span<const piece> pieces) {
        assign_joined(pieces, [](const piece& p) { return run{p.node, 1, p.gpus}; });
    }
    // The same, from runs (each of at least one node).
    void assign(std::span<const piece_run> runs) {
        assign_joined(runs, [](const run& r) { return r; });
    }
    void clear() noexcept {
        if (!inline_run()) delete[] many_.runs;
        many_ = spilled{};
    }

    friend bool operator==(const piece_list& a, const piece_list& b) noexcept { return std::ranges::equal(a.runs(), b.runs()); }
    friend bool operator==(const piece_list& a, const std::vector<piece>& b) noexcept { return std::ranges::equal(a, b); }

private:
    // Runs are cut where the GPUs differ so that each piece reads back as
    // given; a run that continues the one before joins it.
    static bool joins(const run& before, const run& r) noexcept { return before.followed_by({r.first, r.gpus}); }
    template <class Item, class AsRun>
    void assign_joined(std::span<const Item> items, AsRun as_run) {
        clear();
        std::uint32_t count = 0;
        for (std::size_t i = 0; i < items.size(); ++i) count += i == 0 || !joins(as_run(items[i - 1]), as_run(items[i])) ? 1U : 0U;
        // Storage for `count` runs, inline for one.
        run* out = &one_;
        if (count > 1) {
            out = new run[count];
            many_ = spilled{count, 0, out};
        }
        std::uint32_t r = 0;
        for (const Item& item : items) {
            const run next = as_run(item);
            if (r > 0 && joins(out[r - 1], next)) out[r - 1].nodes += next.nodes;
            else out[r++] = next;
        }
    }
    bool inline_run() const noexcept { return one_.nodes != 0; }
    std::uint32_t run_count() const noexcept { return inline_run() ? 1 : many_.count; }
    const run* run_data() const noexcept { return inline_run() ? &one_ : many_.runs; }

    // Both members begin with two uint32_t, so `one_.nodes` may be read
    // whichever is active (the common initial sequence rule).
    union {
        run one_;
        spilled many_;
    };
};

}  // namespace topoblock
