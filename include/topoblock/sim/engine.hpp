#pragma once

#include <topoblock/metrics/allocatable.hpp>
#include <topoblock/metrics/metrics.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/sim/cost_model.hpp>
#include <topoblock/sim/failures.hpp>
#include <topoblock/sim/job.hpp>
#include <topoblock/sim/queue.hpp>
#include <topoblock/sim/results.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/id_map.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

// The event-driven replay: arrivals, completions, node failures and repairs,
// with a queue discipline deciding what starts. It drives the allocator only
// through its public API (try_allocate, release, set_health, find, state()),
// as any scheduler embedding topoblock would. docs/simulate.md describes it.

namespace topoblock::sim {

// How a trace job becomes a request: its GPU count, kept inside one NVLink
// domain when it fits in one (locality::require), else on the fewest
// domains. The trace's `nodes` column describes the original cluster's
// servers, not this one's, so it is ignored by default.
inline request default_request(const job& j) { return request::gpus(j.gpus); }

struct engine_options {
    // Stop the replay at this time (seconds); jobs then running or waiting
    // are reported as such. nullopt: run until every job is done.
    std::optional<double> until_s;
    comm_cost_model cost;
    failure_model failures;
    // A job cut short by node failures more often than this is given up
    // (job_state::abandoned), as Slurm holds a job requeued more than
    // MaxBatchRequeue times (default 5). Without a bound, a job that
    // failures interrupt faster than it can run would be retried forever.
    std::uint32_t max_requeues = 5;
    std::uint64_t seed = 1;  // of the failures (the workload has its own)
    // External fragmentation is costly (it copies the allocator), so it is
    // sampled at this many evenly spaced moments of the arrival window;
    // each sample also holds the compaction and the allocatable jobs by
    // size of its moment (fragmentation_sample).
    std::size_t fragmentation_samples = 50;
    // ... weighted over the workload's this-many most frequent job sizes.
    std::size_t fragmentation_sizes = 12;
    // Moment of the occupancy snapshot; nullopt: the middle of the arrival
    // window.
    std::optional<double> snapshot_s;
    // Overrides default_request.
    std::function<request(const job&)> to_request;
    // Called now and then with the share of jobs done (0..1).
    std::function<void(double)> progress;
};

namespace detail {

// Answers no later moment can change: the job leaves the queue.
constexpr bool never_placeable(errc e) noexcept { return e != errc::ok && !may_succeed_later(e); }

template <class Allocator, class Queue>
class engine {
public:
    engine(Allocator allocator, const workload& w, const engine_options& options, const Queue& queue)
        : alloc_(std::move(allocator)),
          jobs_(w.jobs),
          options_(options),
          queue_policy_(queue),
          failures_(options.failures, alloc_.topo().node_count(), options.seed) {
        const std::size_t n = jobs_.size();
        requests_.reserve(n);
        for (const auto& j : jobs_) requests_.push_back(options_.to_request ? options_.to_request(j) : default_request(j));
        number_request_classes();
        outcomes_.resize(n);
        allocation_.resize(n);
        enqueued_at_.assign(n, 0.0);
        waited_.assign(n, {});
        left_queue_.assign(n, 0);
        const std::uint32_t domain_gpus = alloc_.topo().max_domain_gpus();
        for (std::size_t i = 0; i < n; ++i) outcomes_[i].min_domains = min_domains_for(jobs_[i].gpus, domain_gpus);
        window_s_ = n != 0 ? jobs_.back().submit_s : 0.0;
        stall_s_ = (options_.failures.node_mtbf_hours + options_.failures.repair_hours) * 3600.0;
        snapshot_s_ = options_.snapshot_s.value_or(window_s_ / 2.0);
        build_size_mix();
    }

    policy_result run() {
        last_t_ = 0.0;
        constexpr double none = std::numeric_limits<double>::infinity();
        std::size_t events = 0;
        bool stopped = false;
        while (true) {
            const bool work_left = next_arrival_ < jobs_.size() || !running_.empty() || queue_.size() > gone_;
            if (!work_left) break;
            double next = none;
            if (next_arrival_ < jobs_.size()) next = jobs_[next_arrival_].submit_s;
            if (!running_.empty()) next = std::min(next, running_.begin()->first);
            if (!failures_.empty()) next = std::min(next, failures_.next_time());
            if (idle_since_) next = std::min(next, *idle_since_ + stall_s_);
            if (next == none) {
                // Only jobs waiting on nodes that never come back, no event
                // left to change that: they can never start.
                // (One may start once the head's reservation is gone.)
                give_up_heads(job_state::unplaceable);
                record_point();
                continue;
            }
            if (options_.until_s && next > *options_.until_s) {
                advance(*options_.until_s);
                stopped = true;
                break;
            }
            advance(next);
            now_ = next;
            complete_due();
            apply_node_events();
            admit_arrivals();
            pass();
            drop_stuck();
            if (idle_since_ && now_ >= *idle_since_ + stall_s_) give_up_heads(job_state::abandoned);
            note_idle();
            record_point();
            if (options_.progress && (++events & 4095) == 0)
                options_.progress(static_cast<double>(finished_) / static_cast<double>(std::max<std::size_t>(jobs_.size(), 1)));
        }
        return finish(stopped);
    }

    // ---- the context a queue discipline sees (see queue.hpp) --------------
    class context {
    public:
        explicit context(engine& e) noexcept : e_(e) {}
        double now() const noexcept { return e_.now_; }
        std::span<const std::uint32_t> queue() const noexcept { return e_.live_queue(); }
        bool waiting(std::uint32_t j) const noexcept { return e_.left_queue_[j] == 0; }
        const request& request_of(std::uint32_t j) const noexcept { return e_.requests_[j]; }
        std::uint32_t request_class(std::uint32_t j) const noexcept { return e_.request_class_[j]; }
        std::uint32_t request_classes() const noexcept { return e_.request_classes_; }
        double duration_of(std::uint32_t j) const noexcept { return e_.jobs_[j].duration_s; }
        const Allocator& allocator() const noexcept { return e_.alloc_; }
        Allocator& what_if() {
            // Copy-assigning into the kept copy reuses its buffers: far fewer
            // allocations than a fresh copy per pass.
            if (e_.what_if_) *e_.what_if_ = e_.alloc_;
            else e_.what_if_.emplace(e_.alloc_);
            return *e_.what_if_;
        }
        Allocator& kept_what_if() {
            if (!e_.what_if_) e_.what_if_.emplace(e_.alloc_);
            return *e_.what_if_;
        }
        std::uint64_t disruptions() const noexcept { return e_.node_events_; }
        std::uint64_t changes() const noexcept { return e_.change_; }
        const std::set<std::pair<double, std::uint32_t>>& running_by_end() const noexcept { return e_.running_; }
        allocation_id allocation_of(std::uint32_t j) const noexcept { return e_.allocation_[j]; }
        std::span<const std::pair<double, node_id>> pending_repairs() const noexcept { return e_.repairs_; }
        void note_reservation(std::uint32_t j, double t) noexcept {
            if (e_.outcomes_[j].reserved_s < 0.0) e_.outcomes_[j].reserved_s = t;
        }
        start_result try_start(std::uint32_t j) {
            return e_.try_start(j, [](allocation_id, const allocation_record&, double) { return true; });
        }
        template <class Accept>
        start_result try_start(std::uint32_t j, Accept&& accept) {
            return e_.try_start(j, accept);
        }

    private:
        engine& e_;
    };

private:
    template <class Accept>
    start_result try_start(std::uint32_t j, Accept&& accept) {
        if (left_queue_[j] != 0) return {start_status::started, errc::ok};
        const request& req = requests_[j];
        // Same request, same state (nothing started since): same answer.
        // Saves re-asking the policy for every queued job of one shape.
        const std::uint32_t c = request_class_[j];
        if (refused_in_change_[c] == change_) {
            note_wait_reason(j, refused_why_[c]);
            return {start_status::waits, outcomes_[j].reason = refused_why_[c]};
        }
        auto id = alloc_.try_allocate(req);
        if (!id) {
            outcomes_[j].reason = id.error();
            note_wait_reason(j, id.error());
            if (never_placeable(id.error())) {
                make_unplaceable(j, id.error());
                return {start_status::never, id.error()};
            }
            refused_in_change_[c] = change_;
            refused_why_[c] = id.error();
            return {start_status::waits, id.error()};
        }
        const allocation_record& record = *alloc_.find(*id);
        auto& out = outcomes_[j];
        const double slowdown = options_.cost.slowdown(record.domains, out.min_domains);
        const double run = jobs_[j].duration_s * (options_.cost.stretch_runtime ? slowdown : 1.0);
        if (!accept(*id, record, now_ + run)) {
            (void)alloc_.release(*id);
            return {start_status::declined, errc::ok};
        }
        ++change_;
        out.state = job_state::running;
        out.reason = errc::ok;
        out.start_s = now_;
        out.end_s = now_ + run;
        out.run_s = run;
        out.slowdown = slowdown;
        out.held_gpus = record.held_gpus;
        out.domains = record.domains;
        out.wait_s += now_ - enqueued_at_[j];
        comm_lost_gpu_hours_ += static_cast<double>(jobs_[j].gpus) * jobs_[j].duration_s * (slowdown - 1.0) / 3600.0;
        useful_ += useful_share(j);
        allocation_[j] = *id;
        job_of_allocation_.insert(id->value, j);
        running_.emplace(out.end_s, j);
        leave_queue(j);
        return {start_status::started, errc::ok};
    }

    // Jobs leave the queue by a flag; the vector is compacted once a good
    // share of it is gone, so removals cost O(1) amortized, not O(queue).
    void leave_queue(std::uint32_t j) {
        close_wait(j);
        left_queue_[j] = 1;
        ++gone_;
    }

    // The time a job waits, split by the policy's answer while it waited
    // (job_outcome::longest_wait_reason): [0] its turn behind other jobs,
    // then insufficient_free, fragmented, exceeds_healthy.
    struct wait_split {
        std::array<double, 4> by_reason{};
        double since = 0.0;
        std::uint8_t now = 0;  // the slot the time since `since` goes to
    };
    static std::uint8_t wait_slot(errc why) noexcept {
        switch (why) {
            case errc::insufficient_free: return 1;
            case errc::fragmented: return 2;
            case errc::exceeds_healthy: return 3;
            default: return 0;
        }
    }
    void start_wait(std::uint32_t j) noexcept {
        waited_[j].since = now_;
        waited_[j].now = 0;
    }
    void close_wait(std::uint32_t j) noexcept {
        wait_split& w = waited_[j];
        w.by_reason[w.now] += now_ - w.since;
        w.since = now_;
    }
    void note_wait_reason(std::uint32_t j, errc why) noexcept {
        const std::uint8_t slot = wait_slot(why);
        if (slot == waited_[j].now) return;
        close_wait(j);
        waited_[j].now = slot;
    }
    // The slot with the most time, the first among equals.
    static errc longest_wait(const wait_split& w) noexcept {
        constexpr errc reasons[] = {errc::ok, errc::insufficient_free, errc::fragmented, errc::exceeds_healthy};
        std::size_t best = 0;
        for (std::size_t i = 1; i < w.by_reason.size(); ++i)
            if (w.by_reason[i] > w.by_reason[best]) best = i;
        return reasons[best];
    }

    // Numbers the distinct requests, so that the memos of refusals (here
    // and in the disciplines) are an array read per queued job rather than
    // a comparison with each request refused so far. In order of first
    // appearance, through a hash table: a sort of the jobs by request was a
    // tenth of a Philly-size replay.
    void number_request_classes() {
        std::unordered_map<request, std::uint32_t> class_of;
        request_class_.resize(requests_.size());
        for (std::size_t j = 0; j < requests_.size(); ++j) {
            // Runs of equal requests (a trace's many 1-GPU jobs) skip the hash.
            if (j > 0 && requests_[j] == requests_[j - 1]) {
                request_class_[j] = request_class_[j - 1];
                continue;
            }
            const auto next = static_cast<std::uint32_t>(class_of.size());
            request_class_[j] = class_of.try_emplace(requests_[j], next).first->second;
        }
        request_classes_ = static_cast<std::uint32_t>(class_of.size());
        refused_in_change_.assign(request_classes_, 0);
        refused_why_.assign(request_classes_, errc::ok);
    }

    void compact_queue() {
        std::erase_if(queue_, [this](std::uint32_t j) { return left_queue_[j] != 0; });
        gone_ = 0;
        first_live_ = 0;
    }

    // queue_ from its first job still waiting. The jobs that start are
    // mostly at the head, and until a compaction their entries stay: on a
    // long queue every pass would step over thousands of them (most of a
    // replay's time for a policy that keeps the queue long). Each entry is
    // stepped over once.
    std::span<const std::uint32_t> live_queue() noexcept {
        while (first_live_ < queue_.size() && left_queue_[queue_[first_live_]] != 0) ++first_live_;
        return std::span<const std::uint32_t>(queue_).subspan(first_live_);
    }

    // The first job still waiting, if any.
    std::optional<std::uint32_t> queue_head() {
        const auto live = live_queue();
        if (live.empty()) return std::nullopt;
        return live.front();
    }

    void make_unplaceable(std::uint32_t j, errc why) {
        outcomes_[j].state = job_state::unplaceable;
        outcomes_[j].reason = why;
        ++finished_;
        leave_queue(j);
    }

    void pass() {
        ++change_;
        context ctx(*this);
        queue_policy_.schedule(ctx);
        if (gone_ > 16 && gone_ * 4 > queue_.size()) compact_queue();
    }

    // On an empty, fully healthy cluster nothing will ever free more room, so
    // a head that still waits can never start: it is reported, not kept.
    void drop_stuck() {
        if (repairs_.empty() && alloc_.state().healthy_gpus() == alloc_.topo().gpu_count())
            give_up_heads(job_state::unplaceable);
    }

    // While nothing runs, ends the head of the queue as `how` (unplaceable
    // or abandoned, with the policy's last answer as the reason) and lets
    // the jobs behind it try (a head's reservation may have kept them
    // back), until one starts or the queue is empty.
    void give_up_heads(job_state how) {
        while (running_.empty()) {
            const auto head = queue_head();
            if (!head) return;
            const errc why = outcomes_[*head].reason == errc::ok ? errc::fragmented : outcomes_[*head].reason;
            if (how == job_state::unplaceable) {
                make_unplaceable(*head, why);
            } else {
                outcomes_[*head].state = how;
                outcomes_[*head].reason = why;
                outcomes_[*head].end_s = now_;
                ++finished_;
                leave_queue(*head);
            }
            pass();
        }
    }

    // The replay's stall: with random failures, nothing running, no
    // arrival left and jobs waiting, only the nodes' health changes. The
    // waiting jobs may need more nodes up at once than failures ever leave
    // (failures every hour and repairs in four: a rack's 18 nodes are all
    // up one moment in 0.2^18), and the failures never run out. So a stall
    // lasts at most one mean failure-and-repair cycle of a node (every node
    // down when it began has been repaired by then); then the waiting jobs
    // are given up as abandoned. Without random failures a stall ends by
    // drop_stuck or when no event is left.
    void note_idle() {
        const bool idle = failures_.random() && running_.empty() && next_arrival_ == jobs_.size() && queue_.size() > gone_;
        if (!idle) idle_since_.reset();
        else if (!idle_since_) idle_since_ = now_;
    }

    void complete_due() {
        while (!running_.empty() && running_.begin()->first <= now_) {
            const std::uint32_t j = running_.begin()->second;
            running_.erase(running_.begin());
            stop_running(j);
            outcomes_[j].state = job_state::completed;
            outcomes_[j].end_s = now_;
            makespan_s_ = std::max(makespan_s_, now_);
            ++finished_;
        }
    }

    // What job j adds to the useful GPU count while it runs.
    double useful_share(std::uint32_t j) const noexcept {
        return static_cast<double>(jobs_[j].gpus) / (options_.cost.stretch_runtime ? outcomes_[j].slowdown : 1.0);
    }

    void stop_running(std::uint32_t j) {
        useful_ -= useful_share(j);
        if (running_.empty()) useful_ = 0.0;  // no rounding residue when idle
        (void)alloc_.release(allocation_[j]);
        job_of_allocation_.erase(allocation_[j].value);
        allocation_[j] = {};
    }

    void apply_node_events() {
        while (!failures_.empty() && failures_.next_time() <= now_) {
            const node_event e = failures_.pop();
            ++node_events_;
            hit_.clear();
            if (!alloc_.set_health(e.node, e.to, hit_)) continue;
            std::erase_if(repairs_, [&](const auto& r) { return r.second == e.node; });
            if (e.to == node_health::down && alloc_.state().health(e.node) == node_health::down) {
                // What a scheduler expects, for its reservations; the real
                // repair may come at another time.
                const std::pair<double, node_id> due{now_ + options_.failures.repair_hours * 3600.0, e.node};
                repairs_.insert(std::upper_bound(repairs_.begin(), repairs_.end(), due), due);
            }
            for (const allocation_id id : hit_) requeue(job_of_allocation_.at(id.value));
        }
    }

    // A job whose node failed loses its progress and waits again, at its
    // original place in the queue, unless failures cut it short more often
    // than max_requeues allows: then it is given up.
    void requeue(std::uint32_t j) {
        auto& out = outcomes_[j];
        running_.erase({out.end_s, j});
        stop_running(j);
        failure_lost_gpu_hours_ += static_cast<double>(jobs_[j].gpus) * (now_ - out.start_s) / 3600.0;
        ++out.failures;
        ++requeues_;
        if (out.failures > options_.max_requeues) {
            out.state = job_state::abandoned;
            out.end_s = now_;
            ++finished_;
            return;
        }
        out.state = job_state::waiting;
        out.start_s = out.end_s = -1.0;
        out.domains = 0;
        enqueued_at_[j] = now_;
        start_wait(j);
        compact_queue();  // j's old entry must go before it comes back
        left_queue_[j] = 0;
        queue_.insert(std::lower_bound(queue_.begin(), queue_.end(), j), j);
    }

    void admit_arrivals() {
        for (; next_arrival_ < jobs_.size() && jobs_[next_arrival_].submit_s <= now_; ++next_arrival_) {
            const auto j = static_cast<std::uint32_t>(next_arrival_);
            enqueued_at_[j] = now_;
            start_wait(j);
            outcomes_[j].state = job_state::waiting;
            queue_.push_back(j);
        }
    }

    // Integrates the occupancy from the last moment up to t, and takes the
    // samples that fall in between (the state is constant there).
    void advance(double t) {
        const auto& state = alloc_.state();
        const double held = static_cast<double>(state.held_gpus() - state.held_gpus_on_down_nodes());
        const double idle = static_cast<double>(internal_fragmentation_of(state).idle_held_gpus);
        const double healthy = static_cast<double>(state.healthy_gpus());
        const double useful = std::max(useful_, 0.0);
        const double in_window = std::max(0.0, std::min(t, window_s_) - std::min(last_t_, window_s_));
        const double all = t - last_t_;
        held_window_ += held * in_window;
        idle_window_ += idle * in_window;
        useful_window_ += useful * in_window;
        healthy_window_ += healthy * in_window;
        held_all_ += held * all;
        idle_all_ += idle * all;
        useful_all_ += useful * all;
        healthy_all_ += healthy * all;
        const std::size_t samples = options_.fragmentation_samples;
        while (next_sample_ < samples && window_s_ > 0.0) {
            const double at = window_s_ * (static_cast<double>(next_sample_) + 0.5) / static_cast<double>(samples);
            if (at >= t) break;
            const compaction c = compaction_of(alloc_.state());
            fragmentation_.push_back({at, weighted_external_fragmentation(alloc_, std::span<const topoblock::size_weight>(size_mix_)),
                                      c.occupied_domains, c.fewest_domains, allocatable_of(alloc_.state())});
            ++next_sample_;
        }
        if (snapshot_.t < 0.0 && snapshot_s_ < t) take_snapshot();
        last_t_ = t;
    }

    void take_snapshot() {
        const auto& state = alloc_.state();
        const topology& topo = alloc_.topo();
        snapshot_.t = snapshot_s_;
        snapshot_.cells.assign(topo.gpu_count(), {});
        for (node_id n = 0; n < topo.node_count(); ++n) {
            const node_info& node = topo.node(n);
            for (std::uint32_t g = 0; g < node.gpus; ++g) {
                auto& cell = snapshot_.cells[node.first_gpu + g];
                if (state.health(n) == node_health::down) {
                    cell.job_gpus = -1;
                    continue;
                }
                const allocation_id owner = state.owner(n, g);
                if (!owner) continue;
                const std::uint32_t j = job_of_allocation_.at(owner.value);
                cell.job_gpus = static_cast<std::int32_t>(jobs_[j].gpus);
                cell.split = outcomes_[j].domains > outcomes_[j].min_domains;
            }
        }
    }

    // A point per moment the jobs' GPUs change (a start, an end, a cut):
    // at most 1 + 2 x (jobs + requeues) points, however many node events
    // come. A node event between two such moments adds no point: the step
    // before it carries the time average of the healthy GPUs over its span.
    void record_point() {
        const auto& state = alloc_.state();
        const timeline_point p{now_, static_cast<std::uint32_t>(state.held_gpus() - state.held_gpus_on_down_nodes()),
                               static_cast<std::uint32_t>(state.requested_gpus()),
                               static_cast<double>(state.healthy_gpus()), std::max(useful_, 0.0)};
        if (!timeline_.empty()) {
            if (p.healthy != healthy_now_) {
                healthy_area_ += healthy_now_ * (now_ - healthy_since_);
                healthy_since_ = now_;
                healthy_now_ = p.healthy;
                healthy_changed_ = true;
            }
            const auto& last = timeline_.back();
            if (last.held == p.held && last.requested == p.requested && last.useful == p.useful) return;
            if (last.t == p.t) timeline_.pop_back();
            else close_step(now_);
        }
        timeline_.push_back(p);
        healthy_now_ = p.healthy;
        healthy_since_ = now_;
        healthy_area_ = 0.0;
        healthy_changed_ = false;
    }

    // The last step's healthy GPUs: their time average up to `end` when node
    // events changed them during the step (only then: an average of equal
    // values could round).
    void close_step(double end) {
        auto& last = timeline_.back();
        if (!healthy_changed_ || !(end > last.t)) return;
        last.healthy = (healthy_area_ + healthy_now_ * (end - healthy_since_)) / (end - last.t);
    }

    // The workload's most frequent sizes, weighted by their job counts (the
    // FGD paper weighs fragmentation by the expected task mix).
    void build_size_mix() {
        std::map<std::uint32_t, std::size_t> counts;
        for (const auto& j : jobs_)
            if (j.gpus <= alloc_.topo().gpu_count()) ++counts[j.gpus];
        std::vector<std::pair<std::size_t, std::uint32_t>> by_count;
        for (const auto& [gpus, count] : counts) by_count.emplace_back(count, gpus);
        // Most frequent first; among equals the smaller size, for stability.
        std::sort(by_count.begin(), by_count.end(),
                  [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
        if (by_count.size() > options_.fragmentation_sizes) by_count.resize(options_.fragmentation_sizes);
        for (const auto& [count, gpus] : by_count) {
            job shape;
            shape.gpus = gpus;
            const request req = options_.to_request ? options_.to_request(shape) : default_request(shape);
            size_mix_.push_back({req, static_cast<double>(count)});
        }
    }

    policy_result finish(bool stopped) {
        policy_result r;
        r.policy = std::string(alloc_.policy_name());
        r.queue = std::string(queue_policy_.name());
        summary& s = r.totals;
        summarize_jobs(outcomes_, [this](std::size_t i) { return jobs_[i].gpus; }, s);
        if (stopped) makespan_s_ = *options_.until_s;
        s.makespan_s = makespan_s_;
        const bool use_window = healthy_window_ > 0.0;
        const double healthy = use_window ? healthy_window_ : healthy_all_;
        if (healthy > 0.0) {
            s.utilization = (use_window ? held_window_ : held_all_) / healthy;
            s.idle_held = (use_window ? idle_window_ : idle_all_) / healthy;
            s.useful_utilization = (use_window ? useful_window_ : useful_all_) / healthy;
        }
        double frag = 0.0;
        for (const auto& f : fragmentation_) frag += f.value;
        s.external_fragmentation = fragmentation_.empty() ? 0.0 : frag / static_cast<double>(fragmentation_.size());
        s.comm_lost_gpu_hours = comm_lost_gpu_hours_;
        s.failure_lost_gpu_hours = failure_lost_gpu_hours_;
        s.requeues = requeues_;
        for (std::uint32_t j = 0; j < outcomes_.size(); ++j) {
            if (outcomes_[j].state == job_state::waiting && left_queue_[j] == 0) close_wait(j);
            outcomes_[j].longest_wait_reason = longest_wait(waited_[j]);
        }
        r.jobs = std::move(outcomes_);
        if (!timeline_.empty()) close_step(last_t_);
        r.timeline = std::move(timeline_);
        r.fragmentation = std::move(fragmentation_);
        r.snapshot = std::move(snapshot_);
        return r;
    }

    Allocator alloc_;
    std::optional<Allocator> what_if_;
    const std::vector<job>& jobs_;
    const engine_options& options_;
    Queue queue_policy_;
    failure_schedule failures_;

    std::vector<request> requests_;
    std::vector<job_outcome> outcomes_;
    std::vector<allocation_id> allocation_;
    std::vector<allocation_id> hit_;  // jobs a node event hit; one buffer for every event
    std::vector<double> enqueued_at_;
    std::vector<wait_split> waited_;  // per job
    // A byte per job, not std::vector<bool>'s bit: EASY reads it for every
    // candidate of every pass, and the bit's shift and mask were a fifth of a
    // long-queue replay (contiguous-block's Philly).
    std::vector<std::uint8_t> left_queue_;
    id_map job_of_allocation_;  // allocation id -> job
    std::vector<std::uint32_t> queue_;  // job numbers, ascending = priority order
    std::set<std::pair<double, std::uint32_t>> running_;  // (end, job)
    std::vector<std::pair<double, node_id>> repairs_;     // (expected repair, node), by time
    // Jobs with equal requests share a class (request_class_[j], numbered
    // from 0); a class refused since the last change of the cluster
    // (change_: each pass and each start; ctx.changes() for the
    // disciplines' memos) is refused again without asking.
    std::vector<std::uint32_t> request_class_;
    std::uint32_t request_classes_ = 0;
    std::vector<std::uint64_t> refused_in_change_;  // [class]: the change_ it was refused in
    std::vector<errc> refused_why_;                  // [class]
    std::uint64_t change_ = 1;
    std::size_t gone_ = 0;  // entries of queue_ that left
    std::size_t first_live_ = 0;  // queue_'s entries before it all left (live_queue)

    std::size_t next_arrival_ = 0;
    std::size_t finished_ = 0;
    double now_ = 0.0;
    double last_t_ = 0.0;
    double window_s_ = 0.0;
    double snapshot_s_ = 0.0;
    double makespan_s_ = 0.0;
    double held_window_ = 0.0, idle_window_ = 0.0, healthy_window_ = 0.0;
    double held_all_ = 0.0, idle_all_ = 0.0, healthy_all_ = 0.0;
    double useful_ = 0.0, useful_window_ = 0.0, useful_all_ = 0.0;
    double comm_lost_gpu_hours_ = 0.0, failure_lost_gpu_hours_ = 0.0;
    std::uint64_t requeues_ = 0;
    std::uint64_t node_events_ = 0;

    std::vector<topoblock::size_weight> size_mix_;
    std::size_t next_sample_ = 0;
    std::vector<timeline_point> timeline_;
    // The healthy GPUs over the last step of timeline_ (record_point).
    double healthy_now_ = 0.0, healthy_since_ = 0.0, healthy_area_ = 0.0;
    bool healthy_changed_ = false;
    // When the current stall began (note_idle), and how long one may last.
    std::optional<double> idle_since_;
    double stall_s_ = 0.0;
    std::vector<fragmentation_sample> fragmentation_;
    occupancy_snapshot snapshot_;
};

}  // namespace detail

// Replays workload `w` (sorted by submission, as the readers and generators
// leave it) on `allocator` under queue discipline `queue`. Deterministic: the
// same inputs give the same result. Cost: O(events x (log jobs + policy
// decision)) plus the discipline's own work (EASY copies the allocator when
// it looks for a reservation) and the fragmentation samples.
//
// Every replay ends: each job completes, is unplaceable, is abandoned (cut
// short by failures more than max_requeues times, or waiting through a
// stall: see engine::note_idle), or is still running or waiting at
// options.until_s. Throws std::invalid_argument, before anything runs, when
// options.failures fails check_failure_model.
template <class Queue = easy_backfill, class Allocator>
policy_result simulate(Allocator allocator, const workload& w, const engine_options& options = {},
                       const Queue& queue = {}) {
    if (const auto checked = check_failure_model(options.failures, allocator.topo().node_count()); !checked)
        throw std::invalid_argument("engine_options::failures: " + checked.error().to_string());
    return detail::engine<Allocator, Queue>(std::move(allocator), w, options, queue).run();
}

}  // namespace topoblock::sim
