// The public conformance harness: every built-in policy passes it on several
// topologies, and policies broken on purpose, each in one way, fail it with
// the rule they broke.

#include "../reference_model.hpp"
#include "../walk_share.hpp"

#include <topoblock/testing/conformance.hpp>
#include <topoblock/topoblock.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace test_testing_conformance {

using namespace topoblock;
using topoblock::testing::check_policy;
using topoblock::testing::conformance_options;
using topoblock::testing::conformance_report;

namespace {

struct named_topology {
    std::string name;
    topology topo;
};

// Presets, leaf groups, partial racks, and hgx servers beside NVL72 racks.
std::vector<named_topology> topologies() {
    std::vector<named_topology> all;
    all.push_back({"gb200_nvl72(2)", gb200_nvl72(2)});
    all.push_back({"nvl72:4@2", *parse_topology_spec("nvl72:4@2")});
    all.push_back({"hgx8:12@4", *parse_topology_spec("hgx8:12@4")});
    all.push_back({"nvl36x2(2)", nvl36x2(2)});
    all.push_back({"partial racks", topoblock::test::partial_racks()});
    all.push_back({"nvl72:1+hgx8:4", *parse_topology_spec("nvl72:1+hgx8:4")});
    all.push_back({"nvl72:2+hgx8:6@2", *parse_topology_spec("nvl72:2+hgx8:6@2")});
    // Empty domains that declare more GPUs per node than any node has.
    topology_builder gaps;
    gaps.add_numbered_domain("rack1", 18, 4, "a", 1, 2);
    gaps.add_domain("gap", 8, {});
    gaps.add_numbered_domain("rack2", 16, 4, "b", 1, 2);
    gaps.add_domain("tail", 16, {});
    all.push_back({"empty domains with wider nodes", *gaps.build()});
    return all;
}

// `fresh_after_release`: off for a policy whose decisions depend on its
// history (frag-aware's learned mix). Unoptimised builds run the first seed
// only (tests/walk_share.hpp).
template <class Policy>
void passes_everywhere(const Policy& policy, bool locality, bool fresh_after_release = true) {
    const std::uint64_t seeds = topoblock::test::walk_share == 1 ? 2 : 1;
    for (const named_topology& t : topologies()) {
        for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
            conformance_options options;
            options.seed = seed;
            options.operations = 1200;
            options.locality = locality;
            options.fresh_after_release = fresh_after_release;
            const conformance_report report = check_policy(t.topo, policy, options);
            INFO(t.name, ": ", report.first_failure);
            CHECK(report.ok);
            // The run exercised the policy: it placed and refused jobs,
            // released them, and changed node health.
            CHECK(report.placed > 100);
            CHECK(report.refused > 10);
            CHECK(report.released >= report.placed);
            CHECK(report.health_changes > 50);
            CHECK(report.hostile > 50);
            CHECK(report.operations == options.operations + 1);
        }
    }
}

conformance_report run_on_two_racks(const auto& policy, bool locality = true) {
    conformance_options options;
    options.locality = locality;
    return check_policy(gb200_nvl72(2), policy, options);
}

bool names(const conformance_report& report, const std::string& rule) {
    return report.first_failure.find(rule) != std::string::npos;
}

// ---- policies broken on purpose, each in one way --------------------------
// Each is best-fit (attached and kept up to date like it) with one rule
// broken.

// Lists the first piece of every placement twice: a GPU held twice.
struct gives_a_gpu_twice : best_fit {
    template <class State>
    errc place(const State& state, const request& q, placement& out) const {
        const errc e = best_fit::place(state, q, out);
        if (e == errc::ok) {
            const piece first = *out.pieces().begin();
            out.add(first.node, first.gpus);
        }
        return e;
    }
};

// Answers ok with no pieces for 3-GPU jobs.
struct places_nothing : best_fit {
    template <class State>
    errc place(const State& state, const request& q, placement& out) const {
        if (q.what == unit::gpus && q.count == 3) return errc::ok;
        return best_fit::place(state, q, out);
    }
};

// Treats a whole-node GPU request as a plain one.
struct ignores_whole_nodes : best_fit {
    template <class State>
    errc place(const State& state, const request& q, placement& out) const {
        return best_fit::place(state, q.what == unit::gpus ? q.with_whole_nodes(false) : q, out);
    }
};

// Refuses 3-GPU jobs as malformed, which they are not.
struct calls_three_invalid : best_fit {
    template <class State>
    errc place(const State& state, const request& q, placement& out) const {
        if (q.what == unit::gpus && q.count == 3) return errc::invalid_request;
        return best_fit::place(state, q, out);
    }
};

// Throws on 6-GPU jobs.
struct throws_on_six : best_fit {
    template <class State>
    errc place(const State& state, const request& q, placement& out) const {
        if (q.what == unit::gpus && q.count == 6) throw std::runtime_error("six is too many");
        return best_fit::place(state, q, out);
    }
};

// Places a small plain GPU job in one domain: from the first domain while
// the cluster is idle, from the last once it is busy (keeping the first for
// large jobs). The flag is set on a change that leaves GPUs held but never
// cleared: a summary releases do not refresh. Every placement is legal, but
// once everything is released it no longer places like a fresh copy.
struct remembers_being_busy : best_fit {
    bool busy = false;

    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        if (state.domain(d).held_gpus > 0) busy = true;
        best_fit::on_domain_change(state, d);
    }
    template <class State>
    errc place(const State& state, const request& q, placement& out) const {
        if (q.what != unit::gpus || q.whole_nodes || q.segmented() || q.exclusive_domain)
            return best_fit::place(state, q, out);
        const domain_id domains = state.topo().domain_count();
        for (domain_id i = 0; i < domains; ++i) {
            const domain_id d = busy ? domains - 1 - i : i;
            if (!state.domain_open(d) || state.domain(d).free_gpus < q.count) continue;
            std::uint32_t missing = q.count;
            const auto& info = state.topo().domain(d);
            for (node_id n = info.first_node; n < info.end_node() && missing > 0; ++n) {
                const gpu_mask take = lowest_bits(state.usable_gpus(n), missing);
                if (take == 0) continue;
                out.add(n, take);
                missing -= static_cast<std::uint32_t>(std::popcount(take));
            }
            return errc::ok;
        }
        return best_fit::place(state, q, out);
    }
};

// Keeps best-fit's buckets but never refiles domain 1 after attach: its
// indexes go stale at the first change there.
struct skips_domain_one : best_fit {
    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        if (d != 1) best_fit::on_domain_change(state, d);
    }
};

}  // namespace

// One case per policy, so that a parallel ctest runs them side by side.
TEST_CASE("the conformance harness: best-fit passes") { passes_everywhere(best_fit{}, true); }
TEST_CASE("the conformance harness: contiguous-block passes, 8- and 4-GPU blocks") {
    SUBCASE("8-GPU blocks") { passes_everywhere(contiguous_block{8}, true); }
    SUBCASE("4-GPU blocks") { passes_everywhere(contiguous_block{4}, true); }
}
TEST_CASE("the conformance harness: buddy-split passes") { passes_everywhere(buddy_split{}, true); }
TEST_CASE("the conformance harness: frag-aware passes") {
    // The mix it learned stays after the last release: on racks of unequal
    // size it then places as a fresh copy would not.
    SUBCASE("learned mix") { passes_everywhere(fragmentation_aware{}, true, false); }
    SUBCASE("given mix") {
        const std::vector<size_share> mix{{1, 4.0}, {8, 2.0}, {64, 1.0}};
        passes_everywhere(fragmentation_aware(mix), true);
    }
}
// These two document rules of their own for jobs larger than one node's
// worth of free GPUs (docs/policies.md): the harness checks everything but
// locality.
TEST_CASE("the conformance harness: first-fit and slurm-block pass, but for locality") {
    SUBCASE("first-fit") { passes_everywhere(first_fit{}, false); }
    SUBCASE("slurm-block") { passes_everywhere(slurm_block{}, false); }
}

TEST_CASE("the conformance harness is deterministic and counts what it did") {
    const conformance_report a = run_on_two_racks(best_fit{});
    const conformance_report b = run_on_two_racks(best_fit{});
    CHECK(a.ok);
    CHECK(a.operations == b.operations);
    CHECK(a.placed == b.placed);
    CHECK(a.refused == b.refused);
    CHECK(a.holds == b.holds);
    conformance_options other;
    other.seed = 7;
    const conformance_report c = check_policy(gb200_nvl72(2), best_fit{}, other);
    CHECK(c.ok);
    CHECK(c.placed != a.placed);
}

TEST_CASE("the conformance harness catches a broken policy") {
    SUBCASE("a GPU held twice") {
        const auto report = run_on_two_racks(gives_a_gpu_twice{});
        CHECK_FALSE(report.ok);
        CHECK_FALSE(static_cast<bool>(report));
        CHECK(names(report, "the policy proposed an illegal placement"));
        CHECK(names(report, "seed 1"));
    }
    SUBCASE("ok with no pieces") {
        const auto report = run_on_two_racks(places_nothing{});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "place() returned ok with no pieces"));
        CHECK(names(report, "allocate gpus 3"));
    }
    SUBCASE("a job that fits one domain split over two (first-fit, checked for locality)") {
        const auto report = run_on_two_racks(first_fit{}, true);
        CHECK_FALSE(report.ok);
        CHECK(names(report, "a locality::require job spans 2 domains where the empty cluster needs 1"));
    }
    SUBCASE("a whole-node request given part of a node") {
        const auto report = run_on_two_racks(ignores_whole_nodes{});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "a whole-node request took part of a node"));
    }
    SUBCASE("a well-formed request called malformed") {
        const auto report = run_on_two_racks(calls_three_invalid{});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "refused with invalid_request"));
    }
    SUBCASE("an exception from the policy is reported, not thrown") {
        const auto report = run_on_two_racks(throws_on_six{});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "allocate gpus 6"));
        CHECK(names(report, "threw six is too many"));
    }
    SUBCASE("a summary that releases do not refresh") {
        const auto report = run_on_two_racks(remembers_being_busy{});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "differently from a fresh copy"));
        // With that check off, the same policy keeps every other rule.
        conformance_options options;
        options.fresh_after_release = false;
        const auto lenient = check_policy(gb200_nvl72(2), remembers_being_busy{}, options);
        INFO(lenient.first_failure);
        CHECK(lenient.ok);
    }
    SUBCASE("indexes that a change does not refile") {
        const auto report = run_on_two_racks(skips_domain_one{});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "best-fit: its indexes differ from a fresh attach's"));
    }
    SUBCASE("a policy whose settings do not suit the topology") {
        topology_builder b;
        b.add_numbered_domain("small", 3, 2, "s", 1, 1);
        const auto report = check_policy(*b.build(), contiguous_block{8});
        CHECK_FALSE(report.ok);
        CHECK(names(report, "the allocator could not be built"));
        CHECK(report.operations == 0);
    }
}

}  // namespace test_testing_conformance
