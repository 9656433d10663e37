#pragma once

#include <topoblock/config.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/toolkit/capacity_view.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/support/bucket_index.hpp>
#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace topoblock {

// One size of a request-size mix a caller gives fragmentation_aware: jobs
// of `gpus` GPUs, with a relative weight (a share of jobs, say).
struct size_share {
    std::uint32_t gpus = 0;
    double weight = 0.0;
};

namespace detail {

// fragmentation_aware's request-size mix: integer weights per size 1 .. D (D:
// the most GPUs a domain holds; larger jobs count as D), and the value of a
// domain with f free GPUs, value(f) = sum over sizes s of weight(s) x
// floor(f / s). Integers, so that every platform decides the same. Learned:
// each job placed adds `gpu_weight` per GPU it asked for to its size, and
// every `halving_jobs` jobs all weights halve.
class size_mix {
public:
    static constexpr std::uint64_t gpu_weight = 256;
    static constexpr std::uint64_t halving_jobs = 512;

    // Sizes 1 .. largest; a weight for 1 GPU even without GPUs (value() reads it).
    void reset(std::uint32_t largest) {
        weight_.assign(std::size_t{std::max(largest, 1U)} + 1, 0);
        value_.assign(std::size_t{largest} + 1, 0);
        learned_jobs_ = 0;
    }
    std::uint32_t largest() const noexcept { return weight_.empty() ? 0 : static_cast<std::uint32_t>(weight_.size() - 1); }
    std::uint64_t weight(std::uint32_t gpus) const noexcept { return gpus < weight_.size() ? weight_[gpus] : 0; }
    // 1-GPU jobs (the most common) add a linear term, kept apart from the
    // table so that learning one costs O(1).
    std::uint64_t value(std::uint64_t free_gpus) const noexcept { return value_[free_gpus] + weight_[1] * free_gpus; }

    // Adds `w` to the weight of jobs of `gpus` GPUs (at most D). O(D), O(1) for 1 GPU.
    void add(std::uint32_t gpus, std::uint64_t w) {
        const std::uint32_t s = gpus < weight_.size() ? gpus : largest();
        if (s == 0 || w == 0) return;
        weight_[s] += w;
        if (s > 1) add_to_values(s, w);
    }
    // One job of `gpus` GPUs placed. O(D), and O(D^2) once in `halving_jobs`.
    void learn(std::uint32_t gpus) {
        add(gpus, gpu_weight * gpus);
        if (++learned_jobs_ % halving_jobs != 0) return;
        for (auto& w : weight_) w >>= 1;
        rebuild();
    }
    std::size_t memory_bytes() const noexcept { return heap_bytes(weight_) + heap_bytes(value_); }

    // The value table against a recount: empty, or what is stale. For tests.
    std::string check() const {
        for (std::size_t f = 0; f < value_.size(); ++f)
            if (value(f) != value_of(f)) return "value of " + std::to_string(f) + " free GPUs is stale";
        return {};
    }
    std::uint64_t value_of(std::size_t f) const noexcept {
        std::uint64_t v = 0;
        for (std::size_t s = 1; s < weight_.size() && s <= f; ++s) v += weight_[s] * (f / s);
        return v;
    }

private:
    // value(f) += w x floor(f / s) for every f, without a division: one
    // pass from f = s, the addend growing by w every s steps.
    void add_to_values(std::size_t s, std::uint64_t w) noexcept {
        std::uint64_t step = w;
        for (std::size_t f = s, left = s; f < value_.size(); ++f) {
            value_[f] += step;
            if (--left == 0) {
                left = s;
                step += w;
            }
        }
    }
    void rebuild() noexcept {
        std::fill(value_.begin(), value_.end(), 0);
        for (std::size_t s = 2; s < weight_.size(); ++s)
            if (weight_[s] != 0) add_to_values(s, weight_[s]);
    }

    std::vector<std::uint64_t> weight_;  // [size in GPUs]
    std::vector<std::uint64_t> value_;   // [free GPUs]: sizes 2 and up
    std::uint64_t learned_jobs_ = 0;
};

}  // namespace detail

// Fragmentation-aware placement: a job one domain holds goes to the domain
// whose value (size_mix: the jobs of the mix its free GPUs could still take)
// it lowers least; ties to the least free, then the lowest index (best-fit's
// order). A wholly free domain of the largest size only when no other holds
// the job: larger jobs need whole domains, which the count undervalues.
// The mix is given (size_share list) or learned from the jobs placed. GPU
// jobs measure a domain by its free GPUs, whole-node and node jobs by its
// free whole nodes (as GPUs). Jobs larger than a domain, segmented and
// exclusive jobs, and whole-node jobs on mixed node sizes are placed as
// best-fit places them; inside the chosen domain, best-fit's rule.
// Cost: one step per distinct free count among the domains that hold the job,
// from best-fit's buckets; learning O(1) per 1-GPU job, else O(GPUs of a domain).
struct fragmentation_aware {
    fragmentation_aware() = default;
    // A fixed mix: the weights are normalised, never learned.
    explicit fragmentation_aware(std::span<const size_share> mix) : given_(mix.begin(), mix.end()), learning_(false) {}

    std::string_view name() const noexcept { return "frag-aware"; }

    // A given mix needs sizes >= 1 GPU and finite weights >= 0, some above 0.
    std::string validate(const topology&) const {
        if (learning_) return {};
        double total = 0.0;
        for (std::size_t i = 0; i < given_.size(); ++i) {
            const size_share& s = given_[i];
            const std::string where = "frag-aware: mix entry " + std::to_string(i + 1) + ": ";
            if (s.gpus == 0) return where + "size of 0 GPUs";
            if (!std::isfinite(s.weight) || s.weight < 0.0) return where + "weight must be a finite number >= 0";
            total += s.weight;
        }
        if (!(total > 0.0)) return "frag-aware: the mix gives no size a weight above 0";
        return {};
    }

    template <class State>
    void attach(const State& state) {
        best_.attach(state);
        mix_.reset(state.topo().max_domain_gpus());
        if (!learning_) {
            double total = 0.0;
            for (const size_share& s : given_) total += s.weight;
            // Normalised to about 2^30 in all.
            for (const size_share& s : given_)
                mix_.add(s.gpus, static_cast<std::uint64_t>(std::llround(s.weight / total * 1073741824.0)));
        } else {
            // A restored state: its live jobs are the mix to start from.
            state.for_each_allocation([&](allocation_id, const allocation_record& r) { mix_.learn(r.requested_gpus); });
        }
        seen_allocations_ = state.allocation_count();
        seen_requested_ = state.requested_gpus();
    }

    template <class State>
    void on_domains_change(const State& state, std::span<const domain_id> changed) {
        for (domain_id d : changed) best_.on_domain_change(state, d);
        notice_new_job(state);
    }

    const detail::size_mix& mix() const noexcept { return mix_; }
    bool learning() const noexcept { return learning_; }

    // What a what-if (allocator::with_released) must not teach the policy:
    // taken before and put back after.
    struct learned {
        detail::size_mix mix;
        std::size_t allocations = 0;
        std::uint64_t requested = 0;
    };
    learned learning_checkpoint() const { return {mix_, seen_allocations_, seen_requested_}; }
    void restore_learning(learned saved) noexcept {
        mix_ = std::move(saved.mix);
        seen_allocations_ = saved.allocations;
        seen_requested_ = saved.requested;
    }

    std::size_t memory_bytes() const noexcept { return best_.memory_bytes() + mix_.memory_bytes() + heap_bytes(given_); }

    // explain()'s numbers: best-fit's, from the buckets the two share, so
    // that explain() is not O(domains) here either.
    template <class State>
    toolkit::capacity_view measure(const State& state, const request& req) const {
        return best_.measure(state, req);
    }

    // best-fit's buckets: the mix is learned from requests, not rebuilt by attach.
    auto indexes() const noexcept { return best_.indexes(); }

    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        const toolkit::request_units<State> units{state, req};
        if (req.segmented() || req.exclusive_domain || req.count > units.largest_domain())
            return best_.place(state, req, out);
        // The buckets that measure domains for this job, and GPUs per key.
        const auto [index, per_key] = best_.buckets_for(state.topo(), req);
        const std::uint64_t scale = req.takes_whole_nodes() ? state.topo().uniform_gpus_per_node() : 1;
        if (index == nullptr || scale == 0) return best_.place(state, req, out);
        const std::uint64_t need = (req.count + per_key - 1) / per_key, takes = need * scale;
        // No domain loses less than value(takes), as floor(f / s) >=
        // floor((f - t) / s) + floor(t / s): the first key that does wins.
        // The top key (wholly free domains) only when no other holds the job.
        const std::uint64_t least = mix_.value(takes);
        const std::uint32_t wholly_free = index->max_key();
        std::uint32_t best_key = npos32;
        std::uint64_t best_loss = 0;
        for (std::uint32_t key = index->next_key(static_cast<std::uint32_t>(need)); key != npos32;
             key = index->next_key(key + 1)) {
            if (key == wholly_free && best_key != npos32) break;
            const std::uint64_t f = key * scale;
            const std::uint64_t loss = mix_.value(f) - mix_.value(f - takes);
            if (best_key == npos32 || loss < best_loss) {
                best_key = key;
                best_loss = loss;
                if (loss == least) break;
            }
        }
        if (best_key == npos32) return best_.place(state, req, out);  // no domain holds it: best-fit's answer
        return best_.place_in(state, req, index->first_in(best_key, 0), out);
    }

private:
    // A change that added one allocation: the mix learns its GPUs.
    template <class State>
    void notice_new_job(const State& state) {
        const std::size_t allocations = state.allocation_count();
        const std::uint64_t requested = state.requested_gpus();
        if (learning_ && allocations == seen_allocations_ + 1 && requested > seen_requested_)
            mix_.learn(static_cast<std::uint32_t>(requested - seen_requested_));
        seen_allocations_ = allocations;
        seen_requested_ = requested;
    }

    best_fit best_;
    detail::size_mix mix_;
    std::vector<size_share> given_;
    bool learning_ = true;
    std::size_t seen_allocations_ = 0;
    std::uint64_t seen_requested_ = 0;
};

}  // namespace topoblock
