#pragma once

#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/state/free_capacity.hpp>
#include <topoblock/topology/health.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

// Queue disciplines: which waiting jobs to start, and when. The engine calls
// schedule(ctx) once per moment something changed (arrival, completion,
// failure, repair); the discipline starts jobs through ctx. Documented in
// docs/simulate.md ("Queueing").
//
// What the engine's context offers (Ctx in schedule):
//
// | expression                  | result                                                 |
// | --------------------------- | ------------------------------------------------------ |
// | ctx.now()                   | double: the current time, seconds                      |
// | ctx.queue()                 | span of job numbers, in priority order (submission     |
// |                             | order; a requeued job keeps its place); it may still   |
// |                             | hold jobs that left the queue: skip them               |
// | ctx.waiting(j)              | bool: j is still in the queue                          |
// | ctx.request_of(j)           | const request&: what job j asks the allocator for      |
// | ctx.request_class(j)        | uint32: a number per distinct request, below           |
// |                             | ctx.request_classes(): equal requests, equal numbers   |
// | ctx.duration_of(j)          | double: j's run time before any communication slowdown |
// | ctx.try_start(j)            | start_result: places j now if the policy can           |
// | ctx.try_start(j, accept)    | as above, but first calls accept(id, record, end_s)    |
// |                             | with the trial allocation and the planned end; false   |
// |                             | undoes it                                              |
// | ctx.allocator()             | const allocator&: the cluster as it is now             |
// | ctx.what_if()               | allocator&: a scratch copy of it, to change at will;   |
// |                             | each call copies afresh (reusing the memory)           |
// | ctx.kept_what_if()          | allocator&: that copy as the last use left it          |
// | ctx.changes()               | uint64: moves on at each pass and at each start: an    |
// |                             | answer noted with it holds while it is the same        |
// | ctx.disruptions()           | count of node failures and repairs so far: what no     |
// |                             | reservation could foresee                              |
// | ctx.running_by_end()        | ordered range of (end_s, job) of the running jobs      |
// | ctx.allocation_of(j)        | allocation_id of running job j                         |
// | ctx.pending_repairs()       | span of (repair_s, node) of the nodes now down, by time |
// | ctx.note_reservation(j, t)  | records that job j was promised a start at t           |
//
// A job the policy can never place (errc::invalid_request,
// unsupported_request, exceeds_cluster, exceeds_domain, policy_error) leaves
// the queue as unplaceable inside try_start; the discipline just moves on.

namespace topoblock::sim {

enum class start_status : std::uint8_t {
    started,   // placed and running
    declined,  // placeable, but accept() said no: nothing changed
    waits,     // not now (insufficient_free, fragmented, exceeds_healthy)
    never,     // never placeable: reported as unplaceable
};

struct start_result {
    start_status status = start_status::waits;
    errc reason = errc::ok;
};

namespace detail {

// At most what `state` would have free for a new job with `runs` held (as
// allocator::hold holds them), in GPUs or in wholly free nodes: a hold takes
// their GPUs on up nodes, and their wholly free nodes, out of it, and an
// exclusive job the rest of its domains too; GPUs on draining nodes were
// never free. A hold that fails takes nothing, and the caller must not rely
// on the bound then.
template <class State>
std::uint64_t free_after_hold(const State& state, std::span<const piece_run> runs, unit what) noexcept {
    const free_capacity& free = state.available();
    std::uint64_t taken = 0;
    for (const piece_run& r : runs) {
        const auto gpus = static_cast<std::uint64_t>(std::popcount(r.gpus));
        for (node_id n = r.first; n < r.first + r.nodes; ++n) {
            if (state.health(n) != node_health::up) continue;
            if (what == unit::gpus) taken += gpus;
            else if (state.unheld_gpus(n) == state.node_full_mask(n) && state.domain_open(state.topo().place(n).domain))
                ++taken;
        }
    }
    const std::uint64_t before = what == unit::nodes ? free.nodes : free.gpus;
    return before - std::min(before, taken);
}

}  // namespace detail

// First come, first served: start jobs in order, stop at the first that does
// not fit. Nothing overtakes the head, so big jobs are never starved, and
// small jobs wait behind them.
struct fifo {
    std::string_view name() const noexcept { return "fifo"; }

    template <class Ctx>
    void schedule(Ctx& ctx) const {
        for (const std::uint32_t j : ctx.queue())
            if (ctx.waiting(j) && ctx.try_start(j).status == start_status::waits) return;
    }
};

// EASY backfill (Lifka 1995; Slurm's sched/backfill in its common setup):
// FIFO until the head job does not fit; the head gets a reservation at the
// earliest time it can start; later jobs may start now if they do not delay
// that reservation.
//
// With topology constraints "enough free GPUs at the reservation" is not
// enough: the head may need them in one domain. So the reservation is found
// on a scratch copy of the allocator: running jobs are released in order of
// their end (and down nodes repaired at their expected repair time) until
// the policy itself can place the head. The copy, with the backfilled jobs
// held on it, is kept for later passes while the head, the reservation and
// the node health stay the same: every change in between was foreseen on it
// (completions at their planned ends, backfills checked against it). A later job is then started if it
// ends by the reservation, or if, with its GPUs also held on that scratch
// copy (and those of every job backfilled past the reservation before it),
// the policy can still place the head. Run times are known exactly (the
// trace's, times the communication slowdown), so without failures the head
// starts no later than its first reservation; tests/sim/queue.cpp checks it.
struct easy_backfill {
    // Backfill looks at no more than this many jobs behind the head per
    // pass, as Slurm's bf_max_job_test (default 500) does: it bounds the
    // cost of a pass when the queue is long.
    std::size_t max_candidates = 500;
    // false: every candidate is tried, none skipped by the memo of
    // declined requests below: the same decisions, slower; the reference
    // the memo is tested against.
    bool remember_declined = true;

    std::string_view name() const noexcept { return "easy"; }

    template <class Ctx>
    void schedule(Ctx& ctx) {
        const auto queue = ctx.queue();
        std::size_t i = 0;
        while (i < queue.size() && (!ctx.waiting(queue[i]) || ctx.try_start(queue[i]).status != start_status::waits)) ++i;
        if (i == queue.size()) return;
        const std::uint32_t head = queue[i];
        const request& head_request = ctx.request_of(head);

        // Built on the first candidate that could start: most passes on a
        // full cluster have none, and then cost no copy.
        using allocator_type = std::remove_cvref_t<decltype(ctx.allocator())>;
        allocator_type* scratch = nullptr;
        std::optional<double> shadow;
        bool searched = false;
        placement trial;
        if (kept_.valid && kept_.head == head && kept_.disruptions == ctx.disruptions() && kept_.shadow > ctx.now()) {
            scratch = &ctx.kept_what_if();
            shadow = kept_.shadow;
            searched = true;
        }

        const auto accept = [&](allocation_id candidate, const allocation_record& record, double end_s) {
            if (!searched) {
                searched = true;
                scratch = &ctx.what_if();
                (void)scratch->release(candidate);  // the what-if starts from before the trial
                shadow = reservation(ctx, *scratch, head_request, trial);
                kept_ = {shadow.has_value(), head, shadow.value_or(0.0), ctx.disruptions()};
                if (shadow) ctx.note_reservation(head, *shadow);
            }
            if (!shadow) return false;  // the head cannot be promised a time: protect it fully
            if (end_s <= *shadow) return true;
            // Held there, the candidate would leave too little free for the
            // head's size alone, and the plan below would refuse the head:
            // said without the hold, which on a cluster whose head waits
            // for most of it is nearly every candidate's answer.
            if (detail::free_after_hold(scratch->state(), record.pieces.runs(), head_request.what) < head_request.count)
                return false;
            auto held = scratch->hold(record.pieces.to_vector(), record.asked);
            if (!held) return false;
            if (scratch->plan(head_request, trial) == errc::ok) return true;
            (void)scratch->release(*held);
            return false;
        };
        // A request declined with run time d is declined again with any run
        // time >= d while nothing starts: same state, same placement, same
        // slowdown, a later end. Remembering that keeps a long queue of
        // identical small jobs from being tried one by one: per request
        // class, the shortest run time declined since the last start.
        if (declined_in_.size() < ctx.request_classes()) {
            declined_in_.resize(ctx.request_classes(), 0);
            declined_shortest_.resize(ctx.request_classes(), 0.0);
        }
        std::size_t candidates = 0;
        for (++i; i < queue.size() && candidates < max_candidates; ++i) {
            if (ctx.allocator().state().available().gpus == 0) break;
            const std::uint32_t j = queue[i];
            if (!ctx.waiting(j)) continue;
            ++candidates;
            const std::uint32_t c = ctx.request_class(j);
            const double d = ctx.duration_of(j);
            const bool known = remember_declined && declined_in_[c] == ctx.changes();
            if (known && d >= declined_shortest_[c]) continue;
            if (ctx.try_start(j, accept).status == start_status::declined) {
                declined_shortest_[c] = known ? std::min(declined_shortest_[c], d) : d;
                declined_in_[c] = ctx.changes();
            }
        }
    }

private:
    // The reservation the kept what-if copy stands for.
    struct kept_reservation {
        bool valid = false;
        std::uint32_t head = 0;
        double shadow = 0.0;
        std::uint64_t disruptions = 0;
    };
    kept_reservation kept_;
    // The declined memo of schedule(): a class's entry counts while its
    // mark is ctx.changes(), which moves on at each pass and each start.
    std::vector<std::uint64_t> declined_in_;
    std::vector<double> declined_shortest_;

    // The earliest moment the head can be placed, with `scratch` advanced to
    // it; nullopt when even the emptied cluster cannot hold it.
    template <class Ctx, class Allocator>
    static std::optional<double> reservation(Ctx& ctx, Allocator& scratch, const request& head, placement& trial) {
        const auto& running = ctx.running_by_end();
        const auto repairs = ctx.pending_repairs();
        auto next_end = running.begin();
        std::size_t next_repair = 0;
        while (next_end != running.end() || next_repair < repairs.size()) {
            double t = next_end != running.end() ? next_end->first : repairs[next_repair].first;
            if (next_repair < repairs.size() && repairs[next_repair].first < t) t = repairs[next_repair].first;
            for (; next_end != running.end() && next_end->first <= t; ++next_end)
                (void)scratch.release(ctx.allocation_of(next_end->second));
            for (; next_repair < repairs.size() && repairs[next_repair].first <= t; ++next_repair)
                (void)scratch.up(repairs[next_repair].second);
            if (scratch.plan(head, trial) == errc::ok) return t;
        }
        return std::nullopt;
    }
};

}  // namespace topoblock::sim
