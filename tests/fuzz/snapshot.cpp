// Fuzz target: allocator snapshots (io/snapshot.hpp). A snapshot is either
// refused with an error naming a line of it, or read into an allocator that
// passes the state's own check and writes back a snapshot that reads back
// to the same text. Inputs whose first byte is odd are re-signed first (the
// checksum line recomputed over the rest), so that mutations reach the
// checks behind the checksum instead of stopping at it.

#include "fuzz_support.hpp"

#include <topoblock/io/snapshot.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/topology/presets.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

std::string resigned(std::string_view text) {
    const std::size_t last = text.rfind("\nchecksum ");
    if (last == std::string_view::npos) return std::string(text);
    const std::string_view body = text.substr(0, last + 1);
    topoblock::io::detail::snapshot::fnv1a64 sum;
    sum.add(body);
    return std::string(body) + "checksum " + topoblock::io::detail::snapshot::hex16(sum.value()) + '\n';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    if (size == 0) return 0;
    const std::string_view raw = fuzz::as_text(data + 1, size - 1);
    const std::string text = (data[0] & 1) != 0 ? resigned(raw) : std::string(raw);
    // Three domains of unequal shape: a rack of 18 trays, two HGX servers.
    static const topology topo = *parse_topology_spec("nvl72:1+hgx8:2");
    auto restored = io::read_snapshot<best_fit>(text, topo);
    if (!restored) {
        fuzz::require(!restored.error().message.empty(), "an error without a message");
        fuzz::require(restored.error().line >= 1, "an error naming no line");
        return 0;
    }
    fuzz::require(restored->allocator.state().verify().empty(), "a restored state fails verify()");
    auto written = io::write_snapshot(restored->allocator, restored->labels);
    fuzz::require(static_cast<bool>(written), "a restored allocator cannot be written");
    auto again = io::read_snapshot<best_fit>(*written, topo);
    fuzz::require(static_cast<bool>(again), "a written snapshot does not read back");
    auto rewritten = io::write_snapshot(again->allocator, again->labels);
    fuzz::require(rewritten && *rewritten == *written, "a snapshot does not read back to the same text");
    return 0;
}
