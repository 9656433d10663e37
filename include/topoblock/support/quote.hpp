#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace topoblock::detail {

// How many bytes of an offending text an error message shows.
inline constexpr std::size_t quoted_bytes = 32;

// The offending text as an error message quotes it: in single quotes, cut
// after quoted_bytes bytes (marked "...") so that one huge word cannot make a
// huge message, and with control bytes and every byte outside printable
// ASCII shown as \xNN, so that a message never carries a terminal escape, a
// NUL that ends the printed line, or half of a UTF-8 character. Every error
// that quotes input quotes it with this. Call it qualified (detail::quoted):
// unqualified, a std::string argument finds std::quoted by argument-dependent
// lookup wherever <iomanip> is included.
inline std::string quoted(std::string_view text) {
    constexpr std::string_view hex = "0123456789abcdef";
    std::string out = "'";
    for (const char c : text.substr(0, quoted_bytes)) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) {
            out += c;
        } else {
            ((out += "\\x") += hex[byte >> 4]) += hex[byte & 15];
        }
    }
    if (text.size() > quoted_bytes) out += "...";
    return out + "'";
}

}  // namespace topoblock::detail
