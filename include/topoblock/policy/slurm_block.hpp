#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/policy/slurm_version.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/support/bucket_index.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace topoblock {

// The block levels a slurm_block policy works with on one topology.
struct slurm_block_shape {
    std::uint32_t base_nodes = 0;   // S: nodes of a base block (the first BlockSizes value)
    std::uint32_t block_count = 0;  // the first domains, in config order; later ones are outside every block
    std::uint32_t levels = 0;       // bit k set: level k (2^k consecutive base blocks) is enabled
    friend constexpr bool operator==(const slurm_block_shape&, const slurm_block_shape&) = default;
};

// Slurm's topology/block node selection (eval_nodes_block.c) for whole-node
// jobs, as of a chosen Slurm version (set_version; the newest by default);
// docs/slurm-block.md states every rule, how GPU requests are treated, what
// differs by version and what each decision costs. A one-part, non-exclusive
// job whose group is exactly max_ll level-LL blocks is a bucket lookup for
// its group plus its blocks; every other job scans every base block.
// Decisions reuse scratch arrays, so one policy object is no more shareable
// between threads than its allocator.
class slurm_block {
public:
    // The largest level, 2^15 base blocks: Slurm keeps levels in a 16-bit map (block_record.c).
    static constexpr std::uint32_t max_level = 15;

    // Defaults for a topology that did not come from a Slurm file: S is the
    // node count of the first non-empty domain, levels of 1, 2, 4, 8 and 16
    // base blocks, every domain a base block.
    slurm_block() = default;
    // From a Slurm topology: `base_nodes` is S (0: the default),
    // `block_sizes` the BlockSizes values in nodes (empty: the default levels),
    // `block_count` the number of leading domains that are base blocks.
    slurm_block(std::uint32_t base_nodes, std::vector<std::uint32_t> block_sizes,
                std::uint32_t block_count = npos32)
        : base_nodes_(base_nodes), block_sizes_(std::move(block_sizes)), block_count_(block_count) {}
    // From the settings a Slurm file gives (io::slurm_block_settings, or any
    // type with those members), so that neither io nor the policy knows the other.
    template <class Settings>
        requires requires(const Settings& s) {
            { s.base_nodes } -> std::convertible_to<std::uint32_t>;
            { s.block_sizes } -> std::convertible_to<std::vector<std::uint32_t>>;
            { s.blocks } -> std::convertible_to<std::uint32_t>;
        }
    explicit slurm_block(const Settings& s) : slurm_block(s.base_nodes, s.block_sizes, s.blocks) {}

    // The Slurm release whose selection rules decisions follow. Set it
    // before attach or between decisions: the summaries do not depend on it.
    void set_version(slurm_version v) noexcept { version_ = v; }
    slurm_version version() const noexcept { return version_; }

    // The BlockSizes rule (policy and Slurm file readers alike): each size is
    // `base` nodes times 2^k, k <= max_level. Empty, or what the first breaking it is.
    static std::string block_size_error(std::uint32_t base, std::span<const std::uint32_t> sizes) {
        for (std::uint32_t size : sizes)
            if (level_of(size, base) == npos32)
                return std::to_string(size) + " is not " + std::to_string(base) +
                       " (the base size) times a power of two up to 2^" + std::to_string(max_level);
        return {};
    }

    std::string_view name() const noexcept { return "slurm-block"; }

    // explain()'s numbers, per base block (a domain): a GPU job of up to a
    // node's GPUs needs one node with as many usable free GPUs; any other job
    // counts wholly free nodes, as if one block had to hold a part.
    template <class State>
    toolkit::capacity_view measure(const State& state, const request& req) const {
        const topology& topo = state.topo();
        const std::uint64_t part = req.part_size();
        const std::uint64_t g = topo.max_gpus_per_node();  // the nodes' GPUs when uniform
        const bool one_node = req.what == unit::gpus && !req.whole_nodes && part <= g;
        const std::uint64_t need = one_node || req.what == unit::nodes ? part : g == 0 ? 0 : (part + g - 1) / g;
        toolkit::capacity_view view;
        view.scope = "base block";
        view.unit = one_node ? "GPUs on one node" : "whole nodes";
        view.need = need;
        // Fast path for explain's budget: like base blocks are read from the summaries.
        if (!req.exclusive_domain && toolkit::like_domains(topo) && attached_shape_.block_count == topo.domain_count())
            return measure_summaries(state, view, one_node);
        const toolkit::request_units<State> units{state, req};
        return toolkit::scan_domains(state, view, [&](domain_id d) {
            const auto& c = state.domain(d);
            const std::uint32_t gpus = topo.shape(d).gpus_per_node;
            const bool allowed = units.allowed(d);
            toolkit::scope_offer o;
            if (!one_node) {
                o.free = o.most = allowed ? c.free_nodes : 0;
                o.holds_now = o.free >= need;
                o.holds_if_emptied = c.up_nodes >= need;
                return o;
            }
            o.free = allowed ? c.free_gpus : 0;
            for (std::uint32_t k = gpus; allowed && k > 0 && o.most == 0; --k)
                if (state.nodes_with_unheld(d, k).any()) o.most = k;
            o.holds_now = allowed && o.most >= need;
            o.holds_if_emptied = c.up_nodes != 0 && gpus >= need;
            return o;
        });
    }

    // Builds the summaries, which on_domain_change keeps in step.
    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        uniform_gpus_ = topo.uniform_gpus_per_node();
        max_gpus_ = topo.max_gpus_per_node();
        attached_shape_ = shape(topo);
        const std::uint32_t blocks = attached_shape_.block_count;
        thresholds_ = max_gpus_ + 1;
        whole_min_gpus_ = npos32;
        for (domain_id b = 0; b < blocks; ++b)
            if (topo.domain(b).node_count != 0) whole_min_gpus_ = std::min(whole_min_gpus_, topo.domain(b).gpus_per_node);
        full_nodes_ = topo.max_domain_nodes();
        qualifying_.assign(std::size_t{blocks} * thresholds_, 0);
        blocks_by_qualifying_.assign(thresholds_, bucket_index(blocks, full_nodes_));
        full_blocks_ = indexed_bitset(blocks);
        groups_.assign(max_level + 1, group_summary{});
        grouped_whole_.assign(blocks, 0);
        unfiled_.assign(blocks, 0);
        unfiled_blocks_.assign(unfiled_limit, 0);
        unfiled_count_ = 0;
        for (std::uint32_t level = 1; blocks != 0 && level <= max_level; ++level) {
            if ((attached_shape_.levels >> level & 1U) == 0) continue;
            const std::uint32_t per_group = std::uint32_t{1} << level;
            group_summary& g = groups_[level];
            g.free_nodes.assign(ceil_div(blocks, per_group), 0);
            // Up to 64 groups are scanned: a bucket index keyed by up to a
            // whole cluster's nodes would cost megabytes for a handful.
            if (g.free_nodes.size() > 64)
                g.by_free_nodes = bucket_index(g.free_nodes.size(), std::min(per_group, blocks) * full_nodes_);
        }
        for (domain_id b = 0; b < blocks; ++b) on_domain_change(state, b);
        file_groups();
    }

    // Refiles base block d under its new qualifying-node counts, moving
    // only the counts that changed; its groups are filed when next read.
    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        TOPOBLOCK_ASSERT(d < state.topo().domain_count());
        if (d >= attached_shape_.block_count) return;
        const bool open = state.domain_open(d) && state.domain(d).free_gpus != 0;
        const std::uint32_t whole = open ? state.domain(d).free_nodes : 0;
        const bool full = whole == full_nodes_ && (uniform_gpus_ != 0 || state.topo().shape(d).gpus_per_node == max_gpus_);
        if (full_blocks_.test(d)) {
            if (full) return;
            full_blocks_.reset(d);
            return file_counts(state, d, open, whole, true);
        }
        if (full) return enter_full(d);
        file_counts(state, d, open, whole, false);
    }

    // Heap bytes of the policy's indexes and scratch (the memory benchmark adds the state's).
    std::size_t memory_bytes() const noexcept {
        std::size_t total = heap_bytes(block_sizes_) + heap_bytes(counts_) + heap_bytes(taken_) + heap_bytes(ll_sums_) +
                            heap_bytes(sorted_) + heap_bytes(closed_) + heap_bytes(required_) + heap_bytes(qualifying_) +
                            nested_heap_bytes(blocks_by_qualifying_) + heap_bytes(groups_) + heap_bytes(grouped_whole_) +
                            heap_bytes(unfiled_) + heap_bytes(unfiled_blocks_) + full_blocks_.memory_bytes();
        for (const group_summary& g : groups_) total += heap_bytes(g.free_nodes) + g.by_free_nodes.memory_bytes();
        return total;
    }

    // What attach and on_domain_change keep (testing::check_indexes), the
    // groups filed first.
    auto indexes() const noexcept {
        file_groups();
        return std::tie(attached_shape_, qualifying_, blocks_by_qualifying_, full_blocks_, groups_, grouped_whole_);
    }

    // GPU requests with segments have no Slurm counterpart here; a GPU job
    // larger than one node needs nodes of one size to count them in.
    bool supports(const request& req) const noexcept {
        if (req.what != unit::gpus) return true;
        return !req.segmented() && (uniform_gpus_ != 0 || req.count <= max_gpus_);
    }

    // Levels as Slurm derives them (_read_topo_file): BlockSizes, or the
    // defaults. Levels past the first that spans every base block are kept:
    // block_record_validate cuts only the sizes it reports, and
    // _get_block_level reads the uncut levels.
    slurm_block_shape shape(const topology& topo) const noexcept {
        slurm_block_shape s;
        s.block_count = std::min(block_count_, topo.domain_count());
        s.base_nodes = base_nodes_;
        for (domain_id d = 0; s.base_nodes == 0 && d < s.block_count; ++d) s.base_nodes = topo.domain(d).node_count;
        if (s.base_nodes == 0) return s;
        if (block_sizes_.empty()) {
            s.levels = (std::uint32_t{1} << default_levels) - 1;
        } else {
            for (std::uint32_t size : block_sizes_)
                if (const std::uint32_t level = level_of(size, s.base_nodes); level != npos32)
                    s.levels |= std::uint32_t{1} << level;
        }
        return s;
    }

    // Empty when the settings suit `topo`, else the BlockSizes value that
    // breaks block_size_error's rule (shape() would leave it out silently).
    std::string validate(const topology& topo) const {
        const slurm_block_shape s = shape(topo);
        if (s.base_nodes == 0) return {};
        const std::string wrong = block_size_error(s.base_nodes, block_sizes_);
        return wrong.empty() ? wrong : "slurm-block: block size " + wrong;
    }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        TOPOBLOCK_ASSERT(attached_shape_ == shape(state.topo()));  // attached to this state
        job j;
        if (!describe_job(req, j)) return errc::unsupported_request;
        decision<State> d{state, req, j, attached_shape_, *this, out};
        const errc result = takes_first_node(req) ? d.first_free_node() : d.run();
        // Slurm's job holds a set of nodes: index order, not the order chosen.
        if (result == errc::ok && j.nodes > 1) out.sort_by_node();
        return result;
    }

    // Whether the request takes Slurm's one-node path (_get_one_res, not
    // eval_nodes, for max_nodes 1): from 26.05, a node request of one node.
    // GPU requests set no node limit and exclusive ones need idle blocks.
    bool takes_first_node(const request& req) const noexcept {
        return version_ >= slurm_version::v26_05 && req.what == unit::nodes && req.count == 1 && !req.exclusive_domain;
    }

private:
    static constexpr std::uint32_t default_levels = 5;

    // measure() on like base blocks from the per-threshold buckets: a block
    // holds a part when its count at the part's threshold reaches one node or
    // the nodes asked; full blocks hold any part a block can.
    template <class State>
    toolkit::capacity_view measure_summaries(const State& state, toolkit::capacity_view view, bool one_node) const {
        const std::uint64_t need = view.need;
        const std::uint32_t full = static_cast<std::uint32_t>(full_blocks_.count());
        view.scopes = state.topo().domain_count();
        view.wholly_free = full;
        if (one_node) {
            view.free = state.available().gpus;
            for (std::uint32_t k = uniform_gpus_; k > 0 && view.most == 0; --k)
                if (full != 0 || !blocks_by_qualifying_[k].empty()) view.most = k;
            view.holding_now = (need == 0 ? 0 : blocks_by_qualifying_[need].count_at_least(1)) + full;
            view.holding_if_emptied = toolkit::holding_if_emptied_on_like_domains(
                state, uniform_gpus_ >= need, [&](domain_id d) { return state.domain(d).up_nodes != 0; });
            return view;
        }
        view.free = state.available().nodes;
        const std::uint32_t top = blocks_by_qualifying_[0].previous_key(blocks_by_qualifying_[0].max_key());
        view.most = full != 0 ? full_nodes_ : top == npos32 ? 0 : top;
        if (need <= full_nodes_) {
            const auto least = static_cast<std::uint32_t>(std::max<std::uint64_t>(need, 1));
            view.holding_now = blocks_by_qualifying_[0].count_at_least(least) + full;
            view.holding_if_emptied = toolkit::holding_if_emptied_on_like_domains(
                state, true, [&](domain_id d) { return state.domain(d).up_nodes >= need; });
        }
        return view;
    }

    static constexpr std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) noexcept { return (a + b - 1) / b; }

    // k when `size` nodes are 2^k base blocks of `base` nodes (k <= max_level), else npos32.
    static constexpr std::uint32_t level_of(std::uint32_t size, std::uint32_t base) noexcept {
        const std::uint32_t blocks = base == 0 ? 0 : size / base;
        if (blocks == 0 || size % base != 0 || !std::has_single_bit(blocks) || blocks > (1U << max_level)) return npos32;
        return static_cast<std::uint32_t>(std::countr_zero(blocks));
    }

    // _get_block_level's arithmetic for a part of `rem` nodes.
    struct level_plan {
        std::uint32_t ll = 0;         // LL: the largest enabled level below the wanted one
        std::uint32_t per_group = 0;  // base blocks per group
        std::uint32_t groups = 0;
        std::uint32_t per_ll = 0;     // base blocks per level-LL block
        std::uint32_t max_ll = 0;     // level-LL blocks the part may use
        bool limit_ll = false;  // the group is not exactly max_ll level-LL blocks: it holds its max_ll fullest
        std::uint32_t group_level = npos32;  // npos32: no level is large enough, the cluster is one group

        static level_plan of(const slurm_block_shape& shape, std::uint32_t rem) noexcept {
            const std::uint32_t blocks = shape.block_count;
            level_plan p;
            const std::uint32_t wanted = static_cast<std::uint32_t>(std::bit_width(ceil_div(rem, shape.base_nodes) - 1));
            if (wanted > 0) {
                const std::uint32_t below = wanted >= 32 ? shape.levels : shape.levels & ((std::uint32_t{1} << wanted) - 1);
                p.ll = below == 0 ? 0 : static_cast<std::uint32_t>(std::bit_width(below) - 1);
            }
            const std::uint32_t above = wanted >= 32 ? 0 : shape.levels & ~((std::uint32_t{1} << wanted) - 1);
            if (above != 0) p.group_level = static_cast<std::uint32_t>(std::countr_zero(above));
            p.per_group = above == 0 ? blocks : std::uint32_t{1} << p.group_level;
            p.groups = above == 0 ? 1 : ceil_div(blocks, p.per_group);
            p.per_ll = std::uint32_t{1} << p.ll;
            p.max_ll = ceil_div(rem, p.per_ll * shape.base_nodes);
            p.limit_ll = p.per_group != p.per_ll * p.max_ll;
            return p;
        }
    };

    // A request in Slurm's terms: nodes to select, in parts of `part` nodes.
    struct job {
        std::uint32_t nodes = 0;
        std::uint32_t part = 0;
        std::uint32_t min_gpus = 0;   // a node qualifies only with this many usable GPUs (0: any)
        bool whole = true;            // only wholly free nodes qualify, and are taken whole
        std::uint32_t last_gpus = 0;  // GPUs the last node keeps for the job (0: the whole node)
    };

    // Node requests as they are; a GPU request that fits one node takes one
    // node with the GPUs free (cons_tres shares nodes); a larger one takes
    // ceil(N / G) wholly free nodes and only the GPUs it asked for on the last.
    bool describe_job(const request& req, job& j) const noexcept {
        if (!supports(req)) return false;
        if (req.what == unit::nodes) {
            j = {req.count, req.part_size(), 0, true, 0};
            return true;
        }
        if (req.count <= max_gpus_) {  // with nodes of one size, uniform_gpus_ == max_gpus_
            j = {1, 1, req.count, req.whole_nodes, 0};
            return true;
        }
        const std::uint32_t g = uniform_gpus_;
        const std::uint32_t nodes = (req.count + g - 1) / g;
        const std::uint32_t rest = req.count - (nodes - 1) * g;
        j = {nodes, nodes, 0, true, req.whole_nodes || rest == g ? 0 : rest};
        return true;
    }

    // One decision: the scratch counts and Slurm's passes over them.
    template <class State>
    struct decision {
        const State& state;
        const request& req;
        const job& j;
        const slurm_block_shape& shape;
        const slurm_block& self;
        placement& out;

        std::vector<std::uint32_t>& counts = self.counts_;  // usable free nodes per base block, this part
        std::vector<std::uint32_t>& taken = self.taken_;    // nodes earlier parts took from the block
        std::vector<std::uint8_t>& closed = self.closed_;   // spread segments: blocks of earlier parts
        std::vector<std::uint8_t>& required = self.required_;
        std::vector<std::uint32_t>& ll_sums = self.ll_sums_;
        std::vector<std::uint32_t>& sorted = self.sorted_;
        const toolkit::request_units<State> units{state, req};

        // Qualifying nodes of domain d: wholly free ones, else up nodes by unheld GPUs.
        std::uint32_t usable_in(domain_id d) const noexcept {
            if (!units.allowed(d)) return 0;
            const domain_shape info = state.topo().shape(d);
            if (j.whole) return info.gpus_per_node >= j.min_gpus ? state.domain(d).free_nodes : 0;
            std::uint32_t n = 0;
            for (std::uint32_t k = j.min_gpus; k <= info.gpus_per_node; ++k)
                n += static_cast<std::uint32_t>(state.nodes_with_unheld(d, k).count());
            return n;
        }
        // Adds the qualifying nodes of domain d in index order, past the first
        // `skip`, until `rem` are taken (wholly free nodes a run at a time; else
        // one node with min_gpus unheld GPUs); returns how many it took.
        std::uint32_t take_nodes(domain_id d, std::uint32_t skip, std::uint32_t rem) const {
            if (!units.allowed(d)) return 0;
            const domain_shape info = state.topo().shape(d);
            if (!j.whole) {
                TOPOBLOCK_ASSERT(skip == 0 && rem == 1);
                using node_set = std::decay_t<decltype(state.nodes_with_unheld(d, 0))>;
                for (std::size_t w = 0; w < node_set::word_count; ++w) {
                    std::uint64_t word = 0;
                    for (std::uint32_t k = j.min_gpus; k <= info.gpus_per_node; ++k)
                        word |= state.nodes_with_unheld(d, k).word(w);
                    if (word == 0) continue;
                    const auto n = static_cast<node_id>(info.first_node + w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
                    out.add(n, lowest_bits(state.usable_gpus(n), j.min_gpus));
                    return 1;
                }
                return 0;
            }
            if (info.gpus_per_node < j.min_gpus) return 0;
            std::uint32_t added = 0;
            const auto& free = state.free_nodes_in(d);
            const gpu_mask full = full_gpu_mask(info.gpus_per_node);
            for (std::size_t i = free.find_first(); i < info.node_count && added < rem; i = free.find_next(i)) {
                const auto run_end = static_cast<std::uint32_t>(std::min<std::size_t>(free.find_next_clear(i), info.node_count));
                auto first = static_cast<std::uint32_t>(i);
                const std::uint32_t passed = std::min(skip, run_end - first);
                skip -= passed;
                first += passed;
                const std::uint32_t count = std::min(run_end - first, rem - added);
                added += count;
                // The job's last node may take fewer GPUs.
                const bool short_last = count > 0 && added == rem && j.last_gpus != 0;
                out.add_nodes(info.first_node + first, short_last ? count - 1 : count, full);
                if (short_last) out.add(info.first_node + first + count - 1, lowest_bits(full, j.last_gpus));
                i = run_end;
            }
            return added;
        }

        // The part's `rem` nodes from the last full blocks before `end`, as
        // Slurm takes them (the last down): the lowest gives its first nodes,
        // the job's last node among them; the blocks above it are one run.
        void take_last_full_blocks(domain_id end, std::uint32_t rem) const {
            const std::uint32_t blocks = ceil_div(rem, self.full_nodes_);
            const domain_shape lowest = state.topo().shape(end - blocks);
            const gpu_mask full = full_gpu_mask(lowest.gpus_per_node);
            const std::uint32_t in_lowest = rem - (blocks - 1) * self.full_nodes_;
            const bool short_last = j.last_gpus != 0;
            out.add_nodes(lowest.first_node, short_last ? in_lowest - 1 : in_lowest, full);
            if (short_last) out.add(lowest.first_node + in_lowest - 1, lowest_bits(full, j.last_gpus));
            out.add_nodes(lowest.end_node(), (blocks - 1) * self.full_nodes_, full);
        }

        // Free capacity enough for the job in another shape, or not.
        errc shortfall() const noexcept {
            const auto& free = state.available();
            return (j.whole ? free.nodes >= j.nodes : free.gpus >= req.count) ? errc::fragmented
                                                                               : errc::insufficient_free;
        }

        // _get_one_res with equal node weights: the first wholly free node of
        // an open domain in node order (base blocks first, then the rest).
        errc first_free_node() {
            const std::size_t full = self.full_blocks_.find_first();
            std::uint32_t b = self.blocks_by_qualifying_[0].first_in_keys(1, self.full_nodes_);
            if (full < self.full_blocks_.size()) b = std::min(b, static_cast<std::uint32_t>(full));
            if (b == npos32) return outside();
            const domain_shape info = state.topo().shape(b);
            out.add(static_cast<node_id>(info.first_node + state.free_nodes_in(b).find_first()), full_gpu_mask(info.gpus_per_node));
            return errc::ok;
        }

        errc run() {
            if (const std::optional<errc> indexed = run_indexed()) return *indexed;
            const std::uint32_t blocks = shape.block_count;
            counts.assign(blocks, 0);
            taken.assign(blocks, 0);
            closed.assign(blocks, 0);
            required.assign(blocks, 0);
            std::uint64_t in_blocks = 0;
            for (domain_id b = 0; b < blocks; ++b) in_blocks += usable_in(b);
            // topology_p_eval_nodes: without a usable base-block node, the other nodes serve.
            if (in_blocks == 0) return outside();
            const std::uint32_t segments = j.nodes / j.part;
            const bool spread = req.spread_segments && segments > 1;
            for (std::uint32_t s = 0; s < segments; ++s) {
                if (!place_part(s == 0, segments, spread)) return shortfall();
                if (spread)
                    for (domain_id b = 0; b < blocks; ++b) closed[b] = closed[b] != 0 || required[b] != 0 ? 1 : 0;
            }
            return errc::ok;
        }

        // Fast path of place_part for one part, not exclusive, whose group is
        // exactly max_ll level-LL blocks (a group qualifies by its free nodes):
        // a bucket lookup, then its blocks. Nothing when the scan is needed.
        std::optional<errc> run_indexed() {
            if (req.exclusive_domain || j.nodes != j.part) return std::nullopt;
            const std::uint32_t t = j.whole ? 0 : j.min_gpus;  // the threshold the job's nodes meet
            // The summaries do not count per block the nodes too small for a job.
            if (j.whole ? j.min_gpus > self.whole_min_gpus_ : t == 0 || t >= self.thresholds_) return std::nullopt;
            if (self.blocks_by_qualifying_[t].empty() && !self.full_blocks_.any()) return outside();
            const level_plan plan = level_plan::of(shape, j.part);
            if (plan.limit_ll || plan.group_level == npos32 || (plan.group_level != 0 && t != 0)) return std::nullopt;
            const std::uint32_t group = self.tightest_group(plan.group_level, t, j.part);
            if (group == npos32) return shortfall();
            // One block per group: _choose_best_bblock's one candidate holds the part.
            if (plan.per_group == 1) return take_nodes(group, 0, j.part) == j.part ? errc::ok : shortfall();
            const std::uint32_t begin = group * plan.per_group, end = std::min(begin + plan.per_group, shape.block_count);
            if (self.full_blocks_.count(begin, end - begin) == end - begin) {
                // Every block full (what a job of whole blocks finds): the last ones, as below.
                if (ceil_div(j.part, self.full_nodes_) > end - begin) return shortfall();
                take_last_full_blocks(end, j.part);
                return errc::ok;
            }
            if (counts.size() < shape.block_count) {
                counts.resize(shape.block_count);
                taken.resize(shape.block_count);
                closed.resize(shape.block_count);
                required.resize(shape.block_count);
            }
            for (domain_id b = begin; b < end; ++b) {
                counts[b] = self.qualifying_[std::size_t{b} * self.thresholds_ + t];
                taken[b] = closed[b] = required[b] = 0;
            }
            return take_from_group(begin, end, j.part, plan) ? errc::ok : shortfall();
        }

        // Nodes outside every block, lowest index first.
        errc outside() {
            std::uint32_t missing = j.nodes;
            for (domain_id d = shape.block_count; d < state.topo().domain_count() && missing > 0; ++d)
                missing -= take_nodes(d, 0, missing);
            return missing == 0 ? errc::ok : shortfall();
        }

        // Slurm's _partial_bblock_segments: segments that base blocks holding
        // fewer than a segment each can still build together.
        static std::uint32_t partial_segments(std::uint32_t sum, std::uint32_t count, std::uint32_t largest,
                                              std::uint32_t segment) noexcept {
            if (sum == 0) return 0;
            return std::min(sum / segment, count / ceil_div(segment, largest));
        }

        // One part (a segment, or the whole job) of j.part nodes.
        bool place_part(bool first, std::uint32_t segments, bool spread) {
            const std::uint32_t blocks = shape.block_count;
            for (domain_id b = 0; b < blocks; ++b) {
                counts[b] = closed[b] != 0 ? 0 : usable_in(b) - taken[b];
                required[b] = 0;
            }
            const level_plan plan = level_plan::of(shape, j.part);
            const std::uint32_t per_group = plan.per_group, per_ll = plan.per_ll, ll_count = ceil_div(blocks, per_ll);

            if (spread && first) {
                // An upper bound of the segments the blocks hold, each in blocks of its own.
                std::uint32_t fit = 0, sum = 0, count = 0, largest = 0, group = npos32;
                for (domain_id b = 0; b < blocks; ++b) {
                    if (counts[b] == 0) continue;
                    if (b / per_group != group) {
                        fit += partial_segments(sum, count, largest, j.part);
                        group = b / per_group;
                        sum = count = largest = 0;
                    }
                    if (counts[b] >= j.part) {
                        ++fit;
                    } else {
                        sum += counts[b];
                        ++count;
                        largest = std::max(largest, counts[b]);
                    }
                }
                fit += partial_segments(sum, count, largest, j.part);
                if (fit < segments) return false;
            }

            ll_sums.assign(ll_count, 0);
            for (domain_id b = 0; b < blocks; ++b) ll_sums[b >> plan.ll] += counts[b];
            std::uint32_t best = npos32, best_nodes = 0, estimate = 0;
            for (std::uint32_t g = 0; g < plan.groups; ++g) {
                const std::uint32_t begin = g * per_group, end = std::min(begin + per_group, blocks);
                std::uint32_t nodes = 0;
                for (domain_id b = begin; b < end; ++b) nodes += counts[b];
                std::uint32_t usable = nodes;
                if (plan.limit_ll) {
                    // The most nodes max_ll level-LL blocks of the group hold, of
                    // per_group / per_ll (rounded down, as Slurm) level-LL blocks.
                    const std::uint32_t offset = g * (per_group / per_ll);
                    const std::uint32_t n = std::min(per_group / per_ll, ll_count - offset);
                    sorted.assign(ll_sums.begin() + offset, ll_sums.begin() + offset + n);
                    std::sort(sorted.begin(), sorted.end(), std::greater<>());
                    usable = 0;
                    for (std::uint32_t i = 0; i < std::min(plan.max_ll, n); ++i) usable += sorted[i];
                }
                if (usable < j.part || nodes == 0) continue;
                if (first && segments > 1) estimate += spread ? std::min(nodes / j.part, per_group) : nodes / j.part;
                if (best == npos32 || nodes <= best_nodes) {
                    best = g;
                    best_nodes = nodes;
                }
            }
            if (best == npos32) return false;
            if (first && segments > 1 && estimate < segments) return false;

            const std::uint32_t begin = best * per_group;
            return take_from_group(begin, std::min(begin + per_group, blocks), j.part, plan);
        }

        // Takes `rem` nodes from the base blocks [begin, end) of the chosen group in
        // _choose_best_bblock's order; counts, taken, closed and required are current there.
        bool take_from_group(std::uint32_t begin, std::uint32_t end, std::uint32_t rem, const level_plan& plan) {
            std::uint32_t max_ll = plan.max_ll;
            std::uint32_t stalled = rem + 1;
            while (stalled != rem) {
                stalled = rem;
                pick p;
                for (domain_id b = begin; b < end; ++b)
                    if (required[b] == 0) choose(p, b, rem, plan.ll, plan.limit_ll, end);
                if (p.block == npos32) break;
                if (max_ll == 0 && !p.same_ll) break;
                required[p.block] = 1;
                // A block of an earlier spread segment may be chosen but gives no node.
                if (closed[p.block] == 0) {
                    const std::uint32_t got = take_nodes(p.block, taken[p.block], rem);
                    taken[p.block] += got;
                    rem -= got;
                }
                if (rem == 0) return true;
                if (!p.same_ll) --max_ll;
            }
            return false;
        }

        struct pick {
            std::uint32_t block = npos32;
            bool fit = false;
            bool same_ll = true;
        };

        // Slurm's _choose_best_bblock: prefer base blocks inside level-LL
        // blocks the part already uses, then a level-LL block that holds the
        // rest alone and has the fewest nodes (else the most), then a base
        // block that holds the rest alone with the fewest nodes, else the one
        // with the most; ties go to the later block.
        void choose(pick& p, std::uint32_t b, std::uint32_t rem, std::uint32_t ll, bool limit_ll,
                    std::uint32_t end) const {
            const bool fit = counts[b] >= rem;
            const auto take = [&](bool same) {
                p.block = b;
                p.fit = fit;
                p.same_ll = same;
            };
            if (limit_ll && (p.block == npos32 || (p.block >> ll) != (b >> ll))) {
                bool same = false;
                const std::uint32_t first = (b >> ll) << ll;
                for (std::uint32_t k = first; k < end && k < first + (std::uint32_t{1} << ll) && !same; ++k)
                    same = required[k] != 0;
                if (p.block == npos32 || (same && !p.same_ll)) return take(same);
                if (!same && p.same_ll) return;
                const std::uint32_t best_sum = ll_sums[p.block >> ll], sum = ll_sums[b >> ll];
                const bool sum_fit = sum >= rem, best_sum_fit = best_sum >= rem;
                if (sum_fit != best_sum_fit) {
                    if (sum_fit) take(same);
                    return;
                }
                if (sum != best_sum) {
                    // Both hold the rest: the smaller; neither: the larger.
                    if ((sum < best_sum) == sum_fit) take(same);
                    return;
                }
            }
            if (p.block == npos32 || (fit && !p.fit) || (!fit && !p.fit && counts[b] >= counts[p.block]) ||
                (fit && counts[b] <= counts[p.block])) {
                p.block = b;
                p.fit = fit;
            }
        }
    };

    std::uint32_t base_nodes_ = 0;
    std::vector<std::uint32_t> block_sizes_;
    std::uint32_t block_count_ = npos32;
    slurm_version version_ = newest_slurm_version;
    mutable std::vector<std::uint32_t> counts_, taken_, ll_sums_, sorted_;
    mutable std::vector<std::uint8_t> closed_, required_;

    // The summaries attach() builds. A node meets threshold 0 when wholly
    // free, k > 0 with at least k unheld GPUs; up nodes of open blocks only.
    struct group_summary {
        std::vector<std::uint32_t> free_nodes;  // per group; empty: level not enabled
        bucket_index by_free_nodes;             // groups by free nodes, when more than 64
        friend bool operator==(const group_summary&, const group_summary&) = default;
    };
    slurm_block_shape attached_shape_;
    std::uint32_t uniform_gpus_ = 0;
    std::uint32_t max_gpus_ = 0;
    std::uint32_t thresholds_ = 0;               // 1 + the most GPUs a node has
    std::uint32_t whole_min_gpus_ = npos32;      // the fewest GPUs per node of a non-empty base block
    std::vector<std::uint32_t> qualifying_;      // nodes meeting threshold t: [block * thresholds_ + t]
    std::vector<bucket_index> blocks_by_qualifying_;  // [t]: base blocks by that count, but for full_blocks_
    // Full base blocks (the most nodes, each of the most GPUs, all wholly free)
    // are filed here only: whole blocks taken and given back move no bucket.
    indexed_bitset full_blocks_;
    std::uint32_t full_nodes_ = 0;            // the most nodes a domain has
    // Groups are filed when a decision reads them: most jobs never do, and a
    // job placed and released in between moves no group.
    static constexpr std::size_t unfiled_limit = 64;
    mutable std::vector<group_summary> groups_;         // [level], levels 1 and up
    mutable std::vector<std::uint32_t> grouped_whole_;  // [block]: the wholly free nodes its groups count
    mutable std::vector<std::uint8_t> unfiled_;         // [block]: listed in unfiled_blocks_
    // The first unfiled_count_ entries: blocks marked since the last filing.
    mutable std::vector<domain_id> unfiled_blocks_;
    mutable std::size_t unfiled_count_ = 0;

    // Block d, not in full_blocks_, is full now: filed in no bucket.
    void enter_full(domain_id d) {
        full_blocks_.set(d);
        std::uint32_t* counts = &qualifying_[std::size_t{d} * thresholds_];
        const bool changed = counts[0] != full_nodes_;
        for (std::uint32_t t = 0; t < thresholds_; ++t) {
            if (counts[t] != 0) blocks_by_qualifying_[t].remove(d);  // a count of 0 is filed nowhere
            counts[t] = full_nodes_;
        }
        if (changed) mark_unfiled(d);
    }
    // Files block d (not full) under its counts, moving only the buckets whose
    // count changed; one that was full is filed nowhere, so every nonzero count is filed.
    template <class State>
    void file_counts(const State& state, domain_id d, bool open, std::uint32_t whole, bool was_full) {
        std::uint32_t* counts = &qualifying_[std::size_t{d} * thresholds_];
        const bool changed = counts[0] != whole;
        const auto file = [&](std::uint32_t t, std::uint32_t count) {
            if (counts[t] == count && !was_full) return;
            counts[t] = count;
            if (!was_full || count != 0) blocks_by_qualifying_[t].assign_nonzero(d, count);  // 0: filed nowhere
        };
        file(0, whole);
        if (changed) mark_unfiled(d);  // after the count it reads
        std::uint32_t at_least = 0;  // nodes with at least k unheld GPUs, for k from the most down
        for (std::uint32_t k = thresholds_ - 1; k >= 1; --k) {
            if (open) at_least += static_cast<std::uint32_t>(state.nodes_with_unheld(d, k).count());
            file(k, at_least);
        }
    }
    // Block d's wholly free nodes changed: its groups are filed at the next
    // read, or once unfiled_limit blocks wait (no decision pays for a long run).
    void mark_unfiled(domain_id d) {
        if (unfiled_[d] != 0) return;
        unfiled_[d] = 1;
        unfiled_blocks_[unfiled_count_++] = d;
        if (unfiled_count_ == unfiled_limit) file_groups();
    }
    // Brings the groups up to the marked blocks, each changed group filed
    // once per level; a block given back as it was taken moves no group.
    void file_groups() const noexcept {
        const std::uint32_t group_levels = attached_shape_.levels & ~1U;
        std::size_t changed = 0;
        for (std::size_t i = 0; i < unfiled_count_; ++i) {
            const domain_id d = unfiled_blocks_[i];
            unfiled_[d] = 0;
            const std::uint32_t whole = qualifying_[std::size_t{d} * thresholds_], before = grouped_whole_[d];
            if (whole == before) continue;
            grouped_whole_[d] = whole;
            for (std::uint32_t levels = group_levels; levels != 0; levels &= levels - 1) {
                const auto level = static_cast<std::uint32_t>(std::countr_zero(levels));
                std::uint32_t& free = groups_[level].free_nodes[d >> level];
                free = free - before + whole;
            }
            unfiled_blocks_[changed++] = d;
        }
        unfiled_count_ = 0;
        for (std::uint32_t levels = group_levels; levels != 0; levels &= levels - 1) {
            const auto level = static_cast<std::uint32_t>(std::countr_zero(levels));
            group_summary& g = groups_[level];
            std::uint32_t last = npos32;  // a multi-block job marks a group's blocks one after another
            for (std::size_t i = 0; g.by_free_nodes.items() != 0 && i < changed; ++i)
                if (const std::uint32_t group = unfiled_blocks_[i] >> level; group != last)
                    g.by_free_nodes.assign_nonzero(last = group, g.free_nodes[group]);
        }
    }

    // The item with the fewest (>= rem) qualifying nodes, the later on ties.
    static std::uint32_t tightest(const bucket_index& index, std::uint32_t rem) noexcept {
        const std::uint32_t key = index.next_key(rem);
        return key == npos32 ? npos32 : index.last_in(key, npos32);
    }
    // The base block with the fewest (>= rem) nodes of threshold t, the
    // later on ties: the full blocks hold the largest key, full_nodes_.
    std::uint32_t tightest_block(std::uint32_t t, std::uint32_t rem) const noexcept {
        const bucket_index& index = blocks_by_qualifying_[t];
        const std::uint32_t filed = tightest(index, rem);
        if (filed == npos32 ? rem > full_nodes_ : index.key_of(filed) < full_nodes_) return filed;
        const std::size_t last = full_blocks_.find_last();
        if (last == full_blocks_.size()) return filed;
        const auto full = static_cast<std::uint32_t>(last);
        return filed == npos32 ? full : std::max(full, filed);
    }
    // The group at `level` Slurm picks for a part of `rem` nodes of threshold
    // t (level 0: a base block), or npos32 when none holds it.
    std::uint32_t tightest_group(std::uint32_t level, std::uint32_t t, std::uint32_t rem) const noexcept {
        if (level == 0) return tightest_block(t, rem);
        file_groups();
        const group_summary& g = groups_[level];
        if (g.by_free_nodes.items() != 0) return tightest(g.by_free_nodes, rem);
        std::uint32_t best = npos32;
        for (std::uint32_t i = 0; i < g.free_nodes.size(); ++i)
            if (g.free_nodes[i] >= rem && (best == npos32 || g.free_nodes[i] <= g.free_nodes[best])) best = i;
        return best;
    }
};

}  // namespace topoblock
