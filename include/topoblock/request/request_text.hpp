#pragma once

// Requests as text: the words `topoblock place` reads after "alloc ID", for
// programs that take requests from people or files.
//
//   nodes=N | gpus=N        the size (exactly one of them)
//   segment=S               parts of S inside one domain each
//   spread-segments         each part in a domain of its own
//   exclusive=topo          the job's domains closed to other jobs
//   whole-nodes             a GPU job takes the nodes it touches whole
//   locality=require|prefer|any   (default require)
//
// parse_request(to_string(r)) == r for every request with count > 0.

#include <topoblock/request/request.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/parse_number.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/text_lines.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace topoblock {

constexpr std::string_view to_string(locality l) noexcept {
    switch (l) {
        case locality::require: return "require";
        case locality::prefer: return "prefer";
        case locality::any: return "any";
    }
    return "require";
}

// "require", "prefer" or "any"; nullopt for any other text.
constexpr std::optional<locality> parse_locality(std::string_view text) noexcept {
    if (text == "require") return locality::require;
    if (text == "prefer") return locality::prefer;
    if (text == "any") return locality::any;
    return std::nullopt;
}

// The request's words in the order above; defaults (no segment,
// locality=require, ...) left out. "gpus=8 segment=4 spread-segments".
inline std::string to_string(const request& r) {
    std::string out = (r.what == unit::nodes ? "nodes=" : "gpus=") + std::to_string(r.count);
    if (r.segment != 0) out += " segment=" + std::to_string(r.segment);
    if (r.spread_segments) out += " spread-segments";
    if (r.exclusive_domain) out += " exclusive=topo";
    if (r.whole_nodes) out += " whole-nodes";
    if (r.where != locality::require) (out += " locality=") += to_string(r.where);
    return out;
}

// The request that `words` spell (each word with its column, as
// detail::split_blank_separated gives them). An error names the word and
// its column (at line 1: a caller reading many lines sets the line);
// `missing_column` is where the error points when no word gives the size.
// Each word once; nodes= and gpus= take 1 to 2^32-1. A request the parse
// takes may still be malformed for the allocator (a segment that does not
// divide the job): that is the allocator's errc::invalid_request. O(words).
inline expected<request, error> parse_request(std::span<const detail::text_word> words, std::uint32_t missing_column) {
    request q;
    bool sized = false, segmented = false, spread = false, exclusive = false, whole = false, placed = false;
    const auto fail = [](std::uint32_t column, std::string message) {
        return unexpected(make_error(std::move(message), 1, column));
    };
    for (const detail::text_word& w : words) {
        const std::string_view t = w.text;
        const std::size_t eq = t.find('=');
        const std::string_view key = t.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? std::string_view{} : t.substr(eq + 1);
        const auto value_column = static_cast<std::uint32_t>(w.column + eq + 1);
        const bool takes_value = key == "nodes" || key == "gpus" || key == "segment" || key == "exclusive" || key == "locality";
        if (takes_value && eq == std::string_view::npos)
            return fail(w.column, detail::quoted(key) + " needs a value: " + std::string(key) + "=...");
        // A count of nodes, GPUs or segment size: 1 to 2^32-1.
        const auto count = [&]() -> expected<std::uint32_t, error> {
            const auto n = parse_whole(value, 1, std::numeric_limits<std::uint32_t>::max());
            if (n) return static_cast<std::uint32_t>(*n);
            if (n.error() == number_problem::too_large)
                return fail(value_column, detail::quoted(value) + " is too large (at most 4294967295)");
            return fail(value_column, "expected a positive number, got " + detail::quoted(value));
        };
        const auto once = [&](bool& seen) {
            const bool again = seen;
            seen = true;
            return !again;
        };
        if (t == "spread-segments" || t == "whole-nodes") {
            if (!once(t == "whole-nodes" ? whole : spread))
                return fail(w.column, detail::quoted(t) + " is given twice");
            (t == "whole-nodes" ? q.whole_nodes : q.spread_segments) = true;
        } else if (key == "nodes" || key == "gpus") {
            if (!once(sized)) return fail(w.column, "give one of nodes= and gpus=, once");
            const auto n = count();
            if (!n) return unexpected(n.error());
            q.count = *n;
            q.what = key == "nodes" ? unit::nodes : unit::gpus;
        } else if (key == "segment") {
            if (!once(segmented)) return fail(w.column, "segment= is given twice");
            const auto n = count();
            if (!n) return unexpected(n.error());
            q.segment = *n;
        } else if (key == "exclusive") {
            if (!once(exclusive)) return fail(w.column, "exclusive= is given twice");
            if (value != "topo") return fail(value_column, "expected exclusive=topo");
            q.exclusive_domain = true;
        } else if (key == "locality") {
            if (!once(placed)) return fail(w.column, "locality= is given twice");
            const auto l = parse_locality(value);
            if (!l) return fail(value_column, "expected locality=require, prefer or any");
            q.where = *l;
        } else {
            return fail(w.column, "unknown request word " + detail::quoted(t) +
                                      " (expected nodes=, gpus=, segment=, spread-segments, exclusive=topo, "
                                      "whole-nodes, locality=)");
        }
    }
    if (!sized) return fail(missing_column, "the request needs nodes=N or gpus=N");
    return q;
}

// The request of one line of text ("gpus=8 locality=prefer"); errors at
// line 1, their columns in `text`. O(size of text).
inline expected<request, error> parse_request(std::string_view text) {
    const auto words = detail::split_blank_separated(text);
    return parse_request(words, static_cast<std::uint32_t>(text.size() + 1));
}

}  // namespace topoblock
