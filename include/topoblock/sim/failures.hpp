#pragma once

#include <topoblock/sim/random.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

// Node failures and repairs for the simulator. Every policy replays the same
// failures: the times depend only on the seed and the node, never on what
// runs where.

namespace topoblock::sim {

// One change of a node's health at a moment.
struct node_event {
    double time_s = 0.0;
    node_id node = 0;
    node_health to = node_health::down;

    friend bool operator==(const node_event&, const node_event&) = default;
};

// Random failures: each node fails after an exponential time with mean
// node_mtbf_hours (measured from its last repair) and stays down for
// repair_hours. `scheduled` adds fixed events (tests, maintenance windows).
struct failure_model {
    // 0 disables random failures. Llama 3 pretraining saw 419 unexpected
    // interruptions in 54 days on 16,384 GPUs (Meta, "The Llama 3 Herd of
    // Models", 2024): about one per 6,300 hours of an 8-GPU host.
    double node_mtbf_hours = 0.0;
    double repair_hours = 4.0;
    std::vector<node_event> scheduled;
};

// The longest MTBF or repair time a replay takes: about 114,000 years, or
// 3.6e12 seconds, where the replay's clock (a double, in seconds) still
// tells apart moments a millisecond apart. Longer, a job's run time would be
// lost in the rounding of the moments it starts and ends.
inline constexpr double max_failure_hours = 1e9;
// The shortest MTBF a replay takes (3.6 ms): shorter, the failures of a
// large cluster would come faster than the clock can tell moments apart,
// and the replay would not advance.
inline constexpr double min_node_mtbf_hours = 1e-6;

// Whether a replay can use `model` on a topology of `node_count` nodes:
// hours finite and in range, scheduled events at finite times >= 0 on nodes
// of the topology. The error names the field (and the event, by position).
inline expected<void, error> check_failure_model(const failure_model& model, std::uint32_t node_count) {
    const double mtbf = model.node_mtbf_hours;
    // Written so that NaN fails every test.
    if (!(mtbf == 0.0 || (mtbf >= min_node_mtbf_hours && mtbf <= max_failure_hours)))
        return unexpected(make_error("node_mtbf_hours takes 0 (no random failures) or hours from 1e-6 to 1e9"));
    if (!(model.repair_hours >= 0.0 && model.repair_hours <= max_failure_hours))
        return unexpected(make_error("repair_hours takes hours from 0 to 1e9"));
    for (std::size_t i = 0; i < model.scheduled.size(); ++i) {
        const node_event& e = model.scheduled[i];
        const std::string which = "scheduled event " + std::to_string(i);
        if (!(e.time_s >= 0.0 && std::isfinite(e.time_s)))
            return unexpected(make_error(which + ": its time is not a finite number of seconds >= 0"));
        if (e.node >= node_count)
            return unexpected(make_error(which + ": node " + std::to_string(e.node) + " is out of range (the topology has " +
                                         std::to_string(node_count) + " nodes)"));
    }
    return {};
}

// The merged, time-ordered stream of a model's events for one topology,
// generated lazily so it never ends while failures are on.
class failure_schedule {
public:
    failure_schedule(const failure_model& model, std::uint32_t node_count, std::uint64_t seed)
        : mtbf_s_(model.node_mtbf_hours * 3600.0), repair_s_(std::max(0.0, model.repair_hours * 3600.0)) {
        // check_failure_model tells which events are out of range; the
        // schedule itself skips them.
        for (std::size_t i = 0; i < model.scheduled.size(); ++i) {
            const auto& e = model.scheduled[i];
            if (e.node < node_count) push({e.time_s, e.node, e.to}, fixed_source);
        }
        if (mtbf_s_ > 0.0) {
            engines_.reserve(node_count);
            for (node_id n = 0; n < node_count; ++n) {
                // One stream per node: a node's failures do not depend on
                // how many other nodes the cluster has.
                engines_.emplace_back(splitmix64(seed ^ 0x6a09e667f3bcc909ULL)() + n);
                push({exponential{1.0 / mtbf_s_}(engines_[n]), n, node_health::down}, random_source);
            }
        }
    }

    bool empty() const noexcept { return heap_.empty(); }
    // Whether random failures are drawn (they never run out).
    bool random() const noexcept { return !engines_.empty(); }
    // Time of the next event; only when !empty().
    double next_time() const noexcept { return std::get<0>(heap_.top().key); }

    node_event pop() {
        const entry top = heap_.top();
        heap_.pop();
        if (top.source == random_source) {
            // A failure brings its repair; a repair brings the next failure.
            const bool failed = top.event.to == node_health::down;
            const double next = failed ? top.event.time_s + repair_s_
                                       : top.event.time_s + exponential{1.0 / mtbf_s_}(engines_[top.event.node]);
            push({next, top.event.node, failed ? node_health::up : node_health::down}, random_source);
        }
        return top.event;
    }

private:
    static constexpr std::uint8_t fixed_source = 0, random_source = 1;
    struct entry {
        // (time, sequence): equal times keep the order they were made in.
        std::tuple<double, std::uint64_t> key;
        node_event event;
        std::uint8_t source;
        bool operator>(const entry& other) const noexcept { return key > other.key; }
    };
    void push(node_event e, std::uint8_t source) { heap_.push({{e.time_s, sequence_++}, e, source}); }

    double mtbf_s_;
    double repair_s_;
    std::vector<random_engine> engines_;
    std::priority_queue<entry, std::vector<entry>, std::greater<>> heap_;
    std::uint64_t sequence_ = 0;
};

}  // namespace topoblock::sim
