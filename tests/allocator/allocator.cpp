#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/first_fit.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace test_allocator_allocator {

using namespace topoblock;

namespace {

// A user policy, written without touching the library: the highest-index
// usable GPUs first.
struct last_fit {
    std::string_view name() const { return "last-fit"; }
    template <class State>
    errc place(const State& state, const request& req, placement& out) const {
        if (req.what != unit::gpus) return errc::unsupported_request;
        std::uint32_t missing = req.count;
        for (node_id n = state.topo().node_count(); n-- > 0 && missing > 0;) {
            gpu_mask free = state.usable_gpus(n);
            gpu_mask mine = 0;
            for (int g = 63; g >= 0 && missing > 0; --g)
                if ((free >> g) & 1U) {
                    mine |= gpu_mask{1} << g;
                    --missing;
                }
            if (mine != 0) out.add(n, mine);
        }
        return missing == 0 ? errc::ok : errc::insufficient_free;
    }
};

// A broken policy: always proposes GPU 0 of node 0, busy or not.
struct always_node_zero {
    template <class State>
    errc place(const State&, const request&, placement& out) const {
        out.add(0, 1);
        return errc::ok;
    }
};

// Proposes one run of whole nodes, whatever the state: `count` nodes from
// `first`, every GPU of each.
struct fixed_run {
    node_id first = 0;
    std::uint32_t count = 0;
    template <class State>
    errc place(const State&, const request&, placement& out) const {
        out.add_nodes(first, count, 0xf);
        return errc::ok;
    }
};

// Proposes exactly these pieces, whatever the state and the request.
struct fixed_pieces {
    std::vector<piece> pieces;
    template <class State>
    errc place(const State&, const request&, placement& out) const {
        for (const piece& p : pieces) out.add(p.node, p.gpus);
        return errc::ok;
    }
};

// Counts the change notifications it receives.
struct counting_best_fit : best_fit {
    int* attached;
    int* changes;
    template <class State>
    void attach(const State& state) {
        ++*attached;
        best_fit::attach(state);
    }
    template <class State>
    void on_domain_change(const State& state, domain_id d) {
        ++*changes;
        best_fit::on_domain_change(state, d);
    }
};

// Records how change notifications arrive: domain by domain, or several
// domains of one change in one call. `single` false: it has only the
// several-domain hook, which then receives every change.
template <bool Single>
struct recording_best_fit : best_fit {
    std::vector<std::vector<domain_id>>* calls;
    template <class State>
    void on_domain_change(const State& state, domain_id d)
        requires Single
    {
        calls->push_back({d});
        best_fit::on_domain_change(state, d);
    }
    template <class State>
    void on_domains_change(const State& state, std::span<const domain_id> changed) {
        calls->emplace_back(changed.begin(), changed.end());
        calls->back().push_back(npos32);  // marks the several-domain hook
        for (domain_id d : changed) best_fit::on_domain_change(state, d);
    }
};

// One allocation on a prepared allocator: afterwards the state verifies,
// and a refusal left its totals and allocations as they were.
template <class Alloc>
expected<allocation_id, errc> allocate_or_change_nothing(Alloc& a, const request& asked) {
    const auto before = a.state().available();
    const auto held = a.state().held_gpus();
    const auto live = a.state().allocation_count();
    auto id = a.try_allocate(asked);
    CHECK(a.state().verify().empty());
    if (!id) {
        CHECK(a.state().available() == before);
        CHECK(a.state().held_gpus() == held);
        CHECK(a.state().allocation_count() == live);
    }
    return id;
}

static_assert(placement_policy<last_fit, basic_cluster_state<default_capacity>>);
static_assert(placement_policy<first_fit, basic_cluster_state<default_capacity>>);
static_assert(!placement_policy<int, basic_cluster_state<default_capacity>>);

}  // namespace

TEST_CASE("a user policy plugs in without touching the library") {
    auto a = allocator<last_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    CHECK(a->policy_name() == "last-fit");
    const auto id = *a->try_allocate(request::gpus(2));
    CHECK(a->find(id)->pieces == std::vector<piece>{{17, 0b1100}});
    auto refused = a->try_allocate(request::nodes(1));
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == errc::unsupported_request);
}

TEST_CASE("a policy that proposes busy GPUs is caught and changes nothing") {
    auto a = allocator<always_node_zero>::create(gb200_nvl72(1));
    REQUIRE(a);
    CHECK(policy_traits<always_node_zero>::name(a->policy()) == "custom");
    REQUIRE(a->try_allocate(request::gpus(1)));
    const auto before = a->state().available();
    auto second = a->try_allocate(request::gpus(1));
    REQUIRE_FALSE(second);
    CHECK(second.error() == errc::policy_error);
    CHECK(a->state().available() == before);
    CHECK(a->state().allocation_count() == 1);
    CHECK(a->state().verify().empty());
}

TEST_CASE("a run of whole nodes across domains is checked node by node and taken a domain at a time") {
    // Three NVL72 racks: nodes 0-17, 18-35, 36-53.
    const auto attempt = [](node_id first, std::uint32_t count, auto&& prepare) {
        auto a = *allocator<fixed_run>::create(gb200_nvl72(3), fixed_run{first, count});
        prepare(a);
        // The policy ignores the request: a small one passes the allocator's
        // own checks, so that commit sees every run.
        return allocate_or_change_nothing(a, request::gpus(4));
    };
    const auto nothing = [](auto&) {};
    {
        auto a = *allocator<fixed_run>::create(gb200_nvl72(3), fixed_run{10, 30});  // 10-39: three domains
        const auto id = *a.try_allocate(request::gpus(120));
        const auto& record = *a.find(id);
        CHECK(record.domains == 3);
        CHECK(record.held_gpus == 120);
        CHECK(record.pieces.runs().size() == 1);
        CHECK(record.pieces.size() == 30);
        CHECK(a.state().domain(0).free_nodes == 10);
        CHECK(a.state().domain(1).free_nodes == 0);
        CHECK(a.state().domain(2).free_nodes == 14);
        CHECK(a.state().owner(39, 3) == id);
        CHECK(a.state().verify().empty());
        REQUIRE(a.release(id));
        CHECK(a.state().available().gpus == 216);
        CHECK(a.state().verify().empty());
    }
    CHECK(attempt(10, 30, nothing));
    // A busy GPU in the middle of the run, in the second domain.
    const auto busy = attempt(10, 30, [](auto& a) { REQUIRE(a.hold(std::vector<piece>{{25, 0b0100}})); });
    REQUIRE_FALSE(busy);
    CHECK(busy.error() == errc::policy_error);
    // A drained or failed node in the run.
    for (const auto health : {node_health::drain, node_health::down}) {
        const auto unusable = attempt(10, 30, [&](auto& a) { REQUIRE(a.set_health(38, health)); });
        REQUIRE_FALSE(unusable);
        CHECK(unusable.error() == errc::policy_error);
    }
    // Every stretch length in one domain, an unusable node at every place in
    // it (refused) and right after it (taken): health is read several nodes
    // per load, and those loads must cover the stretch and nothing beyond.
    for (std::uint32_t count = 1; count <= 18; ++count)
        for (std::uint32_t at = 0; at <= count && 18 + at < 36; ++at)
            for (const auto health : {node_health::drain, node_health::down}) {
                CAPTURE(count);
                CAPTURE(at);
                const auto id = attempt(18, count, [&](auto& a) { REQUIRE(a.set_health(18 + at, health)); });
                CHECK(id.has_value() == (at == count));
            }
    // The same with one GPU held at each place: a stretch is taken only when
    // every node of it is wholly unheld.
    for (std::uint32_t count = 1; count <= 18; ++count)
        for (std::uint32_t at = 0; at <= count && 18 + at < 36; ++at) {
            CAPTURE(count);
            CAPTURE(at);
            const auto id = attempt(18, count, [&](auto& a) { REQUIRE(a.hold(std::vector<piece>{{18 + at, 0b0010}})); });
            CHECK(id.has_value() == (at == count));
        }
    // A domain closed by an exclusive job.
    const auto closed = attempt(10, 30, [](auto& a) {
        REQUIRE(a.hold(std::vector<piece>{{50, 1}}, request::gpus(1).with_exclusive_domain()));
        REQUIRE_FALSE(a.state().domain_open(2));
    });
    REQUIRE_FALSE(closed);
    CHECK(closed.error() == errc::policy_error);
    // Past the last node, and a count that wraps around.
    const auto past = attempt(40, 20, nothing);
    REQUIRE_FALSE(past);
    CHECK(past.error() == errc::node_out_of_range);
    const auto wraps = attempt(10, 0xffffffffU - 5, nothing);
    REQUIRE_FALSE(wraps);
    CHECK(wraps.error() == errc::node_out_of_range);
}

TEST_CASE("runs of whole racks are taken whole only when every rack can be, in any order, and a refusal changes nothing") {
    // Three NVL72 racks: nodes 0-17, 18-35, 36-53.
    const auto racks = [](std::initializer_list<domain_id> ds) {
        std::vector<piece> pieces;
        for (const domain_id d : ds)
            for (node_id n = d * 18; n < d * 18 + 18; ++n) pieces.push_back({n, 0xf});
        return pieces;
    };
    const auto attempt = [](std::vector<piece> pieces, const request& asked, auto&& prepare) {
        auto a = *allocator<fixed_pieces>::create(gb200_nvl72(3), fixed_pieces{std::move(pieces)});
        prepare(a);
        return allocate_or_change_nothing(a, asked);
    };
    const auto nothing = [](auto&) {};
    {
        // Racks 2 and 0, in that order: held whole, counted once each, and
        // given back.
        auto a = *allocator<fixed_pieces>::create(gb200_nvl72(3), fixed_pieces{racks({2, 0})});
        const auto id = *a.try_allocate(request::gpus(144));
        const auto& record = *a.find(id);
        CHECK(record.domains == 2);
        CHECK(record.held_gpus == 144);
        CHECK(record.requested_gpus == 144);
        CHECK(record.pieces.runs().size() == 2);
        for (const domain_id d : {0U, 2U}) {
            CHECK(a.state().domain(d).held_gpus == 72);
            CHECK(a.state().domain(d).free_nodes == 0);
            CHECK_FALSE(a.state().domain_idle(d));
            CHECK(a.state().owner(d * 18 + 17, 3) == id);
        }
        CHECK(a.state().domain_idle(1));
        CHECK(a.state().available().gpus == 72);
        CHECK(a.state().held_gpus() == 144);
        CHECK(a.state().verify().empty());
        REQUIRE(a.release(id));
        CHECK(a.state().available().gpus == 216);
        CHECK(a.state().verify().empty());
    }
    {
        // Exclusive: both racks closed while held, open again after.
        auto a = *allocator<fixed_pieces>::create(gb200_nvl72(3), fixed_pieces{racks({0, 1})});
        const auto id = *a.try_allocate(request::gpus(144).with_exclusive_domain());
        CHECK_FALSE(a.state().domain_open(0));
        CHECK_FALSE(a.state().domain_open(1));
        CHECK(a.state().domain_open(2));
        CHECK(a.state().verify().empty());
        REQUIRE(a.release(id));
        CHECK(a.state().domain_open(0));
        CHECK(a.state().domain_open(1));
        CHECK(a.state().verify().empty());
    }
    // One rack named twice: refused, whether the copies are apart or not.
    for (const auto& twice : {racks({1, 1}), racks({1, 0, 1})}) {
        const auto refused = attempt(twice, request::gpus(144), nothing);
        REQUIRE_FALSE(refused);
        CHECK(refused.error() == errc::policy_error);
    }
    // The last rack not takeable whole: a GPU held there, a tray down or
    // draining, closed by an exclusive job. Refused, the racks before it
    // untouched.
    const std::vector<std::pair<const char*, std::function<void(allocator<fixed_pieces>&)>>> spoilers = {
        {"a GPU held", [](auto& a) { REQUIRE(a.hold(std::vector<piece>{{53, 0b1000}})); }},
        {"a tray down", [](auto& a) { REQUIRE(a.set_health(40, node_health::down)); }},
        {"a tray draining", [](auto& a) { REQUIRE(a.set_health(36, node_health::drain)); }},
        {"closed by an exclusive job", [](auto& a) {
             REQUIRE(a.hold(std::vector<piece>{{36, 1}}, request::gpus(1).with_exclusive_domain()));
         }},
    };
    for (const auto& spoiler : spoilers) {
        const char* what = spoiler.first;
        CAPTURE(what);
        const auto refused = attempt(racks({0, 1, 2}), request::gpus(216), spoiler.second);
        REQUIRE_FALSE(refused);
    }
    // An exclusive job's racks must hold nothing: a rack with a job on it is
    // refused even though its other trays are free.
    const auto busy = attempt(racks({0, 2}), request::gpus(144).with_exclusive_domain(),
                              [](auto& a) { REQUIRE(a.hold(std::vector<piece>{{1, 1}})); });
    REQUIRE_FALSE(busy);
    // Whole racks then part of one: taken the general way, all of it.
    std::vector<piece> rack_and_half = racks({0});
    for (node_id n = 18; n < 27; ++n) rack_and_half.push_back({n, 0xf});
    const auto mixed = attempt(rack_and_half, request::gpus(108), nothing);
    CHECK(mixed.has_value());
    // Two racks' worth of nodes from the middle of one, and whole racks of
    // half-nodes: not whole racks, taken the general way, exactly as asked.
    std::vector<piece> mid_rack, half_nodes;
    for (node_id n = 9; n < 45; ++n) mid_rack.push_back({n, 0xf});
    for (node_id n = 0; n < 36; ++n) half_nodes.push_back({n, 0b0011});
    for (const auto& [pieces, gpus, rack_zero_free] :
         {std::tuple{mid_rack, 144U, 36U}, std::tuple{half_nodes, 72U, 36U}}) {
        auto a = *allocator<fixed_pieces>::create(gb200_nvl72(3), fixed_pieces{pieces});
        const auto id = allocate_or_change_nothing(a, request::gpus(gpus));
        REQUIRE(id);
        CHECK(a.find(*id)->held_gpus == gpus);
        CHECK(a.state().domain(0).free_gpus == rack_zero_free);
        CHECK(a.state().held_gpus() == gpus);
        REQUIRE(a.release(*id));
        CHECK(a.state().available().gpus == 216);
        CHECK(a.state().verify().empty());
    }
}

TEST_CASE("pieces of single nodes are checked as they are taken, and a refusal gives back the ones before") {
    // Two NVL72 racks: nodes 0-17 and 18-35, four GPUs each.
    const auto attempt = [](std::vector<piece> pieces, const request& asked, auto&& prepare) {
        auto a = *allocator<fixed_pieces>::create(gb200_nvl72(2), fixed_pieces{std::move(pieces)});
        prepare(a);
        return allocate_or_change_nothing(a, asked);
    };
    const auto nothing = [](auto&) {};
    const request exclusive = request::gpus(2).with_exclusive_domain();
    // An exclusive job's second piece in a domain its first piece made busy.
    CHECK(attempt({{0, 1}, {1, 1}}, exclusive, nothing));
    // An exclusive job on a rack that holds another job's GPU: refused
    // whether that rack comes first or second.
    const auto other_job_on_rack_two = [](auto& a) { REQUIRE(a.hold(std::vector<piece>{{30, 1}})); };
    for (const auto& pieces : {std::vector<piece>{{0, 1}, {20, 1}}, std::vector<piece>{{20, 1}, {0, 1}}}) {
        const auto refused = attempt(pieces, exclusive, other_job_on_rack_two);
        REQUIRE_FALSE(refused);
        CHECK(refused.error() == errc::policy_error);
        CHECK(attempt(pieces, request::gpus(2), other_job_on_rack_two));
    }
    // A piece in a rack an exclusive job closed, after one that was taken.
    const auto closed = attempt({{0, 1}, {20, 2}}, request::gpus(2), [](auto& a) {
        REQUIRE(a.hold(std::vector<piece>{{30, 1}}, request::gpus(1).with_exclusive_domain()));
    });
    REQUIRE_FALSE(closed);
    CHECK(closed.error() == errc::policy_error);
    // GPUs the node does not have.
    const auto beyond = attempt({{0, 1}, {5, 0x10}}, request::gpus(2), nothing);
    REQUIRE_FALSE(beyond);
    CHECK(beyond.error() == errc::policy_error);
    // A node out of range is named as such, even after a busy piece.
    const auto out_of_range = attempt({{0, 1}, {40, 1}}, request::gpus(2), [](auto& a) {
        REQUIRE(a.hold(std::vector<piece>{{0, 1}}));
    });
    REQUIRE_FALSE(out_of_range);
    CHECK(out_of_range.error() == errc::node_out_of_range);
}

TEST_CASE("optional policy hooks are called") {
    int attached = 0, changes = 0;
    counting_best_fit policy;
    policy.attached = &attached;
    policy.changes = &changes;
    auto a = allocator<counting_best_fit>::create(gb200_nvl72(2), policy);
    REQUIRE(a);
    CHECK(attached == 1);
    const auto id = *a->try_allocate(request::gpus(80));
    CHECK(changes == 2);  // two domains changed
    REQUIRE(a->release(id));
    CHECK(changes == 4);
    REQUIRE(a->down(3));
    CHECK(changes == 5);
}

TEST_CASE("a change of several domains reaches a policy in one call when it asks for that") {
    std::vector<std::vector<domain_id>> calls;
    const auto run = [&](auto policy) {
        calls.clear();
        policy.calls = &calls;
        auto a = *allocator<decltype(policy)>::create(gb200_nvl72(4), policy);
        calls.clear();  // attach() filed every domain through best-fit's own hook
        const auto big = *a.try_allocate(request::gpus(216));  // three racks, whole
        const auto small = *a.try_allocate(request::gpus(4));  // the fourth
        REQUIRE(a.release(big));
        REQUIRE(a.down(0));
        CHECK(testing::check_indexes(a.policy(), a.state()).empty());
        (void)small;
    };
    const std::vector<domain_id> three{0, 1, 2, npos32};
    run(recording_best_fit<true>{});
    // One domain: on_domain_change; several: one on_domains_change.
    CHECK(calls == std::vector<std::vector<domain_id>>{three, {3}, three, {0}});
    run(recording_best_fit<false>{});
    // Without on_domain_change, every change comes as a span.
    CHECK(calls == std::vector<std::vector<domain_id>>{three, {3, npos32}, three, {0, npos32}});
}

TEST_CASE("requests are checked before any policy runs") {
    auto a = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    const auto reason = [&](const request& r) {
        auto id = a->try_allocate(r);
        return id ? errc::ok : id.error();
    };
    CHECK(reason(request::gpus(0)) == errc::invalid_request);
    CHECK(reason(request::gpus(12).with_segment(5)) == errc::invalid_request);
    CHECK(reason(request::gpus(4).with_segment(8)) == errc::ok);  // a segment above the job is ignored
    CHECK(reason(request::gpus(145)) == errc::exceeds_cluster);
    CHECK(reason(request::nodes(37)) == errc::exceeds_cluster);
    CHECK(reason(request::gpus(146).with_segment(73)) == errc::exceeds_cluster);
    CHECK(reason(request::gpus(144).with_segment(72)) == errc::insufficient_free);
    REQUIRE(a->down(0));
    CHECK(reason(request::gpus(144)) == errc::exceeds_healthy);
    CHECK(a->state().verify().empty());
}

TEST_CASE("release: unknown, stale and double releases are errors that change nothing") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    const auto id = *a->try_allocate(request::gpus(8));
    REQUIRE(a->release(id));
    auto again = a->release(id);
    REQUIRE_FALSE(again);
    CHECK(again.error() == errc::unknown_allocation);
    // The slot is reused; the old id stays unknown.
    const auto next = *a->try_allocate(request::gpus(8));
    CHECK(next != id);
    CHECK_FALSE(a->release(id));
    CHECK_FALSE(a->release(allocation_id{}));
    CHECK_FALSE(a->release(allocation_id{0xdead00000001ULL}));
    CHECK(a->state().allocation_count() == 1);
    CHECK(a->state().held_gpus() == 8);
}

TEST_CASE("node health: drain keeps running work, down reports the jobs it hit") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    const auto job = *a->try_allocate(request::gpus(6));  // gb01 whole + 2 GPUs of gb02
    CHECK(a->find(job)->pieces == std::vector<piece>{{0, 0b1111}, {1, 0b0011}});
    auto drained = a->drain(1);
    REQUIRE(drained);
    CHECK(drained->empty());
    CHECK(a->state().available().gpus == 72 - 8);  // gb02's 2 free GPUs are not usable
    CHECK(a->state().healthy_gpus() == 72);
    auto hit = a->down(1);
    REQUIRE(hit);
    CHECK(*hit == std::vector<allocation_id>{job});
    CHECK(a->find(job)->hit_by_failure);
    CHECK(a->state().healthy_gpus() == 68);
    CHECK(a->state().held_gpus_on_down_nodes() == 2);
    // Releasing frees the GPUs, but gb02 stays unusable until it is up again.
    REQUIRE(a->release(job));
    CHECK(a->state().available().gpus == 68);
    CHECK(a->state().unheld_gpus(1) == 0b1111);
    CHECK(a->state().usable_gpus(1) == 0);
    REQUIRE(a->up(1));
    CHECK(a->state().available().gpus == 72);
    auto bad = a->down(18);
    REQUIRE_FALSE(bad);
    CHECK(bad.error() == errc::node_out_of_range);
    CHECK(a->state().verify().empty());
}

TEST_CASE("node health into a caller's buffer: appended to, never cleared, untouched on error") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    const auto first = *a->try_allocate(request::gpus(2));   // gb01 GPUs 0-1
    const auto second = *a->try_allocate(request::gpus(2));  // gb01 GPUs 2-3
    const auto other = *a->try_allocate(request::gpus(4));   // gb02
    std::vector<allocation_id> hit{allocation_id{}};          // the caller's earlier entry stays
    hit.reserve(16);
    const auto* buffer = hit.data();
    REQUIRE(a->down(0, hit));
    CHECK(hit == std::vector<allocation_id>{allocation_id{}, first, second});
    CHECK(hit.data() == buffer);  // no reallocation when there is room
    CHECK(a->find(first)->hit_by_failure);
    CHECK_FALSE(a->find(other)->hit_by_failure);
    REQUIRE(a->drain(1, hit));  // draining hits nothing
    REQUIRE(a->down(0, hit));   // already down: nothing changes
    CHECK(hit.size() == 3);
    const auto bad = a->set_health(18, node_health::down, hit);
    REQUIRE_FALSE(bad);
    CHECK(bad.error() == errc::node_out_of_range);
    CHECK(hit.size() == 3);
    REQUIRE(a->up(0, hit));
    REQUIRE(a->up(1, hit));
    CHECK(hit.size() == 3);
    CHECK(a->state().healthy_gpus() == 72);
    // The vector-returning form reports the same allocations.
    hit.clear();
    REQUIRE(a->down(1, hit));
    REQUIRE(a->up(1, hit));
    const auto returned = a->down(1);
    REQUIRE(returned);
    CHECK(*returned == hit);
    CHECK(*returned == std::vector<allocation_id>{other});
    CHECK(a->state().verify().empty());
}

TEST_CASE("hold records usage made elsewhere, exactly as given") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    REQUIRE(a->drain(4));
    const std::vector<piece> running{{3, 0b1111}, {4, 0b0011}};
    const auto id = a->hold(running);  // draining nodes may carry running work
    REQUIRE(id);
    CHECK(a->find(*id)->pieces == running);
    CHECK(a->find(*id)->requested_gpus == 6);
    const std::vector<piece> overlap{{4, 0b0110}};
    auto busy = a->hold(overlap);
    REQUIRE_FALSE(busy);
    CHECK(busy.error() == errc::not_free);
    const std::vector<piece> outside{{99, 1}};
    auto far = a->hold(outside);
    REQUIRE_FALSE(far);
    CHECK(far.error() == errc::node_out_of_range);
    const std::vector<piece> missing_gpu{{5, 0b10000}};  // trays have 4 GPUs
    CHECK_FALSE(a->hold(missing_gpu));
    REQUIRE(a->down(6));
    const std::vector<piece> on_down{{6, 1}};
    CHECK_FALSE(a->hold(on_down));
    CHECK(a->state().allocation_count() == 1);
    CHECK(a->state().verify().empty());
}

// Regression: an out-of-range node after a zero-mask piece answered
// not_free, hold({}) policy_error (no code hold documents), and a GPU
// beyond its node not_free. The pieces are now checked first, in the
// documented order, whatever order they come in; nothing changes.
TEST_CASE("hold checks its pieces first: node range, then the pieces themselves, then freeness") {
    auto a = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    REQUIRE(a->hold(std::vector<piece>{{7, 0b0001}}));
    const auto held_before = a->state().held_gpus();
    const auto answer = [&](std::vector<piece> pieces) {
        auto id = a->hold(pieces);
        REQUIRE_FALSE(id);
        CHECK(a->state().held_gpus() == held_before);
        CHECK(a->state().allocation_count() == 1);
        CHECK(a->state().verify().empty());
        return id.error();
    };
    CHECK(answer({{5, 0}, {99, 1}}) == errc::node_out_of_range);
    CHECK(answer({{99, 1}, {5, 0}}) == errc::node_out_of_range);
    CHECK(answer({{7, 0b0001}, {36, 1}}) == errc::node_out_of_range);  // busy first, out of range after
    CHECK(answer({{5, 1}, {0xFFFFFFFFU, 1}}) == errc::node_out_of_range);
    CHECK(answer({}) == errc::invalid_request);
    CHECK(answer({{5, 0}}) == errc::invalid_request);
    CHECK(answer({{5, 1}, {6, 0}}) == errc::invalid_request);
    CHECK(answer({{5, 0b10000}}) == errc::invalid_request);        // trays have 4 GPUs
    CHECK(answer({{7, 0b0001}, {5, 0b10000}}) == errc::invalid_request);  // busy first, beyond the node after
    CHECK(answer({{7, 0b0011}}) == errc::not_free);
    CHECK(answer({{8, 0b0001}, {8, 0b0001}}) == errc::not_free);  // one GPU named twice
    auto bad_request = a->hold(std::vector<piece>{{9, 0b0111}}, request::gpus(3).with_segment(2));
    REQUIRE_FALSE(bad_request);
    CHECK(bad_request.error() == errc::invalid_request);
    CHECK(a->state().held_gpus() == held_before);
}

TEST_CASE("hold over whole racks with draining trays keeps every counter right") {
    // Runs of whole trays are taken a stretch of up trays at a time; a
    // draining tray (hold may name one) must cut the stretch wherever it is,
    // in a rack held whole or in part.
    for (std::uint32_t draining = 0; draining < 18; ++draining)
        for (const std::uint32_t racks : {1U, 2U}) {
            CAPTURE(draining);
            CAPTURE(racks);
            auto a = *allocator<best_fit>::create(gb200_nvl72(2));
            REQUIRE(a.drain(18 + draining));
            std::vector<piece> trays;
            for (node_id n = racks == 2 ? 0 : 18; n < 36; ++n) trays.push_back({n, 0xf});
            const auto id = a.hold(trays);
            REQUIRE(id);
            CHECK(a.state().verify().empty());
            CHECK(a.state().domain(1).held_gpus == 72);
            CHECK(a.state().domain(1).free_gpus == 0);
            REQUIRE(a.release(*id));
            CHECK(a.state().verify().empty());
            CHECK(a.state().domain(1).free_gpus == 68);
        }
}

TEST_CASE("a domain beyond the compile-time capacity is an error, and a larger capacity takes it") {
    topology_builder b;
    b.add_numbered_domain("nvl576", 144, 4, "n", 1, 3);
    const auto t = *b.build();
    auto small = allocator<best_fit>::create(t);
    REQUIRE_FALSE(small);
    CHECK(small.error().message.find("domain 'nvl576' has 144 nodes") != std::string::npos);
    auto large = basic_allocator<best_fit, capacity<144>>::create(t);
    REQUIRE(large);
    const auto id = large->try_allocate(request::nodes(100));
    REQUIRE(id);
    CHECK(large->find(*id)->domains == 1);
    CHECK(large->state().verify().empty());
}

TEST_CASE("the throwing conveniences carry the reason") {
    auto a = allocator<best_fit>::create(gb200_nvl72(1));
    REQUIRE(a);
    CHECK_NOTHROW(a->allocate(request::gpus(72)));
    try {
        a->allocate(request::gpus(1));
        FAIL("expected an allocation_error");
    } catch (const allocation_error& e) {
        CHECK(e.code() == errc::insufficient_free);
        CHECK(std::string(e.what()).find("insufficient_free") != std::string::npos);
    }
}

TEST_CASE("plan is a dry run") {
    auto a = allocator<best_fit>::create(gb200_nvl72(2));
    REQUIRE(a);
    placement p;
    CHECK(a->plan(request::gpus(80), p) == errc::ok);
    CHECK(p.size() == 20);
    CHECK(a->state().allocation_count() == 0);
    CHECK(a->state().available().gpus == 144);
}

}  // namespace test_allocator_allocator
