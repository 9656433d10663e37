#include <topoblock/sim/synthetic.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace test_sim_synthetic {

using namespace topoblock::sim;

namespace {

// GPU-seconds offered per GPU-second of cluster between the first and the
// last arrival.
double offered_load_from_zero(const workload& w, std::uint64_t cluster_gpus) {
    double work = 0.0;
    for (const auto& j : w.jobs) work += j.gpus * j.duration_s;
    return work / (static_cast<double>(cluster_gpus) * w.jobs.back().submit_s);
}

// Share of the jobs that fall in each class of the mix.
std::vector<double> class_job_shares(const synthetic_mix& mix, const workload& w) {
    std::map<std::uint32_t, std::size_t> class_of;
    for (std::size_t c = 0; c < mix.classes.size(); ++c)
        for (const auto& s : mix.classes[c].sizes) class_of[s.gpus] = c;
    std::vector<double> shares(mix.classes.size(), 0.0);
    for (const auto& j : w.jobs) shares.at(class_of.at(j.gpus)) += 1.0 / static_cast<double>(w.jobs.size());
    return shares;
}

struct readme_row {
    std::array<double, 8> jobs;
    std::array<double, 8> gpu_hours;
};

// The size mix table of ../shared/traces/README.md, in percent.
const readme_row helios_readme{{55.0, 5.0, 6.1, 22.3, 5.4, 3.3, 1.8, 1.0},
                               {3.3, 3.2, 2.9, 30.0, 18.7, 20.7, 6.9, 14.3}};
const readme_row philly_readme{{79.8, 2.5, 6.0, 9.8, 1.6, 0.2, 0.0, 0.0},
                               {29.8, 2.6, 13.2, 47.9, 5.7, 0.8, 0.0, 0.0}};

// Share of the mix's job weight below 8 GPUs.
double expected_small(const synthetic_mix& mix) {
    double small = 0.0, all = 0.0;
    for (const auto& c : mix.classes)
        for (const auto& s : c.sizes) {
            all += s.weight;
            if (s.gpus < small_job_below_gpus) small += s.weight;
        }
    return small / all;
}

}  // namespace

TEST_CASE("find_mix knows the three presets") {
    for (const std::string name : {"philly", "helios", "llm"}) {
        CAPTURE(name);
        const auto mix = find_mix(name);
        REQUIRE(mix.has_value());
        CHECK(mix->name == name);
        CHECK_FALSE(mix->classes.empty());
    }
    CHECK_FALSE(find_mix("alibaba").has_value());
    CHECK_FALSE(find_mix("").has_value());
}

TEST_CASE("the calibrated presets reproduce the traces' size mix table") {
    // A plain loop variable, not a structured binding: clang 14 cannot
    // capture bindings in the lambdas CAPTURE makes.
    for (const auto& calibrated : {std::pair{helios_mix(), helios_readme}, std::pair{philly_mix(), philly_readme}}) {
        const synthetic_mix& mix = calibrated.first;
        const readme_row& readme = calibrated.second;
        CAPTURE(mix.name);
        const auto shares = expected_shares(mix);
        REQUIRE(shares.size() <= readme.jobs.size());
        for (std::size_t c = 0; c < shares.size(); ++c) {
            CAPTURE(mix.classes[c].name);
            CHECK(std::abs(100.0 * shares[c].jobs - readme.jobs[c]) < 0.3);
            CHECK(std::abs(100.0 * shares[c].gpu_time - readme.gpu_hours[c]) < 0.5);
        }
    }
}

TEST_CASE("the llm preset is dominated by 64-1024 GPU jobs") {
    const auto mix = llm_mix();
    const auto shares = expected_shares(mix);
    double large_jobs = 0.0, large_time = 0.0, small_jobs = 0.0;
    for (std::size_t c = 0; c < shares.size(); ++c) {
        const auto smallest = mix.classes[c].sizes.front().gpus;
        if (smallest >= 64) {
            large_jobs += shares[c].jobs;
            large_time += shares[c].gpu_time;
        }
        if (mix.classes[c].sizes.back().gpus <= 8) small_jobs += shares[c].jobs;
    }
    CHECK(large_jobs > 0.5);
    CHECK(large_time > 0.95);
    CHECK(small_jobs > 0.1);
    CHECK(small_jobs < 0.5);
}

TEST_CASE("mean_duration is the mean of the clipped lognormal") {
    CHECK(mean_duration({std::log(100.0), 0.0, 1000.0}) == doctest::Approx(100.0));
    CHECK(mean_duration({std::log(5000.0), 0.0, 1000.0}) == doctest::Approx(1000.0));
    const duration_model model{6.0, 1.5, 20000.0};
    random_engine rng(11);
    double sum = 0.0;
    const int n = 400000;
    for (int i = 0; i < n; ++i) {
        const double d = sample_duration(model, rng);
        REQUIRE(d >= 1.0);
        REQUIRE(d <= 20000.0);
        REQUIRE(d == std::round(d));
        sum += d;
    }
    CHECK(sum / n == doctest::Approx(mean_duration(model)).epsilon(0.01));
}

TEST_CASE("generate is deterministic and seeds matter") {
    const auto mix = helios_mix();
    const generate_options options{5000, 0.85, 864, 42, 0};
    const auto a = generate(mix, options);
    const auto b = generate(mix, options);
    CHECK(a.name == "helios");
    CHECK(a.jobs == b.jobs);
    auto other = options;
    other.seed = 43;
    const auto c = generate(mix, other);
    REQUIRE(c.jobs.size() == a.jobs.size());
    CHECK(a.jobs != c.jobs);
    // Pin the stream: a change here changes every published synthetic result.
    CHECK(a.jobs[0].submit_s == 0.0);
    CHECK(a.jobs[0].gpus == 1);
    CHECK(a.jobs[0].duration_s == 34.0);
    CHECK(a.jobs[1].gpus == 80);
    CHECK(a.jobs[1].duration_s == 4303.0);
    CHECK(a.jobs[1].submit_s == doctest::Approx(419.468).epsilon(1e-5));
}

TEST_CASE("generated jobs are well formed") {
    for (const std::string name : {"philly", "helios", "llm"}) {
        CAPTURE(name);
        const auto w = generate(*find_mix(name), {20000, 0.7, 576, 5, 0});
        REQUIRE(w.jobs.size() == 20000);
        for (std::size_t i = 0; i < w.jobs.size(); ++i) {
            const auto& j = w.jobs[i];
            REQUIRE(j.id == i);
            REQUIRE(j.gpus >= 1);
            REQUIRE(j.gpus <= 576);
            REQUIRE(j.duration_s >= 1.0);
            REQUIRE(j.nodes == 0);
            if (i > 0) REQUIRE(j.submit_s >= w.jobs[i - 1].submit_s);
        }
    }
}

TEST_CASE("sizes above max_gpus are clipped, and the load still holds") {
    const auto w = generate(llm_mix(), {200000, 0.9, 512, 3, 0});
    std::uint32_t largest = 0;
    for (const auto& j : w.jobs) largest = std::max(largest, j.gpus);
    CHECK(largest == 512);
    CHECK(offered_load_from_zero(w, 512) == doctest::Approx(0.9).epsilon(0.03));
    const auto capped = generate(llm_mix(), {1000, 0.9, 4096, 3, 256});
    for (const auto& j : capped.jobs) REQUIRE(j.gpus <= 256);
}

TEST_CASE("a long workload offers the target load and the preset's size mix") {
    // Heavy duration tails make the offered load of a short sample noisy; a
    // million jobs bring it within a few percent.
    for (const std::string name : {"philly", "helios", "llm"}) {
        CAPTURE(name);
        const auto mix = *find_mix(name);
        const auto w = generate(mix, {1000000, 0.85, 2048, 2024, 0});
        CHECK(offered_load_from_zero(w, 2048) == doctest::Approx(0.85).epsilon(0.05));
        MESSAGE(name << ": offered load " << offered_load_from_zero(w, 2048));
        const auto expected = expected_shares(mix);
        const auto got = class_job_shares(mix, w);
        for (std::size_t c = 0; c < expected.size(); ++c) {
            CAPTURE(mix.classes[c].name);
            CHECK(std::abs(got[c] - expected[c].jobs) < 0.003);
        }
    }
}

TEST_CASE("with_small_share sets the share of jobs under 8 GPUs and keeps the rest of the mix") {
    for (const auto& base : {helios_mix(), philly_mix(), llm_mix()}) {
        CAPTURE(base.name);
        for (const double share : {0.0, 0.1, 0.3, 0.5, 0.9}) {
            CAPTURE(share);
            const auto mix = with_small_share(base, share);
            REQUIRE(mix.has_value());
            // Against the definition: the weights of the small sizes over all.
            double small = 0.0, all = 0.0;
            for (const auto& c : mix->classes)
                for (const auto& s : c.sizes) {
                    all += s.weight;
                    if (s.gpus < small_job_below_gpus) small += s.weight;
                }
            CHECK(small / all == doctest::Approx(share));
            CHECK(expected_small(*mix) == doctest::Approx(share));
            // Within each part the ratios of the base mix stay.
            const auto& b0 = base.classes.front().sizes.front();
            const auto& m0 = mix->classes.front().sizes.front();
            const auto& bl = base.classes.back().sizes.back();
            const auto& ml = mix->classes.back().sizes.back();
            if (share > 0.0 && share < 1.0 && b0.gpus < 8 && bl.gpus >= 8)
                CHECK((m0.weight / ml.weight) / (b0.weight / bl.weight) ==
                      doctest::Approx((share / (1 - share)) * (1 - expected_small(base)) / expected_small(base)));
            // And a draw shows it.
            const auto w = generate(*mix, {.jobs = 20000, .cluster_gpus = 864 * 4, .seed = 3});
            std::size_t drawn = 0;
            for (const auto& j : w.jobs) drawn += j.gpus < small_job_below_gpus;
            CHECK(std::abs(static_cast<double>(drawn) / 20000.0 - share) < 0.02);
        }
    }
    // Shares outside [0, 1] and parts the mix lacks are refused.
    CHECK(!with_small_share(helios_mix(), -0.1));
    CHECK(!with_small_share(helios_mix(), 1.5));
    CHECK(!with_small_share(helios_mix(), std::nan("")));
    synthetic_mix big{"big", {{"64", {{64, 1}}, {0.0, 1.0, 100.0}}}};
    CHECK(!with_small_share(big, 0.2));
    CHECK(with_small_share(big, 0.0).has_value());
    CHECK(with_small_share(big, 1.0, 128).has_value());
    CHECK(!with_small_share(big, 0.5, 128));
}

}  // namespace test_sim_synthetic
