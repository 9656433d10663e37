#pragma once

#include <topoblock/support/bitset.hpp>
#include <topoblock/support/heap_bytes.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace topoblock {

// Items (domains) filed under a small integer key (their free capacity), so
// that "the item with the least key that is still >= k, lowest index first"
// costs a few word scans instead of a pass over every item. This is the
// best-fit question every policy asks, and its upkeep is on every allocate
// and release, so all buckets live in one flat array: a move touches two
// words of items, their summary words and the word of non-empty keys.
class bucket_index {
public:
    bucket_index() = default;
    bucket_index(std::size_t items, std::uint32_t max_key)
        : items_(items),
          words_per_key_((items + 63) / 64),
          summaries_per_key_((words_per_key_ + 63) / 64),
          stride_(summaries_per_key_ + words_per_key_),
          key_of_(items, npos32),
          blocks_((std::size_t{max_key} + 1) * stride_),
          max_key_(max_key),
          nonempty_((std::size_t{max_key} + 64) / 64) {}

    std::size_t items() const noexcept { return items_; }
    std::uint32_t max_key() const noexcept { return max_key_; }
    std::uint32_t key_of(std::uint32_t item) const noexcept { return key_of_[item]; }
    // No item is filed (with assign_nonzero: every item's key is 0).
    bool empty() const noexcept {
        for (std::uint64_t keys : nonempty_)
            if (keys != 0) return false;
        return true;
    }
    bool contains(std::uint32_t item) const noexcept { return key_of_[item] != npos32; }
    // Items filed under `key`. O(items / 64): for tests and reports.
    std::uint32_t count(std::uint32_t key) const noexcept {
        const std::uint64_t* words = block(key) + summaries_per_key_;
        std::uint32_t n = 0;
        for (std::size_t w = 0; w < words_per_key_; ++w) n += static_cast<std::uint32_t>(std::popcount(words[w]));
        return n;
    }

    // Items filed under `key` or above. O(keys x items / 64): for reports.
    std::uint32_t count_at_least(std::uint32_t key) const noexcept {
        std::uint32_t n = 0;
        for (std::uint32_t k = next_key(key); k != npos32; k = next_key(k + 1)) n += count(k);
        return n;
    }

    void assign(std::uint32_t item, std::uint32_t key) noexcept { refile(item, key); }
    // Files the item under `key`, or nowhere when `key` is 0: for indexes
    // whose every lookup asks for at least 1, where a bucket for 0 would
    // answer nothing and cost a move on every change to or from 0.
    void assign_nonzero(std::uint32_t item, std::uint32_t key) noexcept { refile(item, nonzero_key(key)); }
    // Where assign_nonzero files an item of `key`: the key, or npos32 for 0.
    static constexpr std::uint32_t nonzero_key(std::uint32_t key) noexcept { return key == 0 ? npos32 : key; }
    void remove(std::uint32_t item) noexcept { refile(item, npos32); }

    std::size_t memory_bytes() const noexcept {
        return heap_bytes(key_of_) + heap_bytes(blocks_) + heap_bytes(nonempty_);
    }
    // Every item under the same key (the words follow from the keys).
    friend bool operator==(const bucket_index&, const bucket_index&) = default;

    // The non-empty key at or above `key`, or npos32.
    std::uint32_t next_key(std::uint32_t key) const noexcept {
        std::size_t w = key / 64;
        if (w >= nonempty_.size()) return npos32;
        std::uint64_t word = nonempty_[w] & (~std::uint64_t{0} << (key % 64));
        while (word == 0) {
            if (++w == nonempty_.size()) return npos32;
            word = nonempty_[w];
        }
        return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
    }
    // The largest non-empty key at or below `key`, or npos32.
    std::uint32_t previous_key(std::uint32_t key) const noexcept {
        if (nonempty_.empty()) return npos32;
        if (key > max_key_) key = max_key_;
        std::size_t w = key / 64;
        std::uint64_t word = nonempty_[w] & (~std::uint64_t{0} >> (63 - key % 64));
        while (word == 0) {
            if (w == 0) return npos32;
            word = nonempty_[--w];
        }
        return static_cast<std::uint32_t>(w * 64 + highest_bit(word));
    }
    // The item with the least key >= `key`, the lowest index among equals.
    std::uint32_t find_at_least(std::uint32_t key) const noexcept {
        const std::uint32_t k = next_key(key);
        return k == npos32 ? npos32 : first_in(k, 0);
    }
    // The lowest-index item filed under `key` at or after `from`, or npos32.
    std::uint32_t first_in(std::uint32_t key, std::uint32_t from) const noexcept {
        if (from >= items_) return npos32;
        const std::uint64_t* summaries = block(key);
        const std::uint64_t* words = summaries + summaries_per_key_;
        std::size_t w = from / 64;
        const std::uint64_t word = words[w] & (~std::uint64_t{0} << (from % 64));
        if (word != 0) return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
        ++w;
        std::size_t s = w / 64;
        if (s >= summaries_per_key_) return npos32;
        std::uint64_t summary = summaries[s] & (w % 64 == 0 ? ~std::uint64_t{0} : (~std::uint64_t{0} << (w % 64)));
        while (summary == 0) {
            if (++s == summaries_per_key_) return npos32;
            summary = summaries[s];
        }
        const std::size_t next = s * 64 + static_cast<std::size_t>(std::countr_zero(summary));
        return static_cast<std::uint32_t>(next * 64 + static_cast<std::size_t>(std::countr_zero(words[next])));
    }
    // The lowest-index item filed under any key of [first, last], or
    // npos32: the lowest of each word of keys' answers (a policy's row of
    // keys is one word).
    std::uint32_t first_in_keys(std::uint32_t first, std::uint32_t last) const noexcept {
        if (last > max_key_) last = max_key_;
        if (first > last || nonempty_.empty()) return npos32;  // empty: a default-constructed index
        std::uint32_t lowest = npos32;
        const std::size_t first_word = first / 64, last_word = last / 64;
        for (std::size_t w = first_word; w <= last_word; ++w) {
            const std::uint64_t range =
                detail::word_bits(w == first_word ? first % 64 : 0, w == last_word ? last % 64 : 63);
            lowest = std::min(lowest, first_in_word_of_keys(w, nonempty_[w] & range));
        }
        return lowest;
    }
    // The highest-index item filed under `key` below `before`, or npos32:
    // Slurm-style best fit breaks ties towards the later item.
    std::uint32_t last_in(std::uint32_t key, std::uint32_t before) const noexcept {
        if (before > items_) before = static_cast<std::uint32_t>(items_);
        if (before == 0) return npos32;
        const std::uint64_t* summaries = block(key);
        const std::uint64_t* words = summaries + summaries_per_key_;
        const std::size_t last = before - 1;
        std::size_t w = last / 64;
        const std::uint64_t word = words[w] & (~std::uint64_t{0} >> (63 - last % 64));
        if (word != 0) return static_cast<std::uint32_t>(w * 64 + highest_bit(word));
        if (w == 0) return npos32;
        --w;
        std::size_t s = w / 64;
        std::uint64_t summary = summaries[s] & (~std::uint64_t{0} >> (63 - w % 64));
        while (summary == 0) {
            if (s == 0) return npos32;
            summary = summaries[--s];
        }
        const std::size_t previous = s * 64 + highest_bit(summary);
        return static_cast<std::uint32_t>(previous * 64 + highest_bit(words[previous]));
    }

private:
    // first_in_keys over the keys `keys` of word `w` of keys: their summary
    // words ORed give the first word that holds an item, and their words
    // there ORed the item, with no search per key.
    std::uint32_t first_in_word_of_keys(std::size_t w, std::uint64_t keys) const noexcept {
        const std::uint64_t* blocks = block(static_cast<std::uint32_t>(w * 64));
        const auto or_of = [&](std::size_t at) {
            std::uint64_t word = 0;
            for (std::uint64_t k = keys; k != 0; k &= k - 1)
                word |= blocks[static_cast<std::size_t>(std::countr_zero(k)) * stride_ + at];
            return word;
        };
        for (std::size_t s = 0; s < summaries_per_key_; ++s)
            if (const std::uint64_t summary = or_of(s); summary != 0) {
                const std::size_t item_word = s * 64 + static_cast<std::size_t>(std::countr_zero(summary));
                const std::uint64_t items = or_of(summaries_per_key_ + item_word);
                return static_cast<std::uint32_t>(item_word * 64 + static_cast<std::size_t>(std::countr_zero(items)));
            }
        return npos32;
    }
    static std::size_t highest_bit(std::uint64_t word) noexcept {
        return 63 - static_cast<std::size_t>(std::countl_zero(word));
    }
    // A key's block: its summary words, then its item words.
    const std::uint64_t* block(std::uint32_t key) const noexcept { return blocks_.data() + std::size_t{key} * stride_; }
    std::uint64_t* block(std::uint32_t key) noexcept { return blocks_.data() + std::size_t{key} * stride_; }
    // Where an item sits in any key's block: its word (after the summary
    // words) and bit, its summary word and bit. A move computes them once
    // for both keys.
    struct item_bits {
        std::size_t word;
        std::uint64_t bit;
        std::size_t summary;
        std::uint64_t summary_bit;
    };
    item_bits bits_of(std::uint32_t item) const noexcept {
        const std::size_t w = item / 64;
        return {summaries_per_key_ + w, std::uint64_t{1} << (item % 64), w / 64, std::uint64_t{1} << (w % 64)};
    }
    // Moves the item to `key` (npos32: out of every bucket).
    void refile(std::uint32_t item, std::uint32_t key) noexcept {
        std::uint32_t& filed = key_of_[item];
        const std::uint32_t old = filed;
        if (old == key) return;
        filed = key;
        const item_bits at = bits_of(item);
        if (old != npos32) take_out(at, old);
        if (key != npos32) put_in(at, key);
    }
    // A key is non-empty while any of its summary words is: no count per
    // key to keep on every move.
    void put_in(const item_bits& at, std::uint32_t key) noexcept {
        std::uint64_t* b = block(key);
        b[at.word] |= at.bit;
        b[at.summary] |= at.summary_bit;
        nonempty_[key / 64] |= std::uint64_t{1} << (key % 64);
    }
    void take_out(const item_bits& at, std::uint32_t key) noexcept {
        std::uint64_t* b = block(key);
        if ((b[at.word] &= ~at.bit) != 0) return;
        if ((b[at.summary] &= ~at.summary_bit) != 0) return;
        for (std::size_t s = 0; s < summaries_per_key_; ++s)
            if (b[s] != 0) return;
        nonempty_[key / 64] &= ~(std::uint64_t{1} << (key % 64));
    }

    std::size_t items_ = 0;
    std::size_t words_per_key_ = 0;
    std::size_t summaries_per_key_ = 0;
    std::size_t stride_ = 0;  // words per key: summaries, then items
    std::vector<std::uint32_t> key_of_;
    std::vector<std::uint64_t> blocks_;
    std::uint32_t max_key_ = 0;
    std::vector<std::uint64_t> nonempty_;  // bit k: some item has key k (keys are few: a word or two)
};

}  // namespace topoblock
