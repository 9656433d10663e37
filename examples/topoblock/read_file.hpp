#pragma once

// Reading the files the commands are given (--topology, --load-state), and
// writing the ones they make (--save-state).

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

// Replaces the file at `path` with `text`, or leaves it as it was: the text
// goes to PATH.tmp, which is then renamed over PATH (a crash midway never
// leaves half a file under the name). False with `why` on failure.
inline bool replace_file(const std::string& path, const std::string& text, std::string& why) {
    const std::string temp = path + ".tmp";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (out) out << text;
        if (out) out.flush();
        if (!out) {
            why = "cannot write '" + temp + "'";
            return false;
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) {
        std::filesystem::remove(temp, ec);
        why = "cannot replace '" + path + "'";
        return false;
    }
    return true;
}

}  // namespace topoblock::cli
