#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/place_each_segment.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/support/noinline.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace topoblock {

namespace detail {

inline constexpr std::uint32_t no_level = 64;

// The buddy level a request of `count` units needs on nodes of `g` GPUs:
// GPUs round up to a power of two (1, 2, 4 inside a 4-GPU node; 8 = two
// nodes), nodes to a power of two of nodes, and a whole-node GPU request to
// at least one node. no_level when g is not a power of two.
inline std::uint32_t buddy_level(const request& req, std::uint64_t count, std::uint32_t g) noexcept {
    if (!std::has_single_bit(g) || count == 0) return no_level;
    std::uint64_t gpus = std::bit_ceil(count);
    if (req.what == unit::nodes) gpus *= g;
    else if (req.whole_nodes && gpus < g) gpus = g;
    return static_cast<std::uint32_t>(std::countr_zero(gpus));
}

// The level of a domain's largest buddy (its first root), or no_level when
// it has none (no nodes, or nodes whose GPU count is not a power of two).
inline std::uint32_t root_level(const domain_shape& info) noexcept {
    if (info.node_count == 0 || !std::has_single_bit(info.gpus_per_node)) return no_level;
    return static_cast<std::uint32_t>(std::bit_width(info.gpu_count()) - 1);
}

// The smallest level >= `need` in `levels`, or no_level.
inline std::uint32_t smallest_level_at_least(std::uint64_t levels, std::uint32_t need) noexcept {
    if (need >= 64) return no_level;
    const std::uint64_t fit = levels & (~std::uint64_t{0} << need);
    return fit == 0 ? no_level : static_cast<std::uint32_t>(std::countr_zero(fit));
}

// The free buddies are found with word operations on bit masks (one bit per
// node or per GPU). Bit p of aligned_chunks(chunks, j) is set when bits
// p .. p + 2^(j+1) - 1 are all set and p is a multiple of 2^(j+1), given
// `chunks` with the same for 2^j. Bits past the domain's end are clear, so
// a chunk never reaches past it; and as the roots of a domain's forest run
// largest first, every aligned chunk inside the domain lies inside one
// root, and a root's parent chunk always reaches past the end: a root is
// listed whenever it is free.
inline constexpr std::uint64_t aligned_chunk_starts[] = {0x5555555555555555ULL, 0x1111111111111111ULL,
                                                         0x0101010101010101ULL, 0x0001000100010001ULL,
                                                         0x0000000100000001ULL, 0x0000000000000001ULL};
constexpr std::uint64_t aligned_chunks(std::uint64_t chunks, std::uint32_t j) noexcept {
    if (j >= 6) return 0;
    return chunks & (chunks >> (std::uint32_t{1} << j)) & aligned_chunk_starts[j];
}

// Calls f(j, listed) for each j with some free chunk of 2^j bits whose
// parent is not free (`listed`: their first bits), j ascending.
template <class F>
constexpr void for_each_listed_chunk_size(std::uint64_t bits, F&& f) {
    for (std::uint32_t j = 0; bits != 0; ++j) {
        const std::uint64_t parents = aligned_chunks(bits, j);
        // A free 64-bit parent has no chunk of 2^7 above it: the shift reaches the word's width.
        const std::uint64_t listed = bits & ~(parents | detail::shift_up(parents, std::uint32_t{1} << j));
        if (listed != 0) f(j, listed);
        bits = parents;
    }
}

// Bit j: `bits` has a free chunk of 2^j bits whose parent is not free.
constexpr std::uint64_t listed_chunk_sizes(std::uint64_t bits) noexcept {
    std::uint64_t sizes = 0;
    for_each_listed_chunk_size(bits, [&](std::uint32_t j, std::uint64_t) { sizes |= std::uint64_t{1} << j; });
    return sizes;
}

// Calls f(j, first, step, listed) for each set of free chunks of 2^j nodes
// in `whole` whose parent is not free: bit b of `listed` is the chunk from
// node first + b * step. Chunks of 64 nodes or more are whole words, found
// the same way from a bit per full word.
template <class NodeSet, class F>
TOPOBLOCK_ALWAYS_INLINE void for_each_listed_node_chunks(const NodeSet& whole, F&& f) {
    static_assert(NodeSet::word_count <= 64);
    std::uint64_t full_words = 0;
    for (std::uint32_t w = 0; w < NodeSet::word_count; ++w) {
        for_each_listed_chunk_size(whole.word(w), [&](std::uint32_t j, std::uint64_t listed) {
            if (j < 6) f(j, w * 64, 1U, listed);
        });
        if (~whole.word(w) == 0) full_words |= std::uint64_t{1} << w;
    }
    for_each_listed_chunk_size(full_words, [&](std::uint32_t j, std::uint64_t listed) { f(j + 6, 0U, 64U, listed); });
}

// Calls f(i) for each node i of `nodes`, lowest first, until f returns
// true; returns whether it did.
template <class NodeSet, class F>
TOPOBLOCK_ALWAYS_INLINE bool any_node(const NodeSet& nodes, F&& f) {
    for (std::uint32_t w = 0; w < NodeSet::word_count; ++w)
        for (std::uint64_t rest = nodes.word(w); rest != 0; rest &= rest - 1)
            if (f(w * 64 + static_cast<std::uint32_t>(std::countr_zero(rest)))) return true;
    return false;
}

// A domain's usable GPUs as words: its wholly usable nodes, those with some
// but not all GPUs usable, and usable(i), node i's usable GPUs. Nodes of
// g GPUs, a power of two.
template <class NodeSet, class Usable>
struct buddy_words {
    NodeSet whole, partial;
    std::uint32_t g = 0;
    Usable usable;

    std::uint32_t node_level() const noexcept { return static_cast<std::uint32_t>(std::countr_zero(g)); }

    // Bit L: some free buddy of 2^L GPUs whose parent is not free.
    std::uint64_t levels() const {
        std::uint64_t levels = 0;
        for_each_listed_node_chunks(whole, [&](std::uint32_t j, std::uint32_t, std::uint32_t, std::uint64_t) {
            levels |= std::uint64_t{1} << (j + node_level());
        });
        any_node(partial, [&](std::uint32_t i) {
            levels |= listed_chunk_sizes(usable(i));
            return false;
        });
        return levels;
    }

    // Takes the lowest 2^need GPUs of the smallest free buddy that holds
    // them, lowest offset on ties (the buddy allocator's split), given
    // levels(); false when no free buddy is large enough.
    bool take(node_id first_node, std::uint64_t free_levels, std::uint32_t need, placement& out) const {
        const std::uint32_t level = smallest_level_at_least(free_levels, need);
        if (level == no_level) return false;
        const std::uint32_t size = std::uint32_t{1} << need;
        bool found = false;
        const auto add = [&](std::uint32_t node, std::uint32_t gpu) {
            if (size >= g) out.add_nodes(first_node + node, size / g, full_gpu_mask(g));
            else out.add(first_node + node, full_gpu_mask(size) << gpu);
            found = true;
        };
        if (level >= node_level()) {
            for_each_listed_node_chunks(whole, [&](std::uint32_t j, std::uint32_t first, std::uint32_t step, std::uint64_t listed) {
                if (!found && j + node_level() == level) add(first + step * static_cast<std::uint32_t>(std::countr_zero(listed)), 0);
            });
            return found;
        }
        return any_node(partial, [&](std::uint32_t i) {
            for_each_listed_chunk_size(usable(i), [&](std::uint32_t j, std::uint64_t listed) {
                if (j == level) add(i, static_cast<std::uint32_t>(std::countr_zero(listed)));
            });
            return found;
        });
    }
};

template <class NodeSet, class Usable>
buddy_words<NodeSet, Usable> make_buddy_words(const NodeSet& whole, const NodeSet& partial, std::uint32_t g, Usable usable) {
    return {whole, partial, g, usable};
}

// The words of a domain's open GPUs in a scratch (toolkit::load_domain).
template <class Scratch>
auto words_of(const Scratch& s) {
    fixed_bitset<sizeof(s.open) / sizeof(gpu_mask)> whole, partial;
    for (std::uint32_t i = 0; i < s.node_count; ++i) {
        if (s.wholly_open(i)) whole.set(i);
        else if (s.open[i] != 0) partial.set(i);
    }
    return make_buddy_words(whole, partial, s.gpus_per_node, [&s](std::uint32_t i) { return s.open[i]; });
}

// The words of domain d as the state has it, from its node sets (none when
// the domain is closed).
template <class State>
TOPOBLOCK_ALWAYS_INLINE auto words_of(const State& state, domain_id d) {
    const domain_shape info = state.topo().shape(d);
    typename State::node_set whole, partial;
    if (state.domain_open(d)) {
        whole = state.nodes_with_unheld(d, info.gpus_per_node);
        for (std::size_t w = 0; w < State::node_set::word_count; ++w) {
            std::uint64_t bits = 0;
            for (std::uint32_t k = 1; k < info.gpus_per_node; ++k) bits |= state.nodes_with_unheld(d, k).word(w);
            partial.set_word(w, bits);
        }
    }
    return make_buddy_words(whole, partial, info.gpus_per_node,
                            [&state, first = info.first_node](std::uint32_t i) { return state.unheld_gpus(first + i); });
}

// The free buddies' levels of a domain in a scratch (bit L: some free buddy
// of 2^L GPUs); none when its nodes hold no buddy.
template <class Scratch>
std::uint64_t free_buddy_levels(const Scratch& s) {
    if (s.node_count == 0 || !std::has_single_bit(s.gpus_per_node)) return 0;
    return words_of(s).levels();
}

// Takes the buddy of 2^need GPUs from a scratch (buddy_words::take); false
// when none is large enough.
template <class Scratch>
bool take_buddy(const Scratch& s, std::uint32_t need, placement& out) {
    if (s.node_count == 0 || !std::has_single_bit(s.gpus_per_node)) return false;
    const auto words = words_of(s);
    return words.take(s.first_node, words.levels(), need, out);
}

// free_buddy_levels of domain d as the state has it.
template <class State>
std::uint64_t free_buddy_levels_of(const State& state, domain_id d) {
    const domain_shape info = state.topo().shape(d);
    if (root_level(info) == no_level || !state.domain_open(d)) return 0;
    // Taken or given back whole (multi-domain jobs): nothing free, or its
    // roots alone, whose sizes are the binary digits of its GPU count.
    const auto& counters = state.domain(d);
    if (counters.free_gpus == 0) return 0;
    if (counters.free_nodes == info.node_count) return info.gpu_count();
    return words_of(state, d).levels();
}

}  // namespace detail

// A buddy allocator per NVLink domain.
// - Buddies: a domain's GPUs, numbered node-major, split into aligned
//   power-of-two chunks: 1, 2, 4 GPUs inside a 4-GPU node, then 2, 4, 8, 16
//   whole nodes. A domain whose size is not a power of two is a forest of
//   maximal aligned roots: an 18-tray NVL72 rack is 16 trays + 2 trays.
// - Rounding: a GPU request takes 2^k GPUs (3 -> 4, 5 -> 8 = two trays), a
//   node request 2^k nodes, a whole-node GPU request at least one node; the
//   GPUs beyond the request count as internal fragmentation.
// - A job goes to the domain whose smallest sufficient free buddy is
//   smallest (lowest domain index on ties) and takes the lowest part of that
//   buddy (the split); inside the domain, the smallest sufficient free buddy
//   with the lowest offset.
// - The free buddies are derived from occupancy (a buddy is free when every
//   GPU of it is usable: unheld, on an up node, in an open domain) and listed
//   only when their parent is not free, so released buddies coalesce by
//   construction. hold() usage need not be aligned, and down or draining
//   nodes make every buddy they touch busy until they come back up.
// - A job that fits no domain's largest buddy (65-72 GPUs on an NVL72 rack)
//   or is larger than a domain takes wholly free domains
//   (toolkit::pick_whole_domains) and holds every GPU of them; so does a
//   locality::prefer / any job when no domain has a free buddy for it.
// - Segments: each segment is a buddy in one domain, chosen in turn as above
//   counting what earlier segments took (a segment no buddy can hold takes
//   one whole free domain).
// - exclusive_domain: only idle domains; the job holds its buddy and closes
//   the rest of the domain.
// - Nodes whose GPU count is not a power of two hold no buddy and are never
//   chosen (every NVIDIA system has 4 or 8 GPUs per node).
// Cost: a scan of at most log2(domain GPUs) level sets, then word
// operations on the chosen domain's node sets; O(domains) for segments,
// exclusive jobs and multi-domain jobs on mixed clusters. Keeping the
// summaries: word operations plus one per partly used node per change.
class buddy_split {
public:
    std::string_view name() const noexcept { return "buddy-split"; }

    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        kinds_.clear();
        for (const auto& info : topo.domains()) {
            const std::uint32_t root = detail::root_level(info);
            if (root == detail::no_level) continue;
            auto it = std::find_if(kinds_.begin(), kinds_.end(), [&](const auto& k) { return k.first == info.gpus_per_node; });
            if (it == kinds_.end()) kinds_.emplace_back(info.gpus_per_node, root);
            else it->second = std::max(it->second, root);
        }
        levels_.assign(topo.domain_count(), 0);
        at_level_.assign(static_cast<std::size_t>(std::bit_width(topo.max_domain_gpus())) + 1,
                         indexed_bitset(topo.domain_count()));
        windows_.attach(state);
        for (domain_id d = 0; d < topo.domain_count(); ++d) on_domain_change(state, d);
    }

    // Out of line: inlined, it slowed the allocator's change around it.
    template <class State>
    TOPOBLOCK_NOINLINE void on_domain_change(const State& state, domain_id d) {
        TOPOBLOCK_ASSERT(d < levels_.size());
        windows_.on_domain_change(state, d);
        refile_levels(state, d);
    }
    // One change of several domains (a multi-domain job): the whole-domain
    // windows file each word once.
    template <class State>
    TOPOBLOCK_NOINLINE void on_domains_change(const State& state, std::span<const domain_id> changed) {
        windows_.on_domains_change(state, changed);
        for (domain_id d : changed) refile_levels(state, d);
    }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        if (req.segmented()) return place_segments(state, units, out);
        if (fits_a_buddy(req, req.count)) {
            const domain_id d = smallest_buddy_domain(state, units);
            if (d != npos32) {
                detail::words_of(state, d).take(state.topo().shape(d).first_node, levels_[d], need(state, req, req.count, d), out);
                return errc::ok;
            }
            if (req.where == locality::require) return units.shortfall(req.count);
        }
        if (!toolkit::pick_whole_domains(units, req.count, chosen_, &windows_)) return units.shortfall(req.count);
        for (domain_id d : chosen_) toolkit::take_whole_domain(state, d, out);
        return errc::ok;
    }

    // explain()'s numbers in buddies: a part needs a free buddy of its
    // power-of-two size in one domain, `most` is the largest free buddy (in
    // GPUs) of the domains the request may use; a domain would hold the part
    // were its jobs ended when an aligned buddy of that size lies on nodes
    // that are up. A part larger than every buddy is held by a wholly free
    // domain of enough GPUs, as place() takes one. O(domains).
    template <class State>
    toolkit::capacity_view measure(const State& state, const request& req) const {
        const toolkit::request_units<State> units{state, req};
        if (!req.exclusive_domain && windows_.kept()) return measure_like_domains(state, req);
        toolkit::capacity_view view;
        view.most_is = "the largest free buddy";
        std::uint64_t fewest = ~std::uint64_t{0};  // GPUs a part needs, over domains
        const std::uint64_t part = req.part_size();
        const bool buddies = fits_a_buddy(req, part);
        view = toolkit::scan_domains(state, view, [&](domain_id d) {
            const domain_shape info = state.topo().shape(d);
            const std::uint32_t level = need(state, req, part, d);
            const std::uint32_t root = detail::root_level(info);
            const bool allowed = units.allowed(d);
            toolkit::scope_offer o;
            if (allowed) {
                const std::uint64_t levels = levels_[d];
                o.free = state.domain(d).free_gpus;
                o.most = levels == 0 ? 0 : std::uint64_t{1} << (std::bit_width(levels) - 1);
            }
            if (!buddies) {
                if (root == detail::no_level || units.capacity_of(d) < part) return o;
                fewest = std::min(fewest, need_gpus(req, part, info.gpus_per_node));
                o.holds_now = allowed && toolkit::wholly_free(units, d);
                o.holds_if_emptied = state.domain(d).up_nodes == info.node_count;
                return o;
            }
            if (level == detail::no_level || root == detail::no_level || level > root) return o;
            fewest = std::min(fewest, std::uint64_t{1} << level);
            o.holds_now = allowed && detail::smallest_level_at_least(levels_[d], level) != detail::no_level;
            o.holds_if_emptied = state.domain(d).up_nodes == info.node_count || up_buddy(state, info, level);
            return o;
        });
        view.need = fewest == ~std::uint64_t{0} ? 0 : fewest;
        return view;
    }

    // Heap bytes of what the policy keeps besides the state.
    std::size_t memory_bytes() const noexcept {
        return heap_bytes(levels_) + nested_heap_bytes(at_level_) + heap_bytes(kinds_) + windows_.memory_bytes() +
               heap_bytes(chosen_);
    }

    // What attach and the change hooks keep (testing::check_indexes).
    auto indexes() const noexcept { return std::tie(levels_, at_level_, windows_); }

private:
    // measure() on a cluster of like domains, for a request that is not
    // exclusive, from the level sets: O(levels x domains / 64), plus a pass
    // over the domains' counters when some node is not up.
    template <class State>
    toolkit::capacity_view measure_like_domains(const State& state, const request& req) const {
        const topology& topo = state.topo();
        const domain_shape info = topo.shape(0);
        const std::uint64_t part = req.part_size();
        const std::uint32_t level = need(state, req, part, 0);
        const std::uint32_t root = detail::root_level(info);
        toolkit::capacity_view view;
        view.most_is = "the largest free buddy";
        view.free = state.available().gpus;
        view.scopes = topo.domain_count();
        view.wholly_free = windows_.wholly_free_count();
        for (std::size_t l = at_level_.size(); l-- > 0;)
            if (at_level_[l].find_first() < at_level_[l].size()) {
                view.most = std::uint64_t{1} << l;
                break;
            }
        if (root == detail::no_level) return view;
        if (!fits_a_buddy(req, part)) {
            // A wholly free domain takes the part whole; one with a node not up holds nothing.
            if (toolkit::request_units<State>{state, req}.capacity_of(0) < part) return view;
            view.need = need_gpus(req, part, info.gpus_per_node);
            view.holding_now = view.wholly_free;
            view.holding_if_emptied = toolkit::holding_if_emptied_on_like_domains(state, true, [](domain_id) { return false; });
            return view;
        }
        view.need = std::uint64_t{1} << level;
        view.holding_if_emptied = toolkit::holding_if_emptied_on_like_domains(
            state, true, [&](domain_id d) { return up_buddy(state, topo.shape(d), level); });
        // Domains with a free buddy at the level or above: the level sets ORed, word by word.
        const std::size_t words = (std::size_t{topo.domain_count()} + 63) / 64;
        for (std::size_t w = 0; w < words; ++w) {
            std::uint64_t any = 0;
            for (std::size_t l = level; l < at_level_.size(); ++l) any |= at_level_[l].word(w);
            view.holding_now += static_cast<std::uint32_t>(std::popcount(any));
        }
        return view;
    }

    // Some aligned buddy of 2^level GPUs of the domain lies on nodes that
    // are all up (the aligned chunks below the GPU count rounded down to
    // the size lie in the roots).
    template <class State>
    static bool up_buddy(const State& state, const domain_shape& info, std::uint32_t level) noexcept {
        const std::uint64_t size = std::uint64_t{1} << level;
        const std::uint64_t nodes = size >= info.gpus_per_node ? size / info.gpus_per_node : 1;
        for (std::uint64_t chunk = 0; chunk < info.gpu_count() >> level; ++chunk) {
            const std::uint64_t first = chunk * size / info.gpus_per_node;
            bool up = true;
            for (std::uint64_t i = first; up && i < first + nodes; ++i)
                up = state.health(info.first_node + static_cast<node_id>(i)) == node_health::up;
            if (up) return true;
        }
        return false;
    }

    template <class State>
    void refile_levels(const State& state, domain_id d) {
        const std::uint64_t now = detail::free_buddy_levels_of(state, d);
        for (std::uint64_t flipped = now ^ levels_[d]; flipped != 0; flipped &= flipped - 1) {
            const auto level = static_cast<std::size_t>(std::countr_zero(flipped));
            at_level_[level].assign(d, (now >> level) & 1U);
        }
        levels_[d] = now;
    }

    template <class State>
    static std::uint32_t need(const State& state, const request& req, std::uint64_t count, domain_id d) noexcept {
        return detail::buddy_level(req, count, state.topo().shape(d).gpus_per_node);
    }

    // The GPUs `count` units of the request are on nodes of `g` GPUs.
    static std::uint64_t need_gpus(const request& req, std::uint64_t count, std::uint32_t g) noexcept {
        return req.what == unit::nodes ? count * g : count;
    }

    // Some domain of the topology has a buddy large enough.
    bool fits_a_buddy(const request& req, std::uint64_t count) const noexcept {
        for (const auto& [g, root] : kinds_)
            if (detail::buddy_level(req, count, g) <= root) return true;
        return false;
    }

    // The allowed domain whose smallest sufficient free buddy is smallest,
    // lowest index on ties; npos32 when none.
    template <class State>
    domain_id smallest_buddy_domain(const State& state, const toolkit::request_units<State>& units) const {
        const request& req = units.req;
        if (req.exclusive_domain) {  // the idle domains, fewer than those in the level sets
            domain_id best = npos32;
            std::uint32_t best_level = detail::no_level;
            const auto& idle = state.idle_domains();
            for (std::size_t i = idle.find_first(); i < idle.size(); i = idle.find_next(i + 1)) {
                const auto d = static_cast<domain_id>(i);
                const std::uint32_t l = detail::smallest_level_at_least(levels_[d], need(state, req, req.count, d));
                if (l < best_level) {
                    best = d;
                    best_level = l;
                }
            }
            return best;
        }
        std::uint32_t lowest = detail::no_level;
        for (const auto& [g, root] : kinds_) lowest = std::min(lowest, detail::buddy_level(req, req.count, g));
        const bool one_need = kinds_.size() == 1;  // every domain with buddies needs `lowest`
        for (std::size_t l = lowest; l < at_level_.size(); ++l) {
            const auto& set = at_level_[l];
            for (std::size_t i = set.find_first(); i < set.size(); i = set.find_next(i + 1)) {
                const auto d = static_cast<domain_id>(i);
                if ((one_need || need(state, req, req.count, d) <= l) && units.allowed(d)) return d;
            }
        }
        return npos32;
    }

    // Each segment in turn as a buddy of the domain whose smallest
    // sufficient free buddy, after the earlier segments, is smallest (a
    // whole wholly free domain, the smallest, when no buddy can hold one).
    template <class State>
    errc place_segments(const State& state, const toolkit::request_units<State>& units, placement& out) const {
        const request& req = units.req;
        const std::uint64_t part = req.part_size();
        const bool as_buddy = fits_a_buddy(req, part);
        const auto score = [&](domain_id d, bool touched) {
            if (as_buddy) {
                const std::uint32_t l = detail::smallest_level_at_least(
                    detail::free_buddy_levels(toolkit::load_domain(state, out, d)), need(state, req, part, d));
                return l != detail::no_level ? std::uint64_t{1} << l : toolkit::no_fit;
            }
            return !touched && toolkit::wholly_free(units, d) && units.capacity_of(d) >= part ? units.capacity_of(d)
                                                                                            : toolkit::no_fit;
        };
        const auto take = [&](domain_id d) {
            if (as_buddy) detail::take_buddy(toolkit::load_domain(state, out, d), need(state, req, part, d), out);
            else toolkit::take_whole_domain(state, d, out);
        };
        return toolkit::place_each_segment(units, out, score, take);
    }

    std::vector<std::uint64_t> levels_;         // per domain: bit L = a free buddy of 2^L GPUs
    std::vector<indexed_bitset> at_level_;      // per level: the domains with a free buddy of it
    std::vector<std::pair<std::uint32_t, std::uint32_t>> kinds_;  // GPUs per node, largest root level
    toolkit::whole_domain_windows windows_;
    mutable std::vector<domain_id> chosen_;  // a multi-domain decision's domains, kept to spare allocations
};

}  // namespace topoblock
