// Offered load of a workload, and its arrivals rescaled to a chosen load.

#include <topoblock/sim/load.hpp>

#include <doctest/doctest.h>

#include <limits>

namespace test_sim_load {

using namespace topoblock::sim;

namespace {

// Two 8-GPU jobs of 100 s, submitted `gap` seconds apart.
workload two_jobs(double gap) {
    workload w;
    w.jobs = {{0, 0.0, 8, 0, 100.0}, {1, gap, 8, 0, 100.0}};
    return w;
}

}  // namespace

TEST_CASE("offered load: GPU-seconds asked over GPU-seconds of the span") {
    CHECK(offered_load(two_jobs(100.0), 16) == doctest::Approx(1.0));  // 1600 / (100 * 16)
    CHECK(offered_load(two_jobs(400.0), 16) == doctest::Approx(0.25));
    CHECK(offered_load(two_jobs(0.0), 16) == 0.0);   // no span
    CHECK(offered_load(two_jobs(100.0), 0) == 0.0);  // no cluster
    workload one;
    one.jobs = {{0, 0.0, 8, 0, 100.0}};
    CHECK(offered_load(one, 16) == 0.0);
}

TEST_CASE("rescale_to_load: the gaps scale, sizes and run times stay") {
    workload w = two_jobs(100.0);
    REQUIRE(rescale_to_load(w, 16, 0.5));
    CHECK(w.jobs[1].submit_s == doctest::Approx(200.0));
    CHECK(w.jobs[1].duration_s == 100.0);
    CHECK(w.jobs[1].gpus == 8);
    CHECK(offered_load(w, 16) == doctest::Approx(0.5));
    REQUIRE(rescale_to_load(w, 16, 4.0));
    CHECK(offered_load(w, 16) == doctest::Approx(4.0));
    // Nothing to scale, or no load to scale to: unchanged.
    workload at_once = two_jobs(0.0);
    CHECK_FALSE(rescale_to_load(at_once, 16, 0.5));
    CHECK(at_once.jobs == two_jobs(0.0).jobs);
    workload kept = two_jobs(100.0);
    CHECK_FALSE(rescale_to_load(kept, 16, 0.0));
    CHECK_FALSE(rescale_to_load(kept, 16, -1.0));
    CHECK_FALSE(rescale_to_load(kept, 16, std::numeric_limits<double>::infinity()));
    CHECK(kept.jobs[1].submit_s == 100.0);
}

}  // namespace test_sim_load
