#include "../reference_model.hpp"

#include <topoblock/support/bucket_index.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <vector>

namespace test_support_bucket_index {

using namespace topoblock;

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

}  // namespace test_support_bucket_index
