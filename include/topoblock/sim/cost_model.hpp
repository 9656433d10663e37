#pragma once

#include <algorithm>
#include <cstdint>

// How much slower a job runs when its GPUs span more NVLink domains than it
// needs. Documented in docs/simulate.md ("Communication cost").
//
// Model. A job spends a share c of its run time (when packed into the fewest
// domains it can use) in communication that compute does not hide. Spread
// over k domains with the traffic spread evenly over its peers, a share
// (k - 1) / k of that communication crosses domains and runs at InfiniBand
// instead of NVLink bandwidth, r = nvlink / infiniband times slower:
//
//   cost(k)   = (1 - c) + c * (1 / k + (k - 1) / k * r)
//   factor(k) = cost(k) / cost(k_min)      k_min = domains the job needs
//
// so a job that uses no more domains than it must keeps its trace duration,
// and a 1-GPU job never pays. The lost GPU-hours are gpus * duration *
// (factor - 1).

namespace topoblock::sim {

// The bandwidths a command line or script may set (GB/s per GPU per
// direction): their ratio stays finite.
inline constexpr double min_link_gb_per_s = 1e-3;
inline constexpr double max_link_gb_per_s = 1e6;

struct comm_cost_model {
    // NVLink 5 per GPU, per direction: 1.8 TB/s bidirectional (NVIDIA GB200
    // NVL72 datasheet).
    double nvlink_gb_per_s = 900.0;
    // One 400 Gb/s InfiniBand port (ConnectX-7 / Quantum-2) per GPU, per
    // direction.
    double infiniband_gb_per_s = 50.0;
    // Share of run time spent in communication compute does not hide, inside
    // one domain. An assumption, not a measurement: data-parallel training
    // overlaps most of its all-reduce; tensor- or expert-parallel jobs expose
    // more. Set it per workload (0 disables the model).
    double comm_share = 0.1;
    // When false the slowdown is only reported (lost GPU-hours), not applied
    // to run times.
    bool stretch_runtime = true;

    double bandwidth_ratio() const noexcept {
        return infiniband_gb_per_s > 0.0 ? std::max(1.0, nvlink_gb_per_s / infiniband_gb_per_s) : 1.0;
    }

    // Relative run time of a job over `domains` domains, against 1 domain.
    double cost(std::uint32_t domains) const noexcept {
        const double k = static_cast<double>(std::max<std::uint32_t>(domains, 1));
        const double c = std::clamp(comm_share, 0.0, 1.0);
        return (1.0 - c) + c * (1.0 / k + (k - 1.0) / k * bandwidth_ratio());
    }

    // How much longer a job runs on `domains` domains than on the
    // `min_domains` it needs; 1 when it uses no more than it needs.
    double slowdown(std::uint32_t domains, std::uint32_t min_domains) const noexcept {
        if (domains <= min_domains) return 1.0;
        return cost(domains) / cost(min_domains);
    }
};

// The fewest domains of `domain_gpus` GPUs a job of `gpus` GPUs needs.
constexpr std::uint32_t min_domains_for(std::uint32_t gpus, std::uint32_t domain_gpus) noexcept {
    if (domain_gpus == 0) return 1;
    return std::max<std::uint32_t>(1, (gpus + domain_gpus - 1) / domain_gpus);
}

}  // namespace topoblock::sim
