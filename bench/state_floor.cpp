// The cluster state alone, with no policy: a job of k wholly free racks
// committed and released, with the two timed apart as multi_domain_split
// times them. Every policy's multi-domain placement ends in this commit,
// so its time is the floor under their figures (docs/performance.md).
//
//   state_whole_racks/<k>/<racks>   k = 2, 4, 8, 16 (144-1,152 GPUs)

#include "cluster_fixture.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace topoblock;
using namespace topoblock::bench;

void state_whole_racks(benchmark::State& st, std::uint32_t racks, std::uint32_t job_racks) {
    using clock = std::chrono::steady_clock;
    // The benchmark cluster, its policy left behind: the state is copied.
    cluster_state state = make_fixture<best_fit>(racks, occupancy).alloc.state();
    std::vector<domain_id> idle;
    for (domain_id d = 0; d < state.topo().domain_count(); ++d)
        if (state.domain_idle(d)) idle.push_back(d);
    if (idle.size() < job_racks) {
        st.SkipWithError("fewer wholly free racks than the job takes");
        return;
    }
    // Racks spread over the cluster, as a policy's picks are, in node order.
    const std::size_t stride = idle.size() / job_racks;
    std::vector<piece_run> runs;
    for (std::uint32_t i = 0; i < job_racks; ++i) {
        const domain_shape shape = state.topo().shape(idle[i * stride]);
        runs.push_back(piece_run{shape.first_node, shape.node_count, full_gpu_mask(shape.gpus_per_node)});
    }
    const request job = request::gpus(job_racks * 72);
    const double read_ns = clock_read_ns();
    double commit_ns = 0, release_ns = 0;
    for (auto _ : st) {
        const auto start = clock::now();
        auto id = state.commit(job, runs, {});
        const auto committed = clock::now();
        benchmark::DoNotOptimize(state.release(*id));
        const auto released = clock::now();
        commit_ns += std::chrono::duration<double, std::nano>(committed - start).count();
        release_ns += std::chrono::duration<double, std::nano>(released - committed).count();
    }
    const auto n = static_cast<double>(st.iterations());
    st.counters["commit_ns"] = commit_ns / n - read_ns;
    st.counters["release_ns"] = release_ns / n - read_ns;
    st.counters["commit_ns_per_rack"] = (commit_ns / n - read_ns) / job_racks;
    st.counters["clock_read_ns"] = read_ns;
}

const bool state_floor_registered = [] {
    for (std::uint32_t racks : {125U, 2000U})
        for (std::uint32_t k : {2U, 4U, 8U, 16U})
            benchmark::RegisterBenchmark(("state_whole_racks/" + std::to_string(k) + "/" + std::to_string(racks)).c_str(),
                                         state_whole_racks, racks, k);
    return true;
}();

}  // namespace
