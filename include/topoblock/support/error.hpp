#pragma once

#include <cstdint>
#include <string>

namespace topoblock {

// An error that a person reads: what was wrong and where. Parsers fill line
// and column (1-based; 0 = not applicable); validators name the entity in the
// message.
struct error {
    std::string message;
    std::uint32_t line = 0;
    std::uint32_t column = 0;

    // "line 3, column 7: message", or just the message when there is no
    // position.
    std::string to_string() const {
        if (line == 0) return message;
        std::string out = "line " + std::to_string(line);
        if (column != 0) out += ", column " + std::to_string(column);
        return out + ": " + message;
    }
};

inline error make_error(std::string message, std::uint32_t line = 0, std::uint32_t column = 0) {
    return error{std::move(message), line, column};
}

}  // namespace topoblock
