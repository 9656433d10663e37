#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/fragmentation_aware.hpp>
#include <topoblock/testing/check_indexes.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace test_policy_fragmentation_aware {

using namespace topoblock;

namespace {

template <class Policy>
std::set<std::string> domains_of(const allocator<Policy>& a, allocation_id id) {
    std::set<std::string> names;
    for (const auto& p : a.find(id)->pieces) names.insert(a.topo().domain(a.topo().node(p.node).domain).name);
    return names;
}

// Holds the first `gpus` GPUs of the domain (whole nodes, then the lowest
// GPUs of the next node).
template <class Policy>
void hold_in(allocator<Policy>& a, domain_id d, std::uint32_t gpus) {
    const domain_shape s = a.topo().shape(d);
    std::vector<piece> ps;
    for (node_id n = s.first_node; gpus > 0; ++n) {
        const std::uint32_t take = std::min(gpus, s.gpus_per_node);
        ps.push_back({n, full_gpu_mask(take)});
        gpus -= take;
    }
    REQUIRE(a.hold(ps));
}

// How many jobs of `gpus` GPUs fit, one after another, on a copy.
template <class Policy>
std::uint32_t how_many_fit(const allocator<Policy>& a, std::uint32_t gpus) {
    auto copy = a;
    std::uint32_t n = 0;
    while (copy.try_allocate(request::gpus(gpus))) ++n;
    return n;
}

const std::vector<size_share> sixty_fours{{64, 1.0}};

}  // namespace

// Rack01 has 65 free GPUs, rack02 70. A 4-GPU job: best-fit takes the
// tighter rack01 (61 left, no 64-GPU job fits there any more); with a mix of
// 64-GPU jobs frag-aware takes rack02, whose 70 free become 66, and both
// racks still take a 64-GPU job.
TEST_CASE("frag-aware: keeps a larger size placeable where best-fit breaks it") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(2), fragmentation_aware(sixty_fours));
    auto bf = *allocator<best_fit>::create(gb200_nvl72(2));
    hold_in(fa, 0, 7);
    hold_in(fa, 1, 2);
    hold_in(bf, 0, 7);
    hold_in(bf, 1, 2);
    const auto f = *fa.try_allocate(request::gpus(4));
    const auto b = *bf.try_allocate(request::gpus(4));
    CHECK(domains_of(bf, b) == std::set<std::string>{"rack01"});
    CHECK(domains_of(fa, f) == std::set<std::string>{"rack02"});
    CHECK(how_many_fit(bf, 64) == 1);
    CHECK(how_many_fit(fa, 64) == 2);
    // Inside the domain it takes what best-fit would take there.
    placement there;
    REQUIRE(bf.policy().place_in(bf.state(), request::gpus(4), 1, there) == errc::ok);
    CHECK(fa.find(f)->pieces == piece_list(there.runs()));
}

// Equal losses: best-fit's order decides. With 64-GPU jobs in the mix and
// 70, 68 and 72 free GPUs, a 2-GPU job costs no 64-GPU placement anywhere:
// the tightest, rack02 (68 -> 66). A 5-GPU job costs one in rack02
// (66 -> 61) and none in rack01 (70 -> 65) or rack03: the tighter rack01.
// A 1-GPU job then costs none anywhere (rack01 65 -> 64 still holds one):
// rack01 again.
TEST_CASE("frag-aware: ties go to the tightest domain, then the lowest index") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(3), fragmentation_aware(sixty_fours));
    hold_in(fa, 0, 2);
    hold_in(fa, 1, 4);
    CHECK(domains_of(fa, *fa.try_allocate(request::gpus(2))) == std::set<std::string>{"rack02"});
    CHECK(domains_of(fa, *fa.try_allocate(request::gpus(5))) == std::set<std::string>{"rack01"});
    CHECK(domains_of(fa, *fa.try_allocate(request::gpus(1))) == std::set<std::string>{"rack01"});
}

// A wholly free rack is broken only when no other rack holds the job. With
// 64-GPU jobs in the mix, an 8-GPU job would cost nothing in the empty
// rack02 (72 -> 64) and a 64-GPU placement in rack01 (70 -> 62), yet it
// goes to rack01; a 71-GPU job, which rack01 cannot hold, to rack02.
TEST_CASE("frag-aware: keeps wholly free domains for as long as another holds the job") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(2), fragmentation_aware(sixty_fours));
    hold_in(fa, 0, 2);
    CHECK(domains_of(fa, *fa.try_allocate(request::gpus(8))) == std::set<std::string>{"rack01"});
    CHECK(domains_of(fa, *fa.try_allocate(request::gpus(71))) == std::set<std::string>{"rack02"});
}

// Whole-node jobs measure a domain by its wholly free nodes, as GPUs.
// Rack01 has 17 wholly free nodes (68 GPUs), rack02 16 (64 GPUs, and 70
// free GPUs in all). A 1-node job: 68 -> 64 in rack01 keeps a 64-GPU
// placement of whole nodes, 64 -> 60 in rack02 loses it, so rack01, where
// best-fit takes the tighter rack02.
TEST_CASE("frag-aware: whole-node jobs count free whole nodes") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(2), fragmentation_aware(sixty_fours));
    hold_in(fa, 0, 1);
    const std::vector<piece> two{{18, 0b0001}, {19, 0b0001}};
    REQUIRE(fa.hold(two));
    const auto id = *fa.try_allocate(request::nodes(1));
    CHECK(domains_of(fa, id) == std::set<std::string>{"rack01"});
    auto bf = *allocator<best_fit>::create(gb200_nvl72(2));
    hold_in(bf, 0, 1);
    REQUIRE(bf.hold(two));
    CHECK(domains_of(bf, *bf.try_allocate(request::nodes(1))) == std::set<std::string>{"rack02"});
}

TEST_CASE("frag-aware: learns the mix from the jobs placed, with decay") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(2));
    REQUIRE(fa.policy().learning());
    CHECK(fa.policy().mix().weight(8) == 0);
    const auto a = *fa.try_allocate(request::gpus(8));
    CHECK(fa.policy().mix().weight(8) == 8 * detail::size_mix::gpu_weight);
    // A release and a refusal teach nothing; a plan neither.
    REQUIRE(fa.release(a));
    CHECK_FALSE(fa.try_allocate(request::gpus(200)));
    placement p;
    REQUIRE(fa.plan(request::gpus(3), p) == errc::ok);
    CHECK(fa.policy().mix().weight(8) == 8 * detail::size_mix::gpu_weight);
    CHECK(fa.policy().mix().weight(3) == 0);
    // A job larger than a domain counts as the domain's size, by all its GPUs.
    const auto big = *fa.try_allocate(request::gpus(100).with_locality(locality::prefer));
    CHECK(fa.policy().mix().weight(72) == 100 * detail::size_mix::gpu_weight);
    REQUIRE(fa.release(big));
    // After `halving_jobs` jobs in all every weight has halved once.
    for (std::uint64_t i = 2; i + 1 < detail::size_mix::halving_jobs; ++i) REQUIRE(fa.release(*fa.try_allocate(request::gpus(1))));
    CHECK(fa.policy().mix().weight(8) == 8 * detail::size_mix::gpu_weight);
    REQUIRE(fa.release(*fa.try_allocate(request::gpus(1))));
    CHECK(fa.policy().mix().weight(8) == 4 * detail::size_mix::gpu_weight);
    CHECK(fa.policy().mix().weight(72) == 50 * detail::size_mix::gpu_weight);
    CHECK(testing::check_indexes(fa.policy(), fa.state()) == "");
    // The value table, its 1-GPU term apart, against a recount from the weights.
    CHECK(fa.policy().mix().check() == "");
}

// A learned mix steers as a given one does. Rack01 holds 32 GPUs (40
// free), rack02 34 (38 free); then 36-GPU jobs come and go. A 4-GPU job:
// best-fit takes rack02 (38 -> 34, no 36 left there), frag-aware rack01
// (40 -> 36 keeps one).
TEST_CASE("frag-aware: a learned mix keeps the sizes it has seen placeable") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(2));
    hold_in(fa, 0, 32);
    hold_in(fa, 1, 34);
    for (int i = 0; i < 20; ++i) REQUIRE(fa.release(*fa.try_allocate(request::gpus(36))));
    CHECK(fa.policy().mix().weight(36) > fa.policy().mix().weight(34));
    CHECK(domains_of(fa, *fa.try_allocate(request::gpus(4))) == std::set<std::string>{"rack01"});
    CHECK(how_many_fit(fa, 36) == 2);
}

// A restored state's live jobs are where a learning policy starts.
TEST_CASE("frag-aware: attaching learns the live jobs") {
    auto fa = *allocator<fragmentation_aware>::create(gb200_nvl72(2));
    REQUIRE(fa.try_allocate(request::gpus(12)));
    const auto again = allocator<fragmentation_aware>::adopt(fa.state());
    CHECK(again.policy().mix().weight(12) == 12 * detail::size_mix::gpu_weight);
}

TEST_CASE("frag-aware: a given mix is checked when the allocator is built") {
    const auto refused = [](std::vector<size_share> mix, const std::string& what) {
        auto a = allocator<fragmentation_aware>::create(gb200_nvl72(1), fragmentation_aware(mix));
        REQUIRE_FALSE(a.has_value());
        CHECK_MESSAGE(a.error().to_string().find(what) != std::string::npos, a.error().to_string());
    };
    refused({{8, 1.0}, {0, 1.0}}, "mix entry 2: size of 0 GPUs");
    refused({{8, -1.0}}, "mix entry 1: weight must be a finite number >= 0");
    refused({{8, std::nan("")}}, "mix entry 1: weight");
    refused({{8, std::numeric_limits<double>::infinity()}}, "mix entry 1: weight");
    refused({{8, 0.0}}, "no size a weight above 0");
    refused({}, "no size a weight above 0");
    auto ok = allocator<fragmentation_aware>::create(gb200_nvl72(1), fragmentation_aware(std::vector<size_share>{{8, 3.0}, {200, 1.0}}));
    REQUIRE(ok.has_value());
    CHECK_FALSE(ok->policy().learning());
    // Normalised; sizes above a domain count as the domain's.
    CHECK(ok->policy().mix().weight(8) == 805306368);
    CHECK(ok->policy().mix().weight(72) == 268435456);
    // A given mix does not learn.
    REQUIRE(ok->try_allocate(request::gpus(5)));
    CHECK(ok->policy().mix().weight(5) == 0);
}

}  // namespace test_policy_fragmentation_aware
