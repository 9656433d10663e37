#pragma once

// Writing the files a program makes (snapshots, pictures) so that a crash
// never leaves half a file under the name.

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace topoblock::detail {

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

}  // namespace topoblock::detail
