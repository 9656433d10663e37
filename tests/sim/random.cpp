#include <topoblock/sim/random.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace test_sim_random {

using namespace topoblock::sim;

TEST_CASE("splitmix64 and xoshiro256** match the reference algorithms") {
    // Values from an independent implementation of the published algorithms.
    splitmix64 expand(0);
    CHECK(expand() == 0xe220a8397b1dcdafULL);
    CHECK(expand() == 0x6e789e6aa1b965f4ULL);

    random_engine rng(42);
    CHECK(rng() == 0x15780b2e0c2ec716ULL);
    CHECK(rng() == 0x6104d9866d113a7eULL);
    CHECK(rng() == 0xae17533239e499a1ULL);
}

TEST_CASE("same seed, same stream, and different seeds, different streams") {
    random_engine a(7), b(7), c(8);
    int same_as_c = 0;
    for (int i = 0; i < 1000; ++i) {
        const auto x = a();
        CHECK(x == b());
        same_as_c += x == c() ? 1 : 0;
    }
    CHECK(same_as_c == 0);
}

TEST_CASE("canonical and uniform_real stay in their half-open range") {
    random_engine rng(1);
    const uniform_real u{-2.0, 3.0};
    double lo = 1e9, hi = -1e9, sum = 0.0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double c = rng.canonical();
        REQUIRE(c >= 0.0);
        REQUIRE(c < 1.0);
        const double x = u(rng);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
    }
    CHECK(lo >= -2.0);
    CHECK(hi < 3.0);
    CHECK(sum / n == doctest::Approx(0.5).epsilon(0.02));
}

TEST_CASE("uniform_int covers both ends evenly") {
    random_engine rng(2);
    const uniform_int die{1, 6};
    std::array<int, 7> counts{};
    const int n = 60000;
    for (int i = 0; i < n; ++i) {
        const auto x = die(rng);
        REQUIRE(x >= 1);
        REQUIRE(x <= 6);
        ++counts[x];
    }
    for (int face = 1; face <= 6; ++face) CHECK(counts[face] == doctest::Approx(n / 6.0).epsilon(0.05));
    CHECK(uniform_int{5, 5}(rng) == 5);
    // The full 64-bit range must not divide by zero.
    (void)uniform_int{0, ~std::uint64_t{0}}(rng);
}

TEST_CASE("exponential, normal and lognormal have their textbook moments") {
    random_engine rng(3);
    const int n = 200000;
    double exp_sum = 0.0, norm_sum = 0.0, norm_sq = 0.0;
    std::vector<double> logn;
    logn.reserve(n);
    for (int i = 0; i < n; ++i) {
        const double e = exponential{0.5}(rng);
        REQUIRE(e >= 0.0);
        exp_sum += e;
        const double z = normal{10.0, 2.0}(rng);
        norm_sum += z;
        norm_sq += (z - 10.0) * (z - 10.0);
        logn.push_back(lognormal{1.0, 0.5}(rng));
    }
    CHECK(exp_sum / n == doctest::Approx(2.0).epsilon(0.02));
    CHECK(norm_sum / n == doctest::Approx(10.0).epsilon(0.005));
    CHECK(std::sqrt(norm_sq / n) == doctest::Approx(2.0).epsilon(0.02));
    std::nth_element(logn.begin(), logn.begin() + n / 2, logn.end());
    CHECK(logn[n / 2] == doctest::Approx(std::exp(1.0)).epsilon(0.02));
}

TEST_CASE("discrete draws each index in proportion to its weight") {
    const std::vector<double> weights{1.0, 0.0, 3.0, 6.0, 0.0};
    const discrete pick(weights);
    CHECK(pick.size() == 5);
    CHECK(pick.probability(0) == doctest::Approx(0.1));
    CHECK(pick.probability(1) == 0.0);
    CHECK(pick.probability(3) == doctest::Approx(0.6));

    random_engine rng(4);
    std::array<int, 5> counts{};
    const int n = 100000;
    for (int i = 0; i < n; ++i) ++counts[pick(rng)];
    CHECK(counts[1] == 0);
    CHECK(counts[4] == 0);
    CHECK(counts[0] == doctest::Approx(0.1 * n).epsilon(0.05));
    CHECK(counts[2] == doctest::Approx(0.3 * n).epsilon(0.03));
    CHECK(counts[3] == doctest::Approx(0.6 * n).epsilon(0.02));
}

}  // namespace test_sim_random
