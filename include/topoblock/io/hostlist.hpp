#pragma once

// Slurm hostlist expressions: "gb[001-018,020]" <-> {"gb001", ..., "gb018", "gb020"}.
//
// The grammar and the canonical form follow Slurm's src/common/hostlist.c
// (see docs/formats.md for the rules and where each one comes from).

#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::io {

// The most names one expression may expand to. Slurm caps each range at 64k
// hosts; we cap the whole expression instead, so that a typo such as
// "n[0-99999999]" is an error rather than an allocation of gigabytes. The
// names are counted, with sums and products that saturate instead of
// wrapping, before any is made.
inline constexpr std::size_t max_hostlist_names = 1'000'000;
// The most bracket groups one name may have ("r[1-2]n[1-4]" has two): each
// group costs memory while the item is read, and a name of many groups is
// no host name.
inline constexpr std::size_t max_hostlist_groups = 64;
// The most characters the names may hold together: a short expression of
// long literals ("aaaa...[0-9]b[0-9]...") would otherwise make a million
// names of hundreds of bytes each.
inline constexpr std::size_t max_hostlist_bytes = std::size_t{32} << 20;

// How much one reading may expand. Readers of a whole file (topology.conf,
// topology.yaml) count every hostlist of the file against one budget, so a
// file of many lines near the cap is refused as one line over it is. A
// service that reads files from untrusted users can lower both.
struct hostlist_limits {
    std::size_t names = max_hostlist_names;
    std::size_t bytes = max_hostlist_bytes;
};

namespace detail {

using topoblock::detail::quoted;

// Where a piece of text sits in the file it came from, so that errors found
// inside a value (a hostlist in topology.conf, say) point into the file.
struct text_origin {
    std::uint32_t line = 1;
    std::uint32_t column = 1;
};

// origin.column + offset, saturating where a column no longer fits.
inline std::uint32_t column_at(text_origin origin, std::size_t offset) noexcept {
    constexpr std::uint32_t most = std::numeric_limits<std::uint32_t>::max();
    return offset >= most - origin.column ? most : origin.column + static_cast<std::uint32_t>(offset);
}

inline error error_at(text_origin origin, std::size_t offset, std::string message) {
    return make_error(std::move(message), origin.line, column_at(origin, offset));
}

// a + b and a * b, or `cap` when the result is larger (or does not fit):
// every count computed from input adds and multiplies with these.
constexpr std::size_t add_capped(std::size_t a, std::size_t b, std::size_t cap) noexcept {
    return a >= cap || b >= cap - a ? cap : a + b;
}
constexpr std::size_t multiply_capped(std::size_t a, std::size_t b, std::size_t cap) noexcept {
    if (a == 0 || b == 0) return 0;
    return a > cap / b ? cap : std::min(a * b, cap);
}

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// 18 digits always fit in 64 bits; longer runs are not treated as numbers.
inline constexpr std::size_t max_number_digits = 18;

inline std::uint64_t to_number(std::string_view digits) noexcept {
    std::uint64_t value = 0;
    for (char c : digits) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    return value;
}

// Slurm prints numbers with "%0*lu": zero-padded to the range's width.
inline void append_padded(std::string& out, std::uint64_t value, std::size_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width) out.append(width - digits.size(), '0');
    out += digits;
}

// One "lo-hi" (or "lo") inside brackets. The width is the length of lo as
// written, as in Slurm's _parse_single_range: "[08-11]" pads to 2 digits.
struct number_range {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::size_t width = 0;
};

// A name pattern: literal text interleaved with bracket groups;
// literals.size() == groups.size() + 1.
struct hostlist_item {
    std::vector<std::string_view> literals;
    std::vector<std::vector<number_range>> groups;
    std::size_t offset = 0;  // where the item starts in the expression
};

// The numbers a bracket group lists, saturating at `cap`: the review's
// "n[0-999999999999999999,...]" has ranges of 10^18 numbers whose sum wrapped
// past 2^64 to a small count.
inline std::size_t group_size(const std::vector<number_range>& group, std::size_t cap) {
    std::size_t count = 0;
    for (const auto& r : group) {
        const std::uint64_t span = r.hi - r.lo;  // < 10^18, so span + 1 cannot wrap
        const std::size_t numbers = span >= cap ? cap : static_cast<std::size_t>(span) + 1;
        count = add_capped(count, numbers, cap);
    }
    return count;
}

// Parses "digits" or "digits-digits"; offset is where piece starts in the text.
inline expected<number_range, error> parse_number_range(std::string_view piece, std::size_t offset,
                                                        text_origin origin) {
    if (piece.empty()) return unexpected(error_at(origin, offset, "empty range inside brackets"));
    const std::size_t dash = piece.find('-');
    const std::string_view lo = piece.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : piece.substr(dash + 1);
    const std::size_t hi_offset = dash == std::string_view::npos ? offset : offset + dash + 1;
    auto check = [&](std::string_view digits, std::size_t at) -> expected<void, error> {
        if (digits.empty())
            return unexpected(error_at(origin, at, "range " + topoblock::detail::quoted(piece) + " lacks a number"));
        for (std::size_t i = 0; i < digits.size(); ++i)
            if (!is_digit(digits[i]))
                return unexpected(error_at(origin, at + i,
                                           "range " + topoblock::detail::quoted(piece) + " is not numeric"));
        if (digits.size() > max_number_digits)
            return unexpected(error_at(origin, at, "number " + topoblock::detail::quoted(digits) + " is too large"));
        return {};
    };
    if (auto ok = check(lo, offset); !ok) return unexpected(ok.error());
    if (auto ok = check(hi, hi_offset); !ok) return unexpected(ok.error());
    number_range range{to_number(lo), to_number(hi), lo.size()};
    if (range.lo > range.hi)
        return unexpected(error_at(origin, offset, "reversed range " + topoblock::detail::quoted(piece)));
    return range;
}

// The inside of one bracket pair: comma-separated ranges.
inline expected<std::vector<number_range>, error> parse_bracket_group(std::string_view body,
                                                                      std::size_t offset,
                                                                      text_origin origin) {
    if (body.empty()) return unexpected(error_at(origin, offset - 1, "empty brackets '[]'"));
    std::vector<number_range> group;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = body.find(',', start);
        const std::string_view piece = body.substr(start, comma - start);
        auto range = parse_number_range(piece, offset + start, origin);
        if (!range) return unexpected(std::move(range).error());
        // Each range is at least one name: refuse a group of more ranges than
        // the cap allows names before it is stored.
        if (group.size() == max_hostlist_names)
            return unexpected(error_at(origin, offset + start,
                                       "hostlist expands to more than " + std::to_string(max_hostlist_names) +
                                           " names"));
        group.push_back(*range);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return group;
}

// Reads one item (a name or name pattern) starting at text[pos]; stops at a
// top-level comma, blank or the end, and leaves pos there.
inline expected<hostlist_item, error> parse_hostlist_item(std::string_view text, std::size_t& pos,
                                                          text_origin origin) {
    hostlist_item item;
    item.offset = pos;
    std::size_t literal_start = pos;
    while (pos < text.size() && text[pos] != ',' && !is_blank(text[pos])) {
        if (text[pos] == ']') return unexpected(error_at(origin, pos, "']' without a matching '['"));
        if (text[pos] != '[') {
            ++pos;
            continue;
        }
        const std::size_t close = text.find_first_of("[]", pos + 1);
        if (close == std::string_view::npos || text[close] == '[')
            return unexpected(error_at(origin, pos, "unbalanced bracket: '[' is never closed"));
        if (item.groups.size() == max_hostlist_groups)
            return unexpected(error_at(origin, pos, "a name has more than " + std::to_string(max_hostlist_groups) +
                                                        " bracket groups"));
        auto group = parse_bracket_group(text.substr(pos + 1, close - pos - 1), pos + 1, origin);
        if (!group) return unexpected(std::move(group).error());
        item.literals.push_back(text.substr(literal_start, pos - literal_start));
        item.groups.push_back(std::move(*group));
        pos = close + 1;
        literal_start = pos;
    }
    item.literals.push_back(text.substr(literal_start, pos - literal_start));
    // Slurm's _hostlist_create_bracketed wants the last ']' to end the name.
    if (!item.groups.empty() && !item.literals.back().empty())
        return unexpected(error_at(origin, literal_start,
                                   "text after the last ']' (a bracket group must end the name)"));
    return item;
}

// The one hostlist tokenizer: hands each item of an expression to
// visit(item) in order, one at a time, so that memory holds one item however
// many the text has. Commas, spaces and tabs separate items as in Slurm; an
// empty item between commas is an error rather than silently skipped. The
// first error, from the text or from visit, stops the walk.
template <class Visit>
expected<void, error> for_each_hostlist_item(std::string_view text, text_origin origin, Visit&& visit) {
    bool need_item = false;  // a comma was seen and no item has followed yet
    bool any_item = false;
    std::size_t last_comma = 0;
    std::size_t pos = 0;
    while (true) {
        while (pos < text.size() && is_blank(text[pos])) ++pos;
        if (pos == text.size()) break;
        if (text[pos] == ',') {
            if (need_item || !any_item)
                return unexpected(error_at(origin, pos, "empty item in hostlist"));
            need_item = true;
            last_comma = pos;
            ++pos;
            continue;
        }
        auto item = parse_hostlist_item(text, pos, origin);
        if (!item) return unexpected(std::move(item).error());
        if (auto ok = visit(*item); !ok) return ok;
        any_item = true;
        need_item = false;
    }
    if (need_item) return unexpected(error_at(origin, last_comma, "empty item after the last comma"));
    return {};
}

// Slurm expands "a[1-2]b[1-2]c[1-2]" recursively from the rightmost bracket
// of the prefix (_push_range_list): the bracket that ends the name varies
// fastest, the bracket before it slowest, then leftwards. For two groups this
// is the plain cartesian product, left group outermost.
inline std::vector<std::size_t> slurm_nesting_order(std::size_t groups) {
    std::vector<std::size_t> order;
    if (groups == 0) return order;
    for (std::size_t g = groups - 1; g-- > 0;) order.push_back(g);
    order.push_back(groups - 1);
    return order;
}

inline void expand_item(const hostlist_item& item, std::vector<std::string>& out) {
    if (item.groups.empty()) {
        out.emplace_back(item.literals.front());
        return;
    }
    std::vector<std::vector<std::string>> values(item.groups.size());
    for (std::size_t g = 0; g < item.groups.size(); ++g)
        for (const auto& r : item.groups[g])
            for (std::uint64_t v = r.lo;; ++v) {
                std::string s;
                append_padded(s, v, r.width);
                values[g].push_back(std::move(s));
                if (v == r.hi) break;
            }
    const std::vector<std::size_t> order = slurm_nesting_order(item.groups.size());
    std::vector<std::size_t> index(item.groups.size(), 0);
    while (true) {
        std::string name(item.literals[0]);
        for (std::size_t g = 0; g < item.groups.size(); ++g) {
            name += values[g][index[g]];
            name += item.literals[g + 1];
        }
        out.push_back(std::move(name));
        // Odometer step, innermost group (the last in `order`) first.
        std::size_t k = order.size();
        while (k > 0) {
            const std::size_t g = order[k - 1];
            if (++index[g] < values[g].size()) break;
            index[g] = 0;
            --k;
        }
        if (k == 0) return;
    }
}

// Counts names without building them, saturating at `cap`.
inline std::size_t count_item(const hostlist_item& item, std::size_t cap) {
    std::size_t count = 1;
    for (const auto& group : item.groups) count = multiply_capped(count, group_size(group, cap), cap);
    return count;
}

// The longest name the item makes: its literals and, per group, the widest
// number it prints (a range pads to its width; hi may print wider).
inline std::size_t longest_name(const hostlist_item& item) {
    std::size_t length = 0;
    for (std::string_view literal : item.literals) length += literal.size();
    for (const auto& group : item.groups) {
        std::size_t widest = 0;
        for (const auto& r : group) widest = std::max({widest, r.width, std::to_string(r.hi).size()});
        length += widest;
    }
    return length;
}

// What the hostlists read so far have made, against the caller's limits.
struct expansion_budget {
    hostlist_limits limits;
    std::size_t names = 0;
    std::size_t bytes = 0;
};

// expand_hostlist for text found inside a larger file, counted against
// `budget` (which earlier hostlists of the file may have used). Two walks
// over the text: the first checks it and counts the names and their bytes
// (saturating), so that an expression over the limits, by its ranges or by
// its many items, is refused before any name is made; the second makes them.
inline expected<std::vector<std::string>, error> expand_hostlist_at(std::string_view text, text_origin origin,
                                                                    expansion_budget& budget) {
    const bool first = budget.names == 0 && budget.bytes == 0;
    const std::size_t names_cap = add_capped(budget.limits.names, 1, std::numeric_limits<std::size_t>::max());
    const std::size_t bytes_cap = add_capped(budget.limits.bytes, 1, std::numeric_limits<std::size_t>::max());
    std::size_t total = budget.names;
    std::size_t bytes = budget.bytes;
    const std::string in_all = first ? "" : " in all, with the hostlists before it";
    auto counted = for_each_hostlist_item(text, origin, [&](const hostlist_item& item) -> expected<void, error> {
        const std::size_t count = count_item(item, names_cap);
        total = add_capped(total, count, names_cap);
        if (total > budget.limits.names)
            return unexpected(error_at(origin, item.offset,
                                       "hostlist expands to more than " + std::to_string(budget.limits.names) +
                                           " names" + in_all));
        bytes = add_capped(bytes, multiply_capped(count, longest_name(item), bytes_cap), bytes_cap);
        if (bytes > budget.limits.bytes)
            return unexpected(error_at(origin, item.offset,
                                       "hostlist expands to more than " + std::to_string(budget.limits.bytes) +
                                           " bytes of names" + in_all));
        return {};
    });
    if (!counted) return unexpected(std::move(counted).error());
    std::vector<std::string> names;
    names.reserve(total - budget.names);
    budget.names = total;
    budget.bytes = bytes;
    auto expanded = for_each_hostlist_item(text, origin, [&](const hostlist_item& item) -> expected<void, error> {
        expand_item(item, names);
        return {};
    });
    if (!expanded) return unexpected(std::move(expanded).error());
    return names;
}

// Martin Pool's natural order, which Slurm's hostrange_prefix_cmp uses
// (strnatcmp): digit runs compare by value ("rack2" < "rack10"); a run with a
// leading zero compares digit by digit.
inline int natural_compare_digits_right(std::string_view a, std::size_t i, std::string_view b,
                                        std::size_t j) {
    int bias = 0;
    for (;; ++i, ++j) {
        const bool da = i < a.size() && is_digit(a[i]);
        const bool db = j < b.size() && is_digit(b[j]);
        if (!da && !db) return bias;
        if (!da) return -1;
        if (!db) return 1;
        if (bias == 0 && a[i] != b[j]) bias = a[i] < b[j] ? -1 : 1;
    }
}

inline int natural_compare_digits_left(std::string_view a, std::size_t i, std::string_view b,
                                       std::size_t j) {
    for (;; ++i, ++j) {
        const bool da = i < a.size() && is_digit(a[i]);
        const bool db = j < b.size() && is_digit(b[j]);
        if (!da && !db) return 0;
        if (!da) return -1;
        if (!db) return 1;
        if (a[i] != b[j]) return a[i] < b[j] ? -1 : 1;
    }
}

inline int natural_compare(std::string_view a, std::string_view b) {
    std::size_t i = 0;
    std::size_t j = 0;
    while (true) {
        if (i >= a.size() || j >= b.size()) {
            if (i >= a.size() && j >= b.size()) return 0;
            return i >= a.size() ? -1 : 1;
        }
        if (is_digit(a[i]) && is_digit(b[j])) {
            const int r = (a[i] == '0' || b[j] == '0') ? natural_compare_digits_left(a, i, b, j)
                                                       : natural_compare_digits_right(a, i, b, j);
            if (r != 0) return r;
        }
        const auto ca = static_cast<unsigned char>(a[i]);
        const auto cb = static_cast<unsigned char>(b[j]);
        if (ca != cb) return ca < cb ? -1 : 1;
        ++i;
        ++j;
    }
}

// A host name split as Slurm's hostname_create does: the trailing digits are
// the number, their count the width ("n010": prefix "n", 10, width 3). A name
// without trailing digits (or with too many to be a number) stands alone.
struct host_name {
    std::string_view prefix;
    bool single = true;
    std::uint64_t number = 0;
    std::size_t width = 0;
};

inline host_name split_host_name(std::string_view name) {
    std::size_t end = name.size();
    while (end > 0 && is_digit(name[end - 1])) --end;
    const std::size_t digits = name.size() - end;
    if (digits == 0 || digits > max_number_digits) return {name, true, 0, 0};
    return {name.substr(0, end), false, to_number(name.substr(end)), digits};
}

// Slurm's hostrange_cmp: prefix in natural order, a lone name before numbered
// names of the same prefix, then by number when the widths can share a
// format, else by width. Ordering by (width, number) gives exactly those
// pairwise answers as a total order: padded names of width w are smaller than
// any unpadded name of more digits, and names of different width that cannot
// share a format are ordered by width.
inline bool host_name_less(const host_name& a, const host_name& b) {
    if (const int c = natural_compare(a.prefix, b.prefix); c != 0) return c < 0;
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    if (a.single != b.single) return a.single;
    if (a.width != b.width) return a.width < b.width;
    return a.number < b.number;
}

inline bool same_host_name(const host_name& a, const host_name& b) {
    return a.prefix == b.prefix && a.single == b.single && a.width == b.width && a.number == b.number;
}

inline std::size_t zeros_needed(std::uint64_t number, std::size_t width) {
    const std::size_t digits = std::to_string(number).size();
    return width > digits ? width - digits : 0;
}

// Slurm's _width_equiv: can n (written with width wn) and m (width wm) be
// printed with one width without changing either? If so, the width that
// works is stored in both.
inline bool width_equivalent(std::uint64_t n, std::size_t& wn, std::uint64_t m, std::size_t& wm) {
    if (wn == wm) return true;
    const bool n_changes = zeros_needed(n, wn) != zeros_needed(n, wm);
    const bool m_changes = zeros_needed(m, wm) != zeros_needed(m, wn);
    if (n_changes && m_changes) return false;
    if (n_changes)
        wm = wn;
    else
        wn = wm;
    return true;
}

struct host_range {
    host_name first;
    std::uint64_t hi = 0;
};

inline std::vector<host_name> sorted_unique(std::span<const std::string> names) {
    std::vector<host_name> split;
    split.reserve(names.size());
    for (const std::string& name : names) split.push_back(split_host_name(name));
    std::sort(split.begin(), split.end(), host_name_less);
    split.erase(std::unique(split.begin(), split.end(), same_host_name), split.end());
    return split;
}

// Sorted, unique names merged into runs of consecutive numbers, as Slurm's
// hostlist_uniq does with hostrange_join.
inline std::vector<host_range> to_host_ranges(const std::vector<host_name>& names) {
    std::vector<host_range> ranges;
    for (const host_name& name : names) {
        if (!ranges.empty()) {
            host_range& last = ranges.back();
            std::size_t width = name.width;
            if (!name.single && !last.first.single && last.first.prefix == name.prefix &&
                name.number == last.hi + 1 &&
                width_equivalent(last.first.number, last.first.width, name.number, width)) {
                last.hi = name.number;
                continue;
            }
        }
        ranges.push_back({name, name.number});
    }
    return ranges;
}

}  // namespace detail

// Expands a Slurm hostlist expression into names, in Slurm's order.
// Items are separated by commas (blanks also separate, as in Slurm); an item
// is a name with bracket groups of ranges: "gb[001-018,020]",
// "r[1-2]n[1-2]", "a[1-3],b7,c". Zero padding follows the low bound of each
// range. Errors name the column (line 1): unbalanced brackets, reversed or
// non-numeric ranges, empty items, more names or bytes than `limits` allow.
// An empty or blank text is an empty list.
inline expected<std::vector<std::string>, error> expand_hostlist(std::string_view text,
                                                                 hostlist_limits limits = {}) {
    detail::expansion_budget budget{limits};
    return detail::expand_hostlist_at(text, {}, budget);
}

// The names sorted as Slurm sorts a hostlist (hostlist_uniq), without
// duplicates: what expand_hostlist(compress_hostlist(names)) returns.
inline std::vector<std::string> sort_hostnames(std::span<const std::string> names) {
    const std::vector<detail::host_name> split = detail::sorted_unique(names);
    std::vector<std::string> out;
    out.reserve(split.size());
    for (const auto& name : split) {
        std::string text(name.prefix);
        if (!name.single) detail::append_padded(text, name.number, name.width);
        out.push_back(std::move(text));
    }
    return out;
}

// The shortest form Slurm prints for a set of names (`scontrol show
// hostlist`, hostlist_ranged_string after hostlist_uniq): sorted, unique,
// consecutive numbers of compatible zero padding merged, one bracket per run
// of ranges sharing a prefix: {n01..n12, n19..n36} -> "n[01-12,19-36]".
// Names must not contain ',', '[', ']' or blanks (they could not be parsed
// back). Complexity O(n log n).
inline std::string compress_hostlist(std::span<const std::string> names) {
    const std::vector<detail::host_range> ranges = detail::to_host_ranges(detail::sorted_unique(names));
    std::string out;
    for (std::size_t i = 0; i < ranges.size();) {
        if (i > 0) out += ',';
        const detail::host_range& head = ranges[i];
        out += head.first.prefix;
        if (head.first.single) {
            ++i;
            continue;
        }
        // Ranges sharing the prefix share one bracket (Slurm's
        // hostrange_within_range), even when their widths differ.
        std::size_t end = i + 1;
        while (end < ranges.size() && !ranges[end].first.single &&
               ranges[end].first.prefix == head.first.prefix)
            ++end;
        const bool bracket = end - i > 1 || head.hi > head.first.number;
        if (bracket) out += '[';
        for (std::size_t k = i; k < end; ++k) {
            if (k > i) out += ',';
            detail::append_padded(out, ranges[k].first.number, ranges[k].first.width);
            if (ranges[k].hi > ranges[k].first.number) {
                out += '-';
                detail::append_padded(out, ranges[k].hi, ranges[k].first.width);
            }
        }
        if (bracket) out += ']';
        i = end;
    }
    return out;
}

}  // namespace topoblock::io
