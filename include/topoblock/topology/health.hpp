#pragma once

#include <cstdint>
#include <string_view>

namespace topoblock {

// A node's health as the scheduler sees it.
enum class node_health : std::uint8_t {
    up,     // takes new work
    drain,  // running work goes on; no new work is placed
    down,   // failed; its GPUs are neither free nor usable
};

constexpr std::string_view to_string(node_health h) noexcept {
    switch (h) {
        case node_health::up: return "up";
        case node_health::drain: return "drain";
        case node_health::down: return "down";
    }
    return "unknown";
}

}  // namespace topoblock
