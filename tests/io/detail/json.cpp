#include <topoblock/io/detail/json.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace test_io_detail_json {

using namespace topoblock::io::detail;

namespace {

json::document parse_ok(std::string_view text) {
    auto doc = json::parse(text);
    REQUIRE_MESSAGE(doc.has_value(), doc.error().to_string());
    return std::move(*doc);
}

void expect_error(std::string_view text, std::uint32_t line, std::uint32_t column, std::string_view fragment) {
    auto doc = json::parse(text);
    REQUIRE_FALSE(doc.has_value());
    CAPTURE(doc.error().to_string());
    CHECK(doc.error().line == line);
    CHECK(doc.error().column == column);
    CHECK(doc.error().message.find(fragment) != std::string::npos);
}

}  // namespace

TEST_CASE("json: objects, arrays and scalars, with their positions") {
    const auto doc = parse_ok("{\"a\": [1, -2.5e3, true, false, null],\n \"b\": {\"c\": \"x\\ty\"}, \"a\": \"last\"}");
    const json::value& root = doc.root();
    CHECK(root.type == json::kind::object);
    // A repeated key: the last one counts.
    const json::value* a = doc.member(root, "a");
    REQUIRE(a != nullptr);
    CHECK(doc.text(*a) == "last");
    std::vector<std::string> seen;
    doc.for_each_child(doc.values[root.first_child], [&](const json::value& v) {
        seen.push_back(std::string(json::kind_name(v.type)) + ":" + std::string(doc.text(v)));
    });
    CHECK(seen == std::vector<std::string>{"a number:1", "a number:-2.5e3", "a boolean:true", "a boolean:false", "null:"});
    const json::value* b = doc.member(root, "b");
    REQUIRE(b != nullptr);
    CHECK(b->line == 2);
    CHECK(b->column == 7);
    const json::value* c = doc.member(*b, "c");
    REQUIRE(c != nullptr);
    CHECK(doc.text(*c) == "x\ty");
    CHECK(doc.member(*b, "missing") == nullptr);
    CHECK(doc.member(*c, "c") == nullptr);  // not an object
    CHECK(parse_ok("  []  ").root().type == json::kind::array);
    CHECK(parse_ok("\xEF\xBB\xBF{}").root().type == json::kind::object);
}

TEST_CASE("json: escapes decode to UTF-8, surrogate pairs included") {
    const auto doc = parse_ok(R"(["\"\\\/\b\f\n\r", "\u00e9\u20ac", "\ud83d\ude00"])");
    std::vector<std::string> texts;
    doc.for_each_child(doc.root(), [&](const json::value& v) { texts.emplace_back(doc.text(v)); });
    CHECK(texts == std::vector<std::string>{"\"\\/\b\f\n\r", "\xC3\xA9\xE2\x82\xAC", "\xF0\x9F\x98\x80"});
}

TEST_CASE("json: malformed documents are refused with line and column") {
    expect_error("", 1, 1, "expected a value");
    expect_error("{\"a\" 1}", 1, 6, "expected ':'");
    expect_error("{\"a\": 1,}", 1, 9, "expected a member name");
    expect_error("[1, 2", 1, 6, "expected ',' or ']'");
    expect_error("[1 2]", 1, 4, "expected ',' or ']'");
    expect_error("{\"a\": 1]", 1, 8, "expected ',' or '}'");
    expect_error("{} {}", 1, 4, "after the document");
    expect_error("[01]", 1, 2, "malformed number");
    expect_error("[1.]", 1, 2, "malformed number");
    expect_error("[-]", 1, 2, "malformed number");
    expect_error("[1e+]", 1, 2, "malformed number");
    expect_error("[tru]", 1, 2, "expected a value");
    expect_error("\n  [\"abc", 2, 4, "unterminated string");
    expect_error("[\"a\nb\"]", 1, 4, "line break inside a string");
    expect_error("[\"a\x01\"]", 1, 4, "control byte '\\x01'");
    expect_error(R"(["\x"])", 1, 3, "unknown escape");
    expect_error(R"(["\u12g4"])", 1, 3, "malformed \\u escape");
    expect_error(R"(["\ud83d"])", 1, 3, "malformed \\u escape");      // a high surrogate alone
    expect_error(R"(["\ude00"])", 1, 3, "malformed \\u escape");      // a low surrogate alone
    expect_error(R"(["\ud83d\u0041"])", 1, 3, "malformed \\u escape");  // not followed by a low one
    // Offending text is quoted short, control bytes escaped.
    auto junk = json::parse("[\x1b" + std::string(1000, 'x') + "]");
    REQUIRE_FALSE(junk.has_value());
    CHECK(junk.error().message.find("'\\x1bxxxxxxxxxxxxxxx'") != std::string::npos);
    CHECK(junk.error().message.size() < 100);
}

TEST_CASE("json: nesting is capped at max_depth without recursion") {
    const std::string ok = std::string(json::max_depth, '[') + std::string(json::max_depth, ']');
    CHECK(json::parse(ok).has_value());
    const std::string deep = std::string(json::max_depth + 1, '[') + std::string(json::max_depth + 1, ']');
    expect_error(deep, 1, static_cast<std::uint32_t>(json::max_depth + 1), "nested more than 64");
    // A million open brackets: refused at the cap, not a stack overflow.
    expect_error(std::string(1'000'000, '{'), 1, 2, "expected a member name");
    expect_error(std::string(1'000'000, '['), 1, static_cast<std::uint32_t>(json::max_depth + 1), "nested more than");
}

}  // namespace test_io_detail_json
