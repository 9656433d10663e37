#pragma once

// Offered load: how much of a cluster a workload asks for, and a workload's
// arrivals rescaled to ask for a chosen share.

#include <topoblock/sim/job.hpp>

#include <cmath>
#include <cstdint>

namespace topoblock::sim {

// GPU-seconds asked over GPU-seconds a cluster of `cluster_gpus` GPUs has
// between the first and the last submission; 0 when that span is empty
// (fewer than two jobs, or all submitted at one moment) or the cluster has
// no GPU. The jobs are in submission order (workload's invariant). O(jobs).
inline double offered_load(const workload& w, std::uint64_t cluster_gpus) noexcept {
    if (w.jobs.size() < 2 || cluster_gpus == 0) return 0.0;
    double work = 0.0;
    for (const job& j : w.jobs) work += static_cast<double>(j.gpus) * j.duration_s;
    const double span = w.jobs.back().submit_s - w.jobs.front().submit_s;
    return span > 0.0 ? work / (span * static_cast<double>(cluster_gpus)) : 0.0;
}

// Compresses or stretches the gaps between arrivals so that the workload
// offers `target` load to `cluster_gpus` GPUs; sizes, run times and order
// stay. False, and the workload unchanged, when it has no load to scale
// (offered_load is 0) or `target` is not a finite number above 0. O(jobs).
inline bool rescale_to_load(workload& w, std::uint64_t cluster_gpus, double target) noexcept {
    const double natural = offered_load(w, cluster_gpus);
    if (natural <= 0.0 || !std::isfinite(target) || target <= 0.0) return false;
    const double scale = natural / target;
    for (job& j : w.jobs) j.submit_s *= scale;
    return true;
}

}  // namespace topoblock::sim
