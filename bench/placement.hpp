#pragma once

// Placement kernels at cluster scale. Names a script can read:
//   alloc_release/<policy>/<racks>   place and release a job that fits one domain
//   alloc_latency/<policy>/<racks>   the same, each pair timed: p50/p99 counters
//   alloc_fail/<policy>/<racks>      a request that cannot fit, answered
//   multi_domain/<policy>/<racks>    144-1152 GPU jobs placed and released
//   multi_domain_split/<policy>/<racks>  the same, placement and release timed apart
//   multi_domain_size/<policy>/<gpus>/<racks>  one of those sizes alone, timed apart
//   node_down_up/<policy>/<racks>    a busy tray fails and comes back (hit jobs into a reused buffer)
// State: `racks` GB200 NVL72 racks at 90% occupancy, built before timing.
//
// Each policy registers its kernels from a file of its own
// (placement_<policy>.cpp), as a scheduler builds the one policy it uses.
// The compiler decides what to inline file by file: with every policy
// in one file, the same buddy-split code ran about 20% slower
// and contiguous-block's about 15% slower than each in a file of its own.

#include "cluster_fixture.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace topoblock::bench {

// ns_per_op and ops_per_s counters; an iteration may hold several operations.
inline void report_per_op(benchmark::State& st, double ops_per_iteration) {
    const double ops = static_cast<double>(st.iterations()) * ops_per_iteration;
    st.counters["ns_per_op"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    st.counters["ops_per_s"] = benchmark::Counter(ops, benchmark::Counter::kIsRate);
}

// Single-domain sizes drawn ahead of time, so the loop times placement only.
inline std::vector<request> single_domain_requests(std::size_t count) {
    std::mt19937_64 rng(7);
    std::vector<request> out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(request::gpus(draw_size(rng)));
    return out;
}

// Places the requests in turn and releases each again, once per iteration.
template <class Policy>
void place_and_release(benchmark::State& st, allocator<Policy>& alloc, const std::vector<request>& requests) {
    std::size_t i = 0, placed = 0;
    request_cycle cycle(requests);
    for (auto _ : st) {
        ++i;
        auto id = alloc.try_allocate(cycle.next());
        if (id) {
            ++placed;
            benchmark::DoNotOptimize(alloc.release(*id));
        }
    }
    st.counters["placed_share"] = static_cast<double>(placed) / static_cast<double>(i);
    report_per_op(st, 1.0);
}

template <class Policy>
void alloc_release(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    place_and_release(st, f.alloc, single_domain_requests(1024));
}

template <class Policy>
void alloc_latency(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    const auto requests = single_domain_requests(1024);
    std::vector<double> samples;
    samples.reserve(1 << 20);
    std::size_t i = 0;
    for (auto _ : st) {
        const auto start = std::chrono::steady_clock::now();
        auto id = f.alloc.try_allocate(requests[i++ & 1023]);
        if (id) benchmark::DoNotOptimize(f.alloc.release(*id));
        const auto stop = std::chrono::steady_clock::now();
        if (samples.size() < samples.capacity())
            samples.push_back(std::chrono::duration<double, std::nano>(stop - start).count());
    }
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) { return samples.empty() ? 0.0 : samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))]; };
    st.counters["p50_ns"] = at(0.50);
    st.counters["p99_ns"] = at(0.99);
}

template <class Policy>
void alloc_fail(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    // A whole rack's worth when no rack is wholly free: plenty of free GPUs,
    // none in one domain. A policy that spreads anyway (first-fit) is asked
    // for one GPU more than is free instead.
    for (domain_id d = 0; d < f.alloc.topo().domain_count(); ++d)
        if (f.alloc.state().domain(d).free_gpus == 72) {
            const piece p{f.alloc.topo().domain(d).first_node, 1};
            (void)f.alloc.hold(std::span<const piece>(&p, 1));
        }
    request impossible = request::gpus(72);
    if (auto probe = f.alloc.try_allocate(impossible)) {
        (void)f.alloc.release(*probe);
        impossible = request::gpus(static_cast<std::uint32_t>(f.alloc.state().available().gpus + 1));
        st.SetLabel("more than free");
    } else {
        st.SetLabel("fragmented");
    }
    std::size_t refused = 0;
    for (auto _ : st) {
        auto id = f.alloc.try_allocate(impossible);
        if (!id) ++refused;
        else (void)f.alloc.release(*id);
    }
    st.counters["refused_share"] = static_cast<double>(refused) / static_cast<double>(st.iterations());
    report_per_op(st, 1.0);
}

template <class Policy>
void multi_domain(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    place_and_release(st, f.alloc, {request::gpus(144), request::gpus(288), request::gpus(576), request::gpus(1152)});
}

// Placed and released in turn as place_and_release does, with the placement
// and the release timed apart: a scheduler waits for the placement, while a
// release is off its critical path. One clock read's own cost, measured
// first, is taken off each side.
template <class Policy>
void place_and_release_apart(benchmark::State& st, allocator<Policy>& alloc, const std::vector<request>& requests) {
    using clock = std::chrono::steady_clock;
    const double read_ns = clock_read_ns();
    double place_ns = 0, release_ns = 0;
    std::size_t i = 0, placed = 0;
    request_cycle cycle(requests);
    for (auto _ : st) {
        ++i;
        const auto start = clock::now();
        auto id = alloc.try_allocate(cycle.next());
        const auto decided = clock::now();
        if (id) {
            ++placed;
            benchmark::DoNotOptimize(alloc.release(*id));
        }
        const auto released = clock::now();
        place_ns += std::chrono::duration<double, std::nano>(decided - start).count();
        release_ns += std::chrono::duration<double, std::nano>(released - decided).count();
    }
    const auto n = static_cast<double>(i);
    st.counters["place_ns"] = place_ns / n - read_ns;
    st.counters["release_ns"] = release_ns / n - read_ns;
    st.counters["clock_read_ns"] = read_ns;
    st.counters["placed_share"] = static_cast<double>(placed) / n;
}

template <class Policy>
void multi_domain_split(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    place_and_release_apart(st, f.alloc, {request::gpus(144), request::gpus(288), request::gpus(576), request::gpus(1152)});
}

// One size of multi_domain's mix alone: how the placement's time grows
// with the racks a job takes (2, 4, 8 or 16 whole racks).
template <class Policy>
void multi_domain_size(benchmark::State& st, std::uint32_t racks, std::uint32_t gpus, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    place_and_release_apart(st, f.alloc, {request::gpus(gpus)});
}

// The same jobs on a cluster whose racks sit in leaf groups of 16 (a level),
// which policies try before spreading across the whole cluster.
template <class Policy>
void multi_domain_grouped(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy, 42, 16);
    place_and_release(st, f.alloc, {request::gpus(144), request::gpus(288), request::gpus(576), request::gpus(1152)});
}

template <class Policy>
void node_down_up(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    const node_id node_count = f.alloc.topo().node_count();
    node_id n = 0;
    // A scheduler's event loop keeps one buffer for the jobs a failure hits
    // (the allocator's buffer overloads); the vector-returning down(n) adds
    // a heap allocation and free per call.
    std::vector<allocation_id> hit;
    for (auto _ : st) {
        n = (n + 7919) % node_count;  // a stride that visits every node
        hit.clear();
        benchmark::DoNotOptimize(f.alloc.down(n, hit));
        benchmark::DoNotOptimize(f.alloc.up(n, hit));
        benchmark::DoNotOptimize(hit.data());
    }
    report_per_op(st, 1.0);
}

// Not a timing: the state's bytes per GPU and per live allocation, and
// what the policy keeps besides (its own indexes) per GPU.
template <class Policy>
void memory(benchmark::State& st, std::uint32_t racks, Policy policy) {
    auto f = make_fixture<Policy>(racks, occupancy, policy);
    for (auto _ : st) benchmark::DoNotOptimize(f.alloc.state().memory());
    const auto m = f.alloc.state().memory();
    const auto gpus = static_cast<double>(f.alloc.topo().gpu_count());
    st.counters["bytes_per_gpu"] = static_cast<double>(m.cluster_bytes) / gpus;
    st.counters["policy_bytes_per_gpu"] = static_cast<double>(f.alloc.policy().memory_bytes()) / gpus;
    st.counters["bytes_per_allocation"] =
        static_cast<double>(m.allocation_bytes) / static_cast<double>(f.alloc.state().allocation_count());
    st.counters["live_allocations"] = static_cast<double>(f.alloc.state().allocation_count());
}

// Registers the kernels for `policy` under `name`; returns true, for a
// file's one registering initializer.
template <class Policy>
bool register_policy(const std::string& name, Policy policy = Policy{}) {
    for (std::uint32_t racks : {125U, 500U, 2000U, 8000U}) {
        const std::string suffix = "/" + name + "/" + std::to_string(racks);
        benchmark::RegisterBenchmark(("alloc_release" + suffix).c_str(), alloc_release<Policy>, racks, policy);
        benchmark::RegisterBenchmark(("alloc_fail" + suffix).c_str(), alloc_fail<Policy>, racks, policy);
        benchmark::RegisterBenchmark(("multi_domain" + suffix).c_str(), multi_domain<Policy>, racks, policy);
        benchmark::RegisterBenchmark(("multi_domain_grouped" + suffix).c_str(), multi_domain_grouped<Policy>, racks, policy);
        benchmark::RegisterBenchmark(("multi_domain_split" + suffix).c_str(), multi_domain_split<Policy>, racks, policy);
        benchmark::RegisterBenchmark(("node_down_up" + suffix).c_str(), node_down_up<Policy>, racks, policy);
        if (racks == 2000U) benchmark::RegisterBenchmark(("alloc_latency" + suffix).c_str(), alloc_latency<Policy>, racks, policy);
        if (racks == 2000U || racks == 125U)
            for (std::uint32_t gpus : {144U, 288U, 576U, 1152U})
                benchmark::RegisterBenchmark(("multi_domain_size/" + name + "/" + std::to_string(gpus) + "/" + std::to_string(racks)).c_str(),
                                             multi_domain_size<Policy>, racks, gpus, policy);
        if (racks == 2000U || racks == 125U)
            benchmark::RegisterBenchmark(("memory" + suffix).c_str(), memory<Policy>, racks, policy)->Iterations(1);
    }
    return true;
}

}  // namespace topoblock::bench
