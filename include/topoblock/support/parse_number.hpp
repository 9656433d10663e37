#pragma once

// Numbers from text, as command lines and event lines give them: the whole
// text one number (no sign, blank, prefix or trailing junk), finite, inside
// a range. A refusal says why, so a message can say "too large" and name the
// limit.

#include <topoblock/support/expected.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <system_error>

namespace topoblock {

// Why a text is not a number in range.
enum class number_problem : std::uint8_t {
    not_a_number,  // empty, a sign, junk, NaN or infinity
    too_small,     // a number below the range
    too_large,     // a number above the range (or above what the type holds)
};

constexpr std::string_view to_string(number_problem p) noexcept {
    switch (p) {
        case number_problem::not_a_number: return "is not a number";
        case number_problem::too_small: return "is too small";
        case number_problem::too_large: return "is too large";
    }
    return "is not a number";
}

// A whole decimal number in [lo, hi]. O(size of text).
inline expected<std::uint64_t, number_problem> parse_whole(std::string_view text, std::uint64_t lo = 0,
                                                           std::uint64_t hi = std::numeric_limits<std::uint64_t>::max()) noexcept {
    if (text.empty() || text.front() == '+' || text.front() == '-') return unexpected(number_problem::not_a_number);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (end != text.data() + text.size() && ec != std::errc::result_out_of_range)
        return unexpected(number_problem::not_a_number);
    if (ec == std::errc::result_out_of_range) {
        // All digits, more than 64 bits hold.
        for (const char c : text)
            if (c < '0' || c > '9') return unexpected(number_problem::not_a_number);
        return unexpected(number_problem::too_large);
    }
    if (ec != std::errc{}) return unexpected(number_problem::not_a_number);
    if (value < lo) return unexpected(number_problem::too_small);
    if (value > hi) return unexpected(number_problem::too_large);
    return value;
}

// A finite decimal number (1.5, 2e3) in [lo, hi]. O(size of text).
inline expected<double, number_problem> parse_real(std::string_view text, double lo, double hi) noexcept {
    if (text.empty() || text.front() == '+') return unexpected(number_problem::not_a_number);
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (end != text.data() + text.size()) return unexpected(number_problem::not_a_number);
    if (ec == std::errc::result_out_of_range) {
        // Beyond a double: its sign says which way (a tiny magnitude reads
        // as zero below).
        if (text.find_first_of("eE") == std::string_view::npos) return unexpected(number_problem::not_a_number);
        const bool tiny = text.find("e-") != std::string_view::npos || text.find("E-") != std::string_view::npos;
        if (tiny) value = 0.0;
        else return unexpected(text.front() == '-' ? number_problem::too_small : number_problem::too_large);
    } else if (ec != std::errc{}) {
        return unexpected(number_problem::not_a_number);
    }
    if (!std::isfinite(value)) return unexpected(number_problem::not_a_number);
    if (value < lo) return unexpected(number_problem::too_small);
    if (value > hi) return unexpected(number_problem::too_large);
    return value;
}

// A span of time in seconds: a number with an optional unit, s (default),
// m, h or d: "90", "90s", "30m", "12h", "7d". At least 0 and at most
// `max_seconds` once in seconds. O(size of text).
inline expected<double, number_problem> parse_duration(std::string_view text,
                                                       double max_seconds = std::numeric_limits<double>::max()) noexcept {
    double scale = 1.0;
    if (!text.empty()) {
        switch (text.back()) {
            case 's': scale = 1.0; text.remove_suffix(1); break;
            case 'm': scale = 60.0; text.remove_suffix(1); break;
            case 'h': scale = 3600.0; text.remove_suffix(1); break;
            case 'd': scale = 86400.0; text.remove_suffix(1); break;
            default: break;
        }
    }
    const auto value = parse_real(text, 0.0, std::numeric_limits<double>::max());
    if (!value) return value;
    const double seconds = *value * scale;
    if (!std::isfinite(seconds) || seconds > max_seconds) return unexpected(number_problem::too_large);
    return seconds;
}

}  // namespace topoblock
