// explain() at cluster scale. Names a script can read:
//   explain/<policy>/<racks>          the single-domain size mix, placeable or not
//   explain_refused/<policy>/<racks>  24-72 GPU jobs the policy refuses now (free GPUs scattered):
//                                     the refusal's numbers are measured
//   explain_refused_down/<policy>/<racks>  the same with one tray down (the domains with a node
//                                     not up are found by a pass over the domains' counters)
// State: `racks` GB200 NVL72 racks at 90% occupancy, built before timing;
// for explain_refused, 8-GPU jobs are then added until no 24-GPU job fits.
// One dry run (plan) and, for a refusal of the moment, one pass of the
// policy's measure over the domains; the caller keeps the scratch placement.

#include "cluster_fixture.hpp"

#include <topoblock/advice/explain.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace topoblock;

template <class Policy>
void explain_mix(benchmark::State& st, std::uint32_t racks, Policy policy, bool refused_only, bool tray_down) {
    auto f = bench::make_fixture<Policy>(racks, bench::occupancy, policy);
    if (tray_down) (void)f.alloc.down(0);
    std::mt19937_64 rng(7);
    std::vector<request> requests;
    placement scratch;
    if (refused_only)
        while (f.alloc.plan(request::gpus(24), scratch) == errc::ok)
            if (!f.alloc.try_allocate(request::gpus(8))) break;
    for (std::size_t i = 0; requests.size() < 1024 && i < 100'000; ++i) {
        const request q = request::gpus(refused_only ? 24 + static_cast<std::uint32_t>(rng() % 49) : bench::draw_size(rng));
        if (!refused_only || f.alloc.plan(q, scratch) != errc::ok) requests.push_back(q);
    }
    if (requests.empty()) {
        st.SkipWithError("no request is refused");
        return;
    }
    bench::request_cycle cycle(requests);
    std::size_t refused = 0, asked = 0;
    for (auto _ : st) {
        const explanation e = explain(f.alloc, cycle.next(), scratch);
        refused += e.placeable() ? 0 : 1;
        ++asked;
        benchmark::DoNotOptimize(e);
    }
    st.counters["refused_share"] = static_cast<double>(refused) / static_cast<double>(asked);
    st.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(asked) * 1e-9,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

const bool explain_registered = [] {
    for (std::string_view name : policy_names)
        with_policy(name, policy_settings{}, [&](auto policy) {
            for (std::uint32_t racks : {125U, 2000U}) {
                const std::string suffix = "/" + std::string(name) + "/" + std::to_string(racks);
                benchmark::RegisterBenchmark(("explain" + suffix).c_str(), explain_mix<decltype(policy)>, racks, policy, false, false);
                benchmark::RegisterBenchmark(("explain_refused" + suffix).c_str(), explain_mix<decltype(policy)>, racks, policy, true, false);
                benchmark::RegisterBenchmark(("explain_refused_down" + suffix).c_str(), explain_mix<decltype(policy)>, racks, policy,
                                             true, true);
            }
        });
    return true;
}();

}  // namespace
