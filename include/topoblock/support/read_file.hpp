#pragma once

// Reading a whole file, for the opt-in headers that take a path.

#include <topoblock/support/expected.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

namespace topoblock::detail {

enum class file_problem {
    missing,      // nothing by that name
    not_a_file,   // a directory, a device, ...
    unreadable,   // a regular file that cannot be opened or read
};

// "is not a regular file", ...: completes a message that starts with the path.
inline std::string_view describe(file_problem p) noexcept {
    switch (p) {
        case file_problem::missing: return "does not exist";
        case file_problem::not_a_file: return "is not a regular file";
        case file_problem::unreadable: return "cannot be read";
    }
    return "cannot be read";
}

// The bytes of the regular file at `path`. Only regular files are opened: a
// directory opens as a stream on some systems and fails on the first read,
// and a FIFO would block.
inline expected<std::string, file_problem> read_regular_file(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) return unexpected(file_problem::missing);
    if (!std::filesystem::is_regular_file(status)) return unexpected(file_problem::not_a_file);
    // A lambda, not &std::fclose: the standard does not let programs take
    // the address of its functions.
    const auto close = [](std::FILE* f) { std::fclose(f); };
    const std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "rb"), close);
    if (!file) return unexpected(file_problem::unreadable);
    std::string text;
    std::array<char, 1 << 16> buffer;
    std::size_t got = 0;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) text.append(buffer.data(), got);
    if (std::ferror(file.get())) return unexpected(file_problem::unreadable);
    return text;
}

}  // namespace topoblock::detail
