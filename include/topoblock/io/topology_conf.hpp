#pragma once

// Slurm topology.conf, block and tree plugins: read and write.
//
//   BlockName=b1 Nodes=node[1-4]          SwitchName=s0 Nodes=dev[0-5] LinkSpeed=100
//   BlockName=b2 Nodes=node[5-8]          SwitchName=s3 Switches=s[0-2]
//   BlockSizes=4,8
//
// Syntax as Slurm's parse_config.c reads it: keys are case-insensitive,
// "#" starts a comment ("\#" is a literal #, "\\" a backslash), a trailing backslash joins the
// next line, values may be double-quoted. See docs/formats.md.

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_topology.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/support/utf8_bom.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::io {

namespace detail::conf {

// A logical line (continuations joined) with the file position of each byte.
struct logical_line {
    std::string text;
    std::vector<text_origin> where;
};

// Splits the file into logical lines as Slurm's _get_next_line does:
// comments removed first (from a "#" no backslash escapes), then lines
// ending in a backslash (blanks after it allowed) joined to the next, and
// "\x" read as a literal x ("\#", "\\"). So "Nodes=n1 \ # note" continues.
inline std::vector<logical_line> logical_lines(std::string_view file) {
    std::vector<logical_line> lines;
    logical_line current;
    topoblock::detail::text_lines physical(file);
    for (std::string_view raw; physical.next(raw);) {
        const std::uint32_t number = physical.number();
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\') {
                ++i;
            } else if (raw[i] == '#') {
                raw = raw.substr(0, i);
                break;
            }
        }
        bool continued = false;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\') {
                // A backslash with only blanks after it continues the line;
                // elsewhere it escapes the next character (parse_config.c).
                if (raw.find_first_not_of(" \t", i + 1) == std::string_view::npos) {
                    continued = true;
                    break;
                }
                ++i;
            }
            current.text += raw[i];
            current.where.push_back({number, static_cast<std::uint32_t>(i + 1)});
        }
        if (continued) continue;
        while (!current.text.empty() && is_blank(current.text.back())) {
            current.text.pop_back();
            current.where.pop_back();
        }
        if (!current.text.empty()) lines.push_back(std::move(current));
        current = {};
    }
    if (!current.text.empty()) lines.push_back(std::move(current));
    return lines;
}

struct key_value {
    std::string key;    // lower case
    std::string spelled;  // as written, for messages
    std::string value;
    text_origin key_at;
    text_origin value_at;
};

inline std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

inline error error_on(const logical_line& line, std::size_t index, std::string message) {
    const text_origin at = index < line.where.size() ? line.where[index] : line.where.back();
    return make_error(std::move(message), at.line, at.column);
}

// Splits a logical line into Key=Value words.
inline expected<std::vector<key_value>, error> split_words(const logical_line& line) {
    std::vector<key_value> words;
    const std::string& t = line.text;
    std::size_t i = 0;
    while (true) {
        while (i < t.size() && is_blank(t[i])) ++i;
        if (i == t.size()) break;
        const std::size_t start = i;
        while (i < t.size() && t[i] != '=' && !is_blank(t[i])) ++i;
        const std::size_t key_end = i;
        // Blanks may surround the '=' (parse_config.c's key=value pattern).
        while (i < t.size() && is_blank(t[i])) ++i;
        if (i == t.size() || t[i] != '=')
            return unexpected(
                error_on(line, start, "expected Key=Value, found " + detail::quoted(t.substr(start, key_end - start))));
        if (key_end == start) return unexpected(error_on(line, start, "'=' without a key"));
        key_value word;
        word.spelled = t.substr(start, key_end - start);
        word.key = lower(word.spelled);
        word.key_at = line.where[start];
        ++i;  // '='
        while (i < t.size() && is_blank(t[i])) ++i;
        // Slurm's pattern wants a value (a quoted one may be empty).
        if (i == t.size())
            return unexpected(error_on(line, start, detail::quoted(word.spelled + "=") + " needs a value"));
        word.value_at = i < t.size() ? line.where[i] : text_origin{line.where[i - 1].line, line.where[i - 1].column + 1};
        if (i < t.size() && t[i] == '"') {
            const std::size_t close = t.find('"', i + 1);
            if (close == std::string::npos) return unexpected(error_on(line, i, "unterminated quoted value"));
            word.value = t.substr(i + 1, close - i - 1);
            word.value_at.column += 1;
            i = close + 1;
            if (i < t.size() && !is_blank(t[i]))
                return unexpected(error_on(line, i, "text after a closing quote"));
        } else {
            const std::size_t value_start = i;
            while (i < t.size() && !is_blank(t[i])) ++i;
            word.value = t.substr(value_start, i - value_start);
        }
        words.push_back(std::move(word));
    }
    return words;
}

inline error word_error(text_origin at, std::string message) {
    return make_error(std::move(message), at.line, at.column);
}

inline expected<std::uint32_t, error> parse_uint32(std::string_view text, text_origin at, std::string_view what) {
    if (text.empty()) return unexpected(word_error(at, std::string(what) + " needs a number"));
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!is_digit(text[i]))
            return unexpected(word_error({at.line, at.column + static_cast<std::uint32_t>(i)},
                                         std::string(what) + ": " + detail::quoted(text) + " is not a number"));
        value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
        if (value > 0xFFFF'FFFFu)
            return unexpected(word_error(at, std::string(what) + ": " + detail::quoted(text) + " is too large"));
    }
    return static_cast<std::uint32_t>(value);
}

inline expected<std::vector<std::uint32_t>, error> parse_block_sizes(const key_value& word) {
    std::vector<std::uint32_t> sizes;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = word.value.find(',', start);
        const std::string_view piece = std::string_view(word.value).substr(start, comma - start);
        const text_origin at{word.value_at.line, word.value_at.column + static_cast<std::uint32_t>(start)};
        auto size = parse_uint32(piece, at, "BlockSizes");
        if (!size) return unexpected(std::move(size).error());
        if (*size == 0) return unexpected(word_error(at, "BlockSizes: sizes must be positive"));
        sizes.push_back(*size);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (auto ok = validate_block_sizes(sizes); !ok)
        return unexpected(word_error(word.value_at, ok.error().message));
    return sizes;
}

// Which plugin a line belongs to; a file may not mix them.
enum class line_kind { block, tree };

struct parse_state {
    slurm_topology topo;
    std::optional<line_kind> kind;
    std::uint32_t kind_line = 0;
    std::uint32_t block_sizes_line = 0;
    expansion_budget hostlists;  // every hostlist of the file counts against one budget
};

inline expected<void, error> claim_kind(parse_state& state, line_kind kind, const key_value& first) {
    if (!state.kind) {
        state.kind = kind;
        state.kind_line = first.key_at.line;
        return {};
    }
    if (*state.kind == kind) return {};
    return unexpected(word_error(first.key_at, detail::quoted(first.spelled) + " mixes " +
                                                   (kind == line_kind::block ? "block" : "tree") +
                                                   " lines with the " +
                                                   (kind == line_kind::block ? "tree" : "block") +
                                                   " lines that start at line " + std::to_string(state.kind_line)));
}

// Checks that each word's key is one of `allowed` and appears once.
inline expected<void, error> check_keys(const std::vector<key_value>& words,
                                        std::initializer_list<std::string_view> allowed) {
    for (std::size_t i = 0; i < words.size(); ++i) {
        bool known = false;
        for (std::string_view key : allowed) known = known || words[i].key == lower(key);
        if (!known) {
            std::string list;  // the keys that may follow the first one
            for (std::string_view key : allowed)
                if (lower(key) != words[0].key) list += (list.empty() ? "" : ", ") + std::string(key);
            const std::string expected_keys =
                list.empty() ? std::string(" (nothing may follow it)") : " (expected " + list + ")";
            return unexpected(word_error(words[i].key_at, "unknown key " + detail::quoted(words[i].spelled) + " on a " +
                                                              detail::quoted(words[0].spelled) + " line" + expected_keys));
        }
        for (std::size_t j = 0; j < i; ++j)
            if (words[j].key == words[i].key)
                return unexpected(word_error(words[i].key_at, detail::quoted(words[i].spelled) + " given twice on one line"));
    }
    return {};
}

inline const key_value* find_key(const std::vector<key_value>& words, std::string_view key) {
    for (const key_value& word : words)
        if (word.key == key) return &word;
    return nullptr;
}

inline expected<std::vector<std::string>, error> hostlist_value(parse_state& state, const key_value* word) {
    if (!word) return std::vector<std::string>{};
    return expand_hostlist_at(word->value, word->value_at, state.hostlists);
}

inline expected<void, error> read_block_line(parse_state& state, const std::vector<key_value>& words) {
    if (auto ok = check_keys(words, {"BlockName", "Nodes"}); !ok) return ok;
    slurm_block block;
    block.name = words[0].value;
    block.line = words[0].key_at.line;
    auto nodes = hostlist_value(state, find_key(words, "nodes"));
    if (!nodes) return unexpected(std::move(nodes).error());
    block.nodes = std::move(*nodes);
    detail::drop_repeated_nodes(block.nodes);
    state.topo.blocks.push_back(std::move(block));
    return {};
}

inline expected<void, error> read_block_sizes_line(parse_state& state, const std::vector<key_value>& words) {
    if (auto ok = check_keys(words, {"BlockSizes"}); !ok) return ok;
    if (state.block_sizes_line != 0)
        return unexpected(word_error(words[0].key_at, "BlockSizes given twice (first at line " +
                                                          std::to_string(state.block_sizes_line) + ")"));
    auto sizes = parse_block_sizes(words[0]);
    if (!sizes) return unexpected(std::move(sizes).error());
    state.topo.block_sizes = std::move(*sizes);
    state.block_sizes_line = words[0].key_at.line;
    return {};
}

inline expected<void, error> read_switch_line(parse_state& state, const std::vector<key_value>& words) {
    if (auto ok = check_keys(words, {"SwitchName", "Nodes", "Switches", "LinkSpeed"}); !ok) return ok;
    slurm_switch sw;
    sw.name = words[0].value;
    sw.line = words[0].key_at.line;
    auto nodes = hostlist_value(state, find_key(words, "nodes"));
    if (!nodes) return unexpected(std::move(nodes).error());
    sw.nodes = std::move(*nodes);
    auto children = hostlist_value(state, find_key(words, "switches"));
    if (!children) return unexpected(std::move(children).error());
    sw.children = std::move(*children);
    if (const key_value* speed = find_key(words, "linkspeed")) {
        auto value = parse_uint32(speed->value, speed->value_at, "LinkSpeed");
        if (!value) return unexpected(std::move(value).error());
        sw.link_speed = *value;
    }
    state.topo.switches.push_back(std::move(sw));
    return {};
}

inline expected<void, error> read_line(parse_state& state, const std::vector<key_value>& words) {
    const key_value& first = words.front();
    if (first.key == "blockname" || first.key == "blocksizes") {
        if (auto ok = claim_kind(state, line_kind::block, first); !ok) return ok;
        return first.key == "blockname" ? read_block_line(state, words) : read_block_sizes_line(state, words);
    }
    if (first.key == "switchname") {
        if (auto ok = claim_kind(state, line_kind::tree, first); !ok) return ok;
        return read_switch_line(state, words);
    }
    if (first.key == "nodes" || first.key == "switches" || first.key == "linkspeed")
        return unexpected(word_error(first.key_at, detail::quoted(first.spelled) +
                                                       " must follow BlockName= or SwitchName= on its line"));
    return unexpected(word_error(first.key_at, "unknown key " + detail::quoted(first.spelled) +
                                                   " (expected BlockName, BlockSizes or SwitchName)"));
}

inline void append_line(std::string& out, std::string_view key, std::string_view value) {
    out += out.empty() || out.back() == '\n' ? "" : " ";
    out += key;
    out += '=';
    out += value;
}

}  // namespace detail::conf

// Reads topology.conf. The file's lines decide the kind: BlockName/BlockSizes
// lines make a block topology, SwitchName lines a tree, no lines a flat one.
// The result passed validate_topology. Errors carry line and column.
// Node lists keep the order of their hostlist expressions; all of them
// together expand to no more than `limits` allow.
inline expected<slurm_topology, error> parse_topology_conf(std::string_view text, hostlist_limits limits = {}) {
    detail::conf::parse_state state;
    state.hostlists.limits = limits;
    for (const auto& line : detail::conf::logical_lines(topoblock::detail::without_utf8_bom(text))) {
        auto words = detail::conf::split_words(line);
        if (!words) return unexpected(std::move(words).error());
        if (words->empty()) continue;
        if (auto ok = detail::conf::read_line(state, *words); !ok) return unexpected(ok.error());
    }
    if (state.kind)
        state.topo.type = *state.kind == detail::conf::line_kind::block ? slurm_topology::kind::block
                                                                        : slurm_topology::kind::tree;
    if (auto ok = validate_topology(state.topo); !ok) {
        error e = ok.error();
        if (e.line == 0) e.line = state.block_sizes_line ? state.block_sizes_line : state.kind_line;
        return unexpected(std::move(e));
    }
    return std::move(state.topo);
}

// Writes topology.conf with compressed hostlists: one line per block or
// switch, BlockSizes last (as in Slurm's example). A flat topology is an
// empty file; the topology name has no place in topology.conf and is dropped.
// parse_topology_conf(write_topology_conf(t)) == t when t is valid, unnamed
// and its node lists are sorted as sort_hostnames sorts them.
inline std::string write_topology_conf(const slurm_topology& topo) {
    std::string out;
    for (const slurm_block& block : topo.blocks) {
        detail::conf::append_line(out, "BlockName", block.name);
        if (!block.nodes.empty()) detail::conf::append_line(out, "Nodes", compress_hostlist(block.nodes));
        out += '\n';
    }
    if (!topo.block_sizes.empty()) {
        std::string sizes;
        for (std::uint32_t size : topo.block_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
        detail::conf::append_line(out, "BlockSizes", sizes);
        out += '\n';
    }
    for (const slurm_switch& sw : topo.switches) {
        detail::conf::append_line(out, "SwitchName", sw.name);
        if (!sw.nodes.empty()) detail::conf::append_line(out, "Nodes", compress_hostlist(sw.nodes));
        if (!sw.children.empty()) detail::conf::append_line(out, "Switches", compress_hostlist(sw.children));
        if (sw.link_speed) detail::conf::append_line(out, "LinkSpeed", std::to_string(*sw.link_speed));
        out += '\n';
    }
    return out;
}

}  // namespace topoblock::io
