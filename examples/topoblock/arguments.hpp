#pragma once

// Command-line words, as both commands read them.

#include <optional>
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

}  // namespace topoblock::cli
