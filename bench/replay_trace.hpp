#pragma once
// The Philly-size replay of replay/<policy>/philly-82k, shared with
// fixed_pairs so that its instruction count is of the same work.

#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/topoblock.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace topoblock::bench {

// 9 GB200 NVL72 racks: the size the Philly mix fills at 85% load.
inline constexpr std::uint32_t philly_racks = 9;

// 82,000 jobs of the Philly-like synthetic mix written as CSV, so that no
// file is needed; built once.
inline const std::string& philly_82k_csv() {
    static const std::string text = [] {
        const sim::workload w =
            sim::generate(sim::philly_mix(), {.jobs = 82'000, .offered_load = 0.85, .cluster_gpus = philly_racks * 72});
        return sim::write_trace_csv(w);
    }();
    return text;
}

// One iteration: parse the CSV, replay it with EASY backfill.
template <class Policy>
sim::policy_result parse_and_replay(const std::string& csv, const topology& topo, Policy policy) {
    auto read = sim::read_trace_csv(csv, "philly-82k");
    if (!read) throw std::runtime_error(read.error().to_string());
    sim::engine_options options;
    options.fragmentation_samples = 0;  // the replay alone, not the sampling
    return sim::simulate(std::move(*allocator<Policy>::create(topo, policy)), read->jobs, options);
}

}  // namespace topoblock::bench
