#pragma once

// A file under the temporary directory, written once and removed when the
// object goes. The name carries a random token: ctest runs each test case as
// its own process, several at once, and a fixed name let one process
// truncate the file while another was reading it.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

namespace topoblock::test {

class scratch_file {
public:
    // `name` ends the file's name, so an extension still tells its format.
    scratch_file(std::string_view name, std::string_view text) : path_(unique_path(name)) {
        std::ofstream(path_, std::ios::binary) << text;
    }
    scratch_file(const scratch_file&) = delete;
    scratch_file& operator=(const scratch_file&) = delete;
    ~scratch_file() {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }

    const std::filesystem::path& path() const noexcept { return path_; }
    std::string string() const { return path_.string(); }

private:
    static std::filesystem::path unique_path(std::string_view name) {
        std::random_device entropy;
        const std::uint64_t token = (std::uint64_t{entropy()} << 32) ^ entropy();
        return std::filesystem::temp_directory_path() / ("topoblock_" + std::to_string(token) + "_" + std::string(name));
    }

    std::filesystem::path path_;
};

}  // namespace topoblock::test
