#pragma once

#include <topoblock/support/bitset.hpp>
#include <topoblock/support/heap_bytes.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

// The small windows of whole_domain_windows (2 to 64 domains, inside one
// 64-domain word of its set of wholly free domains), filed a word at a time.
namespace topoblock::detail {

// For each window size 2^k (k = 1 .. sizes()) and kind (inside one group of
// the nearest level, or not): which counts of wholly free domains (2 .. 2^k)
// some window of each word has, and for each count the words that have one.
// "The fewest free >= d, then the lowest window" is then two bit scans and a
// walk over one word's windows. A word's counts at every size come from its
// bits by a popcount's steps, so a change refiles each word it touched once.
class word_windows {
public:
    static constexpr std::size_t max_sizes = 6;  // 2^6 domains: one word

    word_windows() = default;
    // Sizes 1 .. `sizes` (at most max_sizes) over `domains` domains;
    // one_group(k, w): window w of 2^k domains lies inside one group. Nothing
    // is filed yet.
    template <class OneGroup>
    word_windows(std::size_t sizes, std::size_t domains, OneGroup&& one_group)
        : sizes_(sizes < max_sizes ? sizes : max_sizes),
          words_((domains + 63) / 64),
          set_words_((words_ + 63) / 64),
          one_group_lanes_(sizes_ * words_, 0),
          present_(2 * sizes_ * words_, 0),
          words_with_(2 * sizes_ * 64 * set_words_, 0) {
        for (std::size_t k = 1; k <= sizes_; ++k)
            for (std::size_t w = 0; w < (domains + (std::size_t{1} << k) - 1) >> k; ++w)
                if (one_group(k, w)) one_group_lanes_[(w << k) / 64 * sizes_ + k - 1] |= std::uint64_t{1} << ((w << k) % 64);
    }

    std::size_t sizes() const noexcept { return sizes_; }

    // Word `word` of the set of wholly free domains is now `bits`.
    void refile_word(std::size_t word, std::uint64_t bits) noexcept {
        std::uint64_t counts = bits;
        for (std::size_t k = 1; k <= sizes_; ++k) {
            counts = widen(counts, k);
            std::array<std::uint64_t, 2> now{};
            const std::uint64_t one_group = one_group_lanes_[word * sizes_ + k - 1];
            if (k <= 2) {
                // Fast path: a mask per count over all lanes at once, not a step
                // per window (a freed rack's word has many with two or more).
                const std::uint64_t low = lane_low_bit[k];
                const std::uint64_t high = counts >> 1;
                const std::array<std::uint64_t, 3> of_count = {
                    k == 1 ? high & low : high & ~counts & ~(counts >> 2) & low,  // 2: 10, or 0010 of 4 bits
                    high & counts & low,                                          // 3: 0011 (k = 2 only)
                    (counts >> 2) & low};                                         // 4: 0100 (k = 2 only)
                for (std::size_t c = 0; c < (k == 1 ? 1U : 3U); ++c) {
                    now[1] |= std::uint64_t{(of_count[c] & one_group) != 0} << (c + 1);
                    now[0] |= std::uint64_t{(of_count[c] & ~one_group) != 0} << (c + 1);
                }
            } else {
                for_each_window_of_two(counts, k, [&](unsigned at, std::uint64_t free) {
                    now[(one_group >> at) & 1U] |= std::uint64_t{1} << (free - 1);
                    return false;
                });
            }
            file(slot(k, 0), word, now[0]);
            file(slot(k, 1), word, now[1]);
        }
    }

    // The window of 2^k domains (1 <= k <= sizes()) that holds `domains`
    // (2 .. 2^k) of the wholly free ones in `free`: inside one group first,
    // then the fewest wholly free, then the lowest; npos32 when none does.
    std::uint32_t find(std::size_t k, std::uint32_t domains, const indexed_bitset& free) const noexcept {
        for (std::size_t kind : {1U, 0U}) {
            const std::size_t s = slot(k, kind);
            const std::uint64_t counts = counts_present_[s] & (~std::uint64_t{0} << (domains - 1));
            if (counts == 0) continue;
            const auto bit = static_cast<std::size_t>(std::countr_zero(counts));
            const std::uint64_t* words = &words_with_[(s * 64 + bit) * set_words_];
            std::size_t i = 0;
            while (words[i] == 0) ++i;  // the count is present: some word has it
            const std::size_t word = i * 64 + static_cast<std::size_t>(std::countr_zero(words[i]));
            std::uint64_t counts_of_word = free.word(word);
            for (std::size_t j = 1; j <= k; ++j) counts_of_word = widen(counts_of_word, j);
            const std::uint64_t one_group = one_group_lanes_[word * sizes_ + k - 1];
            std::uint32_t window = npos32;
            for_each_window_of_two(counts_of_word, k, [&](unsigned at, std::uint64_t held) {
                if (held != bit + 1 || ((one_group >> at) & 1U) != kind) return false;
                window = static_cast<std::uint32_t>((word * 64 + at) >> k);
                return true;
            });
            return window;
        }
        return npos32;
    }

    std::size_t memory_bytes() const noexcept {
        return heap_bytes(one_group_lanes_) + heap_bytes(present_) + heap_bytes(words_with_);
    }
    friend bool operator==(const word_windows&, const word_windows&) = default;

private:
    // Per lane of 2^k bits: its bit 0, its low half, the lowest lane whole.
    static constexpr std::array<std::uint64_t, max_sizes + 1> lane_low_bit = {
        ~std::uint64_t{0},     0x5555555555555555ULL, 0x1111111111111111ULL, 0x0101010101010101ULL,
        0x0001000100010001ULL, 0x0000000100000001ULL, 0x0000000000000001ULL};
    static constexpr std::array<std::uint64_t, max_sizes + 1> lane_low_half = {
        0,                     0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
        0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL, 0x00000000FFFFFFFFULL};
    static constexpr std::array<std::uint64_t, max_sizes + 1> lane_bits = {
        0x1ULL, 0x3ULL, 0xFULL, 0xFFULL, 0xFFFFULL, 0xFFFFFFFFULL, ~std::uint64_t{0}};

    // Counts in lanes of 2^k bits from those in lanes of 2^(k-1).
    static std::uint64_t widen(std::uint64_t counts, std::size_t k) noexcept {
        return (counts & lane_low_half[k]) + ((counts >> (1U << (k - 1))) & lane_low_half[k]);
    }
    // f(first bit of the lane, its count) for each lane of 2^k bits in
    // `counts` that holds two or more, lowest first, until f returns true.
    template <class F>
    static void for_each_window_of_two(std::uint64_t counts, std::size_t k, F&& f) {
        // A count of two or more sets a bit above its lane's lowest.
        for (std::uint64_t many = counts & ~lane_low_bit[k]; many != 0;) {
            const unsigned at = static_cast<unsigned>(std::countr_zero(many)) & ~((1U << k) - 1);
            if (f(at, (counts >> at) & lane_bits[k])) return;
            many &= ~(lane_bits[k] << at);
        }
    }

    static std::size_t slot(std::size_t k, std::size_t kind) noexcept { return (k - 1) * 2 + kind; }

    // Word `word` of slot `s` now has the counts `now`.
    void file(std::size_t s, std::size_t word, std::uint64_t now) noexcept {
        std::uint64_t& filed = present_[word * 2 * sizes_ + s];
        std::uint64_t changed = filed ^ now;
        filed = now;
        const std::uint64_t word_bit = std::uint64_t{1} << (word % 64);
        for (; changed != 0; changed &= changed - 1) {
            const auto bit = static_cast<std::size_t>(std::countr_zero(changed));
            std::uint64_t* words = &words_with_[(s * 64 + bit) * set_words_];
            if ((now >> bit) & 1U) {
                words[word / 64] |= word_bit;
                counts_present_[s] |= std::uint64_t{1} << bit;
                continue;
            }
            words[word / 64] &= ~word_bit;
            bool any = false;
            for (std::size_t i = 0; i < set_words_ && !any; ++i) any = words[i] != 0;
            if (!any) counts_present_[s] &= ~(std::uint64_t{1} << bit);
        }
    }

    std::size_t sizes_ = 0;
    std::size_t words_ = 0;      // of the set of wholly free domains
    std::size_t set_words_ = 0;  // of a set of those words
    // [word * sizes_ + k - 1]: the first bit of each window of 2^k inside one
    // group (a word's entries side by side: a change reads one line).
    std::vector<std::uint64_t> one_group_lanes_;
    // [word * 2 * sizes_ + slot]: bit c - 1 when a window of the slot's size and
    // kind in the word has c wholly free domains (c >= 2).
    std::vector<std::uint64_t> present_;
    // [(slot * 64 + c - 1) * set_words_ ...]: the words whose present_ has bit c - 1.
    std::vector<std::uint64_t> words_with_;
    // [slot]: bit c - 1 when some word has it.
    std::array<std::uint64_t, 2 * max_sizes> counts_present_{};
};

}  // namespace topoblock::detail
