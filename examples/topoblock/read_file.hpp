#pragma once

// Reading the files the commands are given (--topology).

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace topoblock::cli {

// The bytes of a regular file, or nullopt when `path` names none or it
// cannot be read. A directory opens as a stream but throws on the first
// read, so only regular files are opened.
inline std::optional<std::string> read_regular_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A path that exists but is not a regular file (a directory, a device).
inline bool names_other_than_a_file(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec);
}

}  // namespace topoblock::cli
