#pragma once

#include <topoblock/support/bitset.hpp>

#include <cstdint>
#include <vector>

namespace topoblock {

// Items (domains) filed under a small integer key (their free capacity), so
// that "the item with the least key that is still >= k, lowest index first"
// costs a few word scans instead of a pass over every item. This is the
// best-fit question every policy asks.
class bucket_index {
public:
    bucket_index() = default;
    bucket_index(std::size_t items, std::uint32_t max_key)
        : key_of_(items, npos32), buckets_(max_key + 1, indexed_bitset(items)), nonempty_(max_key + 1) {}

    std::uint32_t max_key() const noexcept { return static_cast<std::uint32_t>(buckets_.size()) - 1; }
    std::uint32_t key_of(std::uint32_t item) const noexcept { return key_of_[item]; }
    bool contains(std::uint32_t item) const noexcept { return key_of_[item] != npos32; }

    void assign(std::uint32_t item, std::uint32_t key) noexcept {
        const std::uint32_t old = key_of_[item];
        if (old == key) return;
        if (old != npos32) take_out(item, old);
        key_of_[item] = key;
        buckets_[key].set(item);
        nonempty_.set(key);
    }
    void remove(std::uint32_t item) noexcept {
        const std::uint32_t old = key_of_[item];
        if (old == npos32) return;
        take_out(item, old);
        key_of_[item] = npos32;
    }

    // The non-empty key at or above `key`, or npos32.
    std::uint32_t next_key(std::uint32_t key) const noexcept {
        const std::size_t k = nonempty_.find_next(key);
        return k < nonempty_.size() ? static_cast<std::uint32_t>(k) : npos32;
    }
    // The largest non-empty key at or below `key`, or npos32.
    std::uint32_t previous_key(std::uint32_t key) const noexcept {
        if (buckets_.empty()) return npos32;
        for (std::uint32_t k = key < max_key() ? key : max_key();; --k) {
            if (nonempty_.test(k)) return k;
            if (k == 0) return npos32;
        }
    }
    // The item with the least key >= `key`, the lowest index among equals.
    std::uint32_t find_at_least(std::uint32_t key) const noexcept {
        const std::uint32_t k = next_key(key);
        return k == npos32 ? npos32 : static_cast<std::uint32_t>(buckets_[k].find_first());
    }
    const indexed_bitset& bucket(std::uint32_t key) const noexcept { return buckets_[key]; }

private:
    void take_out(std::uint32_t item, std::uint32_t key) noexcept {
        buckets_[key].reset(item);
        if (!buckets_[key].any()) nonempty_.reset(key);
    }

    std::vector<std::uint32_t> key_of_;
    std::vector<indexed_bitset> buckets_;
    indexed_bitset nonempty_;
};

}  // namespace topoblock
