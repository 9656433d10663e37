#pragma once

#include <cstdint>
#include <string>

namespace topoblock {

// An error that a person reads: what was wrong and where. Parsers fill line
// and column (1-based; 0 = not applicable), readers of files the file;
// validators name the entity in the message.
struct error {
    std::string message;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::string file;  // empty: not read from a file

    // "trace.csv, line 3, column 7: message", without the parts that are
    // not known.
    std::string to_string() const {
        std::string out = file;
        if (line != 0) {
            out += (out.empty() ? "line " : ", line ") + std::to_string(line);
            if (column != 0) out += ", column " + std::to_string(column);
        }
        return out.empty() ? message : out + ": " + message;
    }
};

inline error make_error(std::string message, std::uint32_t line = 0, std::uint32_t column = 0) {
    return error{std::move(message), line, column, {}};
}

}  // namespace topoblock
