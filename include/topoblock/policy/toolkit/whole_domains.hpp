#pragma once

#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/detail/word_windows.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/config.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/topology.hpp>

#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/support/noinline.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

// Jobs placed as whole NVLink domains, shared by the block policies: the
// aggregated blocks of Slurm's topology/block (BlockSizes), 2^k consecutive
// base blocks, with a domain standing for a base block.
namespace topoblock::toolkit {

// Every node up and wholly free, in an open domain: then nothing is held
// there and it is idle too, so this holds for exclusive jobs as well. Empty
// domains never are.
template <class State>
bool wholly_free_and_open(const State& state, domain_id d) noexcept {
    const std::uint32_t nodes = state.topo().shape(d).node_count;
    return nodes != 0 && state.domain(d).free_nodes == nodes && state.domain_open(d);
}

// A domain this request may take whole. Wholly free and open means idle, so
// this is the same test for exclusive requests.
template <class State>
bool wholly_free(const request_units<State>& units, domain_id d) noexcept {
    return wholly_free_and_open(units.state, d);
}

// The aligned windows of pick_whole_domains, kept by a policy on a cluster
// of like domains (every domain the same nodes of the same GPUs): which
// domains are wholly free; for the window sizes 2^k with many windows (more
// than `filed_above`) of up to 64 domains (k = 1 .. 6, inside one word of the
// bitset of wholly free domains), the counts of wholly free domains each
// word's windows have, filed a word at a time (word_windows); the other
// sizes are scanned when asked, from one array of counts for the smallest
// of them (one add per flip), summed into each larger window's count.
// A multi-domain job then costs a few bit scans per filed size and a pass
// over at most the scanned array per scanned size, instead of a pass over
// every domain.
class whole_domain_windows {
public:
    // Windows are kept only on a cluster of like domains (empty otherwise).
    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        const std::uint32_t domains = topo.domain_count();
        const std::uint32_t nodes = topo.max_domain_nodes();
        one_group_.clear();
        first_scanned_ = 0;
        scanned_free_.clear();
        small_ = {};
        total_free_ = 0;
        wholly_free_ = indexed_bitset(domains);
        kept_ = domains != 0 && nodes != 0 && topo.uniform_gpus_per_node() != 0 &&
                topo.node_count() == std::uint64_t{domains} * nodes;
        if (!kept_) return;
        const group_level* level = topo.levels().empty() ? nullptr : &topo.levels().front();
        for (std::uint64_t p = 1;; p *= 2) {
            const std::size_t k = one_group_.size();
            const auto windows = static_cast<std::uint32_t>((domains + p - 1) / p);
            std::vector<std::uint8_t>& one_group = one_group_.emplace_back(windows, 1);
            // Sizes 1.. are filed up to the first with few windows (windows
            // only shrink as the size grow) or past one word; that one and
            // all larger are scanned. Windows of one domain (size 0) are
            // never asked for: a job one domain holds does not come here
            // (pick_whole_domains).
            if (k > 0 && first_scanned_ == 0 && (windows <= filed_above || k > detail::word_windows::max_sizes)) {
                first_scanned_ = k;
                scanned_free_.assign(windows, 0);
            }
            for (std::uint32_t w = 0; w < windows; ++w) {
                const std::uint64_t start = w * p, end = start + p < domains ? start + p : domains;
                for (std::uint64_t d = start; level != nullptr && d < end; ++d)
                    if (level->group_of_domain[d] != level->group_of_domain[start]) one_group[w] = 0;
            }
            if (p >= domains) break;
        }
        // One domain: no size is scanned (nor asked for).
        if (first_scanned_ == 0) first_scanned_ = one_group_.size();
        small_ = detail::word_windows(first_scanned_ - 1, domains,
                              [&](std::size_t k, std::size_t w) { return one_group_[k][w] != 0; });
        for (domain_id d = 0; d < domains; ++d) on_domain_change(state, d);
    }

    // The domains one change of the state changed, each once (the policies
    // call it for a change of several; one domain goes to on_domain_change,
    // policy_traits::domains_changed). Gathers the flips a word of the
    // bitset at a time (a job's domains come in order, so mostly a word or
    // two), then stores, counts and refiles each word once: one flip in a
    // word (a job of a few nodes, a failure) moves one window per size;
    // several are filed a word at a time.
    template <class State>
    void on_domains_change(const State& state, std::span<const domain_id> changed) {
        if (!kept_) return;
        for (std::size_t i = 0; i < changed.size();) {
            const std::size_t word = changed[i] / 64;
            const std::uint64_t was = wholly_free_.word(word);
            std::uint64_t bits = was;
            std::size_t flips = 0;
            domain_id flipped = 0;
            for (; i < changed.size() && changed[i] / 64 == word; ++i) {
                const domain_id d = changed[i];
                const std::uint64_t bit = std::uint64_t{1} << (d % 64);
                if (wholly_free_and_open(state, d) == ((bits & bit) != 0)) continue;
                bits ^= bit;
                flipped = d;
                ++flips;
            }
            if (flips == 0) continue;
            wholly_free_.set_word(word, bits);
            total_free_ += count_change(bits, was, ~std::uint64_t{0});
            if (first_scanned_ < one_group_.size()) add_scanned(word, bits, was);
            if (small_.sizes() != 0 && flips == 1)
                small_.refile_domain(flipped, bits);
            else if (small_.sizes() != 0)
                small_.refile_word(word, bits);
        }
    }

    // Most changes leave the domain as wholly free as it was: that test
    // inlines into the policy's change, and the refiling stays out of line
    // (inlined, its registers were saved and restored on every change).
    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        if (!kept_) return;
        TOPOBLOCK_ASSERT(d < wholly_free_.size());
        const bool now = wholly_free_and_open(state, d);
        if (now != wholly_free_.test(d)) refile_windows_of(d, now);
    }

    bool kept() const noexcept { return kept_; }
    std::size_t memory_bytes() const noexcept {
        std::size_t total = wholly_free_.memory_bytes() + heap_bytes(one_group_) + heap_bytes(scanned_free_) + small_.memory_bytes();
        for (const auto& one_group : one_group_) total += heap_bytes(one_group);
        return total;
    }
    // Wholly free, open domains in the cluster. Only when kept().
    std::uint32_t wholly_free_count() const noexcept { return total_free_; }
    // The lowest wholly free, open domain, or npos32. Only when kept().
    std::uint32_t first_wholly_free() const noexcept {
        const std::size_t d = wholly_free_.find_first();
        return d < wholly_free_.size() ? static_cast<std::uint32_t>(d) : npos32;
    }

    // pick_whole_domains' choice of `domains` (at least 2) wholly free
    // domains: appended to `chosen`; false when no window holds them. Only
    // when kept().
    bool pick(std::uint32_t domains, std::vector<domain_id>& chosen) const {
        // Fewer wholly free domains in the cluster than asked is a refusal
        // without a look at any size.
        if (total_free_ < domains) return false;
        // Windows of fewer than `domains` domains cannot hold them.
        for (std::size_t k = std::bit_width(domains - 1); k < one_group_.size(); ++k) {
            const std::uint32_t w = k < first_scanned_ ? small_.find(k, domains, wholly_free_) : scanned_window(k, domains);
            if (w != npos32) {
                take_window(k, w, domains, chosen);
                return true;
            }
        }
        return false;
    }

    // Recounts every window from the state: an empty string, or what
    // disagrees. O(domains x log domains): for tests.
    template <class State>
    std::string check(const State& state) const {
        if (!kept_) return {};
        const std::uint32_t domains = state.topo().domain_count();
        std::uint32_t total = 0;
        for (domain_id d = 0; d < domains; ++d) {
            if (wholly_free_.test(d) != wholly_free_and_open(state, d)) return "whole-domain windows: stale wholly free domain";
            total += wholly_free_.test(d) ? 1U : 0U;
        }
        if (total != total_free_) return "whole-domain windows: stale total";
        if (std::string wrong = small_.check(wholly_free_); !wrong.empty()) return "whole-domain windows: " + wrong;
        for (std::uint32_t w = 0; w < scanned_free_.size(); ++w)
            if (scanned_free_[w] != wholly_free_.count(std::size_t{w} << first_scanned_, std::size_t{1} << first_scanned_))
                return "whole-domain windows: stale count";
        return {};
    }

private:
    TOPOBLOCK_NOINLINE void refile_windows_of(domain_id d, bool wholly_free_now) {
        wholly_free_.assign(d, wholly_free_now);
        const std::uint32_t change = wholly_free_now ? 1U : ~0U;  // +1 or -1, modulo 2^32
        total_free_ += change;
        if (first_scanned_ < one_group_.size()) scanned_free_[d >> first_scanned_] += change;
        if (small_.sizes() != 0) small_.refile_domain(d, wholly_free_.word(d / 64));
    }

    static constexpr std::uint32_t filed_above = 64;

    // How many more of the bits `mask` picks are set in `now` than in
    // `was`, modulo 2^32 (so a fall adds its negative).
    static std::uint32_t count_change(std::uint64_t now, std::uint64_t was, std::uint64_t mask) noexcept {
        return static_cast<std::uint32_t>(std::popcount(now & mask)) - static_cast<std::uint32_t>(std::popcount(was & mask));
    }
    // The scanned counts after word `word` of the bitset went from `was` to
    // `now`: the smallest scanned size's windows of 2^first_scanned_
    // domains lie inside the word (a window per lane of that width) or
    // hold it whole.
    void add_scanned(std::size_t word, std::uint64_t now, std::uint64_t was) noexcept {
        if (first_scanned_ >= 6) {
            scanned_free_[(word * 64) >> first_scanned_] += count_change(now, was, ~std::uint64_t{0});
            return;
        }
        const std::uint64_t lane = (std::uint64_t{1} << (std::size_t{1} << first_scanned_)) - 1;
        for (std::uint64_t changed = now ^ was; changed != 0;) {
            const auto at = static_cast<unsigned>(std::countr_zero(changed)) & ~((1U << first_scanned_) - 1);
            scanned_free_[(word * 64 + at) >> first_scanned_] += count_change(now, was, lane << at);
            changed &= ~(lane << at);
        }
    }

    // The window of 2^k domains (a scanned size) that holds `domains`:
    // inside one group first, then the fewest wholly free, then the lowest;
    // npos32 when none does. Each window's count is the sum of the scanned
    // counts it covers.
    std::uint32_t scanned_window(std::size_t k, std::uint32_t domains) const noexcept {
        const std::vector<std::uint8_t>& one_group = one_group_[k];
        const std::size_t per_window = std::size_t{1} << (k - first_scanned_);
        std::uint32_t best = npos32, best_free = 0;
        for (std::uint32_t w = 0; w < one_group.size(); ++w) {
            std::uint32_t free = 0;
            for (std::size_t i = w * per_window; i < scanned_free_.size() && i < (w + 1) * per_window; ++i)
                free += scanned_free_[i];
            if (free < domains) continue;
            if (best == npos32 || one_group[w] > one_group[best] || (one_group[w] == one_group[best] && free < best_free)) {
                best = w;
                best_free = free;
            }
        }
        return best;
    }
    // The first `domains` wholly free domains of window w of 2^k.
    // A word of the bitset at a time: the window holds them all.
    void take_window(std::size_t k, std::uint32_t w, std::uint32_t domains, std::vector<domain_id>& chosen) const {
        const std::size_t first = std::size_t{w} << k;
        std::size_t word = first / 64;
        std::uint64_t bits = wholly_free_.word(word) & (~std::uint64_t{0} << (first % 64));
        for (std::uint32_t taken = 0; taken < domains; bits &= bits - 1) {
            while (bits == 0) bits = wholly_free_.word(++word);
            chosen.push_back(static_cast<domain_id>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
            ++taken;
        }
    }

    bool kept_ = false;
    indexed_bitset wholly_free_;
    std::uint32_t total_free_ = 0;                   // wholly free domains in the cluster
    std::vector<std::vector<std::uint8_t>> one_group_;  // [k][w]: window w of 2^k domains lies inside one group
    // Sizes 1 .. first_scanned_ - 1 are filed by word in small_; the rest
    // are scanned, and scanned_free_ holds the wholly free domains of each
    // window of the first of them.
    std::size_t first_scanned_ = 0;
    std::vector<std::uint32_t> scanned_free_;
    detail::word_windows small_;
};

// Chooses wholly free domains that together hold `size` units. Rule: the
// smallest aligned window of 2^k consecutive domains (k = 0, 1, 2, ...; a
// window starts at a multiple of its size, and the last one spans the whole
// cluster) whose wholly free domains hold the job in no more domains than
// the empty cluster would need (topology::fewest_domains_for, the largest
// domains first); among windows of that size, first those inside one group
// of the nearest level, then the one with the least wholly free capacity
// (best fit), then the lowest. In the window, the largest wholly free
// domains (lowest index among equals) until the job is covered, the last of
// them swapped for the smallest one left that holds the rest (lowest index
// among equals). locality::prefer and any: when no window holds the job in
// so few domains, the same without the limit. `chosen`: the domains held
// whole in index order, then the one holding the rest. On a cluster of like
// domains this is every window's wholly free domains in index order, and
// the limit never binds. Returns false when no window holds the job.
// Cost: O(domains x log domains), O(domains x log^2 domains) on mixed
// clusters; a lookup for a job one domain holds on a cluster of like
// domains, and O(log domains) lookups for any job when the policy keeps
// `windows` (indexed).
template <class State>
bool pick_whole_domains(const request_units<State>& units, std::uint64_t size, std::vector<domain_id>& chosen,
                        const whole_domain_windows* windows = nullptr) {
    const topology& topo = units.state.topo();
    const std::uint32_t domains = topo.domain_count();
    const group_level* level = topo.levels().empty() ? nullptr : &topo.levels().front();
    chosen.clear();
    if (units.indexed && windows != nullptr && windows->kept()) {
        // A job one domain holds (the windows are kept on clusters of like
        // domains only): any window that holds it contains a wholly free
        // domain that holds it alone, so the rule ends at windows of one
        // domain with the lowest wholly free one, which the windows know.
        // This keeps 65-72 GPU buddy jobs and refusals off the scan below.
        const std::uint64_t per_domain = units.capacity_of(0);
        if (size <= per_domain) {
            const std::uint32_t d = windows->first_wholly_free();
            if (d == npos32) return false;
            chosen.push_back(d);
            return true;
        }
        const std::uint64_t needed = (size + per_domain - 1) / per_domain;
        return needed <= domains && windows->pick(static_cast<std::uint32_t>(needed), chosen);
    }
    // Fills `chosen` from the window [start, end) as the rule says; false
    // when its wholly free domains do not hold the job in `most` domains.
    // `chosen` is the scratch too, so that a warm decision allocates nothing.
    const auto larger = [&](domain_id a, domain_id b) {
        const std::uint64_t ca = units.capacity_of(a), cb = units.capacity_of(b);
        return ca != cb ? ca > cb : a < b;
    };
    const auto fill = [&](std::uint64_t start, std::uint64_t end, std::uint64_t most) {
        chosen.clear();
        for (std::uint64_t d = start; d < end; ++d)
            if (wholly_free(units, static_cast<domain_id>(d))) chosen.push_back(static_cast<domain_id>(d));
        std::sort(chosen.begin(), chosen.end(), larger);
        std::uint64_t covered = 0;
        std::size_t k = 0;
        while (k < chosen.size() && covered < size) covered += units.capacity_of(chosen[k++]);
        if (covered < size || k > most) return false;
        const std::uint64_t rest = size - (covered - units.capacity_of(chosen[k - 1]));
        std::size_t last = k - 1;
        for (std::size_t i = k; i < chosen.size(); ++i)
            if (units.capacity_of(chosen[i]) >= rest && units.capacity_of(chosen[i]) < units.capacity_of(chosen[last]))
                last = i;
        chosen[k - 1] = chosen[last];
        chosen.resize(k);
        std::sort(chosen.begin(), chosen.end() - 1);
        return true;
    };
    const std::uint64_t fewest = topo.fewest_domains_for(size, units.req.what == unit::nodes);
    const bool uniform = topo.uniform_gpus_per_node() != 0 && topo.node_count() == std::uint64_t{domains} * topo.max_domain_nodes();
    for (const std::uint64_t most : {fewest, std::uint64_t{npos32}}) {
        if (most == npos32 && (units.req.where == locality::require || fewest == npos32 || uniform)) return false;
        for (std::uint64_t p = 1;; p *= 2) {
            std::uint64_t best_start = npos32, best_free = 0;
            bool best_one_group = false;
            for (std::uint64_t start = 0; start < domains; start += p) {
                const std::uint64_t end = start + p < domains ? start + p : domains;
                std::uint64_t free = 0;
                bool one_group = true;
                for (std::uint64_t d = start; d < end; ++d) {
                    if (wholly_free(units, static_cast<domain_id>(d))) free += units.capacity_of(static_cast<domain_id>(d));
                    if (level != nullptr && level->group_of_domain[d] != level->group_of_domain[start]) one_group = false;
                }
                if (free < size) continue;
                const bool better = best_start == npos32 || (one_group && !best_one_group) ||
                                    (one_group == best_one_group && free < best_free);
                // Like domains hold the job in the fewest whenever they hold it.
                if (better && (uniform || fill(start, end, most))) {
                    best_start = start;
                    best_free = free;
                    best_one_group = one_group;
                }
            }
            if (best_start != npos32) {
                fill(best_start, best_start + p < domains ? best_start + p : domains, most);
                return true;
            }
            if (p >= domains) break;
        }
    }
    return false;
}

// Adds every node of domain `d`, whole, to the placement: a wholly free
// domain (pick_whole_domains chooses only those), so every GPU of every
// node.
template <class State>
void take_whole_domain(const State& state, domain_id d, placement& out) {
    const domain_shape info = state.topo().shape(d);
    out.add_nodes(info.first_node, info.node_count, full_gpu_mask(info.gpus_per_node));
}

// The placement already holds a node of the domain (an earlier segment).
inline bool touches_domain(const placement& out, const domain_shape& info) noexcept {
    for (const piece_run& r : out.runs())
        if (r.first < info.end_node() && r.first + r.nodes > info.first_node) return true;
    return false;
}

}  // namespace topoblock::toolkit
