#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace topoblock::detail {

// The lines of a text one at a time, numbered from 1, without the '\n' that
// ends each or a '\r' before it: CRLF files read as LF ones. Every reader of
// a line-based format walks its input with this.
class text_lines {
public:
    explicit constexpr text_lines(std::string_view text) noexcept : text_(text) {}

    // The next line; false after the last.
    constexpr bool next(std::string_view& line) noexcept {
        if (pos_ >= text_.size()) return false;
        std::size_t end = text_.find('\n', pos_);
        if (end == std::string_view::npos) end = text_.size();
        line = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        ++number_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return true;
    }
    // The number of the line next() gave last.
    constexpr std::uint32_t number() const noexcept { return number_; }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
    std::uint32_t number_ = 0;
};

// A blank-separated word of a line and its 1-based column.
struct text_word {
    std::string_view text;
    std::uint32_t column = 0;
};

// The words of a line split on blanks (spaces, tabs, and a stray '\r' from a
// CRLF line read without text_lines), each with the column that error
// messages point at. Every reader of blank-separated columns splits with this.
inline std::vector<text_word> split_blank_separated(std::string_view line) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    std::vector<text_word> words;
    for (std::size_t i = 0; i < line.size();) {
        while (i < line.size() && blank(line[i])) ++i;
        const std::size_t start = i;
        while (i < line.size() && !blank(line[i])) ++i;
        if (i > start) words.push_back({line.substr(start, i - start), static_cast<std::uint32_t>(start + 1)});
    }
    return words;
}

}  // namespace topoblock::detail
