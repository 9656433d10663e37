#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace topoblock {

// A map from nonzero 64-bit ids (allocation ids) to 32-bit values, in one
// flat table: open addressing, linear probing, and deletion by shifting the
// entries after the hole back (no tombstones, so lookups stay short however
// many ids come and go). A replay inserts and erases one entry per job; a
// node-based std::unordered_map spent a heap allocation and a free on each,
// a tenth of a Philly-size replay's instructions.
class id_map {
public:
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }

    // Adds or replaces the value of `id` (nonzero).
    void insert(std::uint64_t id, std::uint32_t value) {
        if (id == 0) throw std::invalid_argument("id_map: the id 0 cannot be a key");
        // Grows first, so that a failed allocation changes nothing.
        if ((size_ + 1) * 2 > keys_.size()) rehash(keys_.empty() ? 16 : keys_.size() * 2);
        std::size_t i = home(id);
        while (keys_[i] != 0 && keys_[i] != id) i = (i + 1) & mask();
        if (keys_[i] == 0) ++size_;
        keys_[i] = id;
        values_[i] = value;
    }

    // The value of `id`, or nullptr.
    const std::uint32_t* find(std::uint64_t id) const noexcept {
        if (id == 0 || keys_.empty()) return nullptr;
        for (std::size_t i = home(id);; i = (i + 1) & mask()) {
            if (keys_[i] == id) return &values_[i];
            if (keys_[i] == 0) return nullptr;
        }
    }
    // The value of `id`; throws std::out_of_range when it is not there.
    std::uint32_t at(std::uint64_t id) const {
        const std::uint32_t* v = find(id);
        if (v == nullptr) throw std::out_of_range("id_map: unknown id");
        return *v;
    }

    // Removes `id`; returns whether it was there.
    bool erase(std::uint64_t id) noexcept {
        if (id == 0 || keys_.empty()) return false;
        std::size_t hole = home(id);
        while (keys_[hole] != id) {
            if (keys_[hole] == 0) return false;
            hole = (hole + 1) & mask();
        }
        // Each later entry of the run moves into the hole unless its home
        // lies cyclically after the hole and up to where it sits (it would
        // then no longer be found from its home).
        for (std::size_t next = (hole + 1) & mask(); keys_[next] != 0; next = (next + 1) & mask()) {
            const std::size_t h = home(keys_[next]);
            const bool stays = hole <= next ? (hole < h && h <= next) : (hole < h || h <= next);
            if (stays) continue;
            keys_[hole] = keys_[next];
            values_[hole] = values_[next];
            hole = next;
        }
        keys_[hole] = 0;
        --size_;
        return true;
    }

    void clear() noexcept {
        for (auto& k : keys_) k = 0;
        size_ = 0;
    }

private:
    std::size_t mask() const noexcept { return keys_.size() - 1; }
    // Fibonacci hashing: ids differ in their low bits (slot) and high bits
    // (generation); the multiply mixes both into the top bits kept.
    std::size_t home(std::uint64_t id) const noexcept {
        return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> shift_);
    }
    void rehash(std::size_t capacity) {
        std::vector<std::uint64_t> keys(capacity, 0);
        std::vector<std::uint32_t> values(capacity, 0);
        keys.swap(keys_);
        values.swap(values_);
        shift_ = 64;
        for (std::size_t c = capacity; c > 1; c /= 2) --shift_;
        size_ = 0;
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (keys[i] != 0) {
                std::size_t j = home(keys[i]);
                while (keys_[j] != 0) j = (j + 1) & mask();
                keys_[j] = keys[i];
                values_[j] = values[i];
                ++size_;
            }
    }

    std::vector<std::uint64_t> keys_;  // 0: empty
    std::vector<std::uint32_t> values_;
    std::size_t size_ = 0;
    unsigned shift_ = 64;
};

}  // namespace topoblock
