#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/report.hpp>
#include <topoblock/sim/samples_csv.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace test_sim_samples_csv {

using namespace topoblock;
using namespace topoblock::sim;

namespace {

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields(1);
    for (const char c : line) {
        if (c == ',') fields.emplace_back();
        else fields.back().push_back(c);
    }
    return fields;
}

// The lines of a CSV (no quoted line breaks in these files), each split at
// its commas (no quoted commas either).
std::vector<std::vector<std::string>> rows_of(const std::string& csv) {
    std::vector<std::vector<std::string>> rows;
    std::size_t from = 0;
    for (std::size_t end = csv.find('\n'); end != std::string::npos; from = end + 1, end = csv.find('\n', from))
        rows.push_back(split_fields(csv.substr(from, end - from)));
    CHECK(from == csv.size());  // every line ends with a line break
    return rows;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
    for (std::size_t c = 0; c < header.size(); ++c)
        if (header[c] == name) return c;
    FAIL("no column " << name);
    return 0;
}

// The allocatable jobs by size at the moment of `snapshot`, counted from
// its cells: per domain its free GPUs and its wholly free nodes (a down
// node's cells are -1), each divided by the size.
std::vector<std::uint64_t> recount(const topology& topo, const occupancy_snapshot& snapshot) {
    std::vector<std::uint64_t> out(topo.max_domain_gpus() + topo.max_domain_nodes(), 0);
    for (domain_id d = 0; d < topo.domain_count(); ++d) {
        const auto& info = topo.domain(d);
        std::uint64_t free_gpus = 0, free_nodes = 0;
        for (node_id n = info.first_node; n < info.end_node(); ++n) {
            std::uint64_t here = 0;
            for (std::uint32_t g = 0; g < topo.node(n).gpus; ++g) here += snapshot.cells.at(topo.node(n).first_gpu + g).job_gpus == 0;
            free_gpus += here;
            free_nodes += here == topo.node(n).gpus;
        }
        for (std::uint64_t s = 1; s <= topo.max_domain_gpus(); ++s) out[s - 1] += free_gpus / s;
        for (std::uint64_t k = 1; k <= topo.max_domain_nodes(); ++k) out[topo.max_domain_gpus() + k - 1] += free_nodes / k;
    }
    return out;
}

workload jobs_of(std::vector<job> jobs) {
    workload w{"hand", std::move(jobs)};
    number_and_sort(w);
    return w;
}

}  // namespace

TEST_CASE("the samples hold the allocatable jobs by size of their moment, by hand") {
    // 2 domains of 2 nodes x 4 GPUs. j0 fills d01 until t=2; j1 (3 GPUs)
    // and j2 (1 GPU, until t=1) fill one node of d02 between them; j3 at
    // t=4 sets the arrival window to [0, 4]: samples at 0.5, 1.5, 2.5, 3.5.
    const topology topo = *parse_topology_spec("grid:2:2:4");
    engine_options options;
    options.fragmentation_samples = 4;
    const auto w = jobs_of({{0, 0, 8, 0, 2}, {0, 0, 3, 0, 10}, {0, 0, 1, 0, 1}, {0, 4, 1, 0, 1}});
    const auto r = simulate(*allocator<best_fit>::create(topo), w, options);
    REQUIRE(r.fragmentation.size() == 4);
    using counts = std::vector<std::uint64_t>;
    // t=0.5: d02 has one wholly free node (4 GPUs).
    CHECK(r.fragmentation[0].allocatable.gpus == counts{4, 2, 1, 1, 0, 0, 0, 0});
    CHECK(r.fragmentation[0].allocatable.nodes == counts{1, 0});
    // t=1.5: j2 gone, d02 has 5 free GPUs, still one free node.
    CHECK(r.fragmentation[1].allocatable.gpus == counts{5, 2, 1, 1, 1, 0, 0, 0});
    CHECK(r.fragmentation[1].allocatable.nodes == counts{1, 0});
    // t=2.5 and 3.5: j0 gone too: d01 wholly free (8 GPUs, 2 nodes) beside
    // d02's 5 GPUs and 1 node.
    for (const std::size_t i : {2, 3}) {
        CAPTURE(i);
        CHECK(r.fragmentation[i].allocatable.gpus == counts{13, 6, 3, 3, 2, 1, 1, 1});
        CHECK(r.fragmentation[i].allocatable.nodes == counts{3, 1});
    }

    // The CSV: a header, a row per sample; the settings as format_csv
    // writes them, then the moment's figures.
    run_settings settings;
    settings.workload = "hand";
    settings.topology = "grid:2:2:4";
    settings.seed = 3;
    const std::vector<policy_result> results{r};
    const std::string csv = format_samples_csv(results, topo, settings);
    const auto rows = rows_of(csv);
    REQUIRE(rows.size() == 5);
    CHECK(csv.substr(0, csv.find('\n')) ==
          "policy,queue,workload,topology,offered_load,seed,locality,comm_share,node_mtbf_hours,repair_hours,"
          "t_s,external_fragmentation,occupied_domains,fewest_domains,"
          "jobs_1gpu,jobs_2gpu,jobs_3gpu,jobs_4gpu,jobs_5gpu,jobs_6gpu,jobs_7gpu,jobs_8gpu,jobs_1node,jobs_2node");
    // The run's columns are format_csv's, field for field.
    const auto per_policy = rows_of(format_csv(results, settings));
    REQUIRE(per_policy.size() == 2);
    const std::vector<std::string> run_fields(per_policy[1].begin(), per_policy[1].begin() + 10);
    CHECK(run_fields == std::vector<std::string>{"best-fit", "easy", "hand", "grid:2:2:4", "0", "3", "", "0", "0", "0"});
    const auto& header = rows[0];
    CHECK(std::vector<std::string>(header.begin(), header.begin() + 10) ==
          std::vector<std::string>(per_policy[0].begin(), per_policy[0].begin() + 10));
    for (std::size_t i = 0; i < 4; ++i) {
        CAPTURE(i);
        const auto& row = rows[i + 1];
        REQUIRE(row.size() == header.size());
        CHECK(std::vector<std::string>(row.begin(), row.begin() + 10) == run_fields);
        CHECK(row[column(header, "t_s")] == std::to_string(i) + ".5");
        CHECK(row[column(header, "occupied_domains")] == (i < 2 ? "2" : "1"));
        CHECK(row[column(header, "fewest_domains")] == (i < 2 ? "2" : "1"));
        CHECK(std::stod(row[column(header, "external_fragmentation")]) == r.fragmentation[i].value);
        CHECK(row[column(header, "jobs_1gpu")] == std::to_string(r.fragmentation[i].allocatable.gpus[0]));
        CHECK(row[column(header, "jobs_5gpu")] == (i == 0 ? "0" : i == 1 ? "1" : "2"));
        CHECK(row[column(header, "jobs_2node")] == (i < 2 ? "0" : "1"));
    }
}

TEST_CASE("every sample row's counts match a recount of the cluster at its moment") {
    // Racks beside 8-GPU servers, failures on: the snapshot of a replay
    // taken at a sample's moment shows who held what then.
    const topology topo = *parse_topology_spec("nvl72:2+hgx8:3");
    generate_options g;
    g.jobs = 300;
    g.cluster_gpus = topo.gpu_count();
    g.seed = 11;
    const auto w = generate(helios_mix(), g);
    engine_options options;
    options.fragmentation_samples = 6;
    options.failures.node_mtbf_hours = 300.0;
    std::vector<policy_result> results;
    results.push_back(simulate(*allocator<best_fit>::create(topo), w, options));
    results.push_back(simulate(*allocator<first_fit>::create(topo), w, options));
    const std::string csv = format_samples_csv(results, topo, {});
    const auto rows = rows_of(csv);
    REQUIRE(rows.size() == 1 + 2 * 6);
    const auto& header = rows[0];
    const std::size_t first_count = column(header, "jobs_1gpu");
    CHECK(header.size() == first_count + 72 + 18);
    CHECK(header.back() == "jobs_18node");
    bool some_held = false, some_free = false;
    for (std::size_t row = 1; row < rows.size(); ++row) {
        CAPTURE(row);
        const std::size_t p = (row - 1) / 6, i = (row - 1) % 6;
        REQUIRE(rows[row].size() == header.size());
        CHECK(rows[row][0] == results[p].policy);
        const double t = results[p].fragmentation[i].t;
        CHECK(std::stod(rows[row][column(header, "t_s")]) == t);
        engine_options at = options;
        at.snapshot_s = t;
        const auto again = p == 0 ? simulate(*allocator<best_fit>::create(topo), w, at)
                                  : simulate(*allocator<first_fit>::create(topo), w, at);
        REQUIRE(again.snapshot.t == t);
        const auto expected = recount(topo, again.snapshot);
        std::vector<std::uint64_t> written;
        for (std::size_t c = first_count; c < header.size(); ++c) written.push_back(std::stoull(rows[row][c]));
        CHECK(written == expected);
        some_held = some_held || expected[0] < topo.gpu_count();
        some_free = some_free || expected[0] > 0;
    }
    CHECK(some_held);  // the check saw a cluster in use ...
    CHECK(some_free);  // ... and with room
}

TEST_CASE("samples of another topology are refused, naming the policy and the sample") {
    const topology topo = *parse_topology_spec("grid:2:2:4");
    policy_result r;
    r.policy = "best-fit";
    r.fragmentation.resize(2);
    r.fragmentation[0].allocatable.gpus.assign(8, 0);
    r.fragmentation[0].allocatable.nodes.assign(2, 0);
    r.fragmentation[1].allocatable.gpus.assign(72, 0);
    r.fragmentation[1].allocatable.nodes.assign(18, 0);
    const std::vector<policy_result> results{r};
    CHECK_THROWS_WITH_AS(format_samples_csv(results, topo),
                         "format_samples_csv: policy 'best-fit', sample 1: counts for 72 GPU and 18 node sizes, but the "
                         "topology's largest domain has 8 GPUs and 2 nodes",
                         std::invalid_argument);
    // No samples: the header alone, its columns from the topology.
    r.fragmentation.clear();
    const std::vector<policy_result> none{r};
    CHECK(format_samples_csv(none, topo).ends_with(",jobs_8gpu,jobs_1node,jobs_2node\n"));
}

}  // namespace test_sim_samples_csv
