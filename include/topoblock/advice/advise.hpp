#pragma once

// advise(): which running allocations to stop so that a request the policy
// refuses now becomes placeable, at the least cost (docs/advice.md).

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace topoblock {

struct advise_options {
    // Allocations never chosen (unknown ids are ignored).
    std::vector<allocation_id> protect;
    // What stopping an allocation costs; empty: the GPUs it holds. A set
    // costs the sum of its members'.
    std::function<std::uint64_t(allocation_id)> cost;
};

enum class advice_kind : std::uint8_t {
    none,        // the request fits now: nothing to stop
    stop,        // stop the allocations listed
    impossible,  // stopping every unprotected allocation would not help
};

struct advice {
    advice_kind kind = advice_kind::none;
    // kind stop: the allocations to stop, in increasing id order.
    std::vector<allocation_id> stop;
    // kind stop: their cost (advise_options::cost, or the GPUs they hold).
    std::uint64_t cost = 0;
    // kind impossible: why the request stays refused (what placing answers
    // with every unprotected allocation stopped, or the permanent refusal:
    // exceeds_domain, exceeds_healthy, unsupported_request, ...).
    errc reason = errc::ok;
    // kind stop: the set is the least (cost, then count, then id order) of
    // the stop-sets that make room inside one domain; false for a request
    // that spans domains (or is allowed to), where it is a bound instead.
    bool exact = false;
};

// What advise() may know of a policy to skip stop-sets it would refuse
// anyway: fits(policy, open, req) is false only when the policy cannot
// place `req` inside a domain whose usable GPUs are open.open[] (a
// toolkit::domain_scratch). Pruning only: every set advise() answers is
// still confirmed by the policy's own plan(). The default knows nothing;
// the block policies say where their shapes fit. A custom policy may
// specialize it (a wrong `false` would hide a valid set).
// whole_nodes(policy, req, g): how many wholly free nodes of g GPUs the
// policy's placement of `req` needs at least, which bounds what freeing
// room costs (0: none known).
template <class Policy>
struct advice_room {
    template <class Scratch>
    static bool fits(const Policy&, const Scratch&, const request&) noexcept {
        return true;
    }
    static std::uint32_t whole_nodes(const Policy&, const request& req, std::uint32_t g) noexcept {
        if (req.what == unit::nodes) return req.count;
        return req.whole_nodes && g != 0 ? (req.count + g - 1) / g : 0;
    }
    // windows(policy, shape, req, f): when the placement is a run of whole
    // nodes from a known list, calls f(first, count) (nodes by index in the
    // domain) for each run that, wholly free, lets the policy place `req`
    // in the domain, and returns true; then one of them must be wholly
    // free, and advise stops just what holds one. False: none known.
    template <class F>
    static bool windows(const Policy&, const domain_shape&, const request&, F&&) {
        return false;
    }
};

// A run of consecutive wholly free sub-blocks that holds the request.
template <>
struct advice_room<contiguous_block> {
    template <class Scratch>
    static bool fits(const contiguous_block& policy, const Scratch& open, const request& req) noexcept {
        const domain_shape shape{open.first_node, open.node_count, open.gpus_per_node};
        fixed_bitset<sizeof(open.open) / sizeof(gpu_mask)> free_nodes;
        for (std::uint32_t i = 0; i < open.node_count; ++i)
            if (open.wholly_open(i)) free_nodes.set(i);
        const detail::block_layout l = policy.layout(shape);
        const std::uint64_t need = req.what == unit::nodes ? std::uint64_t{req.count} * open.gpus_per_node : req.count;
        return detail::best_window(l, detail::free_blocks_among(free_nodes, l), need).blocks != 0;
    }
    // Sub-blocks are whole nodes.
    static std::uint32_t whole_nodes(const contiguous_block&, const request& req, std::uint32_t g) noexcept {
        if (req.what == unit::nodes) return req.count;
        return g == 0 ? 0 : (req.count + g - 1) / g;
    }
    // From each sub-block, the fewest consecutive ones that hold the job.
    template <class F>
    static bool windows(const contiguous_block& policy, const domain_shape& shape, const request& req, F&& f) {
        const detail::block_layout l = policy.layout(shape);
        const std::uint64_t need = req.what == unit::nodes ? std::uint64_t{req.count} * shape.gpus_per_node : req.count;
        for (std::uint32_t a = 0; a < l.count(); ++a) {
            std::uint64_t gpus = 0;
            std::uint32_t b = a;
            while (b < l.count() && gpus < need) gpus += l.gpus_of(b++);
            if (gpus < need) break;
            f(l.first_node(a), l.first_node(b - 1) + l.nodes_of(b - 1) - l.first_node(a));
        }
        return true;
    }
};

// A free buddy of the request's level or larger.
template <>
struct advice_room<buddy_split> {
    template <class Scratch>
    static bool fits(const buddy_split&, const Scratch& open, const request& req) {
        const std::uint32_t level = detail::buddy_level(req, req.count, open.gpus_per_node);
        return level != detail::no_level &&
               detail::smallest_level_at_least(detail::free_buddy_levels(open), level) != detail::no_level;
    }
    // A buddy of a node or more is whole nodes.
    static std::uint32_t whole_nodes(const buddy_split&, const request& req, std::uint32_t g) noexcept {
        const std::uint32_t level = detail::buddy_level(req, req.count, g);
        if (level == detail::no_level || level >= 63 || (std::uint64_t{1} << level) < g) return 0;
        return static_cast<std::uint32_t>((std::uint64_t{1} << level) / g);
    }
    // Buddies of whole nodes: the aligned chunks of the job's level inside
    // the domain (each lies inside one root of its forest).
    template <class F>
    static bool windows(const buddy_split& policy, const domain_shape& shape, const request& req, F&& f) {
        const std::uint32_t nodes = whole_nodes(policy, req, shape.gpus_per_node);
        if (nodes == 0) return false;
        for (std::uint32_t first = 0; first + nodes <= shape.node_count; first += nodes) f(first, nodes);
        return true;
    }
};

namespace detail {

// A stop-set's rank: cost, then how many, then the sorted ids compared in
// order (the smaller first id wins).
struct advice_key {
    std::uint64_t cost = ~std::uint64_t{0};
    std::size_t count = ~std::size_t{0};
    std::vector<allocation_id> ids;  // sorted

    bool found() const noexcept { return count != ~std::size_t{0}; }
    bool below(std::uint64_t c, std::size_t n, std::span<const allocation_id> sorted) const {
        if (c != cost) return c < cost;
        if (n != count) return n < count;
        return std::lexicographical_compare(sorted.begin(), sorted.end(), ids.begin(), ids.end());
    }
};

// The search of advise(), over one allocator.
template <class Policy, class Capacity>
class advisor {
public:
    using allocator_type = basic_allocator<Policy, Capacity>;

    advisor(allocator_type& alloc, const request& req, const advise_options& options)
        : a_(alloc), req_(req), options_(options), protect_(options.protect) {
        std::sort(protect_.begin(), protect_.end());
    }

    advice run() {
        advice out;
        const errc now = a_.plan(req_, scratch_);
        if (now == errc::ok) return out;
        // Stopping jobs neither brings nodes up nor changes what the request
        // or the policy is.
        if (!may_succeed_later(now) || now == errc::exceeds_healthy) {
            out.kind = advice_kind::impossible;
            out.reason = now;
            return out;
        }
        if (one_domain()) {
            search_domains();
            if (best_.found()) return answer(true);
        }
        const errc all = bound_search();
        if (best_.found()) return answer(false);
        out.kind = advice_kind::impossible;
        out.reason = all;
        return out;
    }

private:
    // A candidate to stop, as seen from one domain.
    struct item {
        allocation_id id;
        std::uint64_t cost = 0;
        bool exclusive = false;     // holds the domain closed
        std::uint32_t gain = 0;     // units it can free there at most
        std::uint32_t first = 0;    // its pieces in the domain: [first, first + pieces) of pieces_
        std::uint32_t pieces = 0;
    };
    struct local_piece {
        std::uint32_t node;  // index in the domain
        gpu_mask gpus;
    };

    bool is_protected(allocation_id id) const { return std::binary_search(protect_.begin(), protect_.end(), id); }
    std::uint64_t cost_of(allocation_id id) const {
        if (options_.cost) return options_.cost(id);
        return a_.find(id)->held_gpus;
    }
    bool default_cost() const noexcept { return !options_.cost; }

    // A request that must and can fit in one domain: every policy that keeps
    // such requests in one domain then needs room in that domain only.
    bool one_domain() const noexcept {
        if (req_.segmented() || req_.where != locality::require) return false;
        const topology& t = a_.topo();
        return req_.count <= (req_.what == unit::nodes ? t.max_domain_nodes() : t.max_domain_gpus());
    }

    // Units the request needs in a domain of `gpn` GPUs per node: GPUs, or
    // wholly free nodes.
    bool counts_nodes() const noexcept { return req_.takes_whole_nodes(); }
    std::uint32_t units_needed(std::uint32_t gpn) const noexcept {
        if (req_.what == unit::nodes) return req_.count;
        if (req_.whole_nodes) return gpn == 0 ? ~0U : (req_.count + gpn - 1) / gpn;
        return req_.count;
    }

    // Whether the allocator, with `ids` released, places the request.
    bool trial(std::span<const allocation_id> ids) { return refusal(ids) == errc::ok; }
    // What placing answers with `ids` released (ok when it places).
    errc refusal(std::span<const allocation_id> ids) {
        auto placed = a_.with_released(ids, [&](const allocator_type& a) { return a.plan(req_, scratch_); });
        return placed ? *placed : placed.error();
    }

    void offer(std::uint64_t cost, std::vector<allocation_id> sorted) {
        best_.cost = cost;
        best_.count = sorted.size();
        best_.ids = std::move(sorted);
    }

    advice answer(bool exact) const {
        advice out;
        out.kind = advice_kind::stop;
        out.stop = best_.ids;
        out.cost = best_.cost;
        out.exact = exact;
        return out;
    }

    // ---- one domain, exact ---------------------------------------------------
    // Domains in increasing order of a lower bound on what freeing room in
    // them costs (with the default cost, a GPU freed costs at least one), up
    // to the best found; in each, a depth-first search over its
    // allocations in id order.
    void search_domains() {
        const topology& t = a_.topo();
        const auto& state = a_.state();
        const domain_id domains = t.domain_count();
        // One pass puts each domain's bound in an array (a domain that can
        // never hold the request gets `never`); then the domains are
        // searched least bound first, up to the best cost found.
        constexpr std::uint32_t never = ~0U;
        std::vector<std::uint32_t> bounds(domains);
        // The request's terms as values: the stores to `bounds` could alias
        // the members and make each domain read them again.
        const bool ranked = default_cost();
        const bool exclusive = req_.exclusive_domain;
        const auto up_of = counts_nodes() ? &domain_counters::up_nodes : &domain_counters::up_gpus;
        const auto have_of = counts_nodes() ? &domain_counters::free_nodes : &domain_counters::free_gpus;
        // A domain's bound from its counters, when it needs `need` units
        // and `whole` GPUs of wholly free nodes.
        const auto bound_of = [=](const domain_counters& c, std::uint32_t need, std::uint64_t whole) {
            if (c.*up_of < need || c.up_nodes == 0) return never;
            if (!ranked) return 0U;
            if (exclusive) return c.held_gpus;
            const std::uint32_t have = c.*have_of;
            const std::uint64_t units = have >= need ? 0 : need - have;
            // Wholly free nodes need every GPU of theirs free.
            const std::uint64_t gpus = whole > c.free_gpus ? whole - c.free_gpus : 0;
            return static_cast<std::uint32_t>(std::max(units, gpus));
        };
        const auto whole_gpus = [&](std::uint32_t g) -> std::uint64_t {
            return std::uint64_t{advice_room<Policy>::whole_nodes(a_.policy(), req_, g)} * g;
        };
        // The domains are searched in rounds, each over the bounds in a span
        // of a few values from the least left, bound by bound. gather(d)
        // keeps d for the round when its bound lies in the span from the
        // least seen so far (one kept while the least was larger is passed
        // over by the round); the pass that sets the bounds gathers the
        // first round.
        constexpr std::uint32_t span = 8;
        std::vector<domain_id> gathered;
        std::uint32_t least = never;
        const auto gather = [&](domain_id d) {
            least = std::min(least, bounds[d]);
            if (bounds[d] != never && bounds[d] - least <= span) gathered.push_back(d);
        };
        if (const std::uint32_t uniform = t.uniform_gpus_per_node(); uniform != 0) {
            const std::uint32_t need = units_needed(uniform);
            const std::uint64_t whole = whole_gpus(uniform);
            for (domain_id d = 0; d < domains; ++d) {
                bounds[d] = bound_of(state.domain(d), need, whole);
                gather(d);
            }
        } else {
            for (domain_id d = 0; d < domains; ++d) {
                const std::uint32_t g = t.shape(d).gpus_per_node;
                bounds[d] = bound_of(state.domain(d), units_needed(g), whole_gpus(g));
                gather(d);
            }
        }
        for (std::uint32_t lo = least; lo != never && (!best_.found() || lo <= best_.cost);) {
            const std::uint32_t hi = lo + span;
            for (std::uint32_t b = lo; b <= hi; ++b)
                for (const domain_id d : gathered) {
                    if (best_.found() && b > best_.cost) return;
                    if (bounds[d] == b) search_domain(d);
                }
            if (best_.found() && best_.cost <= hi) return;  // the next round starts above it
            // The next round: the bounds above this one's.
            gathered.clear();
            least = never;
            for (domain_id d = 0; d < domains; ++d)
                if (bounds[d] > hi) gather(d);
            lo = least;
        }
    }

    // What making the wholly free nodes the policy needs costs at least in
    // the model: the held GPUs of its emptiest up nodes that are not free.
    std::uint32_t model_node_bound() const noexcept {
        if (whole_need_ <= whole_) return 0;
        std::uint32_t missing = whole_need_ - whole_;
        std::uint32_t bound = 0;
        for (std::uint32_t h = 1; h < held_nodes_.size() && missing > 0; ++h) {
            const std::uint32_t take = std::min(held_nodes_[h], missing);
            bound += take * h;
            missing -= take;
        }
        return bound;
    }

    // With the default cost, what making room in the domain costs at least
    // when the policy places in one of its windows (advice_room::windows):
    // the GPUs held on a window's nodes, the least over the windows on up
    // nodes (none: never); 0 when no windows are known.
    std::uint64_t window_bound(const domain_shape& shape) const {
        if (!default_cost()) return 0;
        const auto& state = a_.state();
        // Prefix sums over the domain's nodes: GPUs held, nodes not up.
        std::array<std::uint32_t, Capacity::max_nodes_per_domain + 1> held{}, down{};
        for (std::uint32_t i = 0; i < shape.node_count; ++i) {
            const node_id n = shape.first_node + i;
            held[i + 1] = held[i] + shape.gpus_per_node - count_bits(state.unheld_gpus(n));
            down[i + 1] = down[i] + (state.health(n) != node_health::up ? 1U : 0U);
        }
        std::uint64_t least = ~std::uint64_t{0};
        const bool known = advice_room<Policy>::windows(a_.policy(), shape, req_, [&](std::uint32_t first, std::uint32_t count) {
            if (down[first + count] == down[first]) least = std::min<std::uint64_t>(least, held[first + count] - held[first]);
        });
        return known ? least : 0;
    }

    void search_domain(domain_id d) {
        const auto& state = a_.state();
        const domain_shape shape = a_.topo().shape(d);
        // Safe skip: a set that makes room frees every held GPU of some window,
        // and each allocation stopped costs at least the GPUs it holds there.
        if (best_.found() && window_bound(shape) > best_.cost) return;
        {
            // The policy's shape must fit the domain with everything stopped.
            toolkit::domain_scratch<Capacity::max_nodes_per_domain> empty;
            empty.first_node = shape.first_node;
            empty.node_count = shape.node_count;
            empty.gpus_per_node = shape.gpus_per_node;
            empty.full = full_gpu_mask(shape.gpus_per_node);
            for (std::uint32_t i = 0; i < shape.node_count; ++i)
                empty.open[i] = state.health(shape.first_node + i) == node_health::up ? empty.full : 0;
            if (!advice_room<Policy>::fits(a_.policy(), empty, req_)) return;
        }
        items_.clear();
        gpus_here_.clear();
        pieces_.clear();
        chosen_.clear();
        // The allocations holding GPUs here, each once.
        std::vector<allocation_id>& seen = seen_;
        seen.clear();
        for (std::uint32_t i = 0; i < shape.node_count; ++i) {
            const node_id n = shape.first_node + i;
            const gpu_mask held = state.node_full_mask(n) & ~state.unheld_gpus(n);
            for (gpu_mask m = held; m != 0; m &= m - 1) {
                const allocation_id id = state.owner(n, static_cast<std::uint32_t>(std::countr_zero(m)));
                // A job's GPUs mostly come in a row: the last one seen first.
                if (!seen.empty() && seen.back() == id) continue;
                if (std::find(seen.begin(), seen.end(), id) == seen.end()) seen.push_back(id);
            }
        }
        std::sort(seen.begin(), seen.end());
        // Start: the usable GPUs of up nodes; an exclusive holder closes it.
        const domain_counters& c = state.domain(d);
        open_ = {};
        open_.first_node = shape.first_node;
        open_.node_count = shape.node_count;
        open_.gpus_per_node = shape.gpus_per_node;
        open_.full = full_gpu_mask(shape.gpus_per_node);
        up_ = {};
        units_ = 0;
        whole_ = 0;
        held_nodes_.assign(std::size_t{shape.gpus_per_node} + 1, 0);
        whole_need_ = advice_room<Policy>::whole_nodes(a_.policy(), req_, shape.gpus_per_node);
        for (std::uint32_t i = 0; i < shape.node_count; ++i) {
            const node_id n = shape.first_node + i;
            if (state.health(n) != node_health::up) continue;
            up_.set(i);
            open_.open[i] = state.unheld_gpus(n);
            count_node(open_.open[i], +1);
        }
        closed_by_ = c.exclusive_holders;
        held_left_ = c.held_gpus;
        need_ = units_needed(shape.gpus_per_node);
        std::uint64_t& mandatory_cost = mandatory_cost_;
        mandatory_cost = 0;
        blocked_ = {};
        std::vector<allocation_id>& mandatory = mandatory_;
        mandatory.clear();
        for (const allocation_id id : seen) {
            const allocation_record& r = *a_.find(id);
            item it;
            it.id = id;
            it.exclusive = r.asked.exclusive_domain;
            it.first = static_cast<std::uint32_t>(pieces_.size());
            std::uint32_t gpus_here = 0;
            for (const piece p : r.pieces) {
                if (p.node < shape.first_node || p.node >= shape.end_node()) continue;
                const std::uint32_t i = p.node - shape.first_node;
                pieces_.push_back({i, p.gpus});
                gpus_here += count_bits(p.gpus);
                if (up_.test(i)) it.gain += counts_nodes() ? 1 : count_bits(p.gpus);
            }
            it.pieces = static_cast<std::uint32_t>(pieces_.size()) - it.first;
            // Must go: it holds the domain closed, or the request wants it
            // empty.
            const bool must = it.exclusive || req_.exclusive_domain;
            if (is_protected(id)) {
                if (must) return;  // the domain stays closed (or not empty)
                for (std::uint32_t k = it.first; k < it.first + it.pieces; ++k) blocked_.set(pieces_[k].node);
                continue;
            }
            it.cost = cost_of(id);
            if (must) {
                apply(it, gpus_here, +1);
                mandatory_cost += it.cost;
                mandatory.push_back(id);
                continue;
            }
            items_.push_back(it);
            gpus_here_.push_back(gpus_here);
        }
        // Suffix sums of the gains: what the items from i on can free at most.
        suffix_gain_.assign(items_.size() + 1, 0);
        for (std::size_t i = items_.size(); i-- > 0;) suffix_gain_[i] = suffix_gain_[i + 1] + items_[i].gain;
        if (search_windows(shape)) return;
        // First trusting the model: its least set, confirmed once. Only
        // when the policy refuses it, again confirming each set found.
        bar_ = best_;
        best_here_ = false;
        confirm_each_ = false;
        dfs(0, mandatory_cost);
        if (!best_here_) return;
        if (trial(bar_.ids)) {
            best_ = std::move(bar_);
            return;
        }
        bar_ = best_;
        best_here_ = false;
        confirm_each_ = true;
        dfs(0, mandatory_cost);
        if (best_here_) best_ = bar_;
    }

    // The policy's windows (advice_room::windows) in the domain being
    // searched: for each, the allocations holding its nodes (with the
    // mandatory ones) must stop, and suffice. The least such set, when the
    // policy confirms it; false to search set by set instead (no windows
    // known, or the policy refused).
    bool search_windows(const domain_shape& shape) {
        advice_key local = best_;
        bool found = false;
        std::vector<allocation_id> ids;
        const bool known = advice_room<Policy>::windows(a_.policy(), shape, req_, [&](std::uint32_t first, std::uint32_t count) {
            for (std::uint32_t i = first; i < first + count; ++i)
                if (!up_.test(i) || blocked_.test(i)) return;  // down, draining, or held by a protected one
            ids = mandatory_;
            std::uint64_t cost = mandatory_cost_;
            for (const item& it : items_) {
                bool inside = false;
                for (std::uint32_t p = it.first; p < it.first + it.pieces && !inside; ++p)
                    inside = pieces_[p].node >= first && pieces_[p].node < first + count;
                if (!inside) continue;
                ids.push_back(it.id);
                cost += it.cost;
            }
            std::sort(ids.begin(), ids.end());
            if (ids.empty() || !local.below(cost, ids.size(), ids)) return;
            local.cost = cost;
            local.count = ids.size();
            local.ids = ids;
            found = true;
        });
        if (!known) return false;
        if (!found) return true;
        if (!trial(local.ids)) return false;
        best_ = std::move(local);
        return true;
    }

    std::uint32_t units_of(gpu_mask m) const noexcept {
        return counts_nodes() ? (m == open_.full ? 1U : 0U) : count_bits(m);
    }

    // Adds (+1) or removes (-1) an up node with usable GPUs m to the
    // model's counts.
    void count_node(gpu_mask m, int sign) noexcept {
        const std::uint32_t free = count_bits(m);
        const std::uint32_t whole = m == open_.full ? 1U : 0U;
        const std::uint32_t held = open_.gpus_per_node - free;
        if (sign > 0) {
            units_ += units_of(m);
            whole_ += whole;
            ++held_nodes_[held];
        } else {
            units_ -= units_of(m);
            whole_ -= whole;
            --held_nodes_[held];
        }
    }

    // Releases (sign +1) or takes back (-1) an item's GPUs in the model.
    void apply(const item& it, std::uint32_t gpus_here, int sign) {
        for (std::uint32_t k = it.first; k < it.first + it.pieces; ++k) {
            const local_piece& p = pieces_[k];
            if (!up_.test(p.node)) continue;
            gpu_mask& m = open_.open[p.node];
            count_node(m, -1);
            m = sign > 0 ? m | p.gpus : m & ~p.gpus;
            count_node(m, +1);
        }
        if (it.exclusive) closed_by_ = sign > 0 ? closed_by_ - 1 : closed_by_ + 1;
        held_left_ = sign > 0 ? held_left_ - gpus_here : held_left_ + gpus_here;
    }

    // The model's necessary condition for the request to fit in the domain:
    // open (and empty for an exclusive request), enough GPUs or wholly free
    // nodes, and the policy's shape (advice_room).
    bool room() const {
        if (closed_by_ != 0) return false;
        if (req_.exclusive_domain && held_left_ != 0) return false;
        return units_ >= need_ && whole_ >= whole_need_ && advice_room<Policy>::fits(a_.policy(), open_, req_);
    }

    // The chosen set (mandatory ones and chosen_), sorted.
    std::vector<allocation_id> chosen_ids() const {
        std::vector<allocation_id> ids = mandatory_;
        for (const std::size_t i : chosen_) ids.push_back(items_[i].id);
        std::sort(ids.begin(), ids.end());
        return ids;
    }

    // Items from i on, the chosen ones costing `cost` so far. Include
    // first, in id order: the sets come in increasing id order, so a set
    // of the same cost and count as the best found in this domain never
    // beats it.
    void dfs(std::size_t i, std::uint64_t cost) {
        const std::size_t count = mandatory_.size() + chosen_.size();
        const bool fits = room();
        if (fits) {
            if (!bar_.found() || cost < bar_.cost || (cost == bar_.cost && count <= bar_.count)) {
                std::vector<allocation_id> ids = chosen_ids();
                if (bar_.below(cost, count, ids)) {
                    // Nothing to stop is what plan() refused already.
                    if (!ids.empty() && (!confirm_each_ || trial(ids))) {
                        bar_.cost = cost;
                        bar_.count = ids.size();
                        bar_.ids = std::move(ids);
                        best_here_ = true;
                        return;
                    }
                } else {
                    return;  // no superset is better either
                }
            } else {
                return;
            }
        }
        if (i == items_.size()) return;
        // Bound: what completing the set costs at least.
        const std::uint32_t missing = std::max(units_ >= need_ ? 1 : need_ - units_, model_node_bound());
        if (units_ + suffix_gain_[i] < need_) return;
        if (bar_.found()) {
            const std::uint64_t at_least = cost + (default_cost() ? missing : 0);
            const std::size_t count_at_least = count + 1;
            if (at_least > bar_.cost) return;
            if (at_least == bar_.cost && count_at_least > bar_.count) return;
            if (at_least == bar_.cost && count_at_least == bar_.count && best_here_) return;
        }
        const item& it = items_[i];
        apply(it, gpus_here_[i], +1);
        chosen_.push_back(i);
        dfs(i + 1, cost + it.cost);
        chosen_.pop_back();
        apply(it, gpus_here_[i], -1);
        dfs(i + 1, cost);
    }

    // ---- spanning requests: a bound ------------------------------------------
    // Every unprotected allocation stopped must place the request, or it is
    // impossible. Then whole domains' allocations, cheapest domain first,
    // until the request fits; then each chosen allocation, the most costly
    // first, is kept running when the request still fits without it. The
    // answer costs no more than emptying those domains, and no allocation in
    // it can be left out alone. Returns the reason when nothing helps.
    errc bound_search() {
        const auto& state = a_.state();
        std::vector<allocation_id> all;
        state.for_each_allocation([&](allocation_id id, const allocation_record&) {
            if (!is_protected(id)) all.push_back(id);
        });
        std::sort(all.begin(), all.end());
        // Domains by what emptying them of unprotected allocations costs.
        const topology& t = a_.topo();
        std::vector<std::pair<std::uint64_t, domain_id>> order;
        std::vector<std::vector<allocation_id>> in_domain(t.domain_count());
        for (const allocation_id id : all)
            for (const piece p : a_.find(id)->pieces) {
                auto& list = in_domain[t.node(p.node).domain];
                if (list.empty() || list.back() != id) list.push_back(id);
            }
        for (domain_id d = 0; d < t.domain_count(); ++d) {
            if (in_domain[d].empty()) continue;
            std::uint64_t cost = 0;
            for (const allocation_id id : in_domain[d]) cost += cost_of(id);
            order.emplace_back(cost, d);
        }
        std::sort(order.begin(), order.end());
        // The cheapest 1, 2, 4, ... domains emptied, the last time all.
        std::vector<allocation_id> chosen;
        errc reason = errc::ok;
        for (std::size_t taken = 0, batch = 1;; batch *= 2) {
            for (const std::size_t end = std::min(order.size(), taken + batch); taken < end; ++taken)
                for (const allocation_id id : in_domain[order[taken].second]) chosen.push_back(id);
            std::sort(chosen.begin(), chosen.end());
            chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
            reason = refusal(chosen);
            if (reason == errc::ok || taken == order.size()) break;
        }
        if (reason != errc::ok) return reason;  // all of them stopped, in vain
        // Leave out what is not needed, the most costly first.
        std::vector<std::pair<std::uint64_t, allocation_id>> by_cost;
        for (const allocation_id id : chosen) by_cost.emplace_back(cost_of(id), id);
        std::sort(by_cost.begin(), by_cost.end(), [](const auto& x, const auto& y) { return x > y; });
        std::vector<allocation_id> keep = chosen;
        for (const auto& [cost, id] : by_cost) {
            std::vector<allocation_id> without;
            for (const allocation_id k : keep)
                if (k != id) without.push_back(k);
            if (trial(without)) keep = std::move(without);
        }
        std::sort(keep.begin(), keep.end());
        std::uint64_t total = 0;
        for (const allocation_id id : keep) total += cost_of(id);
        offer(total, std::move(keep));
        return errc::ok;
    }

    allocator_type& a_;
    request req_;
    const advise_options& options_;
    std::vector<allocation_id> protect_;  // sorted
    placement scratch_;
    advice_key best_;
    // The domain being searched: the set to beat (best_, then what this
    // domain found), whether this domain found it, and whether each set
    // found is confirmed as found (else the least one, once, at the end).
    advice_key bar_;
    bool best_here_ = false;
    bool confirm_each_ = false;

    // The domain being searched.
    std::vector<item> items_;
    std::vector<std::uint32_t> gpus_here_;  // per item: its GPUs in the domain
    std::vector<local_piece> pieces_;
    std::vector<std::size_t> chosen_;
    std::vector<allocation_id> mandatory_;
    std::uint64_t mandatory_cost_ = 0;
    fixed_bitset<Capacity::max_nodes_per_domain> blocked_;  // nodes a protected allocation holds
    std::vector<allocation_id> seen_;
    std::vector<std::uint32_t> suffix_gain_;
    toolkit::domain_scratch<Capacity::max_nodes_per_domain> open_;  // usable GPUs of up nodes, by node
    fixed_bitset<Capacity::max_nodes_per_domain> up_;
    std::uint32_t units_ = 0;
    std::uint32_t whole_ = 0;       // up nodes with every GPU usable
    std::uint32_t whole_need_ = 0;  // advice_room::whole_nodes
    std::vector<std::uint32_t> held_nodes_;  // [held GPUs]: up nodes holding that many
    std::uint32_t need_ = 0;
    std::uint32_t closed_by_ = 0;
    std::uint32_t held_left_ = 0;
};

}  // namespace detail

// The running allocations to stop so that `req` becomes placeable by the
// allocator's policy: after releasing exactly them, try_allocate(req)
// succeeds (the policy may then choose any spot). Ranked by cost (the GPUs
// they hold, or options.cost), then by count, then by their ids in
// increasing order compared in turn; options.protect are never chosen.
// - A request that must fit in one domain (not segmented, locality require,
//   no larger than the largest domain): the least such set over the sets
//   that make room inside one domain (exact; the minimum overall for every
//   policy that keeps such requests in one domain: all built-in ones but
//   first-fit, which may spread them).
// - Otherwise a bound: a set that works, costing no more than emptying the
//   cheapest domains that make room, none of whose members can be left out
//   alone.
// Every candidate is confirmed by the policy's own plan() with the set
// released (allocator::with_released), so custom policies are followed
// exactly. The allocator is left as it was (same ids, same decisions).
template <class Policy, class Capacity>
advice advise(basic_allocator<Policy, Capacity>& alloc, const request& req, const advise_options& options = {}) {
    return detail::advisor<Policy, Capacity>(alloc, req, options).run();
}

}  // namespace topoblock
