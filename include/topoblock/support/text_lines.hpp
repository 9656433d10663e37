#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

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

}  // namespace topoblock::detail
