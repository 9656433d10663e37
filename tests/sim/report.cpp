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
        const std::string row = r.policy + ",easy,600," + std::to_string(s.completed) + ",0,0,0,0,true,";
        const auto at = a.csv.find(row);
        REQUIRE(at != std::string::npos);
        CHECK(a.csv.substr(0, a.csv.find('\n', at)).ends_with("," + std::to_string(s.abandoned)));
        CHECK((a.table.find("NOTE " + r.policy + ": ") != std::string::npos) == (s.abandoned != 0));
    }
    CHECK(a.csv.starts_with("policy,queue,jobs,completed,"));
    CHECK(a.csv.substr(0, a.csv.find('\n')).ends_with(",requeues,abandoned"));
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
