#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/report.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace test_sim_report {

using namespace topoblock;
using namespace topoblock::sim;

namespace {

struct outputs {
    std::string table, csv, svg;
    std::vector<policy_result> results;
};

// A small comparison with failures on: everything the command prints.
outputs compare(std::uint64_t seed) {
    const topology topo = gb200_nvl72(2);
    generate_options g;
    g.jobs = 600;
    g.cluster_gpus = topo.gpu_count();
    g.seed = seed;
    const auto w = generate(helios_mix(), g);
    engine_options options;
    options.seed = seed;
    options.failures.node_mtbf_hours = 500.0;
    options.fragmentation_samples = 10;
    outputs out;
    out.results.push_back(simulate(*allocator<first_fit>::create(topo), w, options));
    out.results.push_back(simulate(*allocator<best_fit>::create(topo), w, options));
    out.table = format_table(out.results, "title");
    out.csv = format_csv(out.results);
    out.svg = render_svg(out.results, topo, {"t", "s", 0.85});
    return out;
}

// The field `name` of the CSV's row for `policy` (plain fields only).
std::string csv_field(const std::string& csv, const std::string& policy, const std::string& name) {
    const auto split = [](const std::string& line) {
        std::vector<std::string> fields(1);
        for (const char c : line) {
            if (c == ',') fields.emplace_back();
            else fields.back().push_back(c);
        }
        return fields;
    };
    const auto header = split(csv.substr(0, csv.find('\n')));
    const auto at = csv.find("\n" + policy + ",");
    REQUIRE(at != std::string::npos);
    const auto row = split(csv.substr(at + 1, csv.find('\n', at + 1) - at - 1));
    REQUIRE(row.size() == header.size());
    const auto column = std::find(header.begin(), header.end(), name);
    REQUIRE(column != header.end());
    return row[static_cast<std::size_t>(column - header.begin())];
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("the same seed gives the same bytes, and another seed does not") {
    const auto a = compare(7), b = compare(7), c = compare(8);
    CHECK(a.table == b.table);
    CHECK(a.csv == b.csv);
    CHECK(a.svg == b.svg);
    CHECK(a.csv != c.csv);
    for (const auto& r : a.results) {
        CHECK(r.totals.conserved);
        // Every job ends: done, or given up after max_requeues failures
        // (first-fit loses three long jobs so at seed 7).
        CHECK(r.totals.running + r.totals.waiting + r.totals.unplaceable == 0);
        CHECK(r.totals.completed + r.totals.abandoned == 600);
        CHECK(r.totals.completed >= 590);
    }
    CHECK(a.results[0].totals.requeues > 0);  // the failures did hit jobs
}

TEST_CASE("table, CSV and SVG carry every policy") {
    const auto a = compare(3);
    CHECK(a.table.starts_with("title\n\npolicy"));
    CHECK(a.table.find("first-fit") != std::string::npos);
    CHECK(a.table.find("best-fit") != std::string::npos);
    CHECK(a.table.find("WARNING") == std::string::npos);
    // CSV: a header and one row per policy, all with the same number of fields.
    CHECK(count(a.csv, "\n") == 3);
    const auto fields = count(a.csv.substr(0, a.csv.find('\n')), ",");
    for (std::size_t at = a.csv.find('\n') + 1; at < a.csv.size(); at = a.csv.find('\n', at) + 1)
        CHECK(count(a.csv.substr(at, a.csv.find('\n', at) - at), ",") == fields);
    // Every job on the books; jobs given up after repeated failures (a
    // Helios tail job runs for days) are the last field and a NOTE line.
    for (const auto& r : a.results) {
        CAPTURE(r.policy);
        const auto& s = r.totals;
        CHECK(s.completed + s.abandoned == 600);
        const std::string row = r.policy + ",easy,,,0,0,,0,0,0,600," + std::to_string(s.completed) + ",0,0,0,0,true,";
        CHECK(a.csv.find(row) != std::string::npos);
        CHECK(csv_field(a.csv, r.policy, "abandoned") == std::to_string(s.abandoned));
        CHECK((a.table.find("NOTE " + r.policy + ": ") != std::string::npos) == (s.abandoned != 0));
    }
    CHECK(a.csv.starts_with("policy,queue,workload,topology,offered_load,seed,locality,comm_share,node_mtbf_hours,"
                            "repair_hours,jobs,completed,"));
    CHECK(a.csv.substr(0, a.csv.find('\n')).ends_with(",requeues,abandoned,wait_mean_s,extra_domain_jobs"));
    // SVG: three curves per policy (held, useful, fragmentation), one heat
    // map per policy.
    CHECK(a.svg.starts_with("<svg"));
    CHECK(a.svg.ends_with("</svg>\n"));
    CHECK(count(a.svg, "<polyline") == 6);
    CHECK(count(a.svg, "occupancy</title>") == 2);
}

TEST_CASE("the snapshot holds every GPU") {
    const auto a = compare(5);
    for (const auto& r : a.results) {
        CHECK(r.snapshot.t >= 0.0);
        CHECK(r.snapshot.cells.size() == 144);
        const auto held = std::count_if(r.snapshot.cells.begin(), r.snapshot.cells.end(),
                                        [](const auto& c) { return c.job_gpus > 0; });
        CHECK(held > 0);
    }
    // best-fit never splits a job that fits in one rack.
    for (const auto& c : a.results[1].snapshot.cells) CHECK(!c.split);
}

TEST_CASE("percentiles by nearest rank") {
    std::vector<double> v{5, 1, 4, 2, 3};
    CHECK(percentile(v, 50) == 3);
    CHECK(percentile(v, 95) == 5);
    CHECK(percentile(v, 0) == 1);
    std::vector<double> none;
    CHECK(percentile(none, 50) == 0);
}

// Against the definition: sort, then take the value at rank ceil(p% of n),
// at least the first. Repeated values and calls on one vector included, as
// the summary asks three percentiles of the same waits in turn.
TEST_CASE("percentiles by nearest rank match a sorted reference") {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 300; ++round) {
        const std::size_t n = 1 + rng() % 300;
        std::vector<double> values(n);
        const std::uint64_t distinct = 1 + rng() % 50;
        for (double& v : values) v = static_cast<double>(rng() % distinct) * 0.5;
        std::vector<double> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        for (const double p : {0.0, 1.0, 50.0, 95.0, 99.0, 100.0, static_cast<double>(rng() % 10001) / 100.0}) {
            const double rank = std::ceil(p / 100.0 * static_cast<double>(n));
            const std::size_t index = rank < 1.0 ? 0 : static_cast<std::size_t>(rank) - 1;
            CHECK(percentile(values, p) == sorted[std::min(index, n - 1)]);
        }
    }
}

TEST_CASE("the table fits 100 columns, and the CSV carries the run's settings on every row") {
    auto a = compare(4);
    // The longest name the table is laid out for.
    a.results[0].policy = "a-policy-of-20-chars";
    const std::string table = format_table(a.results);
    for (std::size_t at = 0; at < table.size();) {
        const auto next = table.find('\n', at);
        CAPTURE(table.substr(at, next - at));
        CHECK(next - at <= 100);
        at = next + 1;
    }
    CHECK(table.starts_with("policy                useful   held  ext-frag  wait-mean  wait-p95"));
    run_settings settings;
    settings.workload = "my \"trace\", v2.csv";
    settings.topology = "nvl72:8+hgx8:4";
    settings.offered_load = 0.95;
    settings.seed = 12;
    settings.locality = "require";
    settings.comm_share = 0.05;
    settings.node_mtbf_hours = 1000;
    settings.repair_hours = 4;
    const std::string csv = format_csv(a.results, settings);
    // The workload is quoted, its quotes doubled: each row then reads as
    // the header's number of fields.
    CHECK(count(csv, "a-policy-of-20-chars,easy,\"my \"\"trace\"\", v2.csv\",nvl72:8+hgx8:4,0.95,12,require,0.05,1000,4,600,") == 1);
    CHECK(count(csv, "best-fit,easy,\"my \"\"trace\"\", v2.csv\",nvl72:8+hgx8:4,0.95,12,require,0.05,1000,4,600,") == 1);
}

TEST_CASE("mean wait, split jobs and extra-domain jobs follow the outcomes") {
    // A cluster of 2 racks, first-fit (blind to racks): it splits jobs that
    // fit one rack, and places 80-GPU jobs on more racks than they need
    // only if the racks are 3 or more, so use 3.
    const topology topo = gb200_nvl72(3);
    std::mt19937_64 rng(21);
    for (int round = 0; round < 4; ++round) {
        workload w{"random", {}};
        double t = 0.0;
        for (std::size_t i = 0; i < 300; ++i) {
            t += static_cast<double>(rng() % 600);
            const std::uint32_t gpus = rng() % 5 == 0 ? 73 + static_cast<std::uint32_t>(rng() % 60) : 1 + static_cast<std::uint32_t>(rng() % 40);
            w.jobs.push_back(job{i, t, gpus, 0, static_cast<double>(60 + rng() % 7200)});
        }
        engine_options options;
        options.cost.comm_share = 0.0;
        options.fragmentation_samples = 2;
        const auto r = simulate(*allocator<first_fit>::create(topo), w, options);
        // The reference: straight from the definitions.
        double waits = 0.0;
        std::size_t started = 0, small = 0, split = 0, large = 0, extra = 0;
        for (const auto& j : r.jobs) {
            if (j.state != job_state::completed && j.state != job_state::running) continue;
            ++started;
            waits += j.wait_s;
            const bool fits_one = j.min_domains == 1;
            (fits_one ? small : large) += 1;
            if (j.domains > j.min_domains) (fits_one ? split : extra) += 1;
        }
        REQUIRE(started > 0);
        CHECK(r.totals.wait_mean_s == doctest::Approx(waits / static_cast<double>(started)));
        CHECK(r.totals.split_jobs == doctest::Approx(static_cast<double>(split) / static_cast<double>(small)));
        CHECK(r.totals.extra_domain_jobs ==
              doctest::Approx(large == 0 ? 0.0 : static_cast<double>(extra) / static_cast<double>(large)));
        CHECK(split > 0);  // first-fit does split here: the checks above could fail
    }
}

TEST_CASE("the picture's time axis is not set by one policy that runs far longer") {
    std::vector<policy_result> results(4);
    for (std::size_t i = 0; i < results.size(); ++i) results[i].totals.makespan_s = 1000.0 + 10.0 * static_cast<double>(i);
    CHECK(sim::detail::time_axis_end(results) == 1030.0);
    results[3].totals.makespan_s = 50000.0;  // starved by failures, say
    CHECK(sim::detail::time_axis_end(results) == 1020.0);
    results.resize(1);
    CHECK(sim::detail::time_axis_end(results) == 1000.0);
    CHECK(sim::detail::time_axis_end({}) == 0.0);
}

TEST_CASE("the picture labels both time axes and names the late policy") {
    auto a = compare(6);
    const topology topo = gb200_nvl72(2);
    const std::string label = a.results.front().totals.makespan_s >= 3 * 86400.0 ? "time (days)" : "time (hours)";
    CHECK(count(a.svg, label) == 2);
    a.results[1].totals.makespan_s = 40 * a.results[0].totals.makespan_s;
    const std::string svg = render_svg(a.results, topo, {"t", "s", 0.85});
    CHECK(svg.find("best-fit (to ") != std::string::npos);
}

TEST_CASE("the settings and the title of a run") {
    failure_model failures;
    failures.repair_hours = 6.0;
    auto settings = settings_of_run("helios", "nvl72:2", 0.85, 3, locality::prefer, 0.1, failures);
    CHECK(settings.locality == "prefer");
    CHECK(settings.node_mtbf_hours == 0.0);
    CHECK(settings.repair_hours == 0.0);  // no failures: the repair time changes nothing
    failures.node_mtbf_hours = 500.0;
    settings = settings_of_run("helios", "nvl72:2", 0.85, 3, locality::require, 0.1, failures);
    CHECK(settings.repair_hours == 6.0);
    CHECK(settings.seed == 3);
    const topology topo = gb200_nvl72(2);
    CHECK(comparison_title("w", 0.85, 0.79, "nvl72:2", topo, "fifo") ==
          "w at 85% (this draw: 79%) offered load\non nvl72:2 (144 GPUs in 2 NVLink domains), FIFO");
    CHECK(comparison_title("w", 0.0, 0.0, "c", topo, "easy") ==
          "w at ? offered load\non c (144 GPUs in 2 NVLink domains), EASY backfill");
}

}  // namespace test_sim_report
