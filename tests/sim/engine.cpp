#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace test_sim_engine {

using namespace topoblock;
using namespace topoblock::sim;

namespace {

// 2 domains of 2 nodes x 4 GPUs: 16 GPUs, 8 per domain.
topology tiny() {
    auto t = parse_topology_spec("grid:2:2:4");
    REQUIRE(t.has_value());
    return std::move(t).value();
}

workload jobs_of(std::vector<job> jobs) {
    workload w{"hand", std::move(jobs)};
    number_and_sort(w);
    return w;
}

template <class Policy = best_fit, class Queue = easy_backfill>
policy_result replay(const workload& w, engine_options options = {}, Queue queue = {}) {
    auto a = allocator<Policy>::create(tiny());
    REQUIRE(a.has_value());
    return simulate(std::move(*a), w, options, queue);
}

// The hand-checked timeline of docs/simulate.md:
//   j0  t=0  8 GPUs 10 s   j1  t=0  8 GPUs 5 s    j2  t=1 16 GPUs 2 s
//   j3  t=2  4 GPUs  3 s   j4  t=6  4 GPUs 10 s   j5  t=7 32 GPUs (larger than the cluster)
workload hand() {
    return jobs_of({{0, 0, 8, 0, 10}, {0, 0, 8, 0, 5}, {0, 1, 16, 0, 2}, {0, 2, 4, 0, 3}, {0, 6, 4, 0, 10}, {0, 7, 32, 0, 1}});
}

void check_job(const policy_result& r, std::size_t j, double start, double end) {
    CAPTURE(j);
    CHECK(r.jobs[j].state == job_state::completed);
    CHECK(r.jobs[j].start_s == start);
    CHECK(r.jobs[j].end_s == end);
}

}  // namespace

TEST_CASE("hand-checked replay under EASY backfill") {
    const auto r = replay(hand());
    check_job(r, 0, 0, 10);
    check_job(r, 1, 0, 5);
    // j2 needs the whole cluster: reserved for t=10, when j0 ends.
    check_job(r, 2, 10, 12);
    CHECK(r.jobs[2].reserved_s == 10);
    // j3 starts at 5 in j1's room and ends at 8, before the reservation.
    check_job(r, 3, 5, 8);
    // j4 would run past 10 on GPUs j2 needs: it waits for j2.
    check_job(r, 4, 12, 22);
    CHECK(r.jobs[5].state == job_state::unplaceable);
    CHECK(r.jobs[5].reason == errc::exceeds_cluster);
    CHECK(r.totals.conserved);
    CHECK(r.totals.completed == 5);
    CHECK(r.totals.unplaceable == 1);
    CHECK(r.totals.makespan_s == 22);
    CHECK(r.jobs[3].wait_s == 3);
    CHECK(r.jobs[4].wait_s == 6);
    // What each wait was about: j2 found too few GPUs free; j3 and j4
    // waited their turn (nothing free to backfill, or a run past the
    // reservation); j0 and j1 never waited.
    CHECK(r.jobs[0].longest_wait_reason == errc::ok);
    CHECK(r.jobs[2].longest_wait_reason == errc::insufficient_free);
    CHECK(r.jobs[3].longest_wait_reason == errc::ok);
    CHECK(r.jobs[4].longest_wait_reason == errc::ok);
    CHECK(r.policy == "best-fit");
    CHECK(r.queue == "easy");
}

TEST_CASE("a job's longest wait reason is the answer it got for the longest time") {
    // j0, j1 leave 2 GPUs free in each domain: j2's 4 GPUs are free in all
    // but in no one domain (fragmented) until t=10; then j3 (16 GPUs) finds
    // 8 free while j2 runs (insufficient_free) until t=30, 20 s against the
    // 9 s it waited behind j2's refusal.
    const auto r = replay(jobs_of({{0, 0, 6, 0, 10}, {0, 0, 6, 0, 10}, {0, 1, 4, 0, 20}, {0, 1, 16, 0, 1}}));
    check_job(r, 2, 10, 30);
    check_job(r, 3, 30, 31);
    CHECK(r.jobs[2].wait_s == 9);
    CHECK(r.jobs[2].longest_wait_reason == errc::fragmented);
    CHECK(r.jobs[3].wait_s == 29);
    CHECK(r.jobs[3].longest_wait_reason == errc::insufficient_free);
    CHECK(r.jobs[0].longest_wait_reason == errc::ok);
}

TEST_CASE("the fragmentation samples carry the compaction of their moment") {
    // j0 (5 GPUs) and j2 (2) share d01, j1 (4) takes d02; after j0 ends at
    // t=1, 6 GPUs held on both domains would fit one.
    engine_options options;
    options.fragmentation_samples = 4;  // t = 0.5, 1.5, 2.5, 3.5
    const auto r = replay(jobs_of({{0, 0, 5, 0, 1}, {0, 0, 4, 0, 10}, {0, 0, 2, 0, 10}, {0, 4, 1, 0, 1}}), options);
    REQUIRE(r.fragmentation.size() == 4);
    CHECK(r.fragmentation[0].t == 0.5);
    CHECK(r.fragmentation[0].occupied_domains == 2);
    CHECK(r.fragmentation[0].fewest_domains == 2);  // 11 GPUs
    CHECK(r.fragmentation[1].occupied_domains == 2);
    CHECK(r.fragmentation[1].fewest_domains == 1);  // 6 GPUs
}

TEST_CASE("hand-checked replay under FIFO") {
    const auto r = replay(hand(), {}, fifo{});
    check_job(r, 0, 0, 10);
    check_job(r, 1, 0, 5);
    check_job(r, 2, 10, 12);
    check_job(r, 3, 12, 15);
    check_job(r, 4, 12, 22);
    CHECK(r.jobs[2].reserved_s < 0);  // FIFO promises nothing
    CHECK(r.totals.conserved);
    CHECK(r.queue == "fifo");
}

namespace {

constexpr std::uint32_t unseen = ~std::uint32_t{0};

// Records the class the engine gave each job it finds queued, then starts
// what FIFO would.
struct class_recorder {
    std::vector<std::uint32_t>* classes;  // [job], unseen until queued
    std::uint32_t* count;
    std::string_view name() const noexcept { return "class-recorder"; }
    template <class Ctx>
    void schedule(Ctx& ctx) const {
        *count = ctx.request_classes();
        for (const std::uint32_t j : ctx.queue())
            if (ctx.waiting(j)) (*classes)[j] = ctx.request_class(j);
        fifo{}.schedule(ctx);
    }
};

}  // namespace

TEST_CASE("request classes: equal requests share a number, distinct requests do not, numbers are dense") {
    std::mt19937_64 rng(5);
    std::vector<job> jobs;
    for (std::uint32_t i = 0; i < 3000; ++i) jobs.push_back({0, i * 0.5, static_cast<std::uint32_t>(1 + rng() % 16), 0, 1.0});
    const workload w = jobs_of(std::move(jobs));
    // Requests that differ in each field, GPU counts alike.
    engine_options options;
    options.to_request = [](const job& j) {
        request r = request::gpus(j.gpus);
        if (j.id % 3 == 1) r = r.with_locality(locality::any);
        if (j.id % 5 == 2) r = r.with_whole_nodes();
        if (j.id % 7 == 3 && j.gpus % 2 == 0) r = r.with_segment(j.gpus / 2, j.id % 2 == 0);
        if (j.id % 11 == 4) r = r.with_exclusive_domain();
        if (j.id % 13 == 5) r = request::nodes(1 + j.gpus % 4);
        return r;
    };
    std::vector<std::uint32_t> classes(w.jobs.size(), unseen);
    std::uint32_t count = 0;
    const auto r = replay<best_fit>(w, options, class_recorder{&classes, &count});
    CHECK(r.totals.conserved);
    std::map<request, std::uint32_t> reference;
    std::set<std::uint32_t> seen;
    for (std::size_t j = 0; j < w.jobs.size(); ++j) {
        const request q = options.to_request(w.jobs[j]);
        CAPTURE(j);
        REQUIRE(classes[j] != unseen);
        REQUIRE(classes[j] < count);
        const auto [at, fresh] = reference.try_emplace(q, classes[j]);
        CHECK(at->second == classes[j]);        // equal requests, equal numbers
        CHECK(seen.insert(classes[j]).second == fresh);  // a new request, a new number
    }
    CHECK(count == reference.size());
    CHECK(reference.size() > 100);
}

TEST_CASE("utilization is the time average over the arrival window") {
    // One 8-GPU job from 0 to 10 on 16 GPUs; the last arrival at 10.
    const auto r = replay(jobs_of({{0, 0, 8, 0, 10}, {0, 10, 1, 0, 1}}));
    CHECK(r.totals.utilization == doctest::Approx(0.5));
    CHECK(r.totals.idle_held == 0.0);
    REQUIRE(!r.timeline.empty());
    CHECK(r.timeline.front().held == 8);
    CHECK(r.totals.makespan_s == 11);
}

TEST_CASE("a job split across domains runs slower by the cost model") {
    // first-fit puts the 8-GPU job on GPUs 4..11: two domains where one would do.
    const auto w = jobs_of({{0, 0, 4, 0, 100}, {0, 0, 8, 0, 100}});
    engine_options options;
    options.cost.comm_share = 0.1;
    const auto r = replay<first_fit>(w, options);
    CHECK(r.jobs[1].domains == 2);
    const double factor = options.cost.slowdown(2, 1);
    CHECK(factor == doctest::Approx(1.0 + 0.1 * 0.5 * 17.0));
    CHECK(r.jobs[1].end_s == doctest::Approx(100.0 * factor));
    CHECK(r.totals.comm_lost_gpu_hours == doctest::Approx(8 * 100.0 * (factor - 1.0) / 3600.0));
    CHECK(r.totals.split_jobs == doctest::Approx(0.5));
    // best-fit keeps it in one domain: no loss.
    const auto b = replay(w, options);
    CHECK(b.jobs[1].domains == 1);
    CHECK(b.totals.comm_lost_gpu_hours == 0.0);
    CHECK(b.totals.split_jobs == 0.0);
    // Report-only mode keeps run times.
    options.cost.stretch_runtime = false;
    const auto k = replay<first_fit>(w, options);
    CHECK(k.jobs[1].end_s == 100.0);
    CHECK(k.totals.comm_lost_gpu_hours > 0.0);
}

TEST_CASE("a node failure requeues the jobs it hits, and none is lost") {
    engine_options options;
    options.failures.repair_hours = 0.0;
    // Node 0 (domain 0) fails at t=3 and comes back at t=4.
    options.failures.scheduled = {{3, 0, node_health::down}, {4, 0, node_health::up}};
    const auto r = replay(jobs_of({{0, 0, 8, 0, 10}, {0, 0, 8, 0, 10}}), options);
    CHECK(r.totals.conserved);
    CHECK(r.totals.completed == 2);
    CHECK(r.totals.requeues == 1);
    const auto& hit = r.jobs[0].failures == 1 ? r.jobs[0] : r.jobs[1];
    CHECK(hit.failures == 1);
    // Restarted from scratch when its domain was whole again.
    CHECK(hit.start_s == 4);
    CHECK(hit.end_s == 14);
    CHECK(hit.wait_s == 1);
    CHECK(r.totals.failure_lost_gpu_hours == doctest::Approx(8 * 3 / 3600.0));
}

TEST_CASE("a job cut short by failures more often than max_requeues is given up") {
    engine_options options;
    options.failures.repair_hours = 0.0;
    // Node 0 fails at 1, 3, 5, 7 and is back a second later each time.
    for (double t : {1.0, 3.0, 5.0, 7.0})
        for (const auto& e : {node_event{t, 0, node_health::down}, node_event{t + 1, 0, node_health::up}})
            options.failures.scheduled.push_back(e);
    // j0 needs every GPU for 10 s; j1 arrives once j0 is given up.
    const auto w = jobs_of({{0, 0, 16, 0, 10}, {0, 5.5, 4, 0, 1}});
    options.max_requeues = 2;
    const auto r = replay(w, options);
    CHECK(r.totals.conserved);
    CHECK(r.jobs[0].state == job_state::abandoned);
    CHECK(r.jobs[0].failures == 3);  // hit at 1 and 3 and requeued; hit at 5 and given up
    CHECK(r.jobs[0].end_s == 5);
    CHECK(r.totals.abandoned == 1);
    CHECK(r.totals.requeues == 3);
    check_job(r, 1, 5.5, 6.5);
    CHECK(r.totals.failure_lost_gpu_hours == doctest::Approx(16 * 3 / 3600.0));
    // The default (5, Slurm's MaxBatchRequeue) lets it run after four hits.
    options.max_requeues = engine_options{}.max_requeues;
    const auto d = replay(w, options);
    CHECK(d.totals.abandoned == 0);
    check_job(d, 0, 8, 18);
    CHECK(d.jobs[0].failures == 4);
}

TEST_CASE("a replay ends when failures come faster than a job can run") {
    engine_options options;
    options.failures.node_mtbf_hours = 0.001;  // 3.6 s per node: a failure every 0.9 s
    options.failures.repair_hours = 0.0001;
    const auto r = replay(jobs_of({{0, 0, 16, 0, 1000}, {0, 0, 1, 0, 0.01}}), options);
    CHECK(r.totals.conserved);
    CHECK(r.jobs[0].state == job_state::abandoned);
    CHECK(r.jobs[0].failures == options.max_requeues + 1);
    CHECK(r.totals.abandoned + r.totals.completed == 2);
}

TEST_CASE("random failures: conservation and the same schedule for every policy") {
    engine_options options;
    options.failures.node_mtbf_hours = 0.02;  // 72 s: many failures
    options.failures.repair_hours = 0.005;
    std::vector<job> jobs;
    for (std::uint32_t i = 0; i < 60; ++i) jobs.push_back({0, i * 5.0, 1 + i % 8, 0, 30.0 + i % 7 * 10});
    const auto w = jobs_of(jobs);
    // With the default requeue limit some jobs are hit too often and given
    // up; every job is still on the books.
    const auto limited = replay(w, options);
    CHECK(limited.totals.conserved);
    CHECK(limited.totals.abandoned > 0);
    CHECK(limited.totals.completed + limited.totals.abandoned == 60);
    options.max_requeues = 1000;
    const auto b = replay(w, options);
    const auto f = replay<first_fit>(w, options);
    CHECK(b.totals.conserved);
    CHECK(f.totals.conserved);
    CHECK(b.totals.completed == 60);
    CHECK(f.totals.completed == 60);
    CHECK(b.totals.requeues > 0);
}

TEST_CASE("--until stops the replay with jobs running and waiting") {
    engine_options options;
    options.until_s = 6.0;
    const auto r = replay(hand(), options);
    CHECK(r.totals.conserved);
    CHECK(r.totals.completed == 1);  // j1
    CHECK(r.totals.running == 2);    // j0, j3
    CHECK(r.totals.waiting == 2);    // j2, j4 (arrived at 6, not yet started)
    CHECK(r.totals.unplaceable == 0);
    CHECK(r.totals.not_submitted == 1);  // j5 arrives at 7
    CHECK(r.totals.jobs == 6);
}

namespace {

// Every job ended (none running or waiting), the books balance, and the
// timeline holds at most a point per start and per end of an attempt (plus
// the first): 1 + 2 x (jobs + requeues) <= 1 + 2 x jobs x (max_requeues + 2).
void check_ended_and_bounded(const policy_result& r, const engine_options& options) {
    const std::size_t jobs = r.jobs.size();
    CHECK(r.totals.conserved);
    CHECK(r.totals.running == 0);
    CHECK(r.totals.waiting == 0);
    CHECK(r.totals.not_submitted == 0);
    CHECK(r.totals.completed + r.totals.abandoned + r.totals.unplaceable == jobs);
    CHECK(r.totals.requeues <= jobs * (std::uint64_t{options.max_requeues} + 1));
    CHECK(r.timeline.size() <= 1 + 2 * (jobs + r.totals.requeues));
    CHECK(r.timeline.size() <= 1 + 2 * jobs * (std::size_t{options.max_requeues} + 2));
}

// `topoblock simulate --topology nvl72:2 --node-mtbf-hours 1` with few jobs.
policy_result replay_two_racks(const engine_options& options, std::size_t jobs) {
    const auto topo = parse_topology_spec("nvl72:2");
    REQUIRE(topo.has_value());
    const workload w = generate(helios_mix(), {.jobs = jobs, .cluster_gpus = topo->gpu_count(), .seed = 1});
    auto a = allocator<best_fit>::create(*topo);
    REQUIRE(a.has_value());
    return simulate(std::move(*a), w, options);
}

}  // namespace

TEST_CASE("failures every hour, repairs after 1e9 hours: the replay ends, every job ended, the timeline bounded") {
    // Regression: the jobs that need a whole rack waited for 18 nodes up at
    // once, which failures never allowed, and the timeline took a point per
    // node event until memory ran out.
    engine_options options;
    options.failures.node_mtbf_hours = 1;
    options.failures.repair_hours = 1e9;
    const auto r = replay_two_racks(options, 200);
    check_ended_and_bounded(r, options);
    CHECK(r.totals.abandoned > 0);
    CHECK(r.totals.completed > 0);
}

TEST_CASE("failures every hour, repairs in 4 hours: the replay ends, every job ended, the timeline bounded") {
    engine_options options;
    options.failures.node_mtbf_hours = 1;
    options.failures.repair_hours = 4;
    const auto r = replay_two_racks(options, 300);
    check_ended_and_bounded(r, options);
    CHECK(r.totals.abandoned > 0);
    // FIFO too: the stall rule does not depend on the discipline.
    const auto topo = parse_topology_spec("nvl72:2");
    REQUIRE(topo.has_value());
    const workload w = generate(helios_mix(), {.jobs = 300, .cluster_gpus = topo->gpu_count(), .seed = 2});
    const auto f = simulate(*allocator<first_fit>::create(*topo), w, options, fifo{});
    check_ended_and_bounded(f, options);
}

TEST_CASE("a stall is given up one failure-and-repair cycle after it began") {
    engine_options options;
    options.failures.node_mtbf_hours = 1e6;  // no random failure comes in time
    options.failures.repair_hours = 1;
    // Node 0 is down from t=1 and back at t=10 h (the scheduled up), but the
    // stall that begins at 1 s ends one cycle (1e6 + 1 hours) later: the
    // scheduled repair lets the whole-cluster job start long before that.
    options.failures.scheduled = {{1, 0, node_health::down}, {36000, 0, node_health::up}};
    const auto r = replay(jobs_of({{0, 0.5, 16, 0, 10}}), options);
    CHECK(r.jobs[0].failures == 1);
    check_job(r, 0, 36000, 36010);
    // Down for good (no scheduled up; the random repairs of node 0 come a
    // cycle later than the stall's end): given up when the stall ends.
    options.failures.scheduled = {{1, 0, node_health::down}};
    options.failures.node_mtbf_hours = 1e9;
    options.failures.repair_hours = 1e9;
    const auto g = replay(jobs_of({{0, 0.5, 16, 0, 10}}), options);
    CHECK(g.jobs[0].state == job_state::abandoned);
    CHECK(g.jobs[0].reason == errc::exceeds_healthy);
    CHECK(g.jobs[0].end_s == doctest::Approx(1.0 + 2e9 * 3600.0));
}

TEST_CASE("jobs waiting on nodes down for ever end unplaceable, and the jobs behind them still run") {
    engine_options options;
    // Node 0 fails at t=1 and nothing repairs it.
    options.failures.scheduled = {{1, 0, node_health::down}};
    // j0 needs the whole cluster: cut at 1, never placeable again. j1 fits
    // the 12 GPUs left.
    const auto w = jobs_of({{0, 0, 16, 0, 10}, {0, 2, 4, 0, 5}});
    for (const bool easy : {true, false}) {
        CAPTURE(easy);
        const auto r = easy ? replay(w, options) : replay(w, options, fifo{});
        check_ended_and_bounded(r, options);
        CHECK(r.jobs[0].state == job_state::unplaceable);
        CHECK(r.jobs[0].reason == errc::exceeds_healthy);
        CHECK(r.jobs[0].failures == 1);
        CHECK(r.jobs[1].state == job_state::completed);
    }
    // Every node down for ever: every job ends unplaceable.
    options.failures.scheduled.clear();
    for (node_id n = 0; n < 4; ++n) options.failures.scheduled.push_back({1, n, node_health::down});
    const auto d = replay(w, options);
    check_ended_and_bounded(d, options);
    CHECK(d.totals.unplaceable == 2);
    CHECK(d.jobs[1].reason == errc::exceeds_healthy);
}

TEST_CASE("node events between two changes of the jobs add no timeline point: the step carries the mean") {
    engine_options options;
    // Node 3 (domain 1; the job is on domain 0) is down from 2 to 4.
    options.failures.scheduled = {{2, 3, node_health::down}, {4, 3, node_health::up}};
    const auto r = replay(jobs_of({{0, 0, 4, 0, 10}}), options);
    REQUIRE(r.jobs[0].failures == 0);
    REQUIRE(r.timeline.size() == 2);
    CHECK(r.timeline[0].held == 4);
    // 16 GPUs for 2 s, 12 for 2 s, 16 for 6 s.
    CHECK(r.timeline[0].healthy == doctest::Approx((16.0 * 2 + 12.0 * 2 + 16.0 * 6) / 10.0));
    CHECK(r.timeline[1].t == 10);
    CHECK(r.timeline[1].healthy == 16);
    // Without node events the values are exact.
    const auto calm = replay(jobs_of({{0, 0, 4, 0, 10}}));
    REQUIRE(calm.timeline.size() == 2);
    CHECK(calm.timeline[0].healthy == 16);
}

TEST_CASE("failure settings a replay cannot use are refused before it runs") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const double bad : {-1.0, nan, inf, 1e-7, 2e9}) {
        CAPTURE(bad);
        failure_model m;
        m.node_mtbf_hours = bad;
        const auto checked = check_failure_model(m, 4);
        REQUIRE_FALSE(checked.has_value());
        CHECK(checked.error().message.find("node_mtbf_hours") != std::string::npos);
        engine_options options;
        options.failures = m;
        CHECK_THROWS_AS(replay(hand(), options), std::invalid_argument);
    }
    for (const double bad : {-1.0, nan, inf, 2e9}) {
        CAPTURE(bad);
        failure_model m;
        m.repair_hours = bad;
        const auto checked = check_failure_model(m, 4);
        REQUIRE_FALSE(checked.has_value());
        CHECK(checked.error().message.find("repair_hours") != std::string::npos);
    }
    failure_model m;
    m.scheduled = {{1, 0, node_health::down}, {2, 4, node_health::down}};
    auto checked = check_failure_model(m, 4);
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().message == "scheduled event 1: node 4 is out of range (the topology has 4 nodes)");
    m.scheduled = {{nan, 0, node_health::down}};
    CHECK_FALSE(check_failure_model(m, 4).has_value());
    m.scheduled = {{-1, 0, node_health::down}};
    CHECK_FALSE(check_failure_model(m, 4).has_value());
    // The edges are taken.
    m = {};
    m.node_mtbf_hours = max_failure_hours;
    m.repair_hours = max_failure_hours;
    CHECK(check_failure_model(m, 4).has_value());
    m.node_mtbf_hours = min_node_mtbf_hours;
    m.repair_hours = 0;
    CHECK(check_failure_model(m, 4).has_value());
}

}  // namespace test_sim_engine
