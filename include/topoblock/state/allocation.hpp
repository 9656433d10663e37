#pragma once

#include <topoblock/request/placement.hpp>
#include <topoblock/state/piece_list.hpp>
#include <topoblock/request/request.hpp>

#include <cstdint>
#include <functional>

namespace topoblock {

// Names a live allocation. Ids are never reused while the allocator lives: a
// released id stays unknown even after its slot serves a new allocation.
struct allocation_id {
    std::uint64_t value = 0;
    constexpr explicit operator bool() const noexcept { return value != 0; }
    friend constexpr bool operator==(allocation_id, allocation_id) = default;
    friend constexpr auto operator<=>(allocation_id, allocation_id) = default;
};

// What a live allocation holds and why. 48 bytes, plus a heap block only for
// pieces that are not one run of nodes (piece_list).
struct allocation_record {
    request asked;
    // GPUs the job asked for (for a node request, the GPUs of its nodes).
    std::uint32_t requested_gpus = 0;
    // GPUs it holds; held - requested is internal fragmentation.
    std::uint32_t held_gpus = 0;
    // NVLink domains its pieces touch.
    std::uint32_t domains = 0;
    // Set when a node it holds went down; stays set until it is released.
    bool hit_by_failure = false;
    piece_list pieces;

    friend bool operator==(const allocation_record&, const allocation_record&) = default;
};

}  // namespace topoblock

template <>
struct std::hash<topoblock::allocation_id> {
    std::size_t operator()(topoblock::allocation_id id) const noexcept { return std::hash<std::uint64_t>{}(id.value); }
};
