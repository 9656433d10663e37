#pragma once

// Slurm topology.yaml (Slurm 25.05+): read and write.
//
//   - topology: nvl72
//     cluster_default: true
//     block:
//       block_sizes: [18]
//       blocks:
//         - block: b1
//           nodes: n[01-18]
//   - topology: fabric
//     tree:
//       switches:
//         - switch: leaf1
//           nodes: n[01-36]
//         - switch: spine
//           children: leaf[1-2]
//   - topology: none
//     flat: true
//
// Keys as in topology.yaml(5). The YAML reader covers exactly the subset
// these files use (block sequences, block mappings, flow sequences of
// scalars, plain and quoted scalars, comments); anything else is an error
// with line and column, never a crash. See docs/formats.md.

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/slurm_topology.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/support/utf8_bom.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::io {

namespace detail::yaml {

struct node {
    enum class kind { null, scalar, sequence, mapping };
    kind type = kind::null;
    std::string scalar;
    bool quoted = false;
    std::vector<node> items;          // sequence items, or mapping values
    std::vector<std::string> keys;    // mapping keys, in file order
    std::vector<text_origin> key_at;  // where each key is
    text_origin at;
};

struct line {
    std::uint32_t number = 0;
    std::size_t indent = 0;  // column of content, 0-based
    std::string_view content;
};

// The most levels of nesting read: the parser descends one call per level,
// and deep nesting would only come from hostile input, so it stops here long
// before the stack would.
inline constexpr int max_depth = 64;

inline error error_at_line(const line& l, std::size_t offset, std::string message) {
    return make_error(std::move(message), l.number, static_cast<std::uint32_t>(l.indent + offset + 1));
}

// Where a comment starts: '#' at the start or after a blank, outside quotes.
inline std::size_t comment_start(std::string_view s) {
    char quote = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
            if (c == quote) quote = 0;
            continue;
        }
        if ((c == '"' || c == '\'') && (i == 0 || is_blank(s[i - 1]) || s[i - 1] == '[' || s[i - 1] == ','))
            quote = c;
        else if (c == '#' && (i == 0 || is_blank(s[i - 1])))
            return i;
    }
    return std::string_view::npos;
}

inline expected<std::vector<line>, error> split_lines(std::string_view text) {
    std::vector<line> lines;
    bool seen_content = false;
    topoblock::detail::text_lines physical(text);
    for (std::string_view raw; physical.next(raw);) {
        const std::uint32_t number = physical.number();
        std::size_t indent = 0;
        while (indent < raw.size() && raw[indent] == ' ') ++indent;
        std::string_view content = raw.substr(indent);
        content = content.substr(0, comment_start(content));
        while (!content.empty() && is_blank(content.back())) content.remove_suffix(1);
        if (content.empty()) continue;
        if (content.front() == '\t')
            return unexpected(make_error("tabs cannot indent YAML", number, static_cast<std::uint32_t>(indent + 1)));
        if (indent == 0 && (content == "---" || content == "...")) {
            if (content == "---" && seen_content)
                return unexpected(make_error("only one YAML document is supported", number, 1));
            continue;
        }
        seen_content = true;
        lines.push_back({number, indent, content});
    }
    return lines;
}

inline bool is_dash_item(std::string_view content) {
    return !content.empty() && content[0] == '-' && (content.size() == 1 || content[1] == ' ');
}

// The ':' that ends a mapping key ("key: value" or "key:"), or npos.
inline std::size_t key_colon(std::string_view content) {
    if (content.empty() || content[0] == '[' || content[0] == '{') return std::string_view::npos;
    std::size_t i = 0;
    if (content[0] == '"' || content[0] == '\'') {
        const std::size_t close = content.find(content[0], 1);
        if (close == std::string_view::npos) return std::string_view::npos;
        i = close + 1;
    }
    for (; i < content.size(); ++i)
        if (content[i] == ':' && (i + 1 == content.size() || content[i + 1] == ' ')) return i;
    return std::string_view::npos;
}

inline expected<std::string, error> unquote(std::string_view text, const line& l, std::size_t offset) {
    const char quote = text.front();
    std::string out;
    std::size_t i = 1;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c == quote) {
            if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
                out += '\'';
                ++i;
                continue;
            }
            break;
        }
        if (quote == '"' && c == '\\') {
            if (++i == text.size()) break;
            switch (text[i]) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case '\\': out += '\\'; break;
                case '"': out += '"'; break;
                case '/': out += '/'; break;
                default:
                    return unexpected(error_at_line(l, offset + i - 1, "unsupported escape in a quoted string"));
            }
            continue;
        }
        out += c;
    }
    if (i >= text.size()) return unexpected(error_at_line(l, offset, "unterminated quoted string"));
    if (i + 1 != text.size())
        return unexpected(error_at_line(l, offset + i + 1, "text after a closing quote"));
    return out;
}

inline expected<node, error> scalar(std::string_view text, const line& l, std::size_t offset) {
    node n;
    n.type = node::kind::scalar;
    n.at = {l.number, static_cast<std::uint32_t>(l.indent + offset + 1)};
    if (text.front() == '"' || text.front() == '\'') {
        auto value = unquote(text, l, offset);
        if (!value) return unexpected(std::move(value).error());
        n.scalar = std::move(*value);
        n.quoted = true;
        n.at.column += 1;
        return n;
    }
    if (std::string_view("&*!|>%@`{").find(text.front()) != std::string_view::npos)
        return unexpected(error_at_line(l, offset, std::string("unsupported YAML feature '") + text.front() + "'"));
    n.scalar = std::string(text);
    return n;
}

// "[4, 8]": a flow sequence of scalars.
inline expected<node, error> flow_sequence(std::string_view text, const line& l, std::size_t offset) {
    node seq;
    seq.type = node::kind::sequence;
    seq.at = {l.number, static_cast<std::uint32_t>(l.indent + offset + 1)};
    std::size_t i = 1;
    auto skip_blanks = [&] { while (i < text.size() && is_blank(text[i])) ++i; };
    skip_blanks();
    if (i < text.size() && text[i] == ']') {
        if (i + 1 != text.size()) return unexpected(error_at_line(l, offset + i + 1, "text after ']'"));
        return seq;
    }
    while (true) {
        skip_blanks();
        if (i >= text.size()) return unexpected(error_at_line(l, offset, "'[' is never closed"));
        std::size_t end = i;
        if (text[i] == '"' || text[i] == '\'') {
            end = text.find(text[i], i + 1);
            if (end == std::string_view::npos) return unexpected(error_at_line(l, offset + i, "unterminated quoted string"));
            ++end;
        } else {
            while (end < text.size() && text[end] != ',' && text[end] != ']') {
                if (text[end] == '[' || text[end] == '{')
                    return unexpected(error_at_line(l, offset + end, "nested flow collections are not supported"));
                ++end;
            }
        }
        std::string_view item = text.substr(i, end - i);
        while (!item.empty() && is_blank(item.back())) item.remove_suffix(1);
        if (item.empty()) return unexpected(error_at_line(l, offset + i, "empty item in '[...]'"));
        auto value = scalar(item, l, offset + i);
        if (!value) return unexpected(std::move(value).error());
        seq.items.push_back(std::move(*value));
        i = end;
        skip_blanks();
        if (i >= text.size()) return unexpected(error_at_line(l, offset, "'[' is never closed"));
        if (text[i] == ']') {
            if (i + 1 != text.size()) return unexpected(error_at_line(l, offset + i + 1, "text after ']'"));
            return seq;
        }
        if (text[i] != ',') return unexpected(error_at_line(l, offset + i, "expected ',' or ']'"));
        ++i;
    }
}

inline expected<node, error> inline_value(std::string_view text, const line& l, std::size_t offset) {
    if (text.front() == '[') return flow_sequence(text, l, offset);
    return scalar(text, l, offset);
}

// Recursive descent over indented lines. A "- " item's content is parsed as
// if it were a line indented to where that content starts, which is how YAML
// reads "- key: value" followed by more keys of the same mapping.
class parser {
public:
    explicit parser(std::vector<line> lines) : lines_(std::move(lines)) {}

    expected<node, error> document() {
        if (lines_.empty()) return node{};
        auto root = value_at_current(0);
        if (!root) return root;
        if (pos_ < lines_.size()) return unexpected(error_at_line(lines_[pos_], 0, "unexpected indentation"));
        return root;
    }

private:
    std::vector<line> lines_;
    std::size_t pos_ = 0;

    // A node starting at the current line.
    expected<node, error> value_at_current(int depth) {
        const line& l = lines_[pos_];
        if (depth > max_depth)
            return unexpected(
                error_at_line(l, 0, "nesting is more than " + std::to_string(max_depth) + " levels deep"));
        if (is_dash_item(l.content)) return sequence(l.indent, depth);
        if (key_colon(l.content) != std::string_view::npos) return mapping(l.indent, depth);
        ++pos_;
        return inline_value(l.content, l, 0);
    }

    expected<void, error> check_no_deeper_line(std::size_t indent) {
        if (pos_ < lines_.size() && lines_[pos_].indent > indent)
            return unexpected(error_at_line(lines_[pos_], 0, "unexpected indentation"));
        return {};
    }

    expected<node, error> sequence(std::size_t indent, int depth) {
        node seq;
        seq.type = node::kind::sequence;
        seq.at = {lines_[pos_].number, static_cast<std::uint32_t>(indent + 1)};
        while (pos_ < lines_.size() && lines_[pos_].indent == indent && is_dash_item(lines_[pos_].content)) {
            line& l = lines_[pos_];
            std::size_t skip = 1;
            while (skip < l.content.size() && l.content[skip] == ' ') ++skip;
            node item;
            if (skip == l.content.size()) {
                ++pos_;
                if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
                    auto value = value_at_current(depth + 1);
                    if (!value) return value;
                    item = std::move(*value);
                }
            } else {
                l.indent += skip;
                l.content.remove_prefix(skip);
                auto value = value_at_current(depth + 1);
                if (!value) return value;
                item = std::move(*value);
            }
            seq.items.push_back(std::move(item));
        }
        if (auto ok = check_no_deeper_line(indent); !ok) return unexpected(ok.error());
        return seq;
    }

    expected<node, error> mapping(std::size_t indent, int depth) {
        node map;
        map.type = node::kind::mapping;
        map.at = {lines_[pos_].number, static_cast<std::uint32_t>(indent + 1)};
        // The keys so far, in a tree: a scan of map.keys per key made 100k
        // keys take 20 s.
        std::set<std::string, std::less<>> seen_keys;
        while (pos_ < lines_.size() && lines_[pos_].indent == indent) {
            const line l = lines_[pos_];
            if (is_dash_item(l.content))
                return unexpected(error_at_line(l, 0, "a sequence item where a 'key: value' was expected"));
            const std::size_t colon = key_colon(l.content);
            if (colon == std::string_view::npos)
                return unexpected(error_at_line(l, 0, "expected 'key: value'"));
            std::string_view key_text = l.content.substr(0, colon);
            while (!key_text.empty() && is_blank(key_text.back())) key_text.remove_suffix(1);
            if (key_text.empty()) return unexpected(error_at_line(l, 0, "empty mapping key"));
            auto key = scalar(key_text, l, 0);
            if (!key) return unexpected(std::move(key).error());
            if (!seen_keys.insert(key->scalar).second)
                return unexpected(error_at_line(l, 0, "key " + detail::quoted(key->scalar) + " appears twice"));
            std::size_t value_offset = colon + 1;
            while (value_offset < l.content.size() && is_blank(l.content[value_offset])) ++value_offset;
            ++pos_;
            node value;
            if (value_offset < l.content.size()) {
                auto v = inline_value(l.content.substr(value_offset), l, value_offset);
                if (!v) return v;
                value = std::move(*v);
                if (auto ok = check_no_deeper_line(indent); !ok) return unexpected(ok.error());
            } else if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
                auto v = value_at_current(depth + 1);
                if (!v) return v;
                value = std::move(*v);
            } else if (pos_ < lines_.size() && lines_[pos_].indent == indent && is_dash_item(lines_[pos_].content)) {
                // YAML lets a mapping's sequence value sit at the key's indentation.
                auto v = sequence(indent, depth + 1);
                if (!v) return v;
                value = std::move(*v);
            } else {
                value.at = {l.number, static_cast<std::uint32_t>(l.indent + colon + 2)};
            }
            map.keys.push_back(std::move(key->scalar));
            map.items.push_back(std::move(value));
            map.key_at.push_back(key->at);
        }
        if (auto ok = check_no_deeper_line(indent); !ok) return unexpected(ok.error());
        return map;
    }
};

inline expected<node, error> parse(std::string_view text) {
    auto lines = split_lines(text);
    if (!lines) return unexpected(std::move(lines).error());
    return parser(std::move(*lines)).document();
}

// ---- from YAML nodes to slurm_topology ----

inline error node_error(const node& n, std::string message) {
    return make_error(std::move(message), n.at.line, n.at.column);
}

inline expected<void, error> expect(const node& n, node::kind kind, std::string_view what) {
    if (n.type == kind) return {};
    const char* names[] = {"nothing", "a scalar", "a list", "a mapping"};
    return unexpected(node_error(n, std::string(what) + " must be " + names[static_cast<int>(kind)] + ", not " +
                                        names[static_cast<int>(n.type)]));
}

inline expected<std::string, error> as_string(const node& n, std::string_view what) {
    if (auto ok = expect(n, node::kind::scalar, what); !ok) return unexpected(ok.error());
    return n.scalar;
}

// YAML 1.1 spells booleans several ways; Slurm's own example uses True/False.
inline expected<bool, error> as_bool(const node& n, std::string_view what) {
    if (auto ok = expect(n, node::kind::scalar, what); !ok) return unexpected(ok.error());
    if (!n.quoted) {
        std::string v = n.scalar;
        for (char& c : v)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (v == "true" || v == "yes" || v == "on") return true;
        if (v == "false" || v == "no" || v == "off") return false;
    }
    return unexpected(node_error(n, std::string(what) + " must be true or false, not " + detail::quoted(n.scalar)));
}

inline expected<std::uint32_t, error> as_size(const node& n, std::string_view what) {
    if (auto ok = expect(n, node::kind::scalar, what); !ok) return unexpected(ok.error());
    if (n.quoted || n.scalar.empty() || n.scalar.size() > 9)
        return unexpected(node_error(n, std::string(what) + " must be a positive number, not " + detail::quoted(n.scalar)));
    std::uint32_t value = 0;
    for (char c : n.scalar) {
        if (!is_digit(c))
            return unexpected(node_error(n, std::string(what) + " must be a positive number, not " + detail::quoted(n.scalar)));
        value = value * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (value == 0) return unexpected(node_error(n, std::string(what) + " must be positive"));
    return value;
}

// An absent value ("nodes:" with nothing after it) is an empty list.
inline expected<std::vector<std::string>, error> as_hostlist(const node& n, std::string_view what,
                                                             expansion_budget& budget) {
    if (n.type == node::kind::null) return std::vector<std::string>{};
    if (auto ok = expect(n, node::kind::scalar, what); !ok) return unexpected(ok.error());
    return expand_hostlist_at(n.scalar, n.at, budget);
}

// The items of a list; an absent value is an empty list.
inline expected<std::span<const node>, error> as_list(const node& n, std::string_view what) {
    if (n.type == node::kind::null) return std::span<const node>{};
    if (auto ok = expect(n, node::kind::sequence, what); !ok) return unexpected(ok.error());
    return std::span<const node>(n.items);
}

template <class Handler>
expected<void, error> for_each_key(const node& map, std::string_view what,
                                   std::initializer_list<std::string_view> allowed, Handler&& handle) {
    if (auto ok = expect(map, node::kind::mapping, what); !ok) return ok;
    for (std::size_t i = 0; i < map.keys.size(); ++i) {
        const std::string& key = map.keys[i];
        const node& value = map.items[i];
        bool known = false;
        for (std::string_view k : allowed) known = known || key == k;
        if (!known) {
            std::string list;
            for (std::string_view k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
            return unexpected(make_error("unknown key " + detail::quoted(key) + " in " + std::string(what) + " (expected " +
                                             list + ")",
                                         map.key_at[i].line, map.key_at[i].column));
        }
        if (auto ok = handle(key, value); !ok) return ok;
    }
    return {};
}

inline expected<slurm_block, error> read_block(const node& n, expansion_budget& budget) {
    slurm_block block;
    block.line = n.at.line;
    bool named = false;
    auto ok = for_each_key(n, "a block entry", {"block", "nodes"},
                           [&](const std::string& key, const node& value) -> expected<void, error> {
                               if (key == "block") {
                                   auto name = as_string(value, "block");
                                   if (!name) return unexpected(std::move(name).error());
                                   block.name = std::move(*name);
                                   named = true;
                               } else {
                                   auto nodes = as_hostlist(value, "nodes", budget);
                                   if (!nodes) return unexpected(std::move(nodes).error());
                                   block.nodes = std::move(*nodes);
                                   io::detail::drop_repeated_nodes(block.nodes);
                               }
                               return {};
                           });
    if (!ok) return unexpected(ok.error());
    if (!named) return unexpected(node_error(n, "a block entry needs 'block: <name>'"));
    return block;
}

inline expected<slurm_switch, error> read_switch(const node& n, expansion_budget& budget) {
    slurm_switch sw;
    sw.line = n.at.line;
    bool named = false;
    auto ok = for_each_key(n, "a switch entry", {"switch", "nodes", "children"},
                           [&](const std::string& key, const node& value) -> expected<void, error> {
                               if (key == "switch") {
                                   auto name = as_string(value, "switch");
                                   if (!name) return unexpected(std::move(name).error());
                                   sw.name = std::move(*name);
                                   named = true;
                                   return {};
                               }
                               auto list = as_hostlist(value, key, budget);
                               if (!list) return unexpected(std::move(list).error());
                               (key == "nodes" ? sw.nodes : sw.children) = std::move(*list);
                               return {};
                           });
    if (!ok) return unexpected(ok.error());
    if (!named) return unexpected(node_error(n, "a switch entry needs 'switch: <name>'"));
    return sw;
}

inline expected<void, error> read_block_topology(const node& n, slurm_topology& topo, expansion_budget& budget) {
    topo.type = slurm_topology::kind::block;
    return for_each_key(n, "block", {"block_sizes", "blocks"},
                        [&](const std::string& key, const node& value) -> expected<void, error> {
                            auto items = as_list(value, key);
                            if (!items) return unexpected(std::move(items).error());
                            for (const node& item : *items) {
                                if (key == "block_sizes") {
                                    auto size = as_size(item, "a block size");
                                    if (!size) return unexpected(std::move(size).error());
                                    topo.block_sizes.push_back(*size);
                                } else {
                                    auto block = read_block(item, budget);
                                    if (!block) return unexpected(std::move(block).error());
                                    topo.blocks.push_back(std::move(*block));
                                }
                            }
                            if (key == "block_sizes")
                                if (auto ok = validate_block_sizes(topo.block_sizes); !ok)
                                    return unexpected(node_error(value, ok.error().message));
                            return {};
                        });
}

inline expected<void, error> read_tree_topology(const node& n, slurm_topology& topo, expansion_budget& budget) {
    topo.type = slurm_topology::kind::tree;
    return for_each_key(n, "tree", {"switches"}, [&](const std::string&, const node& value) -> expected<void, error> {
        auto items = as_list(value, "switches");
        if (!items) return unexpected(std::move(items).error());
        for (const node& item : *items) {
            auto sw = read_switch(item, budget);
            if (!sw) return unexpected(std::move(sw).error());
            topo.switches.push_back(std::move(*sw));
        }
        return {};
    });
}

inline expected<slurm_topology, error> read_topology(const node& n, bool& is_default, expansion_budget& budget) {
    if (auto ok = expect(n, node::kind::mapping, "a topology"); !ok) return unexpected(ok.error());
    if (n.keys.empty() || n.keys.front() != "topology")
        return unexpected(make_error("'topology: <name>' must be the first attribute", n.at.line, n.at.column));
    slurm_topology topo;
    int kinds = 0;
    auto ok = for_each_key(n, "a topology", {"topology", "cluster_default", "block", "tree", "flat"},
                           [&](const std::string& key, const node& value) -> expected<void, error> {
                               if (key == "topology") {
                                   auto name = as_string(value, "topology");
                                   if (!name) return unexpected(std::move(name).error());
                                   topo.name = std::move(*name);
                                   return {};
                               }
                               if (key == "cluster_default" || key == "flat") {
                                   auto flag = as_bool(value, key);
                                   if (!flag) return unexpected(std::move(flag).error());
                                   if (key == "cluster_default") is_default = *flag;
                                   if (key == "flat" && *flag) {
                                       topo.type = slurm_topology::kind::flat;
                                       ++kinds;
                                   }
                                   return {};
                               }
                               ++kinds;
                               return key == "block" ? read_block_topology(value, topo, budget)
                                                    : read_tree_topology(value, topo, budget);
                           });
    if (!ok) return unexpected(ok.error());
    if (auto named = check_entity_name("topology", topo.name, 0); !named)
        return unexpected(node_error(n.items.front(), named.error().message));
    if (kinds != 1)
        return unexpected(make_error("topology " + detail::quoted(topo.name) +
                                         " must define exactly one of block, tree or flat: true",
                                     n.at.line, n.at.column));
    if (auto valid = validate_topology(topo); !valid) {
        error e = valid.error();
        e.message = "topology " + detail::quoted(topo.name) + ": " + e.message;
        if (e.line == 0) e.line = n.at.line;
        return unexpected(std::move(e));
    }
    return topo;
}

// ---- writing ----

// Plain when YAML reads it back unchanged, double-quoted otherwise.
inline std::string scalar_text(std::string_view s) {
    bool plain = !s.empty() && std::string_view("-?:,[]{}#&*!|>'\"%@` \t").find(s.front()) == std::string_view::npos &&
                 !is_blank(s.back()) && s.find(": ") == std::string_view::npos &&
                 s.find(" #") == std::string_view::npos && s.back() != ':';
    for (char c : s) plain = plain && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
    std::string lowered(s);
    for (char& c : lowered)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    for (const char* word : {"true", "false", "yes", "no", "on", "off", "null", "~"}) plain = plain && lowered != word;
    if (plain) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') { out += "\\n"; continue; }
        if (c == '\t') { out += "\\t"; continue; }
        out += c;
    }
    return out + '"';
}

inline void write_entry(std::string& out, std::size_t indent, std::string_view key, std::string_view value) {
    out.append(indent, ' ');
    out += key;
    out += ':';
    if (!value.empty()) {
        out += ' ';
        out += value;
    }
    out += '\n';
}

inline void write_topology(std::string& out, const slurm_topology& topo, bool is_default) {
    out += "- ";
    write_entry(out, 0, "topology", scalar_text(topo.name));
    write_entry(out, 2, "cluster_default", is_default ? "true" : "false");
    switch (topo.type) {
        case slurm_topology::kind::flat:
            write_entry(out, 2, "flat", "true");
            return;
        case slurm_topology::kind::block: {
            write_entry(out, 2, "block", "");
            if (!topo.block_sizes.empty()) {
                std::string sizes;
                for (std::uint32_t size : topo.block_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
                write_entry(out, 4, "block_sizes", "[" + sizes + "]");
            }
            write_entry(out, 4, "blocks", topo.blocks.empty() ? "[]" : "");
            for (const slurm_block& block : topo.blocks) {
                out.append(6, ' ');
                out += "- ";
                write_entry(out, 0, "block", scalar_text(block.name));
                if (!block.nodes.empty()) write_entry(out, 8, "nodes", scalar_text(compress_hostlist(block.nodes)));
            }
            return;
        }
        case slurm_topology::kind::tree:
            write_entry(out, 2, "tree", "");
            write_entry(out, 4, "switches", topo.switches.empty() ? "[]" : "");
            for (const slurm_switch& sw : topo.switches) {
                out.append(6, ' ');
                out += "- ";
                write_entry(out, 0, "switch", scalar_text(sw.name));
                if (!sw.nodes.empty()) write_entry(out, 8, "nodes", scalar_text(compress_hostlist(sw.nodes)));
                if (!sw.children.empty()) write_entry(out, 8, "children", scalar_text(compress_hostlist(sw.children)));
            }
            return;
    }
}

}  // namespace detail::yaml

// Reads topology.yaml: a list of topologies, each starting with
// "topology: <name>", with "cluster_default", and exactly one of "block",
// "tree" or "flat: true". The default is the first topology with
// cluster_default: true (index 0 if none). The result passed
// validate_topology_set. Errors carry line and column. All hostlists of the
// file together expand to no more than `limits` allow.
inline expected<slurm_topology_set, error> parse_topology_yaml(std::string_view text, hostlist_limits limits = {}) {
    detail::expansion_budget budget{limits};
    auto root = detail::yaml::parse(topoblock::detail::without_utf8_bom(text));
    if (!root) return unexpected(std::move(root).error());
    if (root->type == detail::yaml::node::kind::null) return unexpected(make_error("topology.yaml defines no topology", 1, 1));
    if (auto ok = detail::yaml::expect(*root, detail::yaml::node::kind::sequence, "topology.yaml"); !ok)
        return unexpected(ok.error());
    slurm_topology_set set;
    bool have_default = false;
    std::set<std::string, std::less<>> names;
    for (const detail::yaml::node& item : root->items) {
        bool is_default = false;
        auto topo = detail::yaml::read_topology(item, is_default, budget);
        if (!topo) return unexpected(std::move(topo).error());
        if (!names.insert(topo->name).second)
            return unexpected(make_error("topology " + detail::quoted(topo->name) + " is defined twice", item.at.line,
                                         item.at.column));
        if (is_default && !have_default) {
            set.default_index = set.topologies.size();
            have_default = true;
        }
        set.topologies.push_back(std::move(*topo));
    }
    if (auto ok = validate_topology_set(set); !ok) return unexpected(ok.error());
    return set;
}

// Writes topology.yaml with compressed hostlists; cluster_default is true for
// the default topology only. parse_topology_yaml(write_topology_yaml(s)) == s
// when s is valid and its node lists are sorted as sort_hostnames sorts them.
inline std::string write_topology_yaml(const slurm_topology_set& set) {
    std::string out;
    for (std::size_t i = 0; i < set.topologies.size(); ++i)
        detail::yaml::write_topology(out, set.topologies[i], i == set.default_index);
    return out;
}

}  // namespace topoblock::io
