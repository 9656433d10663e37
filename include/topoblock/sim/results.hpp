#pragma once

#include <topoblock/metrics/allocatable.hpp>
#include <topoblock/request/errc.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// What one replay under one policy produced: every job's fate, the cluster's
// occupancy over time, and the summary the comparison table prints.

namespace topoblock::sim {

// Where a job stands when the replay stops.
enum class job_state : std::uint8_t {
    not_submitted,  // its submission time lies after the stop (--until)
    waiting,      // in the queue (only when the replay stops early, --until)
    running,      // started and not finished when the replay stops
    completed,
    unplaceable,  // never placeable under this policy: `reason` says why
    // cut short by node failures more often than engine_options::max_requeues
    // allows, or still waiting when a stall (random failures, nothing
    // running, no arrival left) has lasted one mean failure-and-repair cycle
    abandoned,
};

constexpr std::string_view to_string(job_state s) noexcept {
    switch (s) {
        case job_state::not_submitted: return "not_submitted";
        case job_state::waiting: return "waiting";
        case job_state::running: return "running";
        case job_state::completed: return "completed";
        case job_state::unplaceable: return "unplaceable";
        case job_state::abandoned: return "abandoned";
    }
    return "unknown";
}

// One job of the input, by its position in the (sorted) workload.
struct job_outcome {
    job_state state = job_state::not_submitted;
    errc reason = errc::ok;          // unplaceable: the policy's last answer
    double start_s = -1.0;           // of the last attempt; -1 = never started
    double end_s = -1.0;             // planned or actual end of the last attempt
    double wait_s = 0.0;             // time queued, summed over attempts
    double run_s = 0.0;              // run time of the last attempt (with slowdown)
    double slowdown = 1.0;           // communication-cost factor of the last attempt
    std::uint32_t held_gpus = 0;     // GPUs held (>= asked when a policy rounds up)
    std::uint32_t domains = 0;       // domains of the last attempt
    std::uint32_t min_domains = 1;   // the fewest domains the job needs
    std::uint32_t failures = 0;      // attempts cut short by node failures
    double reserved_s = -1.0;        // EASY: the first start time reserved for it as head; -1 = none
    // The policy's answer over the longest part of the job's time queued
    // (summed over attempts): insufficient_free, fragmented or
    // exceeds_healthy; ok when it waited its turn behind other jobs longest,
    // or never waited.
    errc longest_wait_reason = errc::ok;
};

// The cluster between two events (a step function: valid from t to the next
// point's t).
struct timeline_point {
    double t = 0.0;
    std::uint32_t held = 0;       // GPUs held on nodes that are not down
    std::uint32_t requested = 0;  // GPUs the running jobs asked for
    // GPUs on nodes that are not down; when node events came during the
    // step, their time average over it (the timeline gets no point per node
    // event, see engine.hpp)
    double healthy = 0.0;
    // GPU time doing the jobs' work: each running job's asked GPUs divided
    // by its communication slowdown (a job running 1.5x slower does 2/3 of
    // the useful work its GPUs could).
    double useful = 0.0;
};

struct fragmentation_sample {
    double t = 0.0;
    double value = 0.0;  // weighted external fragmentation, 0..1
    // Compaction at that moment (metrics/allocatable.hpp): the domains
    // where running jobs hold GPUs, and the fewest whose GPUs would hold them.
    std::uint32_t occupied_domains = 0;
    std::uint32_t fewest_domains = 0;
    // How many jobs of each size could start at that moment, each inside
    // one domain (metrics/allocatable.hpp): the vectors run to the largest
    // domain's GPUs and nodes.
    allocatable_by_size allocatable;
};

// Who holds each GPU at one moment, for the occupancy heat map.
struct occupancy_snapshot {
    double t = -1.0;  // -1: never taken
    struct cell {
        std::int32_t job_gpus = 0;  // size of the job holding the GPU; 0 = free, -1 = node down
        bool split = false;         // that job spans more domains than it needs
    };
    std::vector<cell> cells;  // one per GPU, in the topology's GPU order
};

// The comparison table's figures for one policy.
struct summary {
    std::size_t jobs = 0, completed = 0, running = 0, waiting = 0, unplaceable = 0, not_submitted = 0, abandoned = 0;
    // completed + running + waiting + unplaceable + not_submitted +
    // abandoned == jobs: every job of the input is on the books.
    bool conserved = false;
    // Time averages over the arrival window [0, last submission] (the
    // offered load applies there; the drain at the end would dilute it):
    double utilization = 0.0;      // held GPUs / healthy GPUs
    double useful_utilization = 0.0;  // useful GPU time / healthy GPU time (see timeline_point)
    double idle_held = 0.0;        // GPUs held beyond the ask (rounding) / healthy GPUs
    double external_fragmentation = 0.0;  // mean of the samples
    // Over jobs that started:
    double wait_mean_s = 0.0;
    double wait_p50_s = 0.0, wait_p95_s = 0.0, wait_p99_s = 0.0;
    double bounded_slowdown = 0.0;  // mean over completed jobs, tau = 10 s
    double makespan_s = 0.0;        // last completion (or the stop time)
    // Of the started jobs that fit in one domain, the share placed on more
    // than one: the figure that compares topology awareness.
    double split_jobs = 0.0;
    // Of the started jobs too large for one domain, the share placed on
    // more domains than the fewest they need.
    double extra_domain_jobs = 0.0;
    // Both kinds together: their share of started jobs' GPU-hours.
    double split_gpu_hours = 0.0;
    double comm_lost_gpu_hours = 0.0;     // extra GPU-hours from the communication cost
    double failure_lost_gpu_hours = 0.0;  // GPU-hours of attempts cut by failures
    std::uint64_t requeues = 0;           // attempts cut by failures
};

struct policy_result {
    std::string policy;
    std::string queue;
    summary totals;
    std::vector<job_outcome> jobs;
    std::vector<timeline_point> timeline;
    std::vector<fragmentation_sample> fragmentation;
    occupancy_snapshot snapshot;
};

// Bounded slowdown threshold (Feitelson et al.): jobs shorter than this count
// as this long, so a 1-second job waiting a minute does not dominate means.
inline constexpr double bounded_slowdown_tau_s = 10.0;

// The p-th percentile (0..100) by nearest rank; 0 for no values. Reorders
// `values` (a selection, not a sort: a replay's summary asks for three
// percentiles of every job's wait, and three sorts of 82,000 waits were a
// fifth of a Philly-size replay's instructions).
inline double percentile(std::vector<double>& values, double p) {
    if (values.empty()) return 0.0;
    const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
    const auto index = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
    return values[index];
}

// Fills the per-job parts of a summary (counts, waits, splits) from the
// outcomes; `gpus_of(i)` is job i's requested GPU count.
template <class GpusOf>
void summarize_jobs(const std::vector<job_outcome>& jobs, GpusOf&& gpus_of, summary& s) {
    s.jobs = jobs.size();
    s.completed = s.running = s.waiting = s.unplaceable = s.not_submitted = s.abandoned = 0;
    std::vector<double> waits;
    double slowdowns = 0.0, gpu_hours = 0.0, split_gpu_hours = 0.0, wait_sum = 0.0;
    std::size_t one_domain = 0, split = 0, multi_domain = 0, extra_domain = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& j = jobs[i];
        switch (j.state) {
            case job_state::not_submitted: ++s.not_submitted; break;
            case job_state::waiting: ++s.waiting; break;
            case job_state::running: ++s.running; break;
            case job_state::completed: ++s.completed; break;
            case job_state::unplaceable: ++s.unplaceable; break;
            case job_state::abandoned: ++s.abandoned; break;
        }
        if (j.state != job_state::running && j.state != job_state::completed) continue;
        waits.push_back(j.wait_s);
        wait_sum += j.wait_s;
        const double hours = static_cast<double>(gpus_of(i)) * j.run_s / 3600.0;
        gpu_hours += hours;
        const bool spread = j.domains > j.min_domains;
        if (j.min_domains <= 1) {
            ++one_domain;
            split += spread;
        } else {
            ++multi_domain;
            extra_domain += spread;
        }
        if (spread) split_gpu_hours += hours;
        if (j.state == job_state::completed)
            slowdowns += std::max(1.0, (j.wait_s + j.run_s) / std::max(j.run_s, bounded_slowdown_tau_s));
    }
    s.conserved = s.completed + s.running + s.waiting + s.unplaceable + s.not_submitted + s.abandoned == s.jobs;
    s.wait_mean_s = waits.empty() ? 0.0 : wait_sum / static_cast<double>(waits.size());
    s.wait_p50_s = percentile(waits, 50.0);
    s.wait_p95_s = percentile(waits, 95.0);
    s.wait_p99_s = percentile(waits, 99.0);
    s.bounded_slowdown = s.completed != 0 ? slowdowns / static_cast<double>(s.completed) : 0.0;
    const auto share = [](std::size_t part, std::size_t whole) {
        return whole != 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    };
    s.split_jobs = share(split, one_domain);
    s.extra_domain_jobs = share(extra_domain, multi_domain);
    s.split_gpu_hours = gpu_hours > 0.0 ? split_gpu_hours / gpu_hours : 0.0;
}

}  // namespace topoblock::sim
