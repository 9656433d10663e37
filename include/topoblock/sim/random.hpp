#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

// Random numbers that give the same workload for the same seed everywhere.
//
// The std:: engines are specified bit for bit, but the std:: distributions are
// not: libstdc++, libc++ and MSVC turn the same engine output into different
// numbers. So the engine and every distribution the simulator needs are
// written out here. The integer stream is identical on every platform; the
// distributions that use std::log, std::exp or std::sqrt are as identical as
// the platform's maths library (IEEE sqrt is exact; log and exp agree to the
// last bit on the common libraries but the standard does not promise it).

namespace topoblock::sim {

// Seed expander (Steele, Lea, Flood 2014). Turns one 64-bit seed into the
// well-mixed state words xoshiro needs, so seeds 0, 1, 2 give unrelated
// streams.
class splitmix64 {
public:
    constexpr explicit splitmix64(std::uint64_t seed) noexcept : state_(seed) {}

    constexpr std::uint64_t operator()() noexcept {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    std::uint64_t state_;
};

// xoshiro256** (Blackman, Vigna 2018): small, fast, and passes BigCrush.
// Meets std::uniform_random_bit_generator, but use the distributions below
// rather than std:: ones to keep results portable.
class random_engine {
public:
    using result_type = std::uint64_t;

    constexpr explicit random_engine(std::uint64_t seed) noexcept {
        splitmix64 expand(seed);
        for (auto& word : s_) word = expand();
    }

    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

    constexpr result_type operator()() noexcept {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // A double in [0, 1) from the top 53 bits: every value is a multiple of
    // 2^-53, so no rounding depends on the platform.
    constexpr double canonical() noexcept {
        return static_cast<double>((*this)() >> 11) * 0x1.0p-53;
    }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
        return (x << k) | (x >> (64 - k));
    }

    std::uint64_t s_[4]{};
};

// Uniform real in [lo, hi).
struct uniform_real {
    double lo = 0.0;
    double hi = 1.0;

    double operator()(random_engine& rng) const noexcept { return lo + (hi - lo) * rng.canonical(); }
};

// Uniform integer in [lo, hi], both ends included, without modulo bias.
struct uniform_int {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;

    std::uint64_t operator()(random_engine& rng) const noexcept {
        assert(lo <= hi);
        const std::uint64_t span = hi - lo + 1;  // 0 means all 2^64 values
        if (span == 0) return rng();
        // Reject the low values that would make some results more likely.
        const std::uint64_t reject_below = (0 - span) % span;
        std::uint64_t x = rng();
        while (x < reject_below) x = rng();
        return lo + x % span;
    }
};

// Exponential with the given rate (mean 1 / rate), e.g. Poisson inter-arrival
// times.
struct exponential {
    double rate = 1.0;

    double operator()(random_engine& rng) const noexcept {
        assert(rate > 0.0);
        return -std::log1p(-rng.canonical()) / rate;  // 1 - u is in (0, 1]
    }
};

// Normal by Marsaglia's polar method: needs only log and sqrt, no sin/cos.
// The second value of each pair is dropped so the distribution keeps no
// state between calls.
struct normal {
    double mean = 0.0;
    double sd = 1.0;

    double operator()(random_engine& rng) const noexcept {
        for (;;) {
            const double u = 2.0 * rng.canonical() - 1.0;
            const double v = 2.0 * rng.canonical() - 1.0;
            const double s = u * u + v * v;
            if (s > 0.0 && s < 1.0) return mean + sd * u * std::sqrt(-2.0 * std::log(s) / s);
        }
    }
};

// exp(normal(log_mean, log_sd)): median exp(log_mean), heavy right tail.
struct lognormal {
    double log_mean = 0.0;
    double log_sd = 1.0;

    double operator()(random_engine& rng) const noexcept {
        return std::exp(normal{log_mean, log_sd}(rng));
    }
};

// Index i with probability weights[i] / sum(weights). Weights must be finite
// and non-negative with a positive sum; zero-weight indexes are never drawn.
class discrete {
public:
    discrete() = default;

    explicit discrete(std::span<const double> weights) {
        cumulative_.reserve(weights.size());
        double total = 0.0;
        for (std::size_t i = 0; i < weights.size(); ++i) {
            assert(std::isfinite(weights[i]) && weights[i] >= 0.0);
            total += weights[i];
            cumulative_.push_back(total);
            if (weights[i] > 0.0) last_positive_ = i;
        }
        assert(total > 0.0 && "discrete needs at least one positive weight");
    }

    std::size_t size() const noexcept { return cumulative_.size(); }

    double probability(std::size_t i) const noexcept {
        const double below = i == 0 ? 0.0 : cumulative_[i - 1];
        return (cumulative_[i] - below) / cumulative_.back();
    }

    std::size_t operator()(random_engine& rng) const noexcept {
        assert(!cumulative_.empty());
        const double u = rng.canonical() * cumulative_.back();
        const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
        // u * total can round up to total itself.
        if (it == cumulative_.end()) return last_positive_;
        return static_cast<std::size_t>(it - cumulative_.begin());
    }

private:
    std::vector<double> cumulative_;
    std::size_t last_positive_ = 0;
};

}  // namespace topoblock::sim
