#pragma once

// Command-line words, as both commands read them.

#include <topoblock/support/parse_number.hpp>
#include <topoblock/support/quote.hpp>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>

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

inline bool is_one_of(std::string_view flag, std::span<const std::string_view> flags) {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

// "unknown option '--frob'": the flag is checked before it takes a value,
// so a misspelt flag is named as such wherever it stands.
inline std::string unknown_option(std::string_view flag) { return "unknown option " + topoblock::detail::quoted(flag); }

// "--flag takes WHAT, got 'VALUE'" and, for a number out of range, which
// way: the error of a value the option cannot take.
inline std::string bad_value(std::string_view flag, std::string_view what, std::string_view value,
                             std::optional<number_problem> why = std::nullopt) {
    std::string out = std::string(flag) + " takes " + std::string(what) + ", got " + topoblock::detail::quoted(value);
    if (why == number_problem::too_large) out += ", which is too large";
    if (why == number_problem::too_small) out += ", which is too small";
    return out;
}

}  // namespace topoblock::cli
