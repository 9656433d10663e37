#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/detail/word_windows.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/support/noinline.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

// Jobs placed as whole NVLink domains, shared by the block policies: the
// aggregated blocks of Slurm's topology/block (BlockSizes), 2^k consecutive
// base blocks, with a domain standing for a base block.
namespace topoblock::toolkit {

// Every node up and wholly free, in an open domain (so idle too). Empty
// domains never are.
template <class State>
bool wholly_free_and_open(const State& state, domain_id d) noexcept {
    const std::uint32_t nodes = state.topo().shape(d).node_count;
    return nodes != 0 && state.domain(d).free_nodes == nodes && state.domain_open(d);
}

// A domain this request may take whole: the same test for every request.
template <class State>
bool wholly_free(const request_units<State>& units, domain_id d) noexcept {
    return wholly_free_and_open(units.state, d);
}

// The aligned windows of pick_whole_domains, kept by a policy on a cluster
// of like domains: which domains are wholly free, and for the window sizes
// with more than `filed_above` windows (of up to 64 domains) the counts each
// word's windows have (word_windows); the other sizes are counted when asked.
// The word filing is what keeps a multi-domain pick from passing over every
// small window: a plain word-by-word count made such jobs markedly slower.
class whole_domain_windows {
public:
    template <class State>
    void attach(const State& state) {
        const topology& topo = state.topo();
        const std::uint32_t domains = topo.domain_count();
        one_group_.clear();
        first_scanned_ = 0;
        small_ = {};
        total_free_ = 0;
        wholly_free_ = indexed_bitset(domains);
        kept_ = domains != 0 && topo.max_domain_nodes() != 0 && like_domains(topo);
        if (!kept_) return;
        const group_level* level = topo.levels().empty() ? nullptr : &topo.levels().front();
        for (std::uint64_t p = 1;; p *= 2) {
            const std::size_t k = one_group_.size();
            const auto windows = static_cast<std::uint32_t>((domains + p - 1) / p);
            std::vector<std::uint8_t>& one_group = one_group_.emplace_back(windows, 1);
            // Sizes 1.. are filed up to the first with few windows or past
            // one word; that one and the larger are scanned. Size 0 is never
            // asked for (pick_whole_domains answers it first).
            if (k > 0 && first_scanned_ == 0 && (windows <= filed_above || k > detail::word_windows::max_sizes))
                first_scanned_ = k;
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

    // A job's domains come in order: each word is refiled once.
    template <class State>
    void on_domains_change(const State& state, std::span<const domain_id> changed) {
        if (!kept_) return;
        for (std::size_t i = 0; i < changed.size();) {
            const std::size_t word = changed[i] / 64;
            const std::uint64_t was = wholly_free_.word(word);
            std::uint64_t bits = was;
            for (; i < changed.size() && changed[i] / 64 == word; ++i) {
                const domain_id d = changed[i];
                if (wholly_free_and_open(state, d)) bits |= std::uint64_t{1} << (d % 64);
                else bits &= ~(std::uint64_t{1} << (d % 64));
            }
            if (bits != was) refile_word(word, bits);
        }
    }

    // Most changes leave the domain as wholly free as it was: the test
    // inlines, the refiling stays out of line (its registers cost every change).
    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        if (!kept_) return;
        TOPOBLOCK_ASSERT(d < wholly_free_.size());
        if (wholly_free_and_open(state, d) != wholly_free_.test(d))
            refile_word(d / 64, wholly_free_.word(d / 64) ^ (std::uint64_t{1} << (d % 64)));
    }

    bool kept() const noexcept { return kept_; }
    std::size_t memory_bytes() const noexcept {
        std::size_t total = wholly_free_.memory_bytes() + heap_bytes(one_group_) + small_.memory_bytes();
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
    // domains, appended to `chosen`; false when no window holds them. Only
    // when kept().
    bool pick(std::uint32_t domains, std::vector<domain_id>& chosen) const {
        if (total_free_ < domains) return false;
        for (std::size_t k = std::bit_width(domains - 1); k < one_group_.size(); ++k) {
            const std::uint32_t w = k < first_scanned_ ? small_.find(k, domains, wholly_free_) : scanned_window(k, domains);
            if (w != npos32) {
                take_window(k, w, domains, chosen);
                return true;
            }
        }
        return false;
    }

    friend bool operator==(const whole_domain_windows&, const whole_domain_windows&) = default;

private:
    // Word `word` of the wholly free domains is now `now`.
    TOPOBLOCK_NOINLINE void refile_word(std::size_t word, std::uint64_t now) {
        total_free_ += count_bits(now);
        total_free_ -= count_bits(wholly_free_.word(word));
        wholly_free_.set_word(word, now);
        if (small_.sizes() != 0) small_.refile_word(word, now);
    }

    static constexpr std::uint32_t filed_above = 64;

    // The window of 2^k domains (a scanned size) that holds `domains`:
    // inside one group first, then the fewest wholly free, then the lowest;
    // npos32 when none does.
    std::uint32_t scanned_window(std::size_t k, std::uint32_t domains) const noexcept {
        const std::vector<std::uint8_t>& one_group = one_group_[k];
        std::uint32_t best = npos32, best_free = 0;
        for (std::uint32_t w = 0; w < one_group.size(); ++w) {
            const auto free = static_cast<std::uint32_t>(wholly_free_.count(std::size_t{w} << k, std::size_t{1} << k));
            if (free < domains) continue;
            if (best == npos32 || one_group[w] > one_group[best] || (one_group[w] == one_group[best] && free < best_free)) {
                best = w;
                best_free = free;
            }
        }
        return best;
    }
    // The first `domains` wholly free domains of window w of 2^k.
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
    std::size_t first_scanned_ = 0;  // sizes below it are filed in small_
    detail::word_windows small_;
};

// Chooses wholly free domains that together hold `size` units. Rule: the
// smallest aligned window of 2^k consecutive domains (k = 0, 1, ...; the last
// spans the cluster) whose wholly free domains hold the job in no more
// domains than the empty cluster would need (topology::fewest_domains_for);
// among windows of that size, those inside one group of the nearest level
// first, then the least wholly free capacity, then the lowest. In the window,
// the largest wholly free domains (lowest index among equals) until the job
// is covered, the last swapped for the smallest one left that holds the rest.
// locality::prefer and any: failing that, the same without the limit.
// `chosen`: the domains held whole in index order, then the one holding the
// rest. False when no window holds the job. Cost: O(domains x log domains),
// O(log domains) lookups when the policy keeps `windows`.
template <class State>
bool pick_whole_domains(const request_units<State>& units, std::uint64_t size, std::vector<domain_id>& chosen,
                        const whole_domain_windows* windows = nullptr) {
    const topology& topo = units.state.topo();
    const std::uint32_t domains = topo.domain_count();
    const group_level* level = topo.levels().empty() ? nullptr : &topo.levels().front();
    chosen.clear();
    if (windows != nullptr && windows->kept()) {
        // A job one domain holds: the lowest wholly free domain (like domains).
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
    // Fills `chosen` (the scratch too) from the window [start, end) as the
    // rule says; false when it does not hold the job in `most` domains.
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
    const bool uniform = like_domains(topo);
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

// Adds every GPU of wholly free domain `d` to the placement.
template <class State>
void take_whole_domain(const State& state, domain_id d, placement& out) {
    const domain_shape info = state.topo().shape(d);
    out.add_nodes(info.first_node, info.node_count, full_gpu_mask(info.gpus_per_node));
}

// Takes every domain of `chosen` (pick_whole_domains' answer) but the last
// whole; returns what they cover in the request's units.
template <class State>
std::uint64_t take_all_but_last(const request_units<State>& units, std::span<const domain_id> chosen, placement& out) {
    std::uint64_t covered = 0;
    for (std::size_t i = 0; i + 1 < chosen.size(); ++i) {
        take_whole_domain(units.state, chosen[i], out);
        covered += units.capacity_of(chosen[i]);
    }
    return covered;
}

// The placement already holds a node of the domain (an earlier segment).
inline bool touches_domain(const placement& out, const domain_shape& info) noexcept {
    for (const piece_run& r : out.runs())
        if (r.first < info.end_node() && r.first + r.nodes > info.first_node) return true;
    return false;
}

}  // namespace topoblock::toolkit
