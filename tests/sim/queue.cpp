#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/queue.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace test_sim_queue {

using namespace topoblock;
using namespace topoblock::sim;

namespace {

template <class Policy, class Queue = easy_backfill>
policy_result replay(const topology& topo, const workload& w, const engine_options& options = {}) {
    auto a = allocator<Policy>::create(topo);
    REQUIRE(a.has_value());
    return simulate(std::move(*a), w, options, Queue{});
}

// With exact run times and no failures, the head starts no later than the
// first reservation it was given.
void check_reservations_kept(const policy_result& r) {
    std::size_t reserved = 0;
    for (std::size_t j = 0; j < r.jobs.size(); ++j) {
        const auto& o = r.jobs[j];
        if (o.reserved_s < 0.0) continue;
        ++reserved;
        CAPTURE(j);
        CHECK(o.start_s >= 0.0);
        CHECK(o.start_s <= o.reserved_s + 1e-9);
    }
    CHECK(reserved > 0);  // the check above must have had something to check
}

}  // namespace

TEST_CASE("EASY: counting free GPUs at the reservation is not enough") {
    // Two domains of 8 GPUs. A (4 GPUs, 100 s) and B (5 GPUs, 10 s) land in
    // different domains; H (8 GPUs) needs B's domain, free at t=10. At that
    // time 12 GPUs are free, room for H and C (3 GPUs, 1000 s) by count; but
    // best-fit would put C in B's domain now, and H could then not start at
    // 10. So C waits and starts beside H.
    const topology topo = *parse_topology_spec("grid:2:2:4");
    workload w{"t", {{0, 0, 4, 0, 100}, {0, 0, 5, 0, 10}, {0, 1, 8, 0, 50}, {0, 2, 3, 0, 1000}}};
    number_and_sort(w);
    const auto r = replay<best_fit>(topo, w);
    CHECK(r.jobs[2].reserved_s == 10);
    CHECK(r.jobs[2].start_s == 10);
    CHECK(r.jobs[3].start_s == 10);
    CHECK(r.jobs[3].domains == 1);
    // A short C that ends by the reservation is backfilled at once.
    w.jobs[3].duration_s = 8;
    const auto s = replay<best_fit>(topo, w);
    CHECK(s.jobs[3].start_s == 2);
    CHECK(s.jobs[2].start_s == 10);
}

TEST_CASE("EASY: a candidate that leaves the head exactly its GPUs is backfilled, one GPU more is not") {
    // One domain of 16 GPUs. A holds 12 until t=100; H (14 GPUs) gets the
    // reservation 100. C fits now and ends long after it: held at the
    // reservation beside H it must leave H its 14 GPUs. 2 GPUs do (C starts
    // at once), 3 do not (C waits until H is done).
    const topology topo = *parse_topology_spec("grid:1:4:4");
    for (const std::uint32_t c : {2u, 3u}) {
        CAPTURE(c);
        workload w{"t", {{0, 0, 12, 0, 100}, {0, 1, 14, 0, 50}, {0, 2, c, 0, 1000}}};
        number_and_sort(w);
        const auto r = replay<best_fit>(topo, w);
        CHECK(r.jobs[1].reserved_s == 100);
        CHECK(r.jobs[1].start_s == 100);
        CHECK(r.jobs[2].start_s == (c == 2 ? 2 : 150));
    }
}

TEST_CASE("free_after_hold bounds what a hold leaves free, exactly unless the job is exclusive") {
    // Random clusters (jobs held, exclusive ones among them; trays down or
    // draining) and random pieces to hold: the bound against a real hold on
    // a copy. A hold that fails is not checked (the bound claims nothing).
    const topology topo = *parse_topology_spec("grid:4:4:4");
    std::mt19937_64 rng(11);
    std::size_t held = 0, exclusive = 0;
    for (int round = 0; round < 400; ++round) {
        auto a = *allocator<best_fit>::create(topo);
        for (int i = 0; i < 6; ++i) {
            const auto gpus = static_cast<std::uint32_t>(1 + rng() % 8);
            (void)a.try_allocate(rng() % 5 == 0 ? request::gpus(gpus).with_exclusive_domain() : request::gpus(gpus));
        }
        for (int i = 0; i < 2; ++i) {
            const auto n = static_cast<node_id>(rng() % topo.node_count());
            (void)a.set_health(n, rng() % 2 == 0 ? node_health::down : node_health::drain);
        }
        std::vector<piece> pieces;
        std::vector<piece_run> runs;
        // One to four nodes, mostly with GPUs unheld, so that most holds
        // succeed; now and then a held GPU or a down node, so that some fail.
        const auto count = static_cast<node_id>(1 + rng() % 4);
        for (node_id n = static_cast<node_id>(rng() % 4); n < topo.node_count() && pieces.size() < count;
             n += static_cast<node_id>(1 + rng() % 6)) {
            const gpu_mask unheld = a.state().unheld_gpus(n);
            if (rng() % 8 != 0 && (unheld == 0 || a.state().health(n) == node_health::down)) continue;
            gpu_mask gpus = rng() % 8 == 0 ? a.state().node_full_mask(n) : unheld & static_cast<gpu_mask>(rng());
            if (gpus == 0) gpus = unheld != 0 ? unheld : 1;
            pieces.push_back({n, gpus});
            runs.push_back({n, 1, gpus});
        }
        if (pieces.empty()) continue;
        const bool exclusive_job = rng() % 4 == 0;
        const std::uint64_t bound_gpus = topoblock::sim::detail::free_after_hold(a.state(), runs, unit::gpus);
        const std::uint64_t bound_nodes = topoblock::sim::detail::free_after_hold(a.state(), runs, unit::nodes);
        auto copy = a;
        request asked = request::gpus(0);
        if (exclusive_job) asked = asked.with_exclusive_domain();
        if (!copy.hold(pieces, asked)) continue;
        ++held;
        const free_capacity after = copy.state().available();
        CAPTURE(round);
        CHECK(after.gpus <= bound_gpus);
        CHECK(after.nodes <= bound_nodes);
        if (exclusive_job) {
            ++exclusive;
        } else {
            CHECK(after.gpus == bound_gpus);
            CHECK(after.nodes == bound_nodes);
        }
    }
    CHECK(held > 100);  // the checks above had enough to check
    CHECK(exclusive > 10);
}

TEST_CASE_TEMPLATE("EASY never delays the head's reservation", Policy, best_fit, first_fit) {
    const topology topo = gb200_nvl72(3);
    generate_options g;
    g.jobs = 1500;
    g.cluster_gpus = topo.gpu_count();
    g.offered_load = 0.95;
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
        g.seed = seed;
        CAPTURE(seed);
        const auto w = generate(helios_mix(), g);
        const auto r = replay<Policy>(topo, w);
        CHECK(r.totals.conserved);
        check_reservations_kept(r);
    }
}

TEST_CASE_TEMPLATE("EASY's memo of declined requests changes no decision", Policy, best_fit, contiguous_block) {
    // Against EASY trying every candidate: every job starts at the same
    // moment on as many domains, with failures (reservations redone) and
    // without, on a cluster small enough that candidates are declined.
    const topology topo = gb200_nvl72(2);
    generate_options g{.jobs = 1200, .offered_load = 1.1, .cluster_gpus = topo.gpu_count()};
    easy_backfill every;
    every.remember_declined = false;
    for (const std::uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
        for (const double mtbf : {0.0, 400.0}) {
            g.seed = seed;
            CAPTURE(seed);
            CAPTURE(mtbf);
            const auto w = generate(seed % 3 == 0 ? philly_mix() : seed % 3 == 1 ? helios_mix() : llm_mix(), g);
            engine_options options;
            options.failures.node_mtbf_hours = mtbf;
            auto a = allocator<Policy>::create(topo);
            auto b = allocator<Policy>::create(topo);
            const auto remembered = simulate(std::move(*a), w, options, easy_backfill{});
            const auto tried = simulate(std::move(*b), w, options, every);
            REQUIRE(remembered.jobs.size() == tried.jobs.size());
            std::size_t differ = 0;
            for (std::size_t j = 0; j < tried.jobs.size(); ++j)
                if (remembered.jobs[j].start_s != tried.jobs[j].start_s || remembered.jobs[j].domains != tried.jobs[j].domains)
                    ++differ;
            CHECK(differ == 0);
            CHECK(remembered.totals.requeues == tried.totals.requeues);
        }
    }
}

TEST_CASE("EASY starts more small jobs early than FIFO") {
    const topology topo = gb200_nvl72(2);
    generate_options g;
    g.jobs = 800;
    g.cluster_gpus = topo.gpu_count();
    g.offered_load = 0.9;
    const auto w = generate(helios_mix(), g);
    const auto easy = replay<best_fit>(topo, w);
    const auto plain = replay<best_fit, fifo>(topo, w);
    CHECK(easy.totals.conserved);
    CHECK(plain.totals.conserved);
    CHECK(easy.totals.wait_p50_s <= plain.totals.wait_p50_s);
    CHECK(easy.totals.bounded_slowdown < plain.totals.bounded_slowdown);
    // FIFO never lets a later job start before an earlier one.
    double last_start = 0.0;
    std::vector<double> starts;
    for (const auto& o : plain.jobs)
        if (o.start_s >= 0.0) starts.push_back(o.start_s);
    for (const double s : starts) {
        CHECK(s >= last_start);
        last_start = s;
    }
}

}  // namespace test_sim_queue
