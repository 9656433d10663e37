#pragma once

#include <topoblock/sim/report.hpp>
#include <topoblock/sim/results.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

// The simulator's figures over time as CSV: a row per policy per sample
// moment (policy_result::fragmentation), for charting how a policy leaves
// the cluster as the replay goes on.

namespace topoblock::sim {

// One header line, then one row per policy per sample, in the order of
// `results` and then of time. The columns: those of format_csv's rows up to
// the settings (policy, queue, run_settings), then t_s,
// external_fragmentation, occupied_domains, fewest_domains, and the
// allocatable jobs of each size at that moment: jobs_1gpu up to
// jobs_<G>gpu, then jobs_1node up to jobs_<N>node, G and N the GPUs and
// nodes of `topo`'s largest domain (a size larger than some domains counts
// in the larger ones only). Wide, so a column charts directly; runs on one
// topology share the header. Numbers exact, as format_csv writes them.
// Throws std::invalid_argument, naming the policy and the sample, when a
// sample's counts do not run to G and N (a sample of another topology).
// O(policies x samples x (G + N)).
inline std::string format_samples_csv(std::span<const policy_result> results, const topology& topo,
                                      const run_settings& settings = {}) {
    const std::size_t gpu_sizes = topo.max_domain_gpus(), node_sizes = topo.max_domain_nodes();
    std::string out(detail::run_columns);
    out += ",t_s,external_fragmentation,occupied_domains,fewest_domains";
    for (std::size_t s = 1; s <= gpu_sizes; ++s) out += ",jobs_" + std::to_string(s) + "gpu";
    for (std::size_t k = 1; k <= node_sizes; ++k) out += ",jobs_" + std::to_string(k) + "node";
    out += '\n';
    for (const auto& r : results)
        for (std::size_t i = 0; i < r.fragmentation.size(); ++i) {
            const fragmentation_sample& sample = r.fragmentation[i];
            if (sample.allocatable.gpus.size() != gpu_sizes || sample.allocatable.nodes.size() != node_sizes)
                throw std::invalid_argument("format_samples_csv: policy " + topoblock::detail::quoted(r.policy) + ", sample " + std::to_string(i) +
                                            ": counts for " + std::to_string(sample.allocatable.gpus.size()) +
                                            " GPU and " + std::to_string(sample.allocatable.nodes.size()) +
                                            " node sizes, but the topology's largest domain has " +
                                            std::to_string(gpu_sizes) + " GPUs and " + std::to_string(node_sizes) +
                                            " nodes");
            detail::append_run_fields(out, r, settings);
            for (const double v : {sample.t, sample.value}) {
                out += ',';
                detail::append_exact(out, v);
            }
            for (const std::uint32_t n : {sample.occupied_domains, sample.fewest_domains}) {
                out += ',';
                detail::append_exact(out, std::uint64_t{n});
            }
            for (const auto* counts : {&sample.allocatable.gpus, &sample.allocatable.nodes})
                for (const std::uint64_t n : *counts) {
                    out += ',';
                    detail::append_exact(out, n);
                }
            out += '\n';
        }
    return out;
}

}  // namespace topoblock::sim
