#pragma once

// Command-line words, as both commands read them.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace topoblock::cli {

// "--flag=value" split at its first '=' (the value may be empty); any other
// word is returned whole, with no value.
struct option_word {
    std::string_view flag;
    std::optional<std::string_view> value;
};

inline option_word split_option(std::string_view word) {
    const std::size_t eq = word.find('=');
    if (!word.starts_with("--") || eq == std::string_view::npos) return {word, std::nullopt};
    return {word.substr(0, eq), word.substr(eq + 1)};
}

// A word that is no option at all: a stray argument, not a flag missing its
// value.
inline bool is_stray_word(std::string_view word) { return !word.starts_with("-"); }

// The value of a numeric option: the whole word a number (no sign, blank
// or trailing junk), finite, and inside [lo, hi]; nullopt otherwise (too
// large, negative, NaN, inf, junk). The caller names the option and the
// range (range_text) in its error.
inline std::optional<std::uint64_t> whole_number(std::string_view text, std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) return std::nullopt;
    return value;
}

inline std::optional<double> real_number(std::string_view text, double lo, double hi) {
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value < lo || value > hi)
        return std::nullopt;
    return value;
}

// "--flag takes WHAT, got 'VALUE'": the error of a value out of range.
inline std::string bad_value(std::string_view flag, std::string_view what, std::string_view value) {
    return std::string(flag) + " takes " + std::string(what) + ", got '" + std::string(value) + "'";
}

}  // namespace topoblock::cli
