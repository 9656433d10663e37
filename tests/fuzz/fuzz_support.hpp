#pragma once

// What the fuzz targets share: a violated property prints what broke and
// aborts (libFuzzer then saves the input), and the input bytes read as a
// stream of small numbers for the targets that interpret them.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace topoblock::fuzz {

[[noreturn]] inline void violated(std::string_view what) {
    std::fprintf(stderr, "fuzz target: property violated: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

inline void require(bool ok, std::string_view what) {
    if (!ok) violated(what);
}

// Hostlist limits for the readers under the fuzzers: the library's own (a
// million names) let a 30-byte line make a million names, which takes
// seconds under the sanitizers and trips libFuzzer's time limit. The limits
// themselves are checked by the unit tests.
inline constexpr std::size_t hostlist_names = 20'000;
inline constexpr std::size_t hostlist_bytes = std::size_t{1} << 20;

// The input as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return size == 0 ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(data), size);
}

// Reads the input a byte at a time; past the end every read is 0 and
// exhausted() is true, so an interpreter stops.
class byte_reader {
public:
    byte_reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    bool exhausted() const noexcept { return pos_ >= size_; }
    std::uint8_t next() noexcept { return pos_ < size_ ? data_[pos_++] : (++pos_, std::uint8_t{0}); }
    // Uniform enough in [0, n) for n <= 256; 0 when n == 0.
    std::uint32_t below(std::uint32_t n) noexcept { return n == 0 ? 0 : next() % n; }
    std::uint64_t word() noexcept {
        std::uint64_t w = 0;
        for (int i = 0; i < 8; ++i) w = w << 8 | next();
        return w;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

}  // namespace topoblock::fuzz
