#pragma once

#include <topoblock/support/heap_bytes.hpp>
#include <topoblock/support/noinline.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace topoblock {

inline constexpr std::uint32_t npos32 = std::numeric_limits<std::uint32_t>::max();

// A node's GPUs as a bit mask: bit i = GPU i of that node.
using gpu_mask = std::uint64_t;

// Set bits of a mask. Without a popcnt instruction in the target (x86-64's
// baseline has none), std::popcount becomes a library call; the inline SWAR
// count is several times faster there, and the intrinsic wins where it exists.
constexpr std::uint32_t count_bits(std::uint64_t x) noexcept {
#if defined(__POPCNT__) || defined(__ARM_NEON) || defined(__aarch64__)
    return static_cast<std::uint32_t>(std::popcount(x));
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return static_cast<std::uint32_t>((x * 0x0101010101010101ULL) >> 56);
#endif
}

// The mask of a node with `gpus` GPUs, all set.
constexpr gpu_mask full_gpu_mask(std::uint32_t gpus) noexcept {
    return gpus >= 64 ? ~gpu_mask{0} : ((gpu_mask{1} << gpus) - 1);
}

// The `count` lowest set bits of `mask` (all of them when it has fewer).
constexpr gpu_mask lowest_bits(gpu_mask mask, std::uint32_t count) noexcept {
    gpu_mask taken = 0;
    for (; count > 0 && mask != 0; --count) {
        const gpu_mask bit = mask & (~mask + 1);
        taken |= bit;
        mask ^= bit;
    }
    return taken;
}

namespace detail {
// word << n, 0 once n reaches the word's width (where the shift itself is
// undefined): for shifts by a count that a full word of 64 nodes or 64 GPUs
// makes 64.
constexpr std::uint64_t shift_up(std::uint64_t word, std::uint32_t n) noexcept { return n >= 64 ? 0 : word << n; }
// Bits lo..hi (inclusive, 0-63) of a word.
constexpr std::uint64_t word_bits(std::size_t lo, std::size_t hi) noexcept {
    return (~std::uint64_t{0} << lo) & (~std::uint64_t{0} >> (63 - hi));
}
// Calls f(word index, mask) for each word the bits [first, first + count) touch.
// Most ranges lie in one word, so the loop's first pass masks both ends; f
// has one call site, so a caller's lambda is inlined once, not three times.
template <class F>
constexpr void for_each_word_of_range(std::size_t first, std::size_t count, F&& f) noexcept {
    if (count == 0) return;
    const std::size_t last = first + count - 1;
    const std::size_t first_word = first / 64, last_word = last / 64;
    for (std::size_t w = first_word; w <= last_word; ++w) {
        std::uint64_t mask = ~std::uint64_t{0};
        if (w == first_word) mask &= ~std::uint64_t{0} << (first % 64);
        if (w == last_word) mask &= ~std::uint64_t{0} >> (63 - last % 64);
        f(w, mask);
    }
}
}  // namespace detail

// A bitset of fixed capacity N bits, the width of a domain's node masks. Bits
// at N and above stay zero.
template <std::size_t N>
class fixed_bitset {
public:
    static constexpr std::size_t capacity = N;
    static constexpr std::size_t word_count = (N + 63) / 64;

    constexpr void set(std::size_t i) noexcept { words_[i / 64] |= bit(i); }
    constexpr void reset(std::size_t i) noexcept { words_[i / 64] &= ~bit(i); }
    constexpr void assign(std::size_t i, bool value) noexcept { value ? set(i) : reset(i); }
    constexpr bool test(std::size_t i) const noexcept { return (words_[i / 64] & bit(i)) != 0; }
    constexpr void clear() noexcept { words_ = {}; }
    // Bits [first, first + count), a word at a time.
    constexpr void set_range(std::size_t first, std::size_t count) noexcept {
        if constexpr (word_count == 1) {
            if (count != 0) words_[0] |= detail::word_bits(first, first + count - 1);
        } else {
            detail::for_each_word_of_range(first, count, [&](std::size_t w, std::uint64_t m) { words_[w] |= m; });
        }
    }
    constexpr void reset_range(std::size_t first, std::size_t count) noexcept {
        if constexpr (word_count == 1) {
            if (count != 0) words_[0] &= ~detail::word_bits(first, first + count - 1);
        } else {
            detail::for_each_word_of_range(first, count, [&](std::size_t w, std::uint64_t m) { words_[w] &= ~m; });
        }
    }

    constexpr std::size_t count() const noexcept {
        std::size_t total = 0;
        for (auto w : words_) total += count_bits(w);
        return total;
    }
    constexpr bool any() const noexcept {
        for (auto w : words_)
            if (w != 0) return true;
        return false;
    }
    constexpr bool none() const noexcept { return !any(); }

    // The first set bit at or after `from`, or N when there is none.
    constexpr std::size_t find_next(std::size_t from) const noexcept {
        if (from >= N) return N;
        std::size_t w = from / 64;
        std::uint64_t word = words_[w] & (~std::uint64_t{0} << (from % 64));
        while (true) {
            if (word != 0) return w * 64 + static_cast<std::size_t>(std::countr_zero(word));
            if (++w == word_count) return N;
            word = words_[w];
        }
    }
    constexpr std::size_t find_first() const noexcept { return find_next(0); }
    // The first clear bit at or after `from` (may be >= N when all are set).
    constexpr std::size_t find_next_clear(std::size_t from) const noexcept {
        if (from >= N) return N;
        std::size_t w = from / 64;
        std::uint64_t word = ~words_[w] & (~std::uint64_t{0} << (from % 64));
        while (true) {
            if (word != 0) {
                const std::size_t pos = w * 64 + static_cast<std::size_t>(std::countr_zero(word));
                return pos < N ? pos : N;
            }
            if (++w == word_count) return N;
            word = ~words_[w];
        }
    }

    // Every bit of [first, first + count) is set (true when count is 0);
    // bits at N and above count as clear. A word test per 64 bits.
    constexpr bool all_set(std::size_t first, std::size_t count) const noexcept {
        if (count == 0) return true;
        if (first + count > N) return false;
        const std::size_t last = first + count - 1;
        for (std::size_t w = first / 64; w <= last / 64; ++w) {
            const std::size_t lo = w == first / 64 ? first % 64 : 0;
            const std::size_t hi = w == last / 64 ? last % 64 : 63;
            const std::uint64_t want = (~std::uint64_t{0} >> (63 - hi)) & (~std::uint64_t{0} << lo);
            if ((words_[w] & want) != want) return false;
        }
        return true;
    }

    constexpr std::uint64_t word(std::size_t w) const noexcept { return words_[w]; }
    // Replaces word `w`; bits at N and above are dropped so they stay zero.
    constexpr void set_word(std::size_t w, std::uint64_t value) noexcept {
        words_[w] = w + 1 == word_count && N % 64 != 0 ? value & ((std::uint64_t{1} << (N % 64)) - 1) : value;
    }
    friend constexpr bool operator==(const fixed_bitset&, const fixed_bitset&) = default;

private:
    static constexpr std::uint64_t bit(std::size_t i) noexcept { return std::uint64_t{1} << (i % 64); }
    std::array<std::uint64_t, word_count> words_{};
};

// A run-time sized bitset with a summary word per 64 words, so that finding
// the next set bit among many thousands of nodes or domains skips empty
// stretches 4096 bits at a time.
class indexed_bitset {
public:
    indexed_bitset() = default;
    explicit indexed_bitset(std::size_t size)
        : size_(size), words_((size + 63) / 64), summary_((words_.size() + 63) / 64) {}

    std::size_t size() const noexcept { return size_; }
    // Bits 64w .. 64w + 63 (bit i of the set is bit i % 64 of word i / 64).
    std::uint64_t word(std::size_t w) const noexcept { return words_[w]; }

    TOPOBLOCK_ALWAYS_INLINE void set(std::size_t i) noexcept {
        const std::size_t w = i / 64;
        words_[w] |= std::uint64_t{1} << (i % 64);
        summary_[w / 64] |= std::uint64_t{1} << (w % 64);
    }
    TOPOBLOCK_ALWAYS_INLINE void reset(std::size_t i) noexcept {
        const std::size_t w = i / 64;
        words_[w] &= ~(std::uint64_t{1} << (i % 64));
        if (words_[w] == 0) summary_[w / 64] &= ~(std::uint64_t{1} << (w % 64));
    }
    void assign(std::size_t i, bool value) noexcept { value ? set(i) : reset(i); }
    // Bits [first, first + count), a word at a time.
    void set_range(std::size_t first, std::size_t count) noexcept {
        detail::for_each_word_of_range(first, count, [&](std::size_t w, std::uint64_t m) {
            words_[w] |= m;
            summary_[w / 64] |= std::uint64_t{1} << (w % 64);
        });
    }
    void reset_range(std::size_t first, std::size_t count) noexcept {
        detail::for_each_word_of_range(first, count, [&](std::size_t w, std::uint64_t m) {
            words_[w] &= ~m;
            if (words_[w] == 0) summary_[w / 64] &= ~(std::uint64_t{1} << (w % 64));
        });
    }
    // Bits [first, first + count) become the low `count` bits of `bits`
    // (count at most 64): a copy of up to 64 bits in at most two words.
    void assign_bits(std::size_t first, std::size_t count, std::uint64_t bits) noexcept {
        if (count == 0) return;
        const std::uint64_t mask = detail::word_bits(0, count - 1);
        bits &= mask;
        const std::size_t w = first / 64, shift = first % 64;
        store(w, (words_[w] & ~(mask << shift)) | (bits << shift));
        if (shift + count > 64) store(w + 1, (words_[w + 1] & ~(mask >> (64 - shift))) | (bits >> (64 - shift)));
    }
    // Word w becomes `word` (bits 64w .. 64w + 63; none past size()).
    void set_word(std::size_t w, std::uint64_t word) noexcept { store(w, word); }
    bool test(std::size_t i) const noexcept { return (words_[i / 64] >> (i % 64)) & 1U; }
    bool any() const noexcept {
        for (auto s : summary_)
            if (s != 0) return true;
        return false;
    }

    // The first set bit at or after `from`, or size() when there is none.
    std::size_t find_next(std::size_t from) const noexcept {
        if (from >= size_) return size_;
        std::size_t w = from / 64;
        const std::uint64_t word = words_[w] & (~std::uint64_t{0} << (from % 64));
        if (word != 0) return w * 64 + static_cast<std::size_t>(std::countr_zero(word));
        // Continue with the next non-empty word, found through the summary.
        ++w;
        std::size_t s = w / 64;
        if (s >= summary_.size()) return size_;
        std::uint64_t summary = summary_[s] & (w % 64 == 0 ? ~std::uint64_t{0} : (~std::uint64_t{0} << (w % 64)));
        while (summary == 0) {
            if (++s == summary_.size()) return size_;
            summary = summary_[s];
        }
        const std::size_t next_word = s * 64 + static_cast<std::size_t>(std::countr_zero(summary));
        return next_word * 64 + static_cast<std::size_t>(std::countr_zero(words_[next_word]));
    }
    // The summary first: an empty set answers from its summary words alone,
    // and a set of up to 4,096 bits costs two loads.
    std::size_t find_first() const noexcept {
        for (std::size_t s = 0; s < summary_.size(); ++s)
            if (summary_[s] != 0) {
                const std::size_t w = s * 64 + static_cast<std::size_t>(std::countr_zero(summary_[s]));
                return w * 64 + static_cast<std::size_t>(std::countr_zero(words_[w]));
            }
        return size_;
    }
    // The last set bit, or size() when there is none: the summary from its
    // top, so a set of up to 4,096 bits costs two loads here too.
    std::size_t find_last() const noexcept {
        for (std::size_t s = summary_.size(); s-- > 0;)
            if (summary_[s] != 0) {
                const std::size_t w = s * 64 + 63 - static_cast<std::size_t>(std::countl_zero(summary_[s]));
                return w * 64 + 63 - static_cast<std::size_t>(std::countl_zero(words_[w]));
            }
        return size_;
    }
    // The first clear bit at or after `from`, or size() when every bit from
    // there is set: where a run of set bits ends, a word at a time.
    std::size_t find_next_clear(std::size_t from) const noexcept {
        if (from >= size_) return size_;
        std::size_t w = from / 64;
        std::uint64_t clear = ~words_[w] & (~std::uint64_t{0} << (from % 64));
        while (clear == 0) {
            if (++w == words_.size()) return size_;
            clear = ~words_[w];
        }
        const std::size_t at = w * 64 + static_cast<std::size_t>(std::countr_zero(clear));
        return at < size_ ? at : size_;
    }

    std::size_t count() const noexcept {
        std::size_t total = 0;
        for (auto w : words_) total += count_bits(w);
        return total;
    }
    // Set bits among [first, first + length), clipped to size(): a range
    // of at most 64 bits aligned to its length reads one word.
    std::size_t count(std::size_t first, std::size_t length) const noexcept {
        if (first >= size_ || length == 0) return 0;
        if (length > size_ - first) length = size_ - first;
        const std::size_t shift = first % 64;
        if (shift + length <= 64) return count_bits((words_[first / 64] >> shift) & detail::word_bits(0, length - 1));
        std::size_t total = 0;
        detail::for_each_word_of_range(first, length, [&](std::size_t w, std::uint64_t m) { total += count_bits(words_[w] & m); });
        return total;
    }

    std::size_t memory_bytes() const noexcept { return heap_bytes(words_) + heap_bytes(summary_); }

    friend bool operator==(const indexed_bitset&, const indexed_bitset&) = default;

private:
    // The summary bit mirrors "the word is not zero", so it flips exactly
    // when the word turns zero or stops being zero.
    void store(std::size_t w, std::uint64_t word) noexcept {
        const std::uint64_t old = words_[w];
        if (old == word) return;
        words_[w] = word;
        if ((old == 0) != (word == 0)) summary_[w / 64] ^= std::uint64_t{1} << (w % 64);
    }

    std::size_t size_ = 0;
    std::vector<std::uint64_t> words_;
    std::vector<std::uint64_t> summary_;
};

}  // namespace topoblock
