// Trace replay, end to end: parse a Philly-size trace (82,000 jobs, written
// as CSV from the Philly-like synthetic mix so that no file is needed) and
// replay it with EASY backfill on 9 GB200 NVL72 racks, the size the Philly
// mix fills at 85% load.
//   replay/<policy>/philly-82k   counters: jobs_per_s (parse + replay) and
//                                simulated_s_per_wall_s
//
// The C library keeps the heap between replays here (keep_heap below): by
// default it hands the replay's large buffers back to the kernel when they
// are freed and takes them anew, zeroed page by page, in the next
// iteration, and those page faults were over half of each iteration's time.
// A sweep process that replays once pays them once; what is measured here
// is the replay.

#include "replay_trace.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

using namespace topoblock;

// Large blocks from the heap rather than mmap, and freed memory kept rather
// than trimmed: every iteration then replays into memory already mapped.
const bool keep_heap = [] {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);  // the most it takes on 64-bit
    mallopt(M_TRIM_THRESHOLD, -1);
#endif
    return true;
}();

template <class Policy>
void replay(benchmark::State& st, Policy policy) {
    const std::string& csv = bench::philly_82k_csv();
    const topology topo = gb200_nvl72(bench::philly_racks);
    double simulated_s = 0.0;
    std::size_t jobs = 0;
    for (auto _ : st) {
        const auto result = bench::parse_and_replay(csv, topo, policy);
        simulated_s += result.totals.makespan_s;
        jobs += result.totals.jobs;
        benchmark::DoNotOptimize(result.totals.completed);
    }
    st.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsRate);
    st.counters["simulated_s_per_wall_s"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
}

const bool replay_registered = [] {
    benchmark::RegisterBenchmark("replay/first-fit/philly-82k", replay<first_fit>, first_fit{})->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("replay/best-fit/philly-82k", replay<best_fit>, best_fit{})->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("replay/contiguous-block/philly-82k", replay<contiguous_block>, contiguous_block{})
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("replay/buddy-split/philly-82k", replay<buddy_split>, buddy_split{})->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("replay/slurm-block/philly-82k", replay<slurm_block>, slurm_block{})->Unit(benchmark::kMillisecond);
    return true;
}();

}  // namespace
