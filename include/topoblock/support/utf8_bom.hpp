#pragma once

#include <string_view>

namespace topoblock::detail {

// The text without the UTF-8 byte order mark some editors write first: every
// reader takes the file from the character after it, so the mark is never
// part of a first key, column name or spec.
constexpr std::string_view without_utf8_bom(std::string_view text) noexcept {
    return text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text;
}

}  // namespace topoblock::detail
