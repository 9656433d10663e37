#include "../reference_model.hpp"

#include <topoblock/support/bitset.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

namespace test_support_bitset {

using namespace topoblock;

namespace {

// Sets or clears a random range of `b` (within its N bits) and of the bit
// model, then checks every bit.
template <std::size_t N>
void change_random_range(test::rng& r, fixed_bitset<N>& b, std::vector<bool>& model, std::size_t first) {
    const std::size_t count = r.between(0, static_cast<std::uint32_t>(N - first));
    const bool on = r.chance(50);
    if (on) b.set_range(first, count);
    else b.reset_range(first, count);
    for (std::size_t k = first; k < first + count; ++k) model[k] = on;
    for (std::size_t k = 0; k < N; ++k) REQUIRE(b.test(k) == model[k]);
}

}  // namespace

TEST_CASE("gpu masks") {
    CHECK(full_gpu_mask(4) == 0b1111);
    CHECK(full_gpu_mask(64) == ~gpu_mask{0});
    CHECK(lowest_bits(0b101100, 2) == 0b001100);
    CHECK(lowest_bits(0b101100, 9) == 0b101100);
    CHECK(lowest_bits(0, 3) == 0);
}

TEST_CASE("fixed_bitset finds set and clear bits across words") {
    fixed_bitset<130> b;
    CHECK(b.find_first() == 130);
    b.set(3);
    b.set(64);
    b.set(129);
    CHECK(b.count() == 3);
    CHECK(b.find_first() == 3);
    CHECK(b.find_next(4) == 64);
    CHECK(b.find_next(65) == 129);
    CHECK(b.find_next(130) == 130);
    CHECK(b.find_next_clear(3) == 4);
    b.reset(64);
    CHECK(b.find_next(4) == 129);
    CHECK_FALSE(b.none());
    b.set_range(60, 10);  // across a word boundary
    CHECK(b.count() == 12);
    CHECK(b.find_next(4) == 60);
    CHECK(b.find_next_clear(60) == 70);
    b.reset_range(0, 128);
    CHECK(b.find_first() == 129);
    b.set_range(0, 130);
    CHECK(b.count() == 130);
}

TEST_CASE("fixed_bitset sets, clears and tests ranges and replaces words like bit by bit") {
    test::rng r(5);
    fixed_bitset<130> b;
    std::vector<bool> model(130, false);
    for (int op = 0; op < 4000; ++op) {
        const std::size_t i = r.between(0, 129);
        b.assign(i, r.chance(70));
        model[i] = b.test(i);
        // Ranges inside one word, across one boundary, or over all three.
        if (r.chance(30)) change_random_range(r, b, model, i);
        const std::size_t first = r.between(0, 130);
        const std::size_t count = r.between(0, 140 - static_cast<std::uint32_t>(first));
        bool all = true;
        for (std::size_t j = first; j < first + count; ++j) all = all && j < 130 && model[j];
        REQUIRE(b.all_set(first, count) == all);
    }
    fixed_bitset<130> copy;
    for (std::size_t w = 0; w < fixed_bitset<130>::word_count; ++w) copy.set_word(w, b.word(w));
    CHECK(copy == b);
    copy.set_word(2, ~std::uint64_t{0});  // bits 130 and up must stay clear
    CHECK(copy.count() == b.count() - (b.test(128) ? 1 : 0) - (b.test(129) ? 1 : 0) + 2);
    CHECK(copy.find_next_clear(128) == 130);
}

TEST_CASE("a one-word fixed_bitset (a domain's node mask) sets and clears ranges like bit by bit") {
    test::rng r(6);
    fixed_bitset<64> b;
    std::vector<bool> model(64, false);
    for (int op = 0; op < 4000; ++op) change_random_range(r, b, model, r.between(0, 64));
}

TEST_CASE("indexed_bitset agrees with a std::set over random operations, bit copies, clear bits, the last bit and range counts included") {
    test::rng r(7);
    for (std::size_t size : {1U, 63U, 64U, 65U, 4096U, 5000U, 300000U}) {
        CAPTURE(size);
        indexed_bitset b(size);
        std::set<std::size_t> model;
        for (int op = 0; op < 3000; ++op) {
            const std::size_t i = r.between(0, static_cast<std::uint32_t>(size - 1));
            if (r.chance(15)) {
                // Up to 64 bits copied in, as a domain's node set: often
                // straddling two words, often clearing a word whole.
                const std::size_t n = r.between(0, static_cast<std::uint32_t>(std::min<std::size_t>(size - i, 64)));
                const std::uint64_t bits = r.chance(30) ? 0 : (std::uint64_t{r.between(0, 0xffffffffU)} << 32) | r.between(0, 0xffffffffU);
                b.assign_bits(i, n, bits);
                for (std::size_t k = 0; k < n; ++k) ((bits >> k) & 1U) != 0 ? (void)model.insert(i + k) : (void)model.erase(i + k);
            } else if (r.chance(20)) {
                // A run of bits, as a job's consecutive nodes.
                const std::size_t n = r.between(0, static_cast<std::uint32_t>(std::min<std::size_t>(size - i, 150)));
                const bool on = r.chance(50);
                if (on) b.set_range(i, n);
                else b.reset_range(i, n);
                for (std::size_t k = i; k < i + n; ++k) on ? (void)model.insert(k) : (void)model.erase(k);
            } else if (r.chance(60)) {
                b.set(i);
                model.insert(i);
            } else {
                b.reset(i);
                model.erase(i);
            }
            const std::size_t from = r.between(0, static_cast<std::uint32_t>(size));
            const auto it = model.lower_bound(from);
            REQUIRE(b.find_next(from) == (it == model.end() ? size : *it));
            std::size_t clear = from;
            while (clear < size && model.count(clear) != 0) ++clear;
            REQUIRE(b.find_next_clear(from) == clear);
            REQUIRE(b.any() == !model.empty());
            REQUIRE(b.find_first() == (model.empty() ? size : *model.begin()));
            REQUIRE(b.find_last() == (model.empty() ? size : *model.rbegin()));
            // Ranges of every length up to a few words, some past the end.
            const std::size_t length = r.chance(50) ? std::size_t{1} << r.between(0, 8) : r.between(0, 300);
            REQUIRE(b.count(from, length) ==
                    static_cast<std::size_t>(std::distance(model.lower_bound(from), model.lower_bound(from + length))));
        }
        CHECK(b.count() == model.size());
    }
}

}  // namespace test_support_bitset
