#pragma once

#include <topoblock/sim/job.hpp>
#include <topoblock/sim/random.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Synthetic workloads drawn from published job-size and duration mixes, for
// runs longer, larger or more numerous than the public traces allow.
//
// A mix is a list of size classes. Each class holds the GPU counts seen in it
// with their weights (relative to the whole mix) and one duration model. A
// job draws its size from all (class, size) pairs at once, then its duration
// from its class's model. Arrivals are Poisson, at the rate that makes the
// mix offer the requested load to the cluster.

namespace topoblock::sim {

// Run time: lognormal, clipped to [1 s, max_s], rounded to whole seconds (as
// the traces record them). The clip keeps the heavy tail finite so that the
// mean, and with it the arrival rate, is well defined.
struct duration_model {
    double log_mean = 0.0;  // ln of the median before clipping
    double log_sd = 1.0;
    double max_s = 86400.0;  // >= 1
};

struct size_weight {
    std::uint32_t gpus = 1;
    double weight = 0.0;  // relative to every other size in the mix
};

struct size_class {
    std::string name;  // e.g. "5-8": the size bucket the class stands for
    std::vector<size_weight> sizes;
    duration_model duration;
};

struct synthetic_mix {
    std::string name;
    std::vector<size_class> classes;
};

struct generate_options {
    std::size_t jobs = 10000;
    double offered_load = 0.85;         // GPU-seconds asked per GPU-second of cluster
    std::uint64_t cluster_gpus = 864;   // 12 NVL72 racks
    std::uint64_t seed = 1;
    std::uint32_t max_gpus = 0;         // larger sizes are clipped to it; 0 = cluster_gpus
};

namespace detail {

inline double standard_normal_cdf(double z) noexcept { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

inline std::uint32_t size_cap(const generate_options& options) noexcept {
    const std::uint64_t cap = options.max_gpus != 0 ? options.max_gpus : options.cluster_gpus;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(cap, std::numeric_limits<std::uint32_t>::max()));
}

// Sum over the class's sizes of weight * min(gpus, cap).
inline double weighted_gpus(const size_class& c, std::uint32_t cap) noexcept {
    double sum = 0.0;
    for (const auto& s : c.sizes) sum += s.weight * std::min(s.gpus, cap);
    return sum;
}

inline double total_weight(const synthetic_mix& mix) noexcept {
    double sum = 0.0;
    for (const auto& c : mix.classes)
        for (const auto& s : c.sizes) sum += s.weight;
    return sum;
}

}  // namespace detail

// E[duration] of the clipped lognormal, in closed form (before rounding to
// whole seconds, which changes it by well under a second).
inline double mean_duration(const duration_model& d) {
    assert(d.max_s >= 1.0 && d.log_sd >= 0.0);
    if (d.log_sd == 0.0) return std::clamp(std::exp(d.log_mean), 1.0, d.max_s);
    using detail::standard_normal_cdf;
    const double mu = d.log_mean, s = d.log_sd, top = std::log(d.max_s);
    const double below_one = standard_normal_cdf(-mu / s);
    const double above_max = 1.0 - standard_normal_cdf((top - mu) / s);
    const double between = std::exp(mu + s * s / 2.0) *
                           (standard_normal_cdf((top - mu - s * s) / s) - standard_normal_cdf((-mu - s * s) / s));
    return below_one + between + d.max_s * above_max;
}

inline double sample_duration(const duration_model& d, random_engine& rng) {
    const double raw = lognormal{d.log_mean, d.log_sd}(rng);
    return std::round(std::clamp(raw, 1.0, d.max_s));
}

// E[gpus * duration] of one job, sizes clipped to `max_gpus`: the work one
// arrival brings.
inline double mean_gpu_seconds(const synthetic_mix& mix,
                               std::uint32_t max_gpus = std::numeric_limits<std::uint32_t>::max()) {
    double sum = 0.0;
    for (const auto& c : mix.classes) sum += detail::weighted_gpus(c, max_gpus) * mean_duration(c.duration);
    return sum / detail::total_weight(mix);
}

// What share of the jobs and of the GPU-time each class should hold, in the
// order of mix.classes: the figures to compare with a trace's size mix table.
struct class_share {
    double jobs = 0.0;
    double gpu_time = 0.0;
};

inline std::vector<class_share> expected_shares(const synthetic_mix& mix) {
    const double weight = detail::total_weight(mix);
    const double work = mean_gpu_seconds(mix) * weight;
    std::vector<class_share> out;
    out.reserve(mix.classes.size());
    for (const auto& c : mix.classes) {
        double jobs = 0.0;
        for (const auto& s : c.sizes) jobs += s.weight;
        const double gpu_time = detail::weighted_gpus(c, std::numeric_limits<std::uint32_t>::max()) *
                                mean_duration(c.duration);
        out.push_back({jobs / weight, gpu_time / work});
    }
    return out;
}

// Draws options.jobs jobs: the first arrives at 0, the gaps are exponential
// with rate = offered_load * cluster_gpus / E[gpus * duration]. The same mix
// and options give the same workload (see random.hpp for the fine print).
// nodes is left 0: the allocator decides it.
inline workload generate(const synthetic_mix& mix, const generate_options& options) {
    assert(options.offered_load > 0.0 && options.cluster_gpus > 0 && !mix.classes.empty());
    const std::uint32_t cap = detail::size_cap(options);

    // Flatten to one choice over every (class, size) pair.
    std::vector<double> weights;
    std::vector<std::pair<std::uint32_t, const duration_model*>> choices;
    for (const auto& c : mix.classes)
        for (const auto& s : c.sizes) {
            weights.push_back(s.weight);
            choices.emplace_back(std::min(s.gpus, cap), &c.duration);
        }
    const discrete pick_size(weights);
    const double rate =
        options.offered_load * static_cast<double>(options.cluster_gpus) / mean_gpu_seconds(mix, cap);
    const exponential gap{rate};

    random_engine rng(options.seed);
    workload out{mix.name, {}};
    out.jobs.reserve(options.jobs);
    double now = 0.0;
    for (std::size_t i = 0; i < options.jobs; ++i) {
        if (i != 0) now += gap(rng);
        const auto& [gpus, duration] = choices[pick_size(rng)];
        out.jobs.push_back(job{i, now, gpus, 0, sample_duration(*duration, rng)});
    }
    return out;
}

// Presets.
//
// philly and helios are calibrated on the shared cuts of the public traces
// (Philly, Jeon et al. ATC'19: 15,000 jobs; Helios, Hu et al. SC'21: 10,796
// GPU jobs; both CC BY 4.0; not shipped with the library). Derivation, per
// size bucket of the trace README (1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, >64):
// - sizes: every GPU count seen at least 3 times, weighted by its job count
//   (dropped: Helios 5, 104, 120 and Philly 28, 6 jobs in all);
// - durations (clamped to >= 1 s): max_s is the longest job of the bucket;
//   log_mean and log_sd are solved so the clipped lognormal has the bucket's
//   mean of ln(duration) and its GPU-weighted mean duration (GPU-seconds /
//   GPUs), so both the typical job and the bucket's GPU-hours match.
// The resulting mixes give job / GPU-hour shares within 0.3 points of the
// trace README's table (expected_shares computes them).

inline synthetic_mix helios_mix() {
    return {"helios",
            {
                {"1", {{1, 5939}}, {6.022, 2.453, 1119026}},
                {"2", {{2, 544}}, {6.521, 3.288, 1213130}},
                {"3-4", {{3, 14}, {4, 647}}, {5.754, 3.119, 554640}},
                {"5-8", {{6, 9}, {7, 19}, {8, 2382}}, {5.630, 3.171, 1964673}},
                {"9-16", {{16, 579}}, {6.675, 2.908, 1213128}},
                {"17-32", {{24, 112}, {32, 246}}, {5.664, 3.561, 801915}},
                {"33-64", {{40, 59}, {48, 104}, {56, 24}, {64, 4}}, {4.719, 3.245, 1103008}},
                {">64",
                 {{72, 11}, {80, 42}, {88, 7}, {96, 3}, {112, 4}, {128, 12}, {136, 5}, {144, 9}, {152, 3}, {160, 13}},
                 {4.642, 3.981, 391127}},
            }};
}

inline synthetic_mix philly_mix() {
    return {"philly",
            {
                {"1", {{1, 11963}}, {6.209, 3.531, 5199751}},
                {"2", {{2, 375}}, {5.521, 4.130, 5065230}},
                {"3-4", {{4, 905}}, {7.589, 3.121, 5150116}},
                {"5-8", {{8, 1477}}, {7.652, 3.189, 4721782}},
                {"9-16", {{16, 243}}, {7.597, 2.806, 890532}},
                {"17-32", {{32, 33}}, {7.129, 3.859, 104012}},
                {"33-64", {{48, 3}}, {4.516, 0.500, 149}},
            }};
}

// A large-model cluster, by assumption rather than from a trace (no public
// trace of one at this scale is shared here):
// - 60% of jobs are 64-1024 GPUs and hold nearly all GPU-hours: fine-tuning
//   and mid-size training at 64-256, pretraining at 512-1024; sizes are
//   powers of two, as data- and tensor-parallel layouts make them;
// - pretraining runs for weeks but is submitted as segments that requeue at
//   a 48-hour limit (a common partition limit), so it is modelled as jobs of
//   about a day clipped at 48 h;
// - 15% are 16-32 GPU fine-tuning jobs of a few hours;
// - 25% are 1-8 GPU evaluation and debugging jobs of minutes to hours.
inline synthetic_mix llm_mix() {
    constexpr double hour = 3600.0;
    return {"llm",
            {
                {"1-8", {{1, 6}, {2, 3}, {4, 5}, {8, 11}}, {std::log(0.25 * hour), 1.2, 12 * hour}},
                {"16-32", {{16, 7}, {32, 8}}, {std::log(2 * hour), 1.0, 48 * hour}},
                {"64-256", {{64, 18}, {128, 16}, {256, 12}}, {std::log(4 * hour), 1.0, 48 * hour}},
                {"512-1024", {{512, 9}, {1024, 5}}, {std::log(24 * hour), 0.7, 48 * hour}},
            }};
}

// Jobs of fewer GPUs than this are "small" for with_small_share: below the
// 8-GPU sub-block that block policies round them up to.
inline constexpr std::uint32_t small_job_below_gpus = 8;

// The mix with its small jobs (fewer than `below_gpus` GPUs) reweighted to
// be `share` (0 to 1) of the jobs and the other sizes the rest, the weights
// within each part kept, durations unchanged: the same mix with more or
// fewer small jobs. nullopt when the share is outside [0, 1] or asks for a
// part the mix has no size in (small jobs from a mix without any, say).
inline std::optional<synthetic_mix> with_small_share(synthetic_mix mix, double share,
                                                     std::uint32_t below_gpus = small_job_below_gpus) {
    if (!(share >= 0.0 && share <= 1.0)) return std::nullopt;
    double small = 0.0, other = 0.0;
    for (const auto& c : mix.classes)
        for (const auto& s : c.sizes) (s.gpus < below_gpus ? small : other) += s.weight;
    if ((share > 0.0 && !(small > 0.0)) || (share < 1.0 && !(other > 0.0))) return std::nullopt;
    for (auto& c : mix.classes)
        for (auto& s : c.sizes) s.weight = s.gpus < below_gpus ? s.weight / small * share : s.weight / other * (1.0 - share);
    return mix;
}

// "philly", "helios" or "llm"; nullopt for any other name.
inline std::optional<synthetic_mix> find_mix(std::string_view name) {
    if (name == "philly") return philly_mix();
    if (name == "helios") return helios_mix();
    if (name == "llm") return llm_mix();
    return std::nullopt;
}

}  // namespace topoblock::sim
