#pragma once

// Writing JSON strings: the answers of `topoblock place --json` and of
// io::event_runner in JSON mode.

#include <cstddef>
#include <string>
#include <string_view>

namespace topoblock::detail {

// The length of the UTF-8 character at text[at], or 0 when the bytes there
// are no well-formed one (an overlong form, a surrogate, beyond U+10FFFF,
// cut short).
inline std::size_t utf8_length(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char b = byte(at);
    if (b < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (b >= 0xc2 && b <= 0xdf) n = 2;
    else if (b >= 0xe0 && b <= 0xef) n = 3, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    else if (b >= 0xf0 && b <= 0xf4) n = 4, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    else return 0;
    if (at + n > text.size() || byte(at + 1) < lo || byte(at + 1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if (byte(at + i) < 0x80 || byte(at + i) > 0xbf) return 0;
    return n;
}

// Whether every byte of `text` belongs to a well-formed UTF-8 character, as
// a JSON string must.
inline bool valid_utf8(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t n = utf8_length(text, at);
        if (n == 0) return false;
        at += n;
    }
    return true;
}

// `text` as a JSON string: in double quotes, with '"' and '\' escaped,
// control bytes as \uXXXX, and each byte that is no part of a well-formed
// UTF-8 character as U+FFFD (a name the caller could not check first).
inline std::string json_string(std::string_view text) {
    constexpr std::string_view hex = "0123456789abcdef";
    std::string out = "\"";
    for (std::size_t at = 0; at < text.size();) {
        const auto c = static_cast<unsigned char>(text[at]);
        const std::size_t n = utf8_length(text, at);
        if (n == 0) {
            out += "\\ufffd";
            ++at;
        } else if (c == '"' || c == '\\') {
            (out += '\\') += static_cast<char>(c);
            ++at;
        } else if (c < 0x20 || c == 0x7f) {
            ((out += "\\u00") += hex[c >> 4]) += hex[c & 15];
            ++at;
        } else {
            out += text.substr(at, n);
            at += n;
        }
    }
    return out + '"';
}

}  // namespace topoblock::detail
