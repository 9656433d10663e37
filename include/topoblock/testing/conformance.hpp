#pragma once

// A conformance harness for placement policies, built-in or one's own: it
// runs a policy through random operations on an allocator kept in step with
// the brute-force reference model (testing/checked_world.hpp) and reports
// the first rule broken. It uses no test framework and throws nothing, so it
// fits any test:
//
//     auto report = topoblock::testing::check_policy(topo, my_policy{});
//     if (!report) std::cerr << report.first_failure << '\n';
//
// The operations: allocations of every request shape (GPUs and nodes, whole
// nodes, each locality, segments spread or not, exclusive domains), releases,
// health changes (up, drain, down), holds of GPUs used elsewhere, and hostile
// calls (an empty request, a segment that does not divide its job, more than
// the cluster, a node out of range, an unknown or released allocation id, a
// hold of GPUs a node lacks). After each one the harness checks:
//
// - the concept's contract: place() returns ok with pieces, or an errc that
//   says why not (never ok with nothing, never a busy or unusable GPU,
//   which the allocator reports as policy_error); a malformed request is
//   invalid_request and one larger than the cluster exceeds_cluster; plan()
//   and try_allocate() agree;
// - no GPU held twice or lost: the state matches the model GPU by GPU
//   (owners included), a rebuild from its records agrees (cluster_state::verify), and
//   a policy's indexes() member, when it has one, equals a fresh attach's
//   (testing/check_indexes.hpp);
// - pieces only on nodes that are up, in domains open to the job; a whole
//   node request holds whole nodes; an exclusive_domain job takes only idle
//   domains, and no other job enters them while it runs;
// - locality (conformance_options::locality): a locality::require job spans
//   no more domains than the empty cluster needs (topology::
//   fewest_domains_for), so a job that fits a domain lands in one; a job of
//   k segments spans at most k domains, exactly k when they are spread;
// - the strong guarantee: a failed call leaves the whole state as it was
//   (every node, GPU owner, domain counter, live record and total);
// - release returns everything: at the end every node is brought up and
//   every job released, after which the state equals a fresh allocator's and
//   (conformance_options::fresh_after_release) the policy places a set of
//   probe requests exactly as a fresh copy of it does.

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/fwd.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/sim/random.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/testing/checked_world.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace topoblock::testing {

struct conformance_options {
    // The same seed, topology and policy give the same operations.
    std::uint64_t seed = 1;
    // Random operations before the final release of everything.
    std::uint32_t operations = 2000;
    // Check the locality rules of request.hpp (locality::require and
    // segments). Off for a policy that documents other rules: first-fit
    // ignores locality, slurm-block follows Slurm's block rules.
    bool locality = true;
    // After everything is released, the policy places like a fresh copy of
    // itself. Off for a policy whose decisions depend on its history (a
    // rotating cursor) rather than on the state alone.
    bool fresh_after_release = true;
};

struct conformance_report {
    bool ok = true;
    // Empty when ok; else the rule broken, with the operation that broke it
    // and the seed, enough to replay it.
    std::string first_failure;
    // Operations run, up to and including the failing one.
    std::uint64_t operations = 0;
    // How the run went, to see that it exercised the policy: requests placed
    // and refused (well-formed ones), releases, health changes, holds, and
    // hostile calls.
    std::uint64_t placed = 0;
    std::uint64_t refused = 0;
    std::uint64_t released = 0;
    std::uint64_t health_changes = 0;
    std::uint64_t holds = 0;
    std::uint64_t hostile = 0;
    explicit operator bool() const noexcept { return ok; }
};

namespace detail {

// A request as text for a failure message: "gpus 16 prefer segment 8 spread".
inline std::string describe_request(const request& q) {
    std::string text = (q.what == unit::gpus ? "gpus " : "nodes ") + std::to_string(q.count);
    if (q.whole_nodes) text += " whole_nodes";
    if (q.where == locality::prefer) text += " prefer";
    if (q.where == locality::any) text += " any";
    if (q.segment != 0) text += " segment " + std::to_string(q.segment);
    if (q.spread_segments) text += " spread";
    if (q.exclusive_domain) text += " exclusive_domain";
    return text;
}

// The errors a placement may answer for a well-formed request that fits the
// cluster.
constexpr bool placement_refusal(errc e) noexcept {
    switch (e) {
        case errc::unsupported_request:
        case errc::exceeds_cluster:
        case errc::exceeds_domain:
        case errc::exceeds_healthy:
        case errc::insufficient_free:
        case errc::fragmented: return true;
        default: return false;
    }
}

// The domains `pieces` touch, each once.
template <class Pieces>
std::size_t domains_touched(const topology& topo, const Pieces& pieces) {
    std::vector<domain_id> seen;
    for (const piece p : pieces) {
        const domain_id d = topo.node(p.node).domain;
        if (std::find(seen.begin(), seen.end(), d) == seen.end()) seen.push_back(d);
    }
    return seen.size();
}

// The locality rules of request.hpp, for a placed request; empty when kept.
template <class Pieces>
std::string locality_broken(const topology& topo, const request& q, const Pieces& pieces) {
    const std::size_t spanned = domains_touched(topo, pieces);
    if (q.segmented()) {
        if (spanned > q.part_count()) return "a job of " + std::to_string(q.part_count()) + " segments spans " +
                                              std::to_string(spanned) + " domains";
        if (q.spread_segments && spanned != q.part_count())
            return "spread segments share a domain (" + std::to_string(spanned) + " domains for " +
                   std::to_string(q.part_count()) + " segments)";
        return {};
    }
    if (q.where != locality::require) return {};
    const std::uint32_t fewest = topo.fewest_domains_for(q.count, q.what == unit::nodes);
    if (spanned > fewest)
        return "a locality::require job spans " + std::to_string(spanned) + " domains where the empty cluster needs " +
               std::to_string(fewest);
    return {};
}

template <class Alloc>
model_pieces sorted_pieces(const Alloc& a, allocation_id id) {
    model_pieces got = to_pairs(a.find(id)->pieces);
    std::sort(got.begin(), got.end());
    return got;
}

inline model_pieces sorted_pieces(const placement& where) {
    model_pieces got = to_pairs(where.pieces());
    std::sort(got.begin(), got.end());
    return got;
}

// One run of the harness: the world, the random numbers and the report.
template <class Policy, class Capacity>
class conformance_run {
public:
    conformance_run(const topology& topo, const Policy& policy, const conformance_options& options,
                    conformance_report& report)
        : topo_(topo), policy_(policy), options_(options), report_(report), random_(options.seed),
          world_(topo, policy) {}

    // Empty when every operation kept the rules, else the first rule broken.
    std::string run() {
        for (std::uint32_t i = 0; i < options_.operations; ++i) {
            ++report_.operations;
            if (std::string why = step(); !why.empty()) return why;
        }
        ++report_.operations;
        return release_everything();
    }

    const std::string& last_operation() const noexcept { return operation_; }

private:
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return sim::uniform_int{lo, hi}(random_); }
    std::uint32_t between32(std::uint32_t lo, std::uint32_t hi) { return static_cast<std::uint32_t>(between(lo, hi)); }
    bool chance(std::uint32_t percent) { return between(1, 100) <= percent; }

    std::string step() {
        // Fewer allocations on a cluster mostly held, so that placements
        // keep being tried rather than refused.
        const bool crowded = world_.model().free_gpus() * 4 < topo_.gpu_count();
        const std::uint64_t roll = between(crowded ? 21 : 1, 100);
        if (roll <= 50 || world_.live_count() == 0) return allocate(random_request());
        if (roll <= 72) {
            const std::size_t i = static_cast<std::size_t>(between(0, world_.live_count() - 1));
            operation_ = "release of a live allocation";
            ++report_.released;
            return world_.release_live(i);
        }
        if (roll <= 84) return change_health();
        if (roll <= 90) return hold();
        return hostile();
    }

    request random_request() {
        request q;
        if (chance(25)) {
            const std::uint32_t largest = topo_.max_domain_nodes();
            q = request::nodes(chance(70) ? between32(1, 4) : between32(1, largest * 2));
        } else {
            constexpr std::uint32_t sizes[] = {1, 1, 1, 2, 4, 4, 8, 8, 16, 3, 6, 12};
            const std::uint32_t largest = topo_.max_domain_gpus();
            q = request::gpus(chance(75)   ? sizes[between(0, 11)]
                              : chance(80) ? between32(1, largest * 2 + 8)
                                           : between32(1, static_cast<std::uint32_t>(
                                                              std::min<std::uint64_t>(topo_.gpu_count(), npos32 - 1))));
            q.whole_nodes = chance(15);
        }
        q.where = static_cast<locality>(between(0, 2));
        q.exclusive_domain = chance(5);
        if (chance(10)) {
            // Mostly a segment that divides the job; the others are malformed.
            std::vector<std::uint32_t> divisors;
            for (std::uint32_t s = 1; s <= q.count && divisors.size() < 64; ++s)
                if (q.count % s == 0) divisors.push_back(s);
            q.segment = chance(85) ? divisors[between(0, divisors.size() - 1)] : between32(1, q.count);
            q.spread_segments = chance(50);
        }
        return q;
    }

    std::string allocate(const request& q) {
        operation_ = "allocate " + describe_request(q);
        placement planned;
        const errc plan_answer = world_.allocator().plan(q, planned);
        if (plan_answer == errc::ok && planned.empty()) return "place() returned ok with no pieces";
        bool placed = false;
        if (std::string why = world_.allocate(q, &placed); !why.empty()) return why;
        if (!placed) {
            if (!q.malformed()) ++report_.refused;
            if (plan_answer == errc::ok) return "plan() placed the request but try_allocate() refused it";
            // A failed call changes nothing, so plan() gave its answer.
            const errc e = plan_answer;
            const std::uint64_t total = q.what == unit::nodes ? topo_.node_count() : topo_.gpu_count();
            if (q.malformed()) return {};
            // A policy's permanent refusal comes before the size checks.
            if (q.count > total && e != errc::exceeds_cluster && e != errc::unsupported_request)
                return "a request larger than the cluster was " + std::string(to_string(e)) +
                       ", not exceeds_cluster (or unsupported_request)";
            if (!placement_refusal(e))
                return "a well-formed request was refused with " + std::string(to_string(e)) +
                       ", which is not a placement refusal";
            return {};
        }
        ++report_.placed;
        const auto& a = world_.allocator();
        const allocation_id id = world_.live_id(world_.live_count() - 1);
        if (plan_answer != errc::ok) return "try_allocate() placed a request plan() refused";
        if (sorted_pieces(a, id) != sorted_pieces(planned)) return "plan() and try_allocate() chose different GPUs";
        if (options_.locality)
            if (std::string why = locality_broken(topo_, q, a.find(id)->pieces); !why.empty()) return why;
        return {};
    }

    std::string change_health() {
        // Half the time a node that is not up comes back, so that the
        // cluster does not wither away; else any node to any health.
        std::vector<node_id> not_up;
        for (node_id n = 0; n < topo_.node_count(); ++n)
            if (world_.model().node_health[n] != reference_model::health::up) not_up.push_back(n);
        node_id n = 0;
        node_health h = node_health::up;
        if (!not_up.empty() && chance(50)) {
            n = not_up[between(0, not_up.size() - 1)];
        } else {
            n = between32(0, topo_.node_count() - 1);
            h = static_cast<node_health>(between(0, 2));
        }
        operation_ = "health of node " + topo_.node(n).name + " to " + std::string(to_string(h));
        ++report_.health_changes;
        return world_.set_health(n, h);
    }

    // GPUs used elsewhere: mostly unheld ones of one node, which the
    // allocator must take exactly when the model does.
    std::string hold() {
        const node_id n = between32(0, topo_.node_count() - 1);
        const gpu_mask unheld = world_.model().unheld_mask(n);
        const gpu_mask all = full_gpu_mask(topo_.node(n).gpus);
        gpu_mask mask = between(0, all) & (unheld != 0 && chance(80) ? unheld : all);
        if (mask == 0) mask = unheld != 0 ? lowest_bits(unheld, 1) : 1;
        const piece p{n, mask};
        operation_ = "hold of GPUs " + std::to_string(mask) + " of node " + topo_.node(n).name;
        ++report_.holds;
        return world_.hold({&p, 1});
    }

    std::string hostile() {
        ++report_.hostile;
        const node_id nodes = topo_.node_count();
        switch (between(0, 7)) {
            case 0: return allocate(request::gpus(0).with_locality(static_cast<locality>(between(0, 2))));
            case 1: return allocate(request::nodes(nodes + between32(1, 8)));
            case 2: return allocate(request::gpus(std::numeric_limits<std::uint32_t>::max()));
            case 3: {
                // A segment that does not divide its job.
                const std::uint32_t segment = between32(2, 8);
                return allocate(request::gpus(segment * between32(1, 4) + 1).with_segment(segment, chance(50)));
            }
            case 4: {
                const node_id n = nodes + between32(0, 100);
                operation_ = "health of node id " + std::to_string(n) + ", out of range";
                return world_.set_health(n, node_health::down);
            }
            case 5: {
                const auto& gone = world_.released();
                const allocation_id id = gone.empty() || chance(30) ? allocation_id{between(0, 1) == 0 ? 0 : ~0ULL}
                                                                    : gone[between(0, gone.size() - 1)];
                operation_ = "release of allocation id " + std::to_string(id.value) + ", not live";
                return world_.release_unknown(id);
            }
            case 6: {
                const piece p{nodes + between32(0, 100), 1};
                operation_ = "hold on node id " + std::to_string(p.node) + ", out of range";
                return world_.hold({&p, 1});
            }
            default: {
                const node_id n = between32(0, nodes - 1);
                const std::uint32_t gpus = topo_.node(n).gpus;
                const piece p{n, gpus >= 64 ? 0 : gpu_mask{1} << gpus};
                operation_ = "hold of a GPU node " + topo_.node(n).name + " lacks";
                return world_.hold({&p, 1});
            }
        }
    }

    // Every node up and every job released: the state is a fresh one's, and
    // the policy answers as a fresh copy does.
    std::string release_everything() {
        operation_ = "final release of everything";
        for (node_id n = 0; n < topo_.node_count(); ++n)
            if (world_.model().node_health[n] != reference_model::health::up)
                if (std::string why = world_.set_health(n, node_health::up); !why.empty()) return why;
        while (world_.live_count() > 0) {
            ++report_.released;
            if (std::string why = world_.release_live(between(0, world_.live_count() - 1)); !why.empty()) return why;
        }
        checked_world<Policy, Capacity> fresh(topo_, policy_);
        if (fingerprint_of(world_.allocator()) != fingerprint_of(fresh.allocator()))
            return "after everything was released the state differs from a fresh allocator's";
        if (!options_.fresh_after_release) return {};
        const std::uint32_t domain_gpus = topo_.max_domain_gpus(), domain_nodes = topo_.max_domain_nodes();
        const request probes[] = {request::gpus(1),
                                  request::gpus(4),
                                  request::nodes(1),
                                  request::gpus(domain_gpus),
                                  request::nodes(domain_nodes),
                                  request::gpus(domain_gpus + 1).with_locality(locality::prefer),
                                  request::gpus(8).with_exclusive_domain(),
                                  request::nodes(2).with_segment(1, true)};
        for (const request& q : probes) {
            placement used, fresh_choice;
            const errc e = world_.allocator().plan(q, used);
            const errc fresh_e = fresh.allocator().plan(q, fresh_choice);
            if (e != fresh_e || sorted_pieces(used) != sorted_pieces(fresh_choice))
                return "after everything was released the policy places " + describe_request(q) +
                       " differently from a fresh copy (" + std::string(to_string(e)) + " against " +
                       std::string(to_string(fresh_e)) + ")";
        }
        return {};
    }

    const topology& topo_;
    const Policy& policy_;
    const conformance_options& options_;
    conformance_report& report_;
    sim::random_engine random_;
    checked_world<Policy, Capacity> world_;
    std::string operation_;
};

}  // namespace detail

// Runs `policy` on `topo` through options.operations random operations and a
// final release of everything, and reports the first rule broken (see the
// top of this header). Throws nothing: an allocator that cannot be built
// (the policy's validate refuses the topology) or an exception from the
// policy is a failure in the report. Cost: O(GPUs) per operation, for the
// comparisons with the model.
template <class Policy, class Capacity = default_capacity>
conformance_report check_policy(const topology& topo, const Policy& policy, const conformance_options& options = {}) {
    conformance_report report;
    const std::string where = " (seed " + std::to_string(options.seed) + ", policy " +
                              std::string(policy_traits<Policy>::name(policy)) + ")";
    std::optional<detail::conformance_run<Policy, Capacity>> run;
    const auto fail = [&](const std::string& why) {
        report.ok = false;
        report.first_failure = "operation " + std::to_string(report.operations) +
                               (run ? ", " + run->last_operation() : std::string()) + ": " + why + where;
    };
    try {
        auto made = basic_allocator<Policy, Capacity>::create(topo, policy);
        if (!made) {
            report.ok = false;
            report.first_failure = "the allocator could not be built: " + made.error().to_string() + where;
            return report;
        }
        run.emplace(topo, policy, options, report);
        if (std::string why = run->run(); !why.empty()) fail(why);
    } catch (const std::exception& e) {
        fail(std::string("threw ") + e.what());
    } catch (...) {
        fail("threw an exception not derived from std::exception");
    }
    return report;
}

}  // namespace topoblock::testing
