// Fuzz target: `kubectl get nodes -o json` (io/k8s_nodes.hpp,
// read_k8s_nodes_json) and the JSON reader under it. A document is read or
// refused with an error that has a message and, for malformed JSON, a
// position inside the input; what is read is a topology an allocator
// accepts, with one health per node.

#include "fuzz_support.hpp"
#include "k8s_cluster_checks.hpp"

#include <topoblock/io/detail/json.hpp>
#include <topoblock/io/k8s_nodes.hpp>
#include <topoblock/topoblock.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    const std::string_view text = fuzz::as_text(data, size);
    // The JSON reader alone: every value lies inside the input, children
    // after their parent (the tree has no cycle).
    if (auto doc = io::detail::json::parse(text)) {
        const auto& values = doc->values;
        fuzz::require(!values.empty(), "a parsed document without a root");
        for (std::size_t i = 0; i < values.size(); ++i) {
            const auto& v = values[i];
            fuzz::require(v.line >= 1 && v.column >= 1, "a value without a position");
            fuzz::require(v.first_child == io::detail::json::none || v.first_child > i, "a child before its parent");
            fuzz::require(v.next_sibling == io::detail::json::none || v.next_sibling > i, "a sibling before its elder");
            fuzz::require(std::size_t{v.text.begin} + v.text.size <= doc->texts.size(), "a text outside the buffer");
        }
        fuzz::require(doc->texts.size() <= size, "decoded texts longer than the input");
    } else {
        fuzz::require(!doc.error().message.empty(), "a JSON error without a message");
        fuzz::require(doc.error().line >= 1 || size > io::detail::json::max_input, "a JSON error without a line");
    }
    auto cluster = io::read_k8s_nodes_json(text);
    fuzz::check_k8s_cluster(cluster);
    return 0;
}
