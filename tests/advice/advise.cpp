// advise() against brute force: on small clusters, every subset of the
// running allocations is tried (released on a copy, then the request
// placed), for every built-in policy, on random states.

#include "../reference_model.hpp"

#include <topoblock/advice/advise.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace test_advice_advise {

using namespace topoblock;

namespace {

// The least valid stop-set by brute force, ranked as advise ranks.
struct brute_answer {
    bool fits_now = false;
    bool any = false;   // some subset works
    detail::advice_key best;
};

template <class Alloc>
bool works(const Alloc& a, std::span<const allocation_id> stop, const request& q) {
    Alloc copy = a;
    for (const allocation_id id : stop) REQUIRE(copy.release(id));
    return copy.try_allocate(q).has_value();
}

template <class Alloc, class Cost>
brute_answer brute(const Alloc& a, const request& q, const std::vector<allocation_id>& candidates, Cost&& cost) {
    brute_answer out;
    placement p;
    out.fits_now = a.plan(q, p) == errc::ok;
    const std::size_t n = candidates.size();
    for (std::uint64_t mask = 1; mask < (std::uint64_t{1} << n); ++mask) {
        std::vector<allocation_id> set;
        std::uint64_t c = 0;
        for (std::size_t i = 0; i < n; ++i)
            if ((mask >> i) & 1U) {
                set.push_back(candidates[i]);
                c += cost(candidates[i]);
            }
        std::sort(set.begin(), set.end());
        if (!out.best.below(c, set.size(), set)) continue;
        if (!works(a, std::span<const allocation_id>(set), q)) continue;
        out.any = true;
        out.best.cost = c;
        out.best.count = set.size();
        out.best.ids = set;
    }
    return out;
}

request random_request(test::rng& r, const topology& t) {
    request q;
    switch (r.between(0, 5)) {
        case 0: q = request::nodes(r.between(1, t.max_domain_nodes())); break;
        case 1: q = request::gpus(r.between(1, t.max_domain_gpus())).with_whole_nodes(); break;
        case 2: q = request::gpus(r.between(1, t.max_domain_gpus() * 2)); break;
        default: q = request::gpus(r.between(1, t.max_domain_gpus())); break;
    }
    if (r.chance(10)) q = q.with_exclusive_domain();
    if (r.chance(10)) q = q.with_locality(locality::prefer);
    return q;
}

// Random occupancy: small jobs placed, some released, a node down or
// draining now and then.
template <class Alloc>
std::vector<allocation_id> fill(Alloc& a, test::rng& r, std::size_t most) {
    std::vector<allocation_id> live;
    const topology& t = a.topo();
    for (int tries = 0; tries < 60 && live.size() < most; ++tries) {
        request q = request::gpus(r.between(1, t.max_domain_gpus() / 2 + 1));
        if (r.chance(15)) q = request::nodes(r.between(1, 2));
        if (r.chance(5)) q = q.with_exclusive_domain();
        if (auto id = a.try_allocate(q)) live.push_back(*id);
        if (!live.empty() && r.chance(20)) {
            const std::size_t v = r.between(0, static_cast<std::uint32_t>(live.size() - 1));
            REQUIRE(a.release(live[v]));
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(v));
        }
    }
    if (r.chance(25)) (void)a.set_health(r.between(0, t.node_count() - 1), r.chance(50) ? node_health::down : node_health::drain);
    return live;
}

// Returns how many answers were compared with the brute-force minimum.
template <class Policy>
int check_policy(const std::string& spec, Policy policy, std::uint64_t seed, int rounds) {
    int compared = 0;
    const topology t = *parse_topology_spec(spec);
    test::rng r(seed);
    const bool spreads = policy_traits<Policy>::name(policy) == "first-fit";
    for (int round = 0; round < rounds; ++round) {
        auto a = *allocator<Policy>::create(t, policy);
        std::vector<allocation_id> live = fill(a, r, 9);
        advise_options options;
        std::vector<allocation_id> candidates;
        for (const allocation_id id : live) {
            if (r.chance(15)) options.protect.push_back(id);
            else candidates.push_back(id);
        }
        const bool custom = r.chance(30);
        const std::uint64_t salt = r.next();
        const auto custom_cost = [salt](allocation_id id) { return (id.value * 0x9E3779B97F4A7C15ULL ^ salt) % 5; };
        if (custom) options.cost = custom_cost;
        const auto cost = [&](allocation_id id) { return custom ? custom_cost(id) : std::uint64_t{a.find(id)->held_gpus}; };
        for (int k = 0; k < 4; ++k) {
            const request q = random_request(r, t);
            CAPTURE(spec);
            CAPTURE(round);
            CAPTURE(q.count);
            CAPTURE(static_cast<int>(q.what));
            CAPTURE(q.whole_nodes);
            CAPTURE(q.exclusive_domain);
            CAPTURE(static_cast<int>(q.where));
            CAPTURE(custom);
            const brute_answer want = brute(a, q, candidates, cost);
            const auto before = a;
            const advice got = advise(a, q, options);
            // Nothing changed: the state and what the policy decides next.
            CHECK(a.state().verify() == "");
            {
                auto x = before;
                auto y = a;
                for (int probe = 0; probe < 3; ++probe) {
                    const request next = random_request(r, t);
                    const auto from_x = x.try_allocate(next);
                    const auto from_y = y.try_allocate(next);
                    REQUIRE(from_x.has_value() == from_y.has_value());
                    if (from_x) {
                        CHECK(*from_x == *from_y);
                        CHECK(*x.find(*from_x) == *y.find(*from_y));
                    }
                }
            }
            if (want.fits_now) {
                CHECK(got.kind == advice_kind::none);
                continue;
            }
            if (!want.any) {
                CHECK(got.kind == advice_kind::impossible);
                CHECK(got.reason != errc::ok);
                continue;
            }
            REQUIRE(got.kind == advice_kind::stop);
            // Valid, protected ones left alone, cost as said.
            CHECK(works(a, std::span<const allocation_id>(got.stop), q));
            std::uint64_t c = 0;
            for (const allocation_id id : got.stop) {
                CHECK(std::find(options.protect.begin(), options.protect.end(), id) == options.protect.end());
                c += cost(id);
            }
            CHECK(c == got.cost);
            CHECK(std::is_sorted(got.stop.begin(), got.stop.end()));
            if (got.exact && !spreads) {
                ++compared;
                CHECK(got.cost == want.best.cost);
                CHECK(got.stop == want.best.ids);
            } else {
                CHECK(got.cost >= want.best.cost);
                // None of its members can be left out alone.
                for (std::size_t i = 0; i < got.stop.size() && !got.exact; ++i) {
                    std::vector<allocation_id> fewer = got.stop;
                    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
                    CHECK_FALSE(works(a, std::span<const allocation_id>(fewer), q));
                }
            }
            // One-domain requests get the exact answer (for policies that
            // keep them in one domain).
            const bool one = !q.segmented() && q.where == locality::require &&
                             q.count <= (q.what == unit::nodes ? t.max_domain_nodes() : t.max_domain_gpus());
            if (one && !spreads) CHECK(got.exact);
        }
    }
    return compared;
}

void check_all(const std::string& spec, std::uint64_t seed, int rounds) {
    for (const std::string_view name : policy_names) {
        CAPTURE(name);
        policy_settings settings;
        settings.block_gpus = 2;
        int compared = 0;
        with_policy(name, settings, [&](auto policy) { compared = check_policy(spec, policy, seed, rounds); });
        if (name != "first-fit") CHECK(compared >= rounds / 2);
    }
}

}  // namespace

TEST_CASE("advise: the least stop-set, against every subset, on a 2x4x2 grid") { check_all("grid:2:4:2", 1, 60); }

TEST_CASE("advise: the least stop-set, against every subset, on a 3x2x4 grid") { check_all("grid:3:2:4", 2, 60); }

TEST_CASE("advise: the least stop-set, against every subset, on a 4x2x2 grid") { check_all("grid:4:2:2", 3, 60); }

TEST_CASE("advise: none, a set, impossible") {
    auto a = *allocator<best_fit>::create(*parse_topology_spec("grid:2:2:4"));
    const allocation_id x = a.allocate(request::gpus(6));  // rack 1: 6 of 8
    const allocation_id y = a.allocate(request::gpus(4));  // rack 2: 4 of 8
    CHECK(advise(a, request::gpus(4)).kind == advice_kind::none);
    const advice one = advise(a, request::gpus(8));
    REQUIRE(one.kind == advice_kind::stop);
    CHECK(one.stop == std::vector<allocation_id>{y});  // 4 GPUs, against x's 6
    CHECK(one.cost == 4);
    CHECK(one.exact);
    advise_options keep_y;
    keep_y.protect = {y};
    CHECK(advise(a, request::gpus(8), keep_y).stop == std::vector<allocation_id>{x});
    keep_y.protect = {x, y};
    const advice none = advise(a, request::gpus(8), keep_y);
    CHECK(none.kind == advice_kind::impossible);
    CHECK(none.reason == errc::insufficient_free);  // 6 free
    CHECK(advise(a, request::gpus(17)).reason == errc::exceeds_cluster);
    // Two racks' worth: a bound, not the exact answer.
    const advice two = advise(a, request::gpus(16));
    CHECK(two.kind == advice_kind::stop);
    CHECK(two.stop.size() == 2);
    CHECK_FALSE(two.exact);
    // A caller's cost: x is cheap to stop.
    advise_options by_priority;
    by_priority.cost = [&](allocation_id id) { return id == x ? std::uint64_t{1} : std::uint64_t{10}; };
    CHECK(advise(a, request::gpus(8), by_priority).stop == std::vector<allocation_id>{x});
}

TEST_CASE("with_released puts allocations back as they were, down nodes included") {
    auto a = *allocator<first_fit>::create(*parse_topology_spec("grid:2:2:4"));
    const allocation_id x = a.allocate(request::gpus(6));
    const allocation_id y = a.allocate(request::gpus(2));
    REQUIRE(a.down(0));
    const auto before = a;
    const std::vector<allocation_id> both{x, y};
    const auto free_then = a.with_released(both, [](const auto& b) { return b.state().held_gpus(); });
    REQUIRE(free_then);
    CHECK(*free_then == 0);
    CHECK(a.state().verify() == "");
    CHECK(*a.find(x) == *before.find(x));
    CHECK(a.find(x)->hit_by_failure);
    const std::vector<allocation_id> twice{x, x};
    CHECK(a.with_released(twice, [](const auto&) {}).error() == errc::unknown_allocation);
    auto next_before = before;
    CHECK(a.allocate(request::gpus(1)) == next_before.allocate(request::gpus(1)));
}

}  // namespace test_advice_advise
