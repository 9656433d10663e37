// Fuzz target: Slurm hostlist expressions (io/hostlist.hpp). An expression
// either expands or is refused with an error naming a column of the input;
// expanded names compress and expand back to the same names, sorted and
// unique as sort_hostnames gives them (for up to 4,096 names). The
// expansion stays within the limits it was given.

#include "fuzz_support.hpp"

#include <topoblock/io/hostlist.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    const std::string_view text = fuzz::as_text(data, size);
    const io::hostlist_limits limits{fuzz::hostlist_names, fuzz::hostlist_bytes};
    auto names = io::expand_hostlist(text, limits);
    if (!names) {
        fuzz::require(!names.error().message.empty(), "an error without a message");
        fuzz::require(names.error().column <= text.size() + 1, "an error column beyond the input");
        return 0;
    }
    fuzz::require(names->size() <= limits.names, "more names than the limit");
    std::size_t bytes = 0;
    for (const auto& name : *names) {
        fuzz::require(!name.empty(), "an empty name");
        bytes += name.size();
    }
    fuzz::require(bytes <= limits.bytes, "more bytes of names than the limit");
    // The round trip sorts the names: on a few short bracket groups that
    // expand to hundreds of thousands it would spend the time limit there.
    if (names->size() > 4096) return 0;
    const std::string compressed = io::compress_hostlist(*names);
    auto again = io::expand_hostlist(compressed);
    fuzz::require(static_cast<bool>(again), "a compressed hostlist does not parse: " + compressed);
    fuzz::require(*again == io::sort_hostnames(*names), "expand(compress(names)) != sort_hostnames(names): " + compressed);
    fuzz::require(io::compress_hostlist(*again) == compressed, "compress is not stable on its own output");
    return 0;
}
