#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace topoblock::sim {

// One job as the simulator replays it: when it arrives, what it asks for and
// how long it runs once started.
struct job {
    std::uint64_t id = 0;      // position in the input, so results map back to it
    double submit_s = 0.0;     // seconds from the start of the workload
    std::uint32_t gpus = 0;    // total GPUs requested, > 0
    std::uint32_t nodes = 0;   // nodes used in the original cluster; 0 = not given
    double duration_s = 0.0;   // run time once started, >= 0

    friend bool operator==(const job&, const job&) = default;
};

// A named list of jobs in submission order.
struct workload {
    std::string name;
    std::vector<job> jobs;  // sorted by submit_s; ties keep input (id) order
};

// Numbers the jobs in their current order, then orders them by submission.
// The sort is stable so equal submit times keep input order on every
// platform.
inline void number_and_sort(workload& w) {
    for (std::size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].id = i;
    const auto earlier = [](const job& a, const job& b) { return a.submit_s < b.submit_s; };
    // Traces usually arrive sorted; checking is much cheaper than sorting.
    if (!std::is_sorted(w.jobs.begin(), w.jobs.end(), earlier))
        std::stable_sort(w.jobs.begin(), w.jobs.end(), earlier);
}

}  // namespace topoblock::sim
