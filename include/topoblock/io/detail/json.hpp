#pragma once

// A small JSON reader (RFC 8259) for the documents topoblock reads, such as
// `kubectl get nodes -o json`. It builds a flat tree: every value is one
// fixed-size entry of a vector, its children linked by index and its text
// kept in one shared buffer, so nothing recurses and memory stays a small
// multiple of the input (at worst about 20 bytes of tree per input byte,
// for "[0,0,0,...]"). Nesting deeper than
// max_depth is refused with an error, as are sizes that do not fit the
// positions errors report. Errors give the line and column (1-based, in
// bytes) and quote the offending text with detail::quoted.

#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/utf8_bom.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::io::detail::json {

// Deeper nesting is refused: no document topoblock reads needs it, and a
// bound keeps a hostile input from growing the parser's stack.
inline constexpr std::size_t max_depth = 64;
// Inputs larger than this are refused: line and column are 32-bit.
inline constexpr std::size_t max_input = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

enum class kind : std::uint8_t { null, boolean, number, string, array, object };

// Where a text of a value sits in document::texts.
struct text_span {
    std::uint32_t begin = 0;
    std::uint32_t size = 0;
};

struct value {
    kind type = kind::null;
    std::uint32_t line = 0;  // where the value starts
    std::uint32_t column = 0;
    std::uint32_t first_child = none;
    std::uint32_t next_sibling = none;
    text_span text;  // a string's decoded bytes, a number as written, "true" or "false"
    text_span key;   // the member name when the parent is an object
};

// A parsed document: values[0] is the root.
struct document {
    std::vector<value> values;
    std::string texts;  // the decoded strings, numbers and keys of every value

    const value& root() const { return values.front(); }
    std::string_view text(const value& v) const { return std::string_view(texts).substr(v.text.begin, v.text.size); }
    std::string_view key(const value& v) const { return std::string_view(texts).substr(v.key.begin, v.key.size); }

    // The member `key` of an object (the last one when a key repeats, as
    // most JSON readers do), or nullptr when absent or `v` is no object.
    const value* member(const value& v, std::string_view key) const {
        if (v.type != kind::object) return nullptr;
        const value* found = nullptr;
        for (std::uint32_t c = v.first_child; c != none; c = values[c].next_sibling)
            if (this->key(values[c]) == key) found = &values[c];
        return found;
    }

    // Calls f(child) for each element of an array or member of an object.
    template <class F>
    void for_each_child(const value& v, F&& f) const {
        for (std::uint32_t c = v.first_child; c != none; c = values[c].next_sibling) f(values[c]);
    }
};

// "string", "number", ...: for messages that say what was found.
inline std::string_view kind_name(kind k) noexcept {
    switch (k) {
        case kind::null: return "null";
        case kind::boolean: return "a boolean";
        case kind::number: return "a number";
        case kind::string: return "a string";
        case kind::array: return "an array";
        case kind::object: return "an object";
    }
    return "a value";
}

// An error at the position of value `v`.
inline error error_at(const value& v, std::string message) { return make_error(std::move(message), v.line, v.column); }

namespace parse_detail {

class parser {
public:
    explicit parser(std::string_view text) : text_(text) {}

    expected<document, error> run() {
        if (text_.size() > max_input)
            return unexpected(make_error("the document is larger than " + std::to_string(max_input) + " bytes"));
        // Open containers: the index of each and of its last child so far.
        struct frame {
            std::uint32_t container;
            std::uint32_t last_child;
        };
        std::vector<frame> open;
        bool done = false;
        while (!done) {
            // Expecting a value: the root, an array element, or a member
            // (its key first).
            skip_blanks();
            text_span key;
            const bool in_object = !open.empty() && doc_.values[open.back().container].type == kind::object;
            if (in_object) {
                if (peek() != '"') return unexpected(here("expected a member name in double quotes, found " + found()));
                auto k = read_string();
                if (!k) return unexpected(std::move(k).error());
                key = *k;
                skip_blanks();
                if (peek() != ':') return unexpected(here("expected ':' after the member name, found " + found()));
                ++pos_;
                skip_blanks();
            }
            auto index = read_value();
            if (!index) return unexpected(std::move(index).error());
            doc_.values[*index].key = key;
            if (!open.empty()) {
                frame& parent = open.back();
                if (parent.last_child == none) doc_.values[parent.container].first_child = *index;
                else doc_.values[parent.last_child].next_sibling = *index;
                parent.last_child = *index;
            }
            const kind type = doc_.values[*index].type;
            if (type == kind::array || type == kind::object) {
                if (open.size() == max_depth)
                    return unexpected(error_at(doc_.values[*index], "nested more than " + std::to_string(max_depth) +
                                                                        " arrays and objects deep"));
                open.push_back({*index, none});
                skip_blanks();
                const char close = type == kind::array ? ']' : '}';
                if (peek() != close) continue;  // the first child follows
                ++pos_;
                open.pop_back();
            }
            // After a value: ',' for the next sibling, or the closing
            // brackets of the containers it ends.
            while (true) {
                skip_blanks();
                if (open.empty()) {
                    if (pos_ != text_.size()) return unexpected(here("unexpected " + found() + " after the document"));
                    done = true;
                    break;
                }
                const bool object = doc_.values[open.back().container].type == kind::object;
                const char close = object ? '}' : ']';
                if (peek() == ',') {
                    ++pos_;
                    break;
                }
                if (peek() != close)
                    return unexpected(here(std::string("expected ',' or '") + close + "', found " + found()));
                ++pos_;
                open.pop_back();
            }
        }
        return std::move(doc_);
    }

private:
    bool at_end() const noexcept { return pos_ >= text_.size(); }
    char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }

    error here(std::string message) const { return make_error(std::move(message), line_, column()); }
    std::uint32_t column() const noexcept { return static_cast<std::uint32_t>(pos_ - line_start_ + 1); }

    // What stands at the current position, for messages.
    std::string found() const {
        if (at_end()) return "the end of the document";
        std::size_t end = pos_ + 1;
        while (end < text_.size() && end - pos_ < 16 && text_[end] != ' ' && text_[end] != '\n' && text_[end] != ',')
            ++end;
        return topoblock::detail::quoted(text_.substr(pos_, end - pos_));
    }

    void skip_blanks() noexcept {
        while (!at_end()) {
            const char c = text_[pos_];
            if (c == '\n') {
                ++pos_;
                ++line_;
                line_start_ = pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else {
                break;
            }
        }
    }

    expected<std::uint32_t, error> read_value() {
        value v;
        v.line = line_;
        v.column = column();
        const char c = peek();
        if (c == '{' || c == '[') {
            v.type = c == '{' ? kind::object : kind::array;
            ++pos_;
        } else if (c == '"') {
            auto s = read_string();
            if (!s) return unexpected(std::move(s).error());
            v.type = kind::string;
            v.text = *s;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            auto n = read_number();
            if (!n) return unexpected(std::move(n).error());
            v.type = kind::number;
            v.text = *n;
        } else if (literal("true") || literal("false")) {
            v.type = kind::boolean;
            v.text = keep(c == 't' ? "true" : "false");
        } else if (literal("null")) {
            v.type = kind::null;
        } else {
            return unexpected(here("expected a value, found " + found()));
        }
        // Every value holds at least one byte of input, so the count fits.
        doc_.values.push_back(std::move(v));
        return static_cast<std::uint32_t>(doc_.values.size() - 1);
    }

    // Appends `s` to the document's texts. The texts never outgrow the
    // input, whose size fits 32 bits.
    text_span keep(std::string_view s) {
        const text_span span{static_cast<std::uint32_t>(doc_.texts.size()), static_cast<std::uint32_t>(s.size())};
        doc_.texts += s;
        return span;
    }

    bool literal(std::string_view word) noexcept {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    expected<text_span, error> read_number() {
        const std::size_t start = pos_;
        const auto digits = [&] {
            const std::size_t from = pos_;
            while (!at_end() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            return pos_ - from;
        };
        if (peek() == '-') ++pos_;
        const std::size_t int_start = pos_;
        const std::size_t whole = digits();
        bool ok = whole > 0 && !(whole > 1 && text_[int_start] == '0');
        if (ok && peek() == '.') {
            ++pos_;
            ok = digits() > 0;
        }
        if (ok && (peek() == 'e' || peek() == 'E')) {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            ok = digits() > 0;
        }
        if (!ok) {
            pos_ = start;
            return unexpected(here("malformed number " + found()));
        }
        return keep(text_.substr(start, pos_ - start));
    }

    static int hex_digit(char c) noexcept {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    // The four hex digits after "\u"; -1 when malformed.
    long read_hex4() noexcept {
        if (text_.size() - pos_ < 4) return -1;
        long code = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            const int d = hex_digit(text_[pos_ + i]);
            if (d < 0) return -1;
            code = code * 16 + d;
        }
        pos_ += 4;
        return code;
    }

    static void append_utf8(std::string& out, unsigned long code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }

    // A string at pos_ (on its opening quote), its escapes decoded, kept in
    // the document's texts.
    expected<text_span, error> read_string() {
        const std::uint32_t line = line_, col = column();
        ++pos_;
        std::string& out = doc_.texts;
        const auto begin = static_cast<std::uint32_t>(out.size());
        while (true) {
            if (at_end()) return unexpected(make_error("unterminated string", line, col));
            const char c = text_[pos_];
            if (c == '"') {
                ++pos_;
                return text_span{begin, static_cast<std::uint32_t>(out.size() - begin)};
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return unexpected(here(c == '\n' ? "a line break inside a string (write \\n)"
                                                 : "control byte " + topoblock::detail::quoted(text_.substr(pos_, 1)) +
                                                       " inside a string"));
            if (c != '\\') {
                out += c;
                ++pos_;
                continue;
            }
            const std::size_t escape = pos_;
            ++pos_;
            const char e = peek();
            ++pos_;
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    long code = read_hex4();
                    if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low half follows
                        long low = -1;
                        if (text_.substr(pos_, 2) == "\\u") {
                            pos_ += 2;
                            low = read_hex4();
                        }
                        code = low >= 0xDC00 && low <= 0xDFFF ? 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00) : -1;
                    } else if (code >= 0xDC00 && code <= 0xDFFF) {
                        code = -1;
                    }
                    if (code < 0) {
                        pos_ = escape;
                        return unexpected(here("malformed \\u escape " + found()));
                    }
                    append_utf8(out, static_cast<unsigned long>(code));
                    break;
                }
                default:
                    pos_ = escape;
                    return unexpected(here("unknown escape " + found()));
            }
        }
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::uint32_t line_ = 1;
    std::size_t line_start_ = 0;
    document doc_;
};

}  // namespace parse_detail

// Parses one JSON document (a UTF-8 byte order mark before it is skipped).
// Errors: malformed JSON, nesting deeper than max_depth, an input larger
// than max_input. O(n) time; the tree holds one entry per value.
inline expected<document, error> parse(std::string_view text) {
    return parse_detail::parser(topoblock::detail::without_utf8_bom(text)).run();
}

}  // namespace topoblock::io::detail::json
