#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/topoblock.hpp>

#include "../shared_traces.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace test_sim_shared_traces_replay {

using namespace topoblock;
using namespace topoblock::sim;

namespace {

// Replays a shared trace under first-fit and best-fit (EASY); reports
// itself skipped when ../shared/traces is absent (a user's clone).
void replay_shared(const std::string& file, std::uint32_t racks) {
    const std::string path = test::shared_trace(file).string();
    if (!test::shared_trace_present(path)) return;
    auto read = read_trace_csv_file(path);
    REQUIRE(read.has_value());
    CHECK(read->bad_rows.empty());
    const topology topo = gb200_nvl72(racks);
    engine_options options;
    options.fragmentation_samples = 5;
    const auto ff = simulate(*allocator<first_fit>::create(topo), read->jobs, options);
    const auto bf = simulate(*allocator<best_fit>::create(topo), read->jobs, options);
    for (const auto* r : {&ff, &bf}) {
        CAPTURE(r->policy);
        CHECK(r->totals.conserved);
        CHECK(r->totals.jobs == read->jobs.jobs.size());
        CHECK(r->totals.completed + r->totals.unplaceable == r->totals.jobs);
        CHECK(r->totals.utilization > 0.0);
    }
    // Topology awareness: best-fit splits no job that fits in one rack;
    // first-fit, blind to racks, splits some.
    CHECK(bf.totals.split_jobs == 0.0);
    CHECK(ff.totals.split_jobs > 0.0);
}

}  // namespace

TEST_CASE("replays the shared Helios trace") { replay_shared("helios_dirlab15k.csv", 12); }

TEST_CASE("replays the shared Philly trace") { replay_shared("philly_dirlab15k.csv", 9); }

}  // namespace test_sim_shared_traces_replay
