#pragma once

// slurm-block's rule (docs/slurm-block.md) as plain scans, for the lockstep
// test (tests/policy/indexed_vs_naive.cpp): every decision counts the
// qualifying nodes of every base block node by node and walks Slurm's
// _choose_best_bblock in full; nothing is kept between decisions. The levels
// come from the policy's public shape(), which is the rule.

#include <topoblock/policy/slurm_block.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::test {

class slurm_block_reference {
public:
    explicit slurm_block_reference(slurm_block settings = {}) : settings_(std::move(settings)) {}

    std::string_view name() const noexcept { return "slurm-block-reference"; }
    std::string validate(const topology& topo) const { return settings_.validate(topo); }
    template <class State>
    void attach(const State& state) {
        uniform_gpus_ = state.topo().uniform_gpus_per_node();
        max_gpus_ = state.topo().max_gpus_per_node();
    }
    bool supports(const request& req) const noexcept {
        if (req.what != unit::gpus) return true;
        return !req.segmented() && (uniform_gpus_ != 0 || req.count <= max_gpus_);
    }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        // From 26.05 a one-node job skips the block rules: the first node in
        // node order whose GPUs are all usable (up, open domain, unheld).
        if (settings_.version() >= slurm_version::v26_05 && req.what == unit::nodes && req.count == 1 &&
            !req.exclusive_domain) {
            for (node_id n = 0; n < state.topo().node_count(); ++n)
                if (state.usable_gpus(n) == state.node_full_mask(n)) {
                    out.add(n, state.node_full_mask(n));
                    return errc::ok;
                }
            std::uint64_t free_nodes = 0;
            for (domain_id d = 0; d < state.topo().domain_count(); ++d) free_nodes += state.domain(d).free_nodes;
            return free_nodes != 0 ? errc::fragmented : errc::insufficient_free;
        }
        job j;
        if (!describe_job(state.topo(), req, j)) return errc::unsupported_request;
        decision<State> d{state, req, j, settings_.shape(state.topo()), out, {}, {}, {}, {}, {}};
        const errc result = d.run();
        if (result == errc::ok && j.nodes > 1) out.sort_by_node();
        return result;
    }

private:
    static constexpr std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) noexcept { return (a + b - 1) / b; }

    // Nodes to select, in parts of `part`; a node qualifies with min_gpus
    // usable GPUs, or (whole) wholly free; the last node keeps last_gpus.
    struct job {
        std::uint32_t nodes = 0, part = 0, min_gpus = 0;
        bool whole = true;
        std::uint32_t last_gpus = 0;
    };
    static bool describe_job(const topology& topo, const request& req, job& j) {
        if (req.what == unit::nodes) {
            j = {req.count, req.part_size(), 0, true, 0};
            return true;
        }
        if (req.segmented()) return false;
        const std::uint32_t g = topo.uniform_gpus_per_node();
        if (req.count <= topo.max_gpus_per_node() && (g == 0 || req.count <= g)) {
            j = {1, 1, req.count, req.whole_nodes, 0};
            return true;
        }
        if (g == 0) return false;
        const std::uint32_t nodes = (req.count + g - 1) / g;
        const std::uint32_t rest = req.count - (nodes - 1) * g;
        j = {nodes, nodes, 0, true, req.whole_nodes || rest == g ? 0 : rest};
        return true;
    }

    template <class State>
    struct decision {
        const State& state;
        const request& req;
        const job& j;
        slurm_block_shape shape;
        placement& out;
        std::vector<std::uint32_t> counts, taken, ll_sums;
        std::vector<std::uint8_t> closed, required;

        bool allowed(domain_id d) const { return req.exclusive_domain ? state.domain(d).idle() : state.domain_open(d); }
        bool qualifies(node_id n) const {
            const gpu_mask usable = state.usable_gpus(n);
            if (j.whole) return usable != 0 && usable == state.node_full_mask(n) && state.topo().node(n).gpus >= j.min_gpus;
            return static_cast<std::uint32_t>(std::popcount(usable)) >= j.min_gpus;
        }
        std::uint32_t usable_in(domain_id d) const {
            std::uint32_t n = 0;
            const domain_info& info = state.topo().domain(d);
            for (node_id id = info.first_node; allowed(d) && id < info.end_node(); ++id) n += qualifies(id) ? 1U : 0U;
            return n;
        }
        // The qualifying nodes of d in index order, past the first `skip`,
        // until `rem` are taken: how many it took.
        std::uint32_t take_nodes(domain_id d, std::uint32_t skip, std::uint32_t rem) {
            std::uint32_t added = 0;
            const domain_info& info = state.topo().domain(d);
            for (node_id n = info.first_node; allowed(d) && n < info.end_node() && added < rem; ++n) {
                if (!qualifies(n) || (skip > 0 && skip-- > 0)) continue;
                const bool last = ++added == rem;
                if (!j.whole) out.add(n, lowest_bits(state.usable_gpus(n), j.min_gpus));
                else out.add(n, last && j.last_gpus != 0 ? lowest_bits(state.node_full_mask(n), j.last_gpus) : state.node_full_mask(n));
            }
            return added;
        }
        errc shortfall() const {
            const auto& free = state.available();
            return (j.whole ? free.nodes >= j.nodes : free.gpus >= req.count) ? errc::fragmented : errc::insufficient_free;
        }

        errc run() {
            const std::uint32_t blocks = shape.block_count;
            counts.assign(blocks, 0);
            taken.assign(blocks, 0);
            closed.assign(blocks, 0);
            required.assign(blocks, 0);
            std::uint64_t in_blocks = 0;
            for (domain_id b = 0; b < blocks; ++b) in_blocks += usable_in(b);
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

        // Nodes outside every block, lowest index first.
        errc outside() {
            std::uint64_t usable = 0;
            for (domain_id d = shape.block_count; d < state.topo().domain_count(); ++d) usable += usable_in(d);
            if (usable < j.nodes) return shortfall();
            std::uint32_t missing = j.nodes;
            for (domain_id d = shape.block_count; d < state.topo().domain_count() && missing > 0; ++d)
                missing -= take_nodes(d, 0, missing);
            return errc::ok;
        }

        static std::uint32_t partial_segments(std::uint32_t sum, std::uint32_t count, std::uint32_t largest,
                                              std::uint32_t segment) {
            return sum == 0 ? 0 : std::min(sum / segment, count / ceil_div(segment, largest));
        }

        // _get_block_level, the group choice and _choose_best_bblock for one
        // part of j.part nodes.
        bool place_part(bool first, std::uint32_t segments, bool spread) {
            const std::uint32_t blocks = shape.block_count, rem = j.part;
            for (domain_id b = 0; b < blocks; ++b) {
                counts[b] = closed[b] != 0 ? 0 : usable_in(b) - taken[b];
                required[b] = 0;
            }
            const auto wanted = static_cast<std::uint32_t>(std::bit_width(ceil_div(rem, shape.base_nodes) - 1));
            std::uint32_t ll = 0;
            if (wanted > 0) {
                const std::uint32_t below = wanted >= 32 ? shape.levels : shape.levels & ((std::uint32_t{1} << wanted) - 1);
                ll = below == 0 ? 0 : static_cast<std::uint32_t>(std::bit_width(below) - 1);
            }
            const std::uint32_t above = wanted >= 32 ? 0 : shape.levels & ~((std::uint32_t{1} << wanted) - 1);
            const std::uint32_t per_group = above == 0 ? blocks : std::uint32_t{1} << std::countr_zero(above);
            const std::uint32_t groups = above == 0 ? 1 : ceil_div(blocks, per_group);
            const std::uint32_t per_ll = std::uint32_t{1} << ll;
            const std::uint32_t max_ll = ceil_div(rem, per_ll * shape.base_nodes);
            const bool limit_ll = per_group != per_ll * max_ll;
            const std::uint32_t ll_count = ceil_div(blocks, per_ll);

            if (spread && first) {
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
            for (domain_id b = 0; b < blocks; ++b) ll_sums[b >> ll] += counts[b];
            std::uint32_t best = npos32, best_nodes = 0, estimate = 0;
            for (std::uint32_t g = 0; g < groups; ++g) {
                std::uint32_t nodes = 0;
                for (domain_id b = g * per_group; b < std::min(g * per_group + per_group, blocks); ++b) nodes += counts[b];
                std::uint32_t usable = nodes;
                if (limit_ll) {
                    const std::uint32_t offset = g * (per_group / per_ll);
                    const std::uint32_t n = std::min(per_group / per_ll, ll_count - offset);
                    std::vector<std::uint32_t> sums(ll_sums.begin() + offset, ll_sums.begin() + offset + n);
                    std::sort(sums.begin(), sums.end(), std::greater<>());
                    usable = 0;
                    for (std::uint32_t i = 0; i < std::min(max_ll, n); ++i) usable += sums[i];
                }
                if (usable < rem || nodes == 0) continue;
                if (first && segments > 1) estimate += spread ? std::min(nodes / j.part, per_group) : nodes / j.part;
                if (best == npos32 || nodes <= best_nodes) {
                    best = g;
                    best_nodes = nodes;
                }
            }
            if (best == npos32 || (first && segments > 1 && estimate < segments)) return false;
            const std::uint32_t begin = best * per_group;
            return take_from_group(begin, std::min(begin + per_group, blocks), rem, ll, limit_ll, max_ll);
        }

        struct pick {
            std::uint32_t block = npos32;
            bool fit = false;
            bool same_ll = true;
        };

        bool take_from_group(std::uint32_t begin, std::uint32_t end, std::uint32_t rem, std::uint32_t ll, bool limit_ll,
                             std::uint32_t max_ll) {
            std::uint32_t stalled = rem + 1;
            while (stalled != rem) {
                stalled = rem;
                pick p;
                for (domain_id b = begin; b < end; ++b)
                    if (required[b] == 0) choose(p, b, rem, ll, limit_ll, end);
                if (p.block == npos32 || (max_ll == 0 && !p.same_ll)) break;
                required[p.block] = 1;
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

        // _choose_best_bblock's rules, one candidate at a time.
        void choose(pick& p, std::uint32_t b, std::uint32_t rem, std::uint32_t ll, bool limit_ll, std::uint32_t end) const {
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

    slurm_block settings_;
    std::uint32_t uniform_gpus_ = 0;
    std::uint32_t max_gpus_ = 0;
};

}  // namespace topoblock::test
