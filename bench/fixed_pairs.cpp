// A fixed number of operations on a benchmark cluster, for instruction
// counts: Google Benchmark picks its iteration count from the clock, so a
// count per iteration taken under callgrind depends on how far into the
// request list the run got. Here every run does the same work:
//
//   valgrind --tool=callgrind --toggle-collect='*measured_*' build/prof/bench/fixed_pairs best-fit alloc_release 2000
//
// then divide callgrind's total by the pairs printed. `fixed_pairs POLICY
// replay` parses and replays the Philly-size trace of replay/<policy>/philly-82k
// once (callgrind's total is then one iteration's).

#include "cluster_fixture.hpp"
#include "replay_trace.hpp"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace topoblock;
using namespace topoblock::bench;

// Not inlined, so that callgrind can collect exactly these loops.
template <class Policy>
[[gnu::noinline]] std::size_t measured_place_and_release(allocator<Policy>& alloc, const std::vector<request>& requests,
                                                         std::size_t pairs) {
    std::size_t placed = 0;
    request_cycle cycle(requests);
    for (std::size_t i = 0; i < pairs; ++i) {
        auto id = alloc.try_allocate(cycle.next());
        if (id) {
            ++placed;
            (void)alloc.release(*id);
        }
    }
    return placed;
}

template <class Policy>
[[gnu::noinline]] std::size_t measured_down_up(allocator<Policy>& alloc, std::size_t pairs) {
    std::vector<allocation_id> hit;
    std::size_t hits = 0;
    const node_id nodes = alloc.topo().node_count();
    node_id n = 0;
    for (std::size_t i = 0; i < pairs; ++i) {
        n = (n + 7919) % nodes;  // as node_down_up/<policy>/<racks>
        hit.clear();
        (void)alloc.down(n, hit);
        (void)alloc.up(n, hit);
        hits += hit.size();
    }
    return hits;
}

template <class Policy>
[[gnu::noinline]] sim::policy_result measured_replay(const std::string& csv, const topology& topo, Policy policy) {
    return parse_and_replay(csv, topo, policy);
}

template <class Policy>
int run(Policy policy, std::string_view kind, std::uint32_t racks, std::uint32_t racks_per_group) {
    if (kind == "replay") {
        const std::string& csv = philly_82k_csv();
        const auto result = measured_replay(csv, gb200_nvl72(racks), policy);
        std::printf("jobs %zu, completed %zu, makespan %.0f s\n", result.totals.jobs, result.totals.completed,
                    result.totals.makespan_s);
        return 0;
    }
    auto f = make_fixture<Policy>(racks, occupancy, policy, 42, racks_per_group);
    if (kind == "node_down_up") {
        const std::size_t pairs = 4096;
        const std::size_t hits = measured_down_up(f.alloc, pairs);
        std::printf("pairs %zu, jobs hit %zu\n", pairs, hits);
        return 0;
    }
    std::vector<request> requests;
    std::size_t pairs = 0;
    if (kind == "alloc_release") {
        std::mt19937_64 rng(7);  // the benchmark's 1,024 sizes, eight times over
        for (int i = 0; i < 1024; ++i) requests.push_back(request::gpus(draw_size(rng)));
        pairs = 8 * requests.size();
    } else if (kind == "multi_domain") {
        requests = {request::gpus(144), request::gpus(288), request::gpus(576), request::gpus(1152)};
        pairs = 2000;
    } else if (kind.starts_with("multi_domain:")) {  // one size alone, as multi_domain_size/<policy>/<gpus>/<racks>
        requests = {request::gpus(std::stoul(std::string(kind.substr(kind.find(':') + 1))))};
        pairs = 2000;
    } else {
        std::fprintf(stderr, "unknown kind '%s' (alloc_release, multi_domain, multi_domain:GPUS, node_down_up or replay)\n",
                     std::string(kind).c_str());
        return 2;
    }
    const std::size_t placed = measured_place_and_release(f.alloc, requests, pairs);
    std::printf("pairs %zu, placed %zu\n", pairs, placed);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool replay = argc == 3 && std::string_view(argv[2]) == "replay";
    if ((argc < 4 || argc > 5) && !replay) {
        std::fprintf(stderr,
                     "usage: fixed_pairs POLICY alloc_release|multi_domain|multi_domain:GPUS|node_down_up RACKS [RACKS_PER_GROUP]\n"
                     "       fixed_pairs POLICY replay\n");
        return 2;
    }
    const std::string_view policy = argv[1], kind = argv[2];
    const auto racks = replay ? philly_racks : static_cast<std::uint32_t>(std::stoul(argv[3]));
    const auto group = argc == 5 ? static_cast<std::uint32_t>(std::stoul(argv[4])) : 0U;
    if (policy == "first-fit") return run(first_fit{}, kind, racks, group);
    if (policy == "best-fit") return run(best_fit{}, kind, racks, group);
    if (policy == "contiguous-block") return run(contiguous_block(8), kind, racks, group);
    if (policy == "buddy-split") return run(buddy_split{}, kind, racks, group);
    if (policy == "slurm-block") return run(slurm_block{}, kind, racks, group);
    std::fprintf(stderr, "unknown policy '%s'\n", std::string(policy).c_str());
    return 2;
}
