// Fuzz target: Slurm hostlist expressions (io/hostlist.hpp). An expression
// either expands or is refused with an error naming a column of the input;
// expanded names compress and expand back to the same names, sorted and
// unique as sort_hostnames gives them (for up to 4,096 names).

#include "fuzz_support.hpp"

#include <topoblock/io/hostlist.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    const std::string_view text = fuzz::as_text(data, size);
    auto names = io::expand_hostlist(text);
    if (!names) {
        fuzz::require(!names.error().message.empty(), "an error without a message");
        fuzz::require(names.error().column <= text.size() + 1, "an error column beyond the input");
        return 0;
    }
    fuzz::require(names->size() <= io::max_hostlist_names, "more names than max_hostlist_names");
    for (const auto& name : *names) fuzz::require(!name.empty(), "an empty name");
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
