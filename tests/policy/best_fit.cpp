#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/support/bucket_index.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

namespace test_policy_best_fit {

using namespace topoblock;

namespace {

using best_fit_allocator = basic_allocator<best_fit, default_capacity>;

best_fit_allocator make(const topology& t) { return std::move(*best_fit_allocator::create(t)); }

// Names of the nodes an allocation holds, in piece order.
std::vector<std::string> nodes_of(const best_fit_allocator& a, allocation_id id) {
    std::vector<std::string> names;
    for (const auto& p : a.find(id)->pieces) names.push_back(a.topo().node(p.node).name);
    return names;
}
std::set<std::string> domains_of(const best_fit_allocator& a, allocation_id id) {
    std::set<std::string> names;
    for (const auto& p : a.find(id)->pieces) names.insert(a.topo().domain(a.topo().node(p.node).domain).name);
    return names;
}
allocation_id hold_nodes(best_fit_allocator& a, std::vector<node_id> nodes) {
    std::vector<piece> ps;
    for (node_id n : nodes) ps.push_back({n, full_gpu_mask(a.topo().node(n).gpus)});
    return *a.hold(ps);
}

}  // namespace

TEST_CASE("best-fit: a job goes to the tightest domain that holds it, lowest index on ties") {
    auto a = make(gb200_nvl72(3));
    const auto first = *a.try_allocate(request::gpus(4));
    CHECK(domains_of(a, first) == std::set<std::string>{"rack01"});  // all tie at 72: lowest index
    const auto big = *a.try_allocate(request::gpus(70));
    CHECK(domains_of(a, big) == std::set<std::string>{"rack02"});    // rack01 has only 68
    const auto small = *a.try_allocate(request::gpus(2));
    CHECK(domains_of(a, small) == std::set<std::string>{"rack02"});  // 2 left there: exact fit
    const auto mid = *a.try_allocate(request::gpus(8));
    CHECK(domains_of(a, mid) == std::set<std::string>{"rack01"});    // 68 < 72
}

TEST_CASE("best-fit: GPU-level jobs fill partly used nodes first") {
    auto a = make(gb200_nvl72(1));
    const auto one = *a.try_allocate(request::gpus(1));
    CHECK(a.find(one)->pieces == std::vector<piece>{{0, 0b0001}});
    const auto two = *a.try_allocate(request::gpus(2));
    CHECK(a.find(two)->pieces == std::vector<piece>{{0, 0b0110}});
    const auto three = *a.try_allocate(request::gpus(3));  // gb01 has 1 left: a fresh node
    CHECK(a.find(three)->pieces == std::vector<piece>{{1, 0b0111}});
    const auto again = *a.try_allocate(request::gpus(1));  // the tightest: gb01's last GPU
    CHECK(a.find(again)->pieces == std::vector<piece>{{0, 0b1000}});
    const auto six = *a.try_allocate(request::gpus(6));    // one whole node, 2 on the tightest with room
    CHECK(a.find(six)->pieces == std::vector<piece>{{2, 0b1111}, {3, 0b0011}});
}

TEST_CASE("best-fit: whole nodes come from the tightest run of free nodes") {
    auto a = make(gb200_nvl72(1));
    hold_nodes(a, {2, 6});  // free runs: gb01-gb02 (2), gb04-gb06 (3), gb08-gb18 (11)
    const auto three = *a.try_allocate(request::nodes(3));
    CHECK(nodes_of(a, three) == std::vector<std::string>{"gb04", "gb05", "gb06"});
    const auto two = *a.try_allocate(request::nodes(2));
    CHECK(nodes_of(a, two) == std::vector<std::string>{"gb01", "gb02"});
    const auto four = *a.try_allocate(request::nodes(4));
    CHECK(nodes_of(a, four) == std::vector<std::string>{"gb08", "gb09", "gb10", "gb11"});
    CHECK(a.find(four)->held_gpus == 16);
    CHECK(a.find(four)->requested_gpus == 16);
}

TEST_CASE("best-fit: a whole-node GPU request rounds up to nodes and counts the idle GPUs") {
    auto a = make(gb200_nvl72(1));
    const auto id = *a.try_allocate(request::gpus(6).with_whole_nodes());
    CHECK(a.find(id)->held_gpus == 8);
    CHECK(a.find(id)->requested_gpus == 6);
    CHECK(a.state().held_gpus() - a.state().requested_gpus() == 2);
}

TEST_CASE("best-fit: an 80-GPU job takes two domains, a whole one and the tightest for the rest") {
    auto a = make(gb200_nvl72(3));
    const auto filler = *a.try_allocate(request::gpus(60));  // rack01: 12 free
    CHECK(domains_of(a, filler) == std::set<std::string>{"rack01"});
    const auto big = *a.try_allocate(request::gpus(80));
    CHECK(a.find(big)->domains == 2);
    // rack02 whole (72), then 8 more on rack01, the tightest domain with 8 free.
    CHECK(domains_of(a, big) == std::set<std::string>{"rack01", "rack02"});
    CHECK(a.state().domain(0).free_gpus == 4);
    CHECK(a.state().domain(1).free_gpus == 0);
    CHECK(a.state().domain(2).free_gpus == 72);
}

TEST_CASE("best-fit: locality decides whether a job may spread") {
    auto a = make(gb200_nvl72(3));
    // Leave 40, 30 and 30 GPUs free.
    REQUIRE(a.try_allocate(request::gpus(32)));
    REQUIRE(a.try_allocate(request::gpus(42)));
    REQUIRE(a.try_allocate(request::gpus(42)));
    CHECK(a.state().available().gpus == 40 + 30 + 30);
    // 64 GPUs fit one domain but no domain has them free.
    auto refused = a.try_allocate(request::gpus(64));
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == errc::fragmented);
    auto spread = a.try_allocate(request::gpus(64).with_locality(locality::prefer));
    REQUIRE(spread);
    CHECK(a.find(*spread)->domains == 2);  // 40 + 24 of a 30: the fewest domains
    // 36 free now: a 90-GPU job needs more than is free at all.
    auto too_many = a.try_allocate(request::gpus(90).with_locality(locality::any));
    REQUIRE_FALSE(too_many);
    CHECK(too_many.error() == errc::insufficient_free);
}

TEST_CASE("best-fit: a job larger than a domain under require uses no more domains than it needs") {
    auto a = make(gb200_nvl72(3));
    REQUIRE(a.try_allocate(request::gpus(2)));   // rack01: 70 free
    REQUIRE(a.try_allocate(request::gpus(67)));  // tightest for 67: rack01 -> 3 free
    REQUIRE(a.try_allocate(request::gpus(67)));  // rack02: 5 free
    // 80 GPUs need two domains; 72 + 5 + 3 would be three.
    auto refused = a.try_allocate(request::gpus(80));
    REQUIRE_FALSE(refused);
    CHECK(refused.error() == errc::fragmented);
    auto spread = a.try_allocate(request::gpus(80).with_locality(locality::prefer));
    REQUIRE(spread);
    CHECK(a.find(*spread)->domains == 3);
}

TEST_CASE("best-fit: multi-domain jobs prefer the tightest group that holds them") {
    auto a = make(*parse_topology_spec("nvl72:4@2"));  // group01 = rack01+rack02, group02 = rack03+rack04
    REQUIRE(a.try_allocate(request::gpus(8)));           // rack01: 64 free, group01: 136
    const auto hundred = *a.try_allocate(request::gpus(100));
    CHECK(domains_of(a, hundred) == std::set<std::string>{"rack01", "rack02"});
    const auto pair = *a.try_allocate(request::gpus(144));  // only group02 holds two whole racks
    CHECK(domains_of(a, pair) == std::set<std::string>{"rack03", "rack04"});
}

TEST_CASE("best-fit: a 72-GPU job cannot run on a rack with one drained tray") {
    auto one = make(gb200_nvl72(1));
    REQUIRE(one.drain(5));
    auto r = one.try_allocate(request::gpus(72));
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::exceeds_healthy);
    CHECK(one.try_allocate(request::gpus(68)));

    auto two = make(gb200_nvl72(2));
    REQUIRE(two.drain(5));
    REQUIRE(two.try_allocate(request::gpus(1)));  // rack01 (68 free) is tightest: 67 left
    auto rack = two.try_allocate(request::gpus(72));
    REQUIRE(rack);
    CHECK(domains_of(two, *rack) == std::set<std::string>{"rack02"});
    auto second = two.try_allocate(request::gpus(72));
    REQUIRE_FALSE(second);
    CHECK(second.error() == errc::insufficient_free);
}

TEST_CASE("best-fit: segments each stay in one domain, and spread segments use distinct domains") {
    auto a = make(gb200_nvl72(3));
    const auto packed = *a.try_allocate(request::gpus(64).with_segment(32));
    CHECK(domains_of(a, packed) == std::set<std::string>{"rack01"});
    const auto spread = *a.try_allocate(request::gpus(64).with_segment(32, true));
    CHECK(domains_of(a, spread) == std::set<std::string>{"rack02", "rack03"});
    auto bad = a.try_allocate(request::gpus(64).with_segment(24));
    REQUIRE_FALSE(bad);
    CHECK(bad.error() == errc::invalid_request);
    auto huge = a.try_allocate(request::gpus(160).with_segment(80));
    REQUIRE_FALSE(huge);
    CHECK(huge.error() == errc::exceeds_domain);
}

TEST_CASE("best-fit: an exclusive job closes its domains to everyone else") {
    auto a = make(gb200_nvl72(2));
    const auto busy = *a.try_allocate(request::gpus(1));  // rack01 is no longer idle
    const auto exclusive = *a.try_allocate(request::gpus(4).with_exclusive_domain());
    CHECK(domains_of(a, exclusive) == std::set<std::string>{"rack02"});
    CHECK_FALSE(a.state().domain_open(1));
    CHECK(a.state().available().gpus == 71);  // rack02's 68 free GPUs are closed
    const auto other = *a.try_allocate(request::gpus(8));
    CHECK(domains_of(a, other) == std::set<std::string>{"rack01"});
    auto no_idle = a.try_allocate(request::gpus(4).with_exclusive_domain());
    REQUIRE_FALSE(no_idle);
    CHECK(no_idle.error() == errc::fragmented);
    REQUIRE(a.release(exclusive));
    CHECK(a.state().domain_open(1));
    CHECK(a.state().available().gpus == 72 - 9 + 72);
    (void)busy;
}

TEST_CASE("best-fit keeps its buckets itself: checked against the state and counted") {
    auto a = allocator<best_fit>::create(gb200_nvl72(16));
    REQUIRE(a);
    const auto id = a->allocate(request::gpus(20));  // rack01, the lowest of the tightest
    (void)a->allocate(request::gpus(3));             // rack01 again: 49 free
    REQUIRE(a->down(20));                            // a wholly free tray of rack02: 68 free
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
    const bucket_index& by_gpus = a->policy().domains_by_free_gpus();
    CHECK(by_gpus.key_of(0) == 49);
    CHECK(by_gpus.key_of(1) == 68);
    CHECK(by_gpus.count(72) == 14);
    CHECK(a->policy().domains_by_free_nodes().key_of(1) == 17);
    // A copy taken before a release is stale.
    const best_fit stale = a->policy();
    REQUIRE(a->release(id));
    CHECK(testing::check_indexes(stale, a->state()) == "best-fit: its indexes differ from a fresh attach's");
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());

    // A full domain and a closed one are filed nowhere: no job can use them.
    const auto whole = a->allocate(request::gpus(72));  // rack02 is down a tray: rack03
    CHECK(a->state().domain(2).free_gpus == 0);
    CHECK_FALSE(by_gpus.contains(2));
    CHECK_FALSE(a->policy().domains_by_free_nodes().contains(2));
    const auto closing = a->allocate(request::gpus(8).with_exclusive_domain());  // rack02, the tightest idle one
    CHECK_FALSE(a->state().domain_open(1));
    CHECK_FALSE(by_gpus.contains(1));
    CHECK_FALSE(a->policy().domains_by_free_nodes().contains(1));
    CHECK(by_gpus.count(72) == 13);
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());
    REQUIRE(a->release(whole));
    REQUIRE(a->release(closing));
    CHECK(by_gpus.key_of(1) == 68);
    CHECK(by_gpus.key_of(2) == 72);
    CHECK(testing::check_indexes(a->policy(), a->state()).empty());

    // Its memory is its two indexes': 16 domains by up to 72 GPUs and 18 nodes.
    CHECK(a->policy().memory_bytes() == bucket_index(16, 72).memory_bytes() + bucket_index(16, 18).memory_bytes());
}

}  // namespace test_policy_best_fit
