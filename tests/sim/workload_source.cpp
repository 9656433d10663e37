// Workloads as a command line or a script names them (sim/workload_source.hpp).

#include <topoblock/sim/workload_source.hpp>

#include "../scratch_file.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <string>

namespace test_sim_workload_source {

using namespace topoblock::sim;

namespace {

loaded_workload load_ok(const workload_source& source, std::uint64_t gpus) {
    auto loaded = load_workload(source, gpus);
    REQUIRE_MESSAGE(loaded.has_value(), (loaded ? std::string() : loaded.error().to_string()));
    return std::move(loaded).value();
}

std::string load_error(const workload_source& source, std::uint64_t gpus) {
    const auto loaded = load_workload(source, gpus);
    REQUIRE_FALSE(loaded.has_value());
    return loaded.error().to_string();
}

bool same_jobs(const workload& a, const workload& b) {
    if (a.jobs.size() != b.jobs.size()) return false;
    for (std::size_t i = 0; i < a.jobs.size(); ++i)
        if (a.jobs[i].submit_s != b.jobs[i].submit_s || a.jobs[i].gpus != b.jobs[i].gpus ||
            a.jobs[i].duration_s != b.jobs[i].duration_s || a.jobs[i].nodes != b.jobs[i].nodes)
            return false;
    return true;
}

}  // namespace

TEST_CASE("workload source: a mix name draws the synthetic mix at the load asked") {
    workload_source s;
    s.name = "philly";
    s.jobs = 500;
    s.seed = 9;
    const loaded_workload a = load_ok(s, 144);
    CHECK_FALSE(a.trace);
    CHECK(a.description == "philly-like synthetic mix, 500 jobs");
    CHECK(a.offered_load == default_offered_load);
    CHECK(a.realized_load == offered_load(a.jobs, 144));
    CHECK(a.realized_load > 0.0);
    // The draw is generate()'s, with the same options.
    generate_options g;
    g.jobs = 500;
    g.offered_load = default_offered_load;
    g.cluster_gpus = 144;
    g.seed = 9;
    CHECK(same_jobs(a.jobs, generate(*find_mix("philly"), g)));

    s.load = 0.5;
    const loaded_workload b = load_ok(s, 144);
    CHECK(b.offered_load == 0.5);
    // Half the load: arrivals spread about 1.7 times as far.
    CHECK(b.jobs.jobs.back().submit_s > a.jobs.jobs.back().submit_s);
}

TEST_CASE("workload source: a trace is read, its bad rows kept, and rescaled when a load is asked") {
    const topoblock::test::scratch_file file("source.csv",
                                             "submit_time_s,gpus,duration_s\n0,8,100\n5,x,1\n100,8,100\n");
    workload_source s;
    s.name = file.string();
    s.jobs = 3;  // ignored: a trace has its own jobs
    const loaded_workload kept = load_ok(s, 16);
    CHECK(kept.trace);
    CHECK(kept.jobs.jobs.size() == 2);
    CHECK(kept.bad_row_count == 1);
    REQUIRE(kept.bad_rows.size() == 1);
    CHECK(kept.bad_rows[0].line == 3);
    CHECK(kept.offered_load == doctest::Approx(1.0));  // 1600 GPU-s over 100 s of 16 GPUs
    CHECK(kept.realized_load == 0.0);
    CHECK(kept.description == kept.jobs.name + " trace, 2 jobs");
    CHECK(kept.jobs.jobs[1].submit_s == 100.0);

    s.load = 0.25;
    const loaded_workload scaled = load_ok(s, 16);
    CHECK(scaled.offered_load == 0.25);
    CHECK(scaled.jobs.jobs[1].submit_s == doctest::Approx(400.0));
    CHECK(offered_load(scaled.jobs, 16) == doctest::Approx(0.25));
}

TEST_CASE("workload source: refusals name what was wrong") {
    workload_source s;
    s.jobs = 0;
    CHECK(load_error(s, 72).find("from 1 to 100000000 jobs, not 0") != std::string::npos);
    s.jobs = max_synthetic_jobs + 1;
    CHECK(load_error(s, 72).find("not 100000001") != std::string::npos);
    s.jobs = 10;
    CHECK(load_error(s, 0).find("no GPU") != std::string::npos);
    s.load_name = "--load";
    for (const double bad : {0.0, -1.0, max_offered_load * 2, std::numeric_limits<double>::quiet_NaN()}) {
        s.load = bad;
        CHECK(load_error(s, 72) == "--load must be above 0 and at most 1000");
    }
    s.load = max_offered_load;
    CHECK(load_workload(s, 72).has_value());

    // A trace all submitted at one moment has no load to rescale.
    const topoblock::test::scratch_file burst("burst.csv", "submit_time_s,gpus,duration_s\n0,8,100\n0,8,100\n");
    s.name = burst.string();
    s.load = std::nullopt;
    CHECK(load_ok(s, 16).offered_load == 0.0);
    s.load = 0.5;
    CHECK(load_error(s, 16).find("--load does not apply: every job is submitted at the same moment") !=
          std::string::npos);

    s.name = "no-such-mix-or-file.csv";
    CHECK(load_error(s, 16).find("no-such-mix-or-file.csv") != std::string::npos);

    // The small-job share: synthetic mixes only, from 0 to 1.
    s.name = burst.string();
    s.load = std::nullopt;
    s.small_share = 0.3;
    CHECK(load_error(s, 16).find("the small-job share applies to synthetic mixes") != std::string::npos);
    s.name = "llm";
    s.small_share = 1.5;
    CHECK(load_error(s, 16).find("the small-job share must be from 0 to 1") != std::string::npos);
}

TEST_CASE("workload source: a small-job share reweights the mix and says so") {
    workload_source s;
    s.name = "llm";
    s.jobs = 4000;
    s.small_share = 0.6;
    const auto loaded = load_ok(s, 72 * 16);
    CHECK(loaded.description == "llm-like synthetic mix, 4000 jobs, 60% under 8 GPUs");
    std::size_t small = 0;
    for (const auto& j : loaded.jobs.jobs) small += j.gpus < 8;
    CHECK(std::abs(static_cast<double>(small) / 4000.0 - 0.6) < 0.03);
    s.small_share = std::nullopt;
    small = 0;
    for (const auto& j : load_ok(s, 72 * 16).jobs.jobs) small += j.gpus < 8;
    CHECK(static_cast<double>(small) / 4000.0 < 0.3);  // the llm mix's own: 14/99 of its jobs
}

}  // namespace test_sim_workload_source
