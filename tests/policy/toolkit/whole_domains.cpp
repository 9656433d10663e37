#include "../../reference_model.hpp"

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/policy/detail/word_windows.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/topology/builder.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace test_policy_toolkit_whole_domains {

using namespace topoblock;
using topoblock::test::rng;

namespace {

// word_windows.find's rule by brute force: among the windows of 2^k
// domains holding at least `domains` set bits, one group first, then the
// fewest, then the lowest.
std::uint32_t best_window(const std::vector<bool>& bits, const std::vector<std::uint32_t>& group, std::size_t k,
                          std::uint32_t domains) {
    std::uint32_t best = npos32, best_free = 0;
    bool best_one_group = false;
    for (std::size_t start = 0, w = 0; start < bits.size(); start += std::size_t{1} << k, ++w) {
        std::uint32_t free = 0;
        bool one_group = true;
        for (std::size_t d = start; d < bits.size() && d < start + (std::size_t{1} << k); ++d) {
            free += bits[d] ? 1U : 0U;
            one_group = one_group && group[d] == group[start];
        }
        if (free < domains) continue;
        if (best == npos32 || (one_group && !best_one_group) || (one_group == best_one_group && free < best_free)) {
            best = static_cast<std::uint32_t>(w);
            best_free = free;
            best_one_group = one_group;
        }
    }
    return best;
}

}  // namespace

// Random bits over clusters of one word, a word and a bit, a partial last
// word, and over 4,096 domains (the sets of words span two words): after
// each batch of flips (single bits, or runs as a multi-domain job takes),
// every size and every asked count agree with the brute force.
TEST_CASE("word_windows: the best window of each size agrees with a brute-force pass") {
    rng r(91);
    for (const std::uint32_t domains : {64U, 65U, 300U, 5000U}) {
        CAPTURE(domains);
        // Groups of random sizes from 1 to 9: windows of every size are
        // inside one group or across two.
        std::vector<std::uint32_t> group(domains);
        for (std::uint32_t d = 0, g = 0; d < domains; ++g)
            for (std::uint32_t n = r.between(1, 9); n != 0 && d < domains; --n) group[d++] = g;
        const auto one_group = [&](std::size_t k, std::size_t w) {
            for (std::size_t d = w << k; d < domains && d < (w + 1) << k; ++d)
                if (group[d] != group[w << k]) return false;
            return true;
        };
        detail::word_windows windows(detail::word_windows::max_sizes, domains, one_group);
        REQUIRE(windows.sizes() == detail::word_windows::max_sizes);
        indexed_bitset free(domains);
        std::vector<bool> bits(domains, false);
        const std::uint32_t rounds = domains > 1000 ? 150 : 400;
        for (std::uint32_t round = 0; round < rounds; ++round) {
            CAPTURE(round);
            // Mostly set early on, mostly cleared later: windows of every count.
            const bool set = r.chance(round < rounds / 2 ? 70 : 30);
            const std::uint32_t first = r.between(0, domains - 1);
            const std::uint32_t count = r.chance(50) ? 1 : r.between(2, 40);
            for (std::uint32_t d = first; d < domains && d < first + count; ++d) {
                free.assign(d, set);
                bits[d] = set;
            }
            for (std::uint32_t word = first / 64; word <= (std::min(domains, first + count) - 1) / 64; ++word)
                windows.refile_word(word, free.word(word));
            detail::word_windows fresh(detail::word_windows::max_sizes, domains, one_group);
            for (std::size_t word = 0; word * 64 < domains; ++word) fresh.refile_word(word, free.word(word));
            REQUIRE(fresh == windows);
            for (std::size_t k = 1; k <= detail::word_windows::max_sizes; ++k) {
                const auto asked = static_cast<std::uint32_t>(r.between(2, 1U << k));
                CAPTURE(k);
                CAPTURE(asked);
                REQUIRE(windows.find(k, asked, free) == best_window(bits, group, k, asked));
            }
        }
    }
}

// A word left unfiled differs from windows filed from every word.
TEST_CASE("word_windows: a word not refiled differs from a fresh filing") {
    const auto one_group = [](std::size_t, std::size_t) { return true; };
    detail::word_windows windows(3, 200, one_group);
    indexed_bitset free(200);
    for (std::size_t d = 130; d < 140; ++d) free.set(d);
    detail::word_windows fresh(3, 200, one_group);
    for (std::size_t word = 0; word < 4; ++word) fresh.refile_word(word, free.word(word));
    CHECK(!(fresh == windows));
    windows.refile_word(2, free.word(2));
    CHECK(fresh == windows);
    // Windows of eight: 128-135 holds six free, 136-143 four.
    CHECK(windows.find(3, 8, free) == npos32);
    CHECK(windows.find(3, 5, free) == 16);
    CHECK(windows.find(3, 4, free) == 17);
    // Windows of four: 128-131 holds two, 132-135 and 136-139 four.
    CHECK(windows.find(2, 3, free) == 33);
    CHECK(windows.find(2, 2, free) == 32);
}

// A cluster of 9,000 one-node domains in groups of five: windows of 2 to 64
// domains are filed by word, those of 128 in buckets (71 windows), the
// larger ones scanned, from windows of 256 (a word of the bitset counted
// into one window). Then 700: windows of 2 to 8 filed by word, the larger
// scanned, from windows of 16 (four in a word). An allocator's state is
// driven by random jobs and failures; after each change the windows are
// told, and their pick is compared with pick_whole_domains' pass over
// every domain.
TEST_CASE("whole-domain windows: filed by word, in buckets and scanned, they pick as the pass over every domain") {
    for (const std::uint32_t domains : {9000U, 700U}) {
        CAPTURE(domains);
        topology_builder b;
        std::vector<topology_builder::group_spec> groups;
        for (std::uint32_t d = 0; d < domains; ++d) {
            const std::string name = "d" + std::to_string(d);
            b.add_numbered_domain(name, 1, 4, name + "n", 0, 1);
            if (d % 5 == 0) groups.push_back({"g" + std::to_string(d / 5), {}});
            groups.back().domains.push_back(name);
        }
        b.add_level("leaf", std::move(groups));
        auto a = std::move(*allocator<best_fit>::create(*b.build()));
        toolkit::whole_domain_windows windows;
        windows.attach(a.state());
        REQUIRE(windows.kept());
        rng r(92);
        std::vector<allocation_id> live;
        std::vector<domain_id> picked, passed;
        std::size_t answered = 0;
        for (std::uint32_t op = 0; op < 24'000; ++op) {
            CAPTURE(op);
            // Fill to about 80% of the domains, then drain, so that whole
            // domains lie scattered, in runs, and everywhere free.
            const bool filling = op < 12'000 ? live.size() < domains * 7 / 9 : live.size() < domains / 9;
            if (r.chance(3)) {
                const node_id n = r.between(0, domains - 1);
                REQUIRE(a.set_health(n, r.chance(50) ? node_health::up : node_health::down));
            } else if (filling || live.empty()) {
                auto id = a.try_allocate(r.chance(80) ? request::gpus(r.between(1, 4)) : request::gpus(r.between(5, 64)));
                if (!id) continue;
                live.push_back(*id);
            } else {
                const std::size_t i = r.between(0, static_cast<std::uint32_t>(live.size() - 1));
                REQUIRE(a.release(live[i]));
                live[i] = live.back();
                live.pop_back();
            }
            windows.on_domains_change(a.state(), a.state().touched_domains());
            if (op % 2'000 == 0) {
                toolkit::whole_domain_windows fresh;
                fresh.attach(a.state());
                REQUIRE(fresh == windows);
            }
            if (op % 60 != 0) continue;
            const auto asked = static_cast<std::uint32_t>(r.chance(70) ? r.between(2, 130) : r.between(131, 600));
            CAPTURE(asked);
            const request q = request::gpus(asked * 4);
            const bool fast = windows.pick(asked, picked);
            using state_type = std::remove_cvref_t<decltype(a.state())>;
            const bool slow = toolkit::pick_whole_domains(toolkit::request_units<state_type>{a.state(), q}, q.count, passed);
            REQUIRE(fast == slow);
            if (fast) REQUIRE(picked == passed);
            picked.clear();
            answered += fast ? 1U : 0U;
        }
        toolkit::whole_domain_windows fresh;
        fresh.attach(a.state());
        REQUIRE(fresh == windows);
        CHECK(answered > 100);
    }
}

}  // namespace test_policy_toolkit_whole_domains
