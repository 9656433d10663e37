#include "../reference_model.hpp"

#include <topoblock/support/bitset.hpp>
#include <topoblock/support/bucket_index.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

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

TEST_CASE("indexed_bitset agrees with a std::set over random operations, bit copies, clear bits and range counts included") {
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
            // Ranges of every length up to a few words, some past the end.
            const std::size_t length = r.chance(50) ? std::size_t{1} << r.between(0, 8) : r.between(0, 300);
            REQUIRE(b.count(from, length) ==
                    static_cast<std::size_t>(std::distance(model.lower_bound(from), model.lower_bound(from + length))));
        }
        CHECK(b.count() == model.size());
    }
}

TEST_CASE("bucket_index answers best-fit questions like a linear scan") {
    test::rng r(11);
    const std::uint32_t items = 300, max_key = 72;
    bucket_index index(items, max_key);
    std::vector<std::uint32_t> key(items, npos32);
    for (int op = 0; op < 20000; ++op) {
        const std::uint32_t item = r.between(0, items - 1);
        if (r.chance(45)) {
            const std::uint32_t k = r.between(0, max_key);
            index.assign(item, k);
            key[item] = k;
        } else if (r.chance(75)) {
            // Key 0 files the item nowhere (a third of these are 0).
            const std::uint32_t k = r.chance(33) ? 0 : r.between(1, max_key);
            index.assign_nonzero(item, k);
            key[item] = k == 0 ? npos32 : k;
            REQUIRE(bucket_index::nonzero_key(k) == key[item]);
        } else {
            index.remove(item);
            key[item] = npos32;
        }
        const std::uint32_t want = r.between(0, max_key);
        std::uint32_t best = npos32;
        for (std::uint32_t i = 0; i < items; ++i)
            if (key[i] != npos32 && key[i] >= want && (best == npos32 || key[i] < key[best])) best = i;
        REQUIRE(index.find_at_least(want) == best);
        REQUIRE(index.key_of(item) == key[item]);
        std::uint32_t largest = npos32;
        for (std::uint32_t i = 0; i < items; ++i)
            if (key[i] != npos32 && key[i] <= want && (largest == npos32 || key[i] > largest)) largest = key[i];
        REQUIRE(index.previous_key(want) == largest);
        REQUIRE(index.count(want) == static_cast<std::uint32_t>(std::count(key.begin(), key.end(), want)));
    }
}

TEST_CASE("bucket_index finds the last item and the non-empty keys like a std::set, across summary words") {
    test::rng r(13);
    // 9,000 items: 141 words per key, three summary words.
    for (std::uint32_t items : {1U, 64U, 65U, 300U, 4096U, 4097U, 9000U}) {
        CAPTURE(items);
        const std::uint32_t max_key = 5;
        bucket_index index(items, max_key);
        std::vector<std::set<std::uint32_t>> model(max_key + 1);
        std::vector<std::uint32_t> key(items, npos32);
        for (int op = 0; op < 4000; ++op) {
            // Keys 4 and 5 are rare: their few items leave whole summary
            // words clear, which the search must skip.
            // Now and then an item of a rare key, so that those keys empty
            // out again with their items in any summary word.
            std::uint32_t item = r.between(0, items - 1);
            const std::uint32_t rare = r.between(4, max_key);
            if (r.chance(25) && !model[rare].empty()) item = r.chance(50) ? *model[rare].begin() : *model[rare].rbegin();
            if (key[item] != npos32) model[key[item]].erase(item);
            if (r.chance(45)) {
                key[item] = r.chance(97) ? r.between(0, 3) : r.between(4, max_key);
                index.assign(item, key[item]);
                model[key[item]].insert(item);
            } else {
                index.remove(item);
                key[item] = npos32;
            }
            // One item, or a few filed: empty() goes both ways often.
            REQUIRE(index.empty() == std::all_of(key.begin(), key.end(), [](std::uint32_t k) { return k == npos32; }));
            const std::uint32_t k = r.between(0, max_key);
            const std::uint32_t before = r.chance(20) ? items + r.between(0, 3) : r.between(0, items);
            const auto it = model[k].lower_bound(before);
            const std::uint32_t want = it == model[k].begin() ? npos32 : *std::prev(it);
            REQUIRE(index.last_in(k, before) == want);
            REQUIRE(index.count(k) == model[k].size());
            // A key is non-empty while any of its summary words is.
            std::uint32_t next = npos32, previous = npos32;
            for (std::uint32_t j = k; j <= max_key && next == npos32; ++j)
                if (!model[j].empty()) next = j;
            for (std::uint32_t j = k + 1; j-- > 0 && previous == npos32;)
                if (!model[j].empty()) previous = j;
            REQUIRE(index.next_key(k) == next);
            REQUIRE(index.previous_key(k) == previous);
        }
    }
}

TEST_CASE("bucket_index finds the lowest item of a range of keys like a scan, across key words and summary words") {
    test::rng r(17);
    // Keys up to 150: three words of non-empty keys; 9,000 items: three
    // summary words per key.
    for (std::uint32_t items : {1U, 65U, 300U, 4097U, 9000U}) {
        CAPTURE(items);
        const std::uint32_t max_key = 150;
        bucket_index index(items, max_key);
        std::vector<std::uint32_t> key(items, npos32);
        REQUIRE(bucket_index{}.first_in_keys(0, 10) == npos32);
        for (int op = 0; op < 3000; ++op) {
            const std::uint32_t item = r.between(0, items - 1);
            if (r.chance(70)) {
                key[item] = r.between(0, max_key);
                index.assign(item, key[item]);
            } else {
                index.remove(item);
                key[item] = npos32;
            }
            // Ranges of one key, of a few, across a word of keys, and past
            // the largest key.
            const std::uint32_t first = r.between(0, max_key);
            const std::uint32_t last = r.chance(10) ? max_key + r.between(0, 70) : first + r.between(0, r.chance(50) ? 8 : 80);
            std::uint32_t want = npos32;
            for (std::uint32_t i = 0; i < items && want == npos32; ++i)
                if (key[i] != npos32 && key[i] >= first && key[i] <= last) want = i;
            CAPTURE(first);
            CAPTURE(last);
            REQUIRE(index.first_in_keys(first, last) == want);
        }
    }
}
