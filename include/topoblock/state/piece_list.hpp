#pragma once

#include <topoblock/request/placement.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

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
    struct run {
        node_id first = 0;
        std::uint32_t nodes = 0;  // >= 1
        gpu_mask gpus = 0;
        friend constexpr bool operator==(const run&, const run&) = default;
    };
    // The heap form: `zero` shares its place with run::nodes, which is never
    // 0 for an inline run, and tells the two forms apart.
    struct spilled {
        std::uint32_t count = 0;
        std::uint32_t zero = 0;
        run* runs = nullptr;
    };

public:
    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = piece;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = piece;

        iterator() = default;
        piece operator*() const noexcept { return {run_->first + offset_, run_->gpus}; }
        iterator& operator++() noexcept {
            if (++offset_ == run_->nodes) {
                ++run_;
                offset_ = 0;
            }
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator before = *this;
            ++*this;
            return before;
        }
        friend bool operator==(const iterator& a, const iterator& b) noexcept {
            return a.run_ == b.run_ && a.offset_ == b.offset_;
        }

    private:
        friend class piece_list;
        iterator(const run* r, std::uint32_t offset) noexcept : run_(r), offset_(offset) {}
        const run* run_ = nullptr;
        std::uint32_t offset_ = 0;
    };

    piece_list() noexcept : many_{} {}
    explicit piece_list(std::span<const piece> pieces) : piece_list() { assign(pieces); }
    piece_list(const piece_list& other) : piece_list() { copy_from(other); }
    piece_list(piece_list&& other) noexcept : many_{} { steal(other); }
    piece_list& operator=(const piece_list& other) {
        if (this != &other) {
            clear();
            copy_from(other);
        }
        return *this;
    }
    piece_list& operator=(piece_list&& other) noexcept {
        if (this != &other) {
            clear();
            steal(other);
        }
        return *this;
    }
    ~piece_list() { clear(); }

    iterator begin() const noexcept { return {runs(), 0}; }
    iterator end() const noexcept { return {runs() + run_count(), 0}; }
    bool empty() const noexcept { return run_count() == 0; }
    // Pieces (nodes), not runs. O(runs).
    std::size_t size() const noexcept {
        std::size_t n = 0;
        for (std::uint32_t r = 0; r < run_count(); ++r) n += runs()[r].nodes;
        return n;
    }
    // The i-th piece. O(runs).
    piece operator[](std::size_t i) const noexcept {
        const run* r = runs();
        while (i >= r->nodes) i -= r++->nodes;
        return {r->first + static_cast<node_id>(i), r->gpus};
    }
    piece front() const noexcept { return *begin(); }
    piece back() const noexcept {
        const run& last = runs()[run_count() - 1];
        return {last.first + last.nodes - 1, last.gpus};
    }
    std::vector<piece> to_vector() const { return {begin(), end()}; }
    // Calls f(first node, node count, gpus) for each run of consecutive
    // nodes holding the same GPUs, in order.
    template <class F>
    void for_each_run(F&& f) const {
        for (std::uint32_t r = 0; r < run_count(); ++r) f(runs()[r].first, runs()[r].nodes, runs()[r].gpus);
    }
    // Heap bytes beyond the object itself.
    std::size_t heap_bytes() const noexcept { return inline_run() ? 0 : many_.count * sizeof(run); }

    // Replaces the contents; the same pieces read back, in the same order.
    void assign(std::span<const piece> pieces) {
        clear();
        std::uint32_t count = 0;
        for (std::size_t i = 0; i < pieces.size(); ++i) count += i == 0 || !extends(pieces[i - 1], pieces[i]) ? 1U : 0U;
        if (count == 1) {
            one_ = run{pieces[0].node, static_cast<std::uint32_t>(pieces.size()), pieces[0].gpus};
            return;
        }
        if (count == 0) return;
        run* out = new run[count];
        std::uint32_t r = 0;
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            if (i > 0 && extends(pieces[i - 1], pieces[i])) ++out[r - 1].nodes;
            else out[r++] = run{pieces[i].node, 1, pieces[i].gpus};
        }
        many_ = spilled{count, 0, out};
    }
    void clear() noexcept {
        if (!inline_run()) delete[] many_.runs;
        many_ = spilled{};
    }

    friend bool operator==(const piece_list& a, const piece_list& b) noexcept {
        if (a.run_count() != b.run_count()) return false;
        for (std::uint32_t r = 0; r < a.run_count(); ++r)
            if (!(a.runs()[r] == b.runs()[r])) return false;
        return true;
    }

    friend bool operator==(const piece_list& a, const std::vector<piece>& b) noexcept {
        std::size_t i = 0;
        for (const piece p : a)
            if (i >= b.size() || !(b[i++] == p)) return false;
        return i == b.size();
    }

private:
    // Runs are cut where the GPUs differ so that each piece reads back as given.
    static bool extends(const piece& before, const piece& p) noexcept {
        return p.node == before.node + 1 && p.gpus == before.gpus;
    }
    bool inline_run() const noexcept { return one_.nodes != 0; }
    std::uint32_t run_count() const noexcept { return inline_run() ? 1 : many_.count; }
    const run* runs() const noexcept { return inline_run() ? &one_ : many_.runs; }

    void copy_from(const piece_list& other) {
        if (other.inline_run()) {
            one_ = other.one_;
        } else if (other.many_.count != 0) {
            run* out = new run[other.many_.count];
            for (std::uint32_t r = 0; r < other.many_.count; ++r) out[r] = other.many_.runs[r];
            many_ = spilled{other.many_.count, 0, out};
        }
    }
    void steal(piece_list& other) noexcept {
        if (other.inline_run()) one_ = other.one_;
        else many_ = other.many_;
        other.many_ = spilled{};
    }

    // Both members begin with two uint32_t, so `one_.nodes` may be read
    // whichever is active (the common initial sequence rule).
    union {
        run one_;
        spilled many_;
    };
};

}  // namespace topoblock
