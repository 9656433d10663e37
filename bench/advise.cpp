// advise/<policy>/<racks>: the least set of running jobs to stop for a
// one-domain request that does not fit now (advice/advise.hpp), on
// `racks` GB200 NVL72 racks at 90% occupancy. Counters: sizes, how many of
// the request sizes below need a set under the policy (those are timed);
// stop_share, the share of answers that are a set; gpus_stopped, the GPUs
// the sets hold on average.

#include "cluster_fixture.hpp"

#include <topoblock/advice/advise.hpp>
#include <topoblock/policy/registry.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace topoblock;

template <class Policy>
void advise_bench(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = bench::make_fixture<Policy>(racks, bench::occupancy, policy);
    // The fixture's policies leave whole racks free; a cluster where a job
    // waits has its free GPUs scattered: fill every GPU with 1-GPU jobs,
    // then stop random jobs of up to 16 GPUs until 90% is held again.
    std::vector<allocation_id> jobs = f.live;
    while (auto id = f.alloc.try_allocate(request::gpus(1))) jobs.push_back(*id);
    std::mt19937_64 rng(3);
    const auto target = static_cast<std::uint64_t>(bench::occupancy * racks * 72);
    while (f.alloc.state().held_gpus() > target && !jobs.empty()) {
        const std::size_t v = rng() % jobs.size();
        if (f.alloc.find(jobs[v])->held_gpus <= 16) (void)f.alloc.release(jobs[v]);
        jobs[v] = jobs.back();
        jobs.pop_back();
    }
    // One-domain sizes (for every policy: buddy-split rounds 72 GPUs up to 128,
    // more than a rack) the scattered free GPUs mostly cannot hold.
    const std::vector<request> sizes{request::gpus(32), request::gpus(48), request::gpus(64), request::nodes(12),
                                     request::gpus(40).with_whole_nodes()};
    // Timed: those the policy cannot place now (answered with a set), or
    // all of them when it places every one.
    std::vector<request> requests;
    for (const request& q : sizes)
        if (advise(f.alloc, q).kind == advice_kind::stop) requests.push_back(q);
    if (requests.empty()) requests = sizes;
    st.counters["sizes"] = static_cast<double>(requests.size());
    bench::request_cycle cycle(requests);
    std::uint64_t asked = 0, stops = 0, gpus = 0;
    for (auto _ : st) {
        const advice got = advise(f.alloc, cycle.next());
        ++asked;
        if (got.kind == advice_kind::stop) {
            ++stops;
            gpus += got.cost;
        }
        benchmark::DoNotOptimize(got);
    }
    st.counters["stop_share"] = static_cast<double>(stops) / static_cast<double>(asked);
    st.counters["gpus_stopped"] = stops == 0 ? 0.0 : static_cast<double>(gpus) / static_cast<double>(stops);
}

bool register_all() {
    for (const std::string_view name : policy_names)
        for (std::uint32_t racks : {125U, 2000U})
            with_policy(name, policy_settings{}, [&](auto policy) {
                benchmark::RegisterBenchmark(("advise/" + std::string(name) + "/" + std::to_string(racks)).c_str(),
                                             advise_bench<decltype(policy)>, racks, policy)
                    ->Unit(benchmark::kMicrosecond);
            });
    return true;
}

const bool advise_registered = register_all();

}  // namespace
