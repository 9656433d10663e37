#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/policy/toolkit/place_each_segment.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/support/bucket_index.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/support/noinline.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace topoblock {

namespace detail {

// Where the sub-blocks of one domain lie: block b covers the nodes
// [b * nodes_per_block, ...) by index inside the domain; the last block is
// short (the remainder) when the node count is not a multiple of the block.
struct block_layout {
    std::uint32_t nodes_per_block = 1;
    std::uint32_t full_blocks = 0;
    std::uint32_t tail_nodes = 0;
    std::uint32_t gpus_per_node = 0;

    // A sub-block of `block_gpus` GPUs is the fewest whole nodes that hold
    // them (at least one). nodes_per_block stops at one past the domain's
    // nodes (its one short block), so that no product with it wraps.
    static block_layout of(const domain_shape& info, std::uint32_t block_gpus) noexcept {
        block_layout l;
        l.gpus_per_node = info.gpus_per_node;
        if (info.gpus_per_node != 0 && block_gpus > info.gpus_per_node) {
            const std::uint64_t nodes = (std::uint64_t{block_gpus} + info.gpus_per_node - 1) / info.gpus_per_node;
            l.nodes_per_block = static_cast<std::uint32_t>(std::min<std::uint64_t>(nodes, std::uint64_t{info.node_count} + 1));
        }
        l.full_blocks = info.node_count / l.nodes_per_block;
        l.tail_nodes = info.node_count % l.nodes_per_block;
        return l;
    }
    std::uint32_t count() const noexcept { return full_blocks + (tail_nodes != 0 ? 1U : 0U); }
    std::uint32_t node_count() const noexcept { return full_blocks * nodes_per_block + tail_nodes; }
    std::uint32_t first_node(std::uint32_t b) const noexcept { return b * nodes_per_block; }
    std::uint32_t nodes_of(std::uint32_t b) const noexcept { return b < full_blocks ? nodes_per_block : tail_nodes; }
    std::uint32_t gpus_of(std::uint32_t b) const noexcept { return nodes_of(b) * gpus_per_node; }

    friend bool operator==(const block_layout&, const block_layout&) = default;
};

// A run of consecutive sub-blocks inside one domain.
struct block_window {
    std::uint32_t first = 0;
    std::uint32_t blocks = 0;  // 0: none
    std::uint32_t gpus = 0;
    std::uint32_t run_gpus = 0;  // the free run it lies in
};

// What the policy keeps per domain: free sub-blocks and the GPUs of the
// longest run of consecutive free ones.
struct block_summary {
    std::uint32_t free_blocks = 0;
    std::uint32_t longest_run_gpus = 0;
};

// Calls f(first, end) for each run [first, end) of consecutive set bits
// (free nodes, free sub-blocks), lowest first.
template <class Set, class F>
TOPOBLOCK_ALWAYS_INLINE void for_each_free_run(const Set& free, F&& f) {
    if constexpr (Set::word_count == 1) {
        // Two bit scans a run: this runs on every change and placement.
        std::uint64_t rest = free.word(0);
        while (rest != 0) {
            const auto first = static_cast<std::uint32_t>(std::countr_zero(rest));
            const auto bits = static_cast<std::uint32_t>(std::countr_one(rest >> first));
            f(first, first + bits);
            rest &= rest + (rest & (~rest + 1));  // the carry clears the lowest run
        }
    } else {
        for (std::size_t a = free.find_first(); a < Set::capacity;) {
            const std::size_t e = free.find_next_clear(a);
            f(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(e));
            a = free.find_next(e);
        }
    }
}

// The free sub-blocks of a domain given its wholly free nodes: the blocks
// whose every node is wholly free.
template <class NodeSet>
TOPOBLOCK_ALWAYS_INLINE NodeSet free_blocks_among(const NodeSet& free_nodes, const block_layout& l) noexcept {
    const std::uint32_t per_block = l.nodes_per_block, full = l.full_blocks;
    const std::uint32_t tail_start = full * per_block, tail_end = tail_start + l.tail_nodes;
    NodeSet free;
    // A run of free nodes at a time: its full blocks, and the short last one
    // when the run covers it.
    for_each_free_run(free_nodes, [&](std::uint32_t a, std::uint32_t e) {
        const std::uint32_t first = (a + per_block - 1) / per_block;
        const std::uint32_t end = std::min(e / per_block, full);
        if (end > first) free.set_range(first, end - first);
        if (tail_end != tail_start && a <= tail_start && e >= tail_end) free.set(full);
    });
    return free;
}

// The summary of a domain whose free sub-blocks are `free`: a step per run.
template <class Blocks>
TOPOBLOCK_ALWAYS_INLINE block_summary summarize_blocks(const block_layout& l, const Blocks& free) noexcept {
    block_summary s;
    const std::uint32_t block_gpus = l.nodes_per_block * l.gpus_per_node;
    const std::uint32_t tail_short = (l.nodes_per_block - l.tail_nodes) * l.gpus_per_node;
    for_each_free_run(free, [&](std::uint32_t a, std::uint32_t e) {
        std::uint32_t gpus = (e - a) * block_gpus;
        if (e == l.count() && l.tail_nodes != 0) gpus -= tail_short;
        s.free_blocks += e - a;
        s.longest_run_gpus = std::max(s.longest_run_gpus, gpus);
    });
    return s;
}

// The run of free sub-blocks that holds `need` GPUs with the fewest GPUs (so
// a short remainder block beats a full one), then inside the tightest free
// run, then the lowest start; none (0 blocks) for a need of 0. Every block
// but the short last one holds the same GPUs, so a run's best window is the
// `full` blocks needed from its start, unless the run ends at the short
// block and fewer full blocks before it hold the job with it.
template <class Blocks>
block_window best_window(const block_layout& l, const Blocks& free, std::uint64_t need) noexcept {
    const std::uint64_t block_gpus = std::uint64_t{l.nodes_per_block} * l.gpus_per_node;
    if (need == 0 || block_gpus == 0) return {};
    const std::uint64_t tail_gpus = std::uint64_t{l.tail_nodes} * l.gpus_per_node;
    const std::uint64_t full = (need + block_gpus - 1) / block_gpus;
    const std::uint64_t before_tail = need <= tail_gpus ? 0 : (need - tail_gpus + block_gpus - 1) / block_gpus;
    block_window best;
    for_each_free_run(free, [&](std::uint32_t a, std::uint32_t e) {
        const bool ends_short = e == l.count() && l.tail_nodes != 0;
        const std::uint32_t full_blocks = e - a - (ends_short ? 1U : 0U);
        const auto run_gpus = static_cast<std::uint32_t>(full_blocks * block_gpus + (ends_short ? tail_gpus : 0));
        block_window w;
        if (ends_short && before_tail < full && before_tail <= full_blocks) {
            const auto blocks = static_cast<std::uint32_t>(before_tail + 1);
            w = {e - blocks, blocks, static_cast<std::uint32_t>(before_tail * block_gpus + tail_gpus), run_gpus};
        } else if (full <= full_blocks) {
            w = {a, static_cast<std::uint32_t>(full), static_cast<std::uint32_t>(full * block_gpus), run_gpus};
        }
        if (w.blocks != 0 && (best.blocks == 0 || w.gpus < best.gpus || (w.gpus == best.gpus && w.run_gpus < best.run_gpus)))
            best = w;
    });
    return best;
}

// Adds the window's nodes, whole (free sub-blocks hold wholly free nodes
// only), to the placement.
template <class State>
void take_window(const State& state, domain_id d, const block_layout& l, const block_window& w, placement& out) {
    TOPOBLOCK_ASSERT(w.blocks != 0 && w.first + w.blocks <= l.count());
    const domain_shape info = state.topo().shape(d);
    const std::uint32_t begin = l.first_node(w.first);
    const std::uint32_t end = l.first_node(w.first + w.blocks - 1) + l.nodes_of(w.first + w.blocks - 1);
    out.add_nodes(info.first_node + begin, end - begin, full_gpu_mask(info.gpus_per_node));
}

}  // namespace detail

// The NVL72 sub-block scheme (Slurm topology/block with base blocks cut into
// sub-blocks): each domain is cut into aligned sub-blocks of `block_gpus`
// GPUs (whole nodes: 8 GPUs = 2 trays, 16 = 4 trays on NVL72), and a job
// holds whole sub-blocks only.
// - Rounding: a request takes the fewest consecutive free sub-blocks that
//   hold it; the GPUs beyond it are held idle, internal fragmentation (a
//   4-GPU job on 8-GPU sub-blocks holds 8). A node request counts its
//   nodes' GPUs.
// - Remainder: a domain whose node count is not a multiple of the block (18
//   trays, 4-tray blocks: 4 blocks + 2 trays) ends in a short sub-block; a
//   job takes the window holding the fewest GPUs, so small jobs fill it first.
// - A job that fits in one domain goes to the domain with the fewest free
//   sub-blocks that has a long enough free run (lowest index on ties);
//   inside it, the window holding the fewest GPUs, then the one in the
//   tightest free run, then the lowest.
// - A larger job, or a locality::prefer / any job no domain's free run
//   holds, takes wholly free domains (toolkit::pick_whole_domains): all but
//   the last held whole, the last holding the best window for the rest. A
//   block job never scatters over partly used domains.
// - Segments: each segment, rounded up on its own, is a run in one domain
//   chosen as above, counting what earlier segments took.
// - exclusive_domain: only idle domains; the job holds its sub-blocks and
//   closes the rest of the domain.
// Cost: a key lookup per row of free sub-block counts passed (node requests
// on mixed node sizes and exclusive jobs: a walk over a row's domains), and
// a few bit scans per free run of the chosen domain; O(domains) for
// segments. Per change: the domain's free sub-blocks from its wholly free
// nodes, and one bucket move when they changed.
class contiguous_block {
public:
    // The size is checked against the topology when the allocator is built.
    explicit contiguous_block(std::uint32_t block_gpus = 8) noexcept : block_gpus_(block_gpus) {}

    std::string_view name() const noexcept { return "contiguous-block"; }
    std::uint32_t block_gpus() const noexcept { return block_gpus_; }
    detail::block_layout layout(const domain_shape& info) const noexcept { return detail::block_layout::of(info, block_gpus_); }

    // Empty when the sub-block size suits `topo`, else what is wrong: 0, one
    // larger than every domain, or one larger than a node that is not a
    // whole number of its GPUs. A size below a node's GPUs is one node there.
    std::string validate(const topology& topo) const {
        const std::string size = "contiguous-block: a sub-block of " + std::to_string(block_gpus_) + " GPUs";
        if (block_gpus_ == 0) return "contiguous-block: the sub-block size must be at least 1 GPU";
        if (topo.domain_count() != 0 && block_gpus_ > topo.max_domain_gpus())
            return size + " is larger than every domain (the largest holds " + std::to_string(topo.max_domain_gpus()) +
                   " GPUs)";
        for (const auto& info : topo.domains())
            if (info.gpus_per_node != 0 && block_gpus_ > info.gpus_per_node && block_gpus_ % info.gpus_per_node != 0)
                return size + " is not a whole number of the " + std::to_string(info.gpus_per_node) +
                       "-GPU nodes of domain '" + info.name + "'";
        return {};
    }

    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        layouts_.clear();
        for (const auto& info : topo.domains()) layouts_.push_back(layout(info));
        free_block_words_.assign(std::size_t{topo.domain_count()} * State::node_set::word_count, 0);
        // The size of a whole sub-block: a domain smaller than one has only a
        // short block (an empty one none), and validate() leaves some domain
        // that holds a whole one.
        std::uint32_t nodes_per_block = 0;
        for (const auto& l : layouts_) nodes_per_block = std::max(nodes_per_block, l.nodes_per_block);
        uniform_block_gpus_ = nodes_per_block * topo.uniform_gpus_per_node();
        // The longest free runs a domain can have (k whole sub-blocks, with
        // or without the short last one), ascending, are the run classes: a
        // domain is filed under free_blocks << class_bits_ | class, so that
        // the fewest free sub-blocks among domains whose run holds the job
        // is a lookup in one index.
        std::vector<bool> possible(std::size_t{topo.max_domain_gpus()} + 1, false);
        most_free_blocks_ = 0;
        for (const auto& l : layouts_) {
            most_free_blocks_ = std::max(most_free_blocks_, l.count());
            const std::uint32_t block = l.nodes_per_block * l.gpus_per_node;
            const std::uint32_t tail = l.tail_nodes * l.gpus_per_node;
            for (std::uint32_t k = 0; k <= l.full_blocks; ++k) {
                if (k > 0) possible[k * block] = true;
                if (tail != 0) possible[k * block + tail] = true;
            }
        }
        run_lengths_.clear();
        for (std::uint32_t r = 1; r < possible.size(); ++r)
            if (possible[r]) run_lengths_.push_back(r);
        const auto classes = static_cast<std::uint32_t>(run_lengths_.size());
        class_at_least_.assign(possible.size(), classes);
        for (std::uint32_t g = 0, c = 0; g < possible.size(); ++g) {
            while (c < classes && run_lengths_[c] < g) ++c;
            class_at_least_[g] = c;
        }
        class_bits_ = classes < 2 ? 0 : static_cast<std::uint32_t>(std::bit_width(classes - 1));
        by_blocks_and_run_ = bucket_index(topo.domain_count(), classes == 0 ? 0 : ((most_free_blocks_ + 1) << class_bits_) - 1);
        windows_.attach(state);
        whole_blocks_ = windows_.kept() ? layouts_.front().count() : 0;
        // Domains all cut alike into few sub-blocks: each set of free
        // sub-blocks' key, worked out once, saves a walk over the free runs
        // per change.
        key_of_blocks_.clear();
        if (State::node_set::word_count == 1 && !layouts_.empty() && layouts_.front().count() <= max_keyed_blocks &&
            std::all_of(layouts_.begin(), layouts_.end(), [&](const detail::block_layout& l) { return l == layouts_.front(); }))
            for (std::uint64_t b = 0; b <= full_gpu_mask(layouts_.front().count()); ++b) {
                fixed_bitset<64> blocks;
                blocks.set_word(0, b);
                key_of_blocks_.push_back(key_of(detail::summarize_blocks(layouts_.front(), blocks)));
            }
        for (domain_id d = 0; d < topo.domain_count(); ++d) refile_blocks(state, d);
    }

    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        TOPOBLOCK_ASSERT(d < layouts_.size());
        windows_.on_domain_change(state, d);
        refile_blocks(state, d);
    }
    // One change of several domains (a multi-domain job): the whole-domain
    // windows file each word once. Out of line, so that the one-domain path
    // stays inlined.
    template <class State>
    TOPOBLOCK_NOINLINE void on_domains_change(const State& state, std::span<const domain_id> changed) {
        windows_.on_domains_change(state, changed);
        for (domain_id d : changed) refile_blocks(state, d);
    }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        if (req.segmented()) return place_segments(state, units, out);
        if (req.count <= units.largest_domain()) {
            const domain_id d = tightest_domain(state, units);
            if (d != npos32) {
                take_best_window(state, d, need_gpus(state, req, req.count, d), out);
                return errc::ok;
            }
            if (req.where == locality::require) return units.shortfall(req.count);
        }
        if (!toolkit::pick_whole_domains(units, req.count, chosen_, &windows_)) return units.shortfall(req.count);
        const std::uint64_t covered = toolkit::take_all_but_last(units, chosen_, out);
        take_best_window(state, chosen_.back(), need_gpus(state, req, req.count - covered, chosen_.back()), out);
        return errc::ok;
    }

    // explain()'s numbers in sub-blocks: a part needs a run of consecutive
    // free sub-blocks in one domain, `most` is the longest such run, `free`
    // the free sub-blocks of the domains the request may use.
    // O(domains x free runs).
    template <class State>
    toolkit::capacity_view measure(const State& state, const request& req) const {
        const toolkit::request_units<State> units{state, req};
        if (!req.exclusive_domain && !key_of_blocks_.empty() && windows_.kept()) return measure_like_domains(state, req);
        toolkit::capacity_view view;
        view.unit = "sub-blocks";
        view.unit_gpus = uniform_block_gpus_;
        view.most_is = "the longest run";
        std::uint64_t fewest = ~std::uint64_t{0};  // units a part needs, over domains
        const std::uint64_t part = req.part_size();
        view = toolkit::scan_domains(state, view, [&](domain_id d) {
            const detail::block_layout& l = layouts_[d];
            const std::uint64_t block = std::uint64_t{l.nodes_per_block} * l.gpus_per_node;
            const std::uint64_t need = need_gpus(state, req, part, d);
            toolkit::scope_offer o;
            if (block == 0) return o;
            fewest = std::min(fewest, (need + block - 1) / block);
            const auto free = kept_blocks<typename State::node_set>(d);
            if (free.any() && units.allowed(d)) {
                o.free = free.count();
                o.most = (detail::summarize_blocks(l, free).longest_run_gpus + block - 1) / block;
                o.holds_now = detail::best_window(l, free, need).blocks != 0;
            }
            // Every node up: every sub-block would be free.
            o.holds_if_emptied = state.domain(d).up_nodes == l.node_count()
                                     ? std::uint64_t{l.node_count()} * l.gpus_per_node >= need
                                     : holds_on_up_nodes(state, d, need);
            return o;
        });
        view.need = fewest == ~std::uint64_t{0} ? 0 : fewest;
        return view;
    }

    // Heap bytes of what the policy keeps besides the state.
    std::size_t memory_bytes() const noexcept {
        return heap_bytes(layouts_) + heap_bytes(free_block_words_) +
               heap_bytes(key_of_blocks_) + by_blocks_and_run_.memory_bytes() + heap_bytes(run_lengths_) +
               heap_bytes(class_at_least_) + windows_.memory_bytes() + heap_bytes(chosen_);
    }

    // What attach and the change hooks keep (testing::check_indexes).
    auto indexes() const noexcept { return std::tie(layouts_, free_block_words_, by_blocks_and_run_, windows_); }

private:
    // Domain d's up nodes, were their jobs ended, would hold a run of
    // sub-blocks of `need` GPUs.
    template <class State>
    bool holds_on_up_nodes(const State& state, domain_id d, std::uint64_t need) const {
        const detail::block_layout& l = layouts_[d];
        typename State::node_set up;  // the nodes that are up, held or not
        for (std::size_t w = 0; w < State::node_set::word_count; ++w) {
            std::uint64_t bits = 0;
            for (std::uint32_t k = 0; k <= l.gpus_per_node; ++k) bits |= state.nodes_with_unheld(d, k).word(w);
            up.set_word(w, bits);
        }
        return detail::best_window(l, detail::free_blocks_among(up, l), need).blocks != 0;
    }

    // measure() on domains all cut alike, for a request that is not
    // exclusive, from the buckets (each key gives its domains' free
    // sub-blocks and longest run) and the wholly free domains, filed nowhere.
    template <class State>
    toolkit::capacity_view measure_like_domains(const State& state, const request& req) const {
        const detail::block_layout& l = layouts_.front();
        const std::uint64_t block = std::uint64_t{l.nodes_per_block} * l.gpus_per_node;
        const std::uint64_t need = need_gpus(state, req, req.part_size(), 0);
        const std::uint64_t domain_gpus = std::uint64_t{l.node_count()} * l.gpus_per_node;
        const std::uint32_t row_keys = std::uint32_t{1} << class_bits_;
        toolkit::capacity_view view;
        view.unit = "sub-blocks";
        view.unit_gpus = uniform_block_gpus_;
        view.most_is = "the longest run";
        view.need = block == 0 ? 0 : (need + block - 1) / block;
        view.scopes = state.topo().domain_count();
        view.holding_if_emptied = toolkit::holding_if_emptied_on_like_domains(
            state, domain_gpus >= need, [&](domain_id d) { return holds_on_up_nodes(state, d, need); });
        const bucket_index& index = by_blocks_and_run_;
        for (std::uint32_t key = index.next_key(0); key != npos32; key = index.next_key(key + 1)) {
            const std::uint32_t domains = index.count(key);
            const std::uint64_t run_gpus = run_lengths_[key & (row_keys - 1)];
            view.free += std::uint64_t{domains} * (key >> class_bits_);
            view.most = std::max(view.most, (run_gpus + block - 1) / block);
            if (run_gpus >= need) view.holding_now += domains;
        }
        view.wholly_free = windows_.wholly_free_count();
        if (view.wholly_free != 0) {
            view.free += std::uint64_t{view.wholly_free} * l.count();
            view.most = std::max<std::uint64_t>(view.most, l.count());
            if (domain_gpus >= need) view.holding_now += view.wholly_free;
        }
        return view;
    }

    // Most changes (a GPU taken on a partly used node, a node freed beside
    // a busy one of its sub-block) leave the free sub-blocks as they were,
    // and then the buckets stand.
    template <class State>
    void refile_blocks(const State& state, domain_id d) {
        const detail::block_layout& l = layouts_[d];
        const std::uint32_t free_nodes = state.domain_open(d) ? state.domain(d).free_nodes : 0;
        typename State::node_set blocks;
        // None or all free (the racks of multi-domain jobs): no node set is walked.
        if (free_nodes == l.node_count()) blocks.set_range(0, l.count());
        else if (free_nodes != 0) blocks = detail::free_blocks_among(state.free_nodes_in(d), l);
        if (!keep_blocks(d, blocks)) return;
        by_blocks_and_run_.assign(d, key_of_blocks_.empty() ? key_of(detail::summarize_blocks(l, blocks))
                                                            : key_of_blocks_[blocks.word(0)]);
    }

    // Where a domain of this summary is filed: its free sub-blocks, then the
    // class of its longest run; nowhere with none free, nor with all free
    // when the whole-domain windows are kept (tightest_domain takes those
    // from the windows, and whole racks move no bucket).
    std::uint32_t key_of(const detail::block_summary& s) const noexcept {
        if (s.free_blocks == 0 || s.free_blocks == whole_blocks_) return npos32;
        return s.free_blocks << class_bits_ | class_at_least_[s.longest_run_gpus];
    }

    // GPUs `units` of the request need in domain `d`.
    template <class State>
    static std::uint64_t need_gpus(const State& state, const request& req, std::uint64_t units, domain_id d) noexcept {
        return req.what == unit::nodes ? units * state.topo().shape(d).gpus_per_node : units;
    }

    // Domain `d`'s free sub-blocks as refile_blocks last kept them (kept, so
    // that a one-domain decision and explain need not derive them again).
    template <class Set>
    Set kept_blocks(domain_id d) const noexcept {
        Set set;
        for (std::size_t w = 0; w < Set::word_count; ++w) set.set_word(w, free_block_words_[d * Set::word_count + w]);
        return set;
    }

    // Keeps `set` as domain `d`'s free sub-blocks; false when they were so.
    template <class Set>
    bool keep_blocks(domain_id d, const Set& set) noexcept {
        std::uint64_t* entry = &free_block_words_[std::size_t{d} * Set::word_count];
        bool changed = false;
        for (std::size_t w = 0; w < Set::word_count; ++w) {
            changed = changed || entry[w] != set.word(w);
            entry[w] = set.word(w);
        }
        return changed;
    }

    // The free sub-blocks of `d` less the nodes the job already holds there
    // (`taken`: earlier segments, the whole domains of a multi-domain job).
    template <class State>
    typename State::node_set free_blocks_for(const State& state, domain_id d, const placement& taken) const {
        if (taken.empty()) return kept_blocks<typename State::node_set>(d);
        const domain_shape info = state.topo().shape(d);
        typename State::node_set nodes;
        if (state.domain_open(d)) nodes = state.free_nodes_in(d);
        taken.for_each_piece_in(info.first_node, info.end_node(), [&](node_id n, gpu_mask) { nodes.reset(n - info.first_node); });
        return detail::free_blocks_among(nodes, layouts_[d]);
    }

    // Adds the best window for `need` GPUs in `d` to `out`; the window is
    // chosen before `out` grows, so `out` may hold earlier segments.
    template <class State>
    void take_best_window(const State& state, domain_id d, std::uint64_t need, placement& out) const {
        const detail::block_layout& l = layouts_[d];
        detail::take_window(state, d, l, detail::best_window(l, free_blocks_for(state, d, out), need), out);
    }

    // The allowed domain with the fewest free sub-blocks whose longest free
    // run holds the job, lowest index on ties; npos32 when none.
    template <class State>
    domain_id tightest_domain(const State& state, const toolkit::request_units<State>& units) const {
        const request& req = units.req;
        // Every domain needs the same GPUs but for node requests on mixed
        // node sizes, which start from a need of 1 and test each domain's.
        // A node request counts the nodes' GPUs, not domain 0's: an empty
        // domain may declare others. Only node requests read the count:
        // reading it for every request measurably slowed refusals.
        const bool one_need = req.what != unit::nodes || state.topo().uniform_gpus_per_node() != 0;
        const std::uint64_t need = !one_need ? 1
                                   : req.what != unit::nodes ? req.count
                                   : req.count * std::uint64_t{state.topo().uniform_gpus_per_node()};
        // No domain with fewer free sub-blocks than `least` holds the need
        // (1 when domains are cut into sub-blocks of different sizes).
        const std::uint64_t least = uniform_block_gpus_ == 0 ? 1 : (need + uniform_block_gpus_ - 1) / uniform_block_gpus_;
        if (need >= class_at_least_.size() || class_at_least_[need] == run_lengths_.size() || least > most_free_blocks_)
            return npos32;
        // The keys run row by row (a row: the domains with so many free
        // sub-blocks), each row by run class; a row's keys below the class
        // that holds the need are passed over. With one need and every filed
        // domain allowed, the lowest domain of the row's other keys answers.
        const std::uint32_t row_keys = std::uint32_t{1} << class_bits_;
        const std::uint32_t first_class = class_at_least_[need];
        const bucket_index& index = by_blocks_and_run_;
        const auto first_key = static_cast<std::uint32_t>(least) << class_bits_ | first_class;
        for (std::uint32_t key = index.next_key(first_key); key != npos32;) {
            const std::uint32_t row_key = key & ~(row_keys - 1);
            if (key - row_key < first_class) {  // this row's runs are all too short
                key = index.next_key(row_key + first_class);
                continue;
            }
            if (one_need && !req.exclusive_domain) return index.first_in_keys(key, row_key + row_keys - 1);
            domain_id best = npos32;
            for (; key != npos32 && key < row_key + row_keys; key = index.next_key(key + 1)) {
                const std::uint32_t run_gpus = run_lengths_[key & (row_keys - 1)];
                for (domain_id d = index.first_in(key, 0); d < best; d = index.first_in(key, d + 1))
                    if ((one_need || run_gpus >= need_gpus(state, req, req.count, d)) && units.allowed(d)) {
                        best = d;
                        break;
                    }
            }
            if (best != npos32) return best;
        }
        return lowest_wholly_free();
    }

    // The wholly free domains left out of the index (key_of): idle and
    // whole, so holding any job tightest_domain is asked for.
    domain_id lowest_wholly_free() const noexcept { return whole_blocks_ != 0 ? windows_.first_wholly_free() : npos32; }

    // Each segment in turn into the allowed domain with the fewest free
    // sub-blocks left that has a run for it.
    template <class State>
    errc place_segments(const State& state, const toolkit::request_units<State>& units, placement& out) const {
        const request& req = units.req;
        const auto score = [&](domain_id d, bool) {
            const auto sum = detail::summarize_blocks(layouts_[d], free_blocks_for(state, d, out));
            return sum.longest_run_gpus >= need_gpus(state, req, req.part_size(), d) ? sum.free_blocks : toolkit::no_fit;
        };
        const auto take = [&](domain_id d) { take_best_window(state, d, need_gpus(state, req, req.part_size(), d), out); };
        return toolkit::place_each_segment(units, out, score, take);
    }

    std::uint32_t block_gpus_;
    std::uint32_t uniform_block_gpus_ = 0;
    std::vector<detail::block_layout> layouts_;
    std::vector<std::uint64_t> free_block_words_;  // per domain: its free sub-blocks (none when closed), as node-set words
    std::vector<std::uint32_t> run_lengths_;  // the longest-run GPU counts a domain can have, ascending: the run classes
    std::vector<std::uint32_t> class_at_least_;  // [GPUs]: the first class that holds them (a run's own class)
    std::uint32_t class_bits_ = 0;               // a row's keys: 2^class_bits_ >= classes
    std::uint32_t most_free_blocks_ = 0;         // the most sub-blocks a domain has
    bucket_index by_blocks_and_run_;           // domains with free sub-blocks, by key_of(summary)
    std::uint32_t whole_blocks_ = 0;           // a domain's sub-blocks when windows_ is kept (else 0)
    static constexpr std::uint32_t max_keyed_blocks = 10;  // key_of_blocks_: at most 2^10 keys
    std::vector<std::uint32_t> key_of_blocks_;  // [free sub-blocks as a word]: their key, when domains are all alike
    toolkit::whole_domain_windows windows_;
    mutable std::vector<domain_id> chosen_;  // a multi-domain decision's domains, kept to spare allocations
};

}  // namespace topoblock
