#pragma once

// Builds the benchmark clusters: GB200 NVL72 racks brought to a target
// occupancy by a realistic size mix, with enough churn that free capacity is
// scattered the way a running cluster's is. Built outside the timed loops.

#include <topoblock/topoblock.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace topoblock::bench {

// A Helios-like mix of job sizes in GPUs (share of jobs, ../shared/traces):
// many 1-GPU jobs, a strong 8-GPU mode, a tail to whole racks.
inline std::uint32_t draw_size(std::mt19937_64& rng) {
    static constexpr std::pair<std::uint32_t, std::uint32_t> mix[] = {
        {1, 550}, {2, 50}, {4, 61}, {8, 223}, {16, 54}, {32, 33}, {64, 18}, {72, 11}};
    std::uint64_t pick = rng() % 1000;
    for (const auto& [size, weight] : mix) {
        if (pick < weight) return size;
        pick -= weight;
    }
    return 1;
}

// The share of GPUs held in every benchmark cluster.
inline constexpr double occupancy = 0.90;

template <class Policy>
struct fixture {
    allocator<Policy> alloc;
    std::vector<allocation_id> live;
};

// `racks` NVL72 racks, filled to `occupancy` of their GPUs, then churned:
// random releases and refills so the free GPUs end up scattered.
// `racks_per_group` > 0 adds a level of leaf groups of that many racks.
template <class Policy>
fixture<Policy> make_fixture(std::uint32_t racks, double occupancy, Policy policy = Policy{}, std::uint64_t seed = 42,
                             std::uint32_t racks_per_group = 0) {
    fixture<Policy> f{std::move(*allocator<Policy>::create(gb200_nvl72(racks, racks_per_group), std::move(policy))), {}};
    std::mt19937_64 rng(seed);
    const auto target = static_cast<std::uint64_t>(occupancy * racks * 72);
    const auto fill = [&] {
        std::uint32_t misses = 0;
        while (f.alloc.state().held_gpus() < target && misses < 1000) {
            auto id = f.alloc.try_allocate(request::gpus(draw_size(rng)));
            if (id) f.live.push_back(*id);
            else ++misses;
        }
    };
    fill();
    for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < f.live.size() / 5; ++i) {
            const std::size_t victim = rng() % f.live.size();
            (void)f.alloc.release(f.live[victim]);
            f.live[victim] = f.live.back();
            f.live.pop_back();
        }
        fill();
    }
    return f;
}

// One steady_clock read's own cost in ns, for timings that read the clock
// around each operation and take it off.
inline double clock_read_ns() {
    using clock = std::chrono::steady_clock;
    constexpr int reads = 100000;
    const auto first = clock::now();
    auto last = first;
    for (int r = 0; r < reads; ++r) last = clock::now();
    return std::chrono::duration<double, std::nano>(last - first).count() / reads;
}

// The requests in turn, from the first again after the last, with a compare
// rather than `i % size`: the harness adds no divide to what it measures.
class request_cycle {
public:
    explicit request_cycle(const std::vector<request>& requests) noexcept : requests_(requests) {}
    const request& next() noexcept {
        const request& r = requests_[at_];
        if (++at_ == requests_.size()) at_ = 0;
        return r;
    }

private:
    const std::vector<request>& requests_;
    std::size_t at_ = 0;
};

}  // namespace topoblock::bench
