#include <topoblock/io/hostlist.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace test_io_hostlist {

using topoblock::io::compress_hostlist;
using topoblock::io::expand_hostlist;
using topoblock::io::sort_hostnames;
using names = std::vector<std::string>;

namespace {

names expand_ok(std::string_view text) {
    auto result = expand_hostlist(text);
    REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
    return *result;
}

// Column and a fragment of the message of a rejected expression.
void expect_error(std::string_view text, std::uint32_t column, std::string_view fragment) {
    auto result = expand_hostlist(text);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().line == 1);
    CHECK(result.error().column == column);
    CHECK_MESSAGE(result.error().message.find(fragment) != std::string::npos, result.error().message);
}

// Platform-independent draws: std::uniform_int_distribution differs between
// standard libraries.
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t bound) { return rng() % bound; }

}  // namespace

TEST_CASE("expand: ranges, lists and padding") {
    CHECK(expand_ok("gb[001-003,020]") == names{"gb001", "gb002", "gb003", "gb020"});
    CHECK(expand_ok("a[1-3],b7,c") == names{"a1", "a2", "a3", "b7", "c"});
    CHECK(expand_ok("n[08-11]") == names{"n08", "n09", "n10", "n11"});
    CHECK(expand_ok("n[9-11]") == names{"n9", "n10", "n11"});
    CHECK(expand_ok("n[098-101]") == names{"n098", "n099", "n100", "n101"});
    CHECK(expand_ok("node1") == names{"node1"});
    CHECK(expand_ok("") == names{});
    CHECK(expand_ok("  ") == names{});
    CHECK(expand_ok("[1-2]") == names{"1", "2"});
    CHECK(expand_ok("n[3,1]") == names{"n3", "n1"});
}

TEST_CASE("expand: several bracket groups follow Slurm's nesting") {
    CHECK(expand_ok("r[1-2]n[1-2]") == names{"r1n1", "r1n2", "r2n1", "r2n2"});
    // Slurm recurses from the rightmost bracket of the prefix: b outermost.
    CHECK(expand_ok("a[1-2]b[1-2]c[1-2]") ==
          names{"a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2", "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"});
}

TEST_CASE("expand: blanks separate items like commas") {
    CHECK(expand_ok(" a1, b[1-2] c ") == names{"a1", "b1", "b2", "c"});
}

TEST_CASE("expand: errors name the column") {
    expect_error("n[1-3", 2, "never closed");
    expect_error("n[1-[3]]", 2, "never closed");
    expect_error("n1-3]", 5, "without a matching");
    expect_error("n[5-3]", 3, "reversed range");
    expect_error("n[a-3]", 3, "not numeric");
    expect_error("n[1-x]", 5, "not numeric");
    expect_error("n[1-]", 5, "lacks a number");
    expect_error("n[]", 2, "empty brackets");
    expect_error("n[1,,2]", 5, "empty range");
    expect_error("a,,b", 3, "empty item");
    expect_error(",a", 1, "empty item");
    expect_error("a,", 2, "empty item");
    expect_error("n[1-2]x", 7, "text after the last");
    expect_error("n[1-1234567890123456789]", 5, "too large");
    expect_error("a,n[0-999999999]", 3, "more than 1000000 names");
    expect_error("a[0-999]b[0-999]c[0-9]", 1, "more than");
}

TEST_CASE("compress: Slurm's canonical form") {
    names nodes;
    for (int i = 1; i <= 12; ++i) nodes.push_back((i < 10 ? "n0" : "n") + std::to_string(i));
    for (int i = 19; i <= 36; ++i) nodes.push_back("n" + std::to_string(i));
    CHECK(compress_hostlist(nodes) == "n[01-12,19-36]");
    CHECK(compress_hostlist(names{"n3", "n1", "n2", "n2"}) == "n[1-3]");
    CHECK(compress_hostlist(names{"n5"}) == "n5");
    CHECK(compress_hostlist(names{"b", "a"}) == "a,b");
    CHECK(compress_hostlist(names{"n1", "n3", "m2"}) == "m2,n[1,3]");
    CHECK(compress_hostlist(names{}) == "");
    // A name without a number sorts before the numbered names of its prefix.
    CHECK(compress_hostlist(names{"n1", "n"}) == "n,n1");
    // Prefixes compare in natural order, as Slurm's strnatcmp.
    CHECK(compress_hostlist(names{"rack10n1", "rack2n1"}) == "rack2n1,rack10n1");
}

TEST_CASE("compress: widths merge only when the padding survives") {
    CHECK(compress_hostlist(names{"n9", "n10"}) == "n[9-10]");
    CHECK(compress_hostlist(names{"n99", "n100"}) == "n[99-100]");
    CHECK(compress_hostlist(names{"n09", "n10"}) == "n[09-10]");
    // "n010" and "n10" are different hosts; they cannot share a range.
    CHECK(compress_hostlist(names{"n10", "n010"}) == "n[10,010]");
    CHECK(compress_hostlist(names{"n9", "n010"}) == "n[9,010]");
    CHECK(compress_hostlist(names{"n8", "n09", "n10"}) == "n[8,09-10]");
}

TEST_CASE("round trip: compress(expand(x)) == x for canonical x") {
    for (const char* text : {"n[01-12,19-36]", "gb[001-018,020]", "a[1-3],b7,c", "n[9-10]",
                             "n[10,010]", "node[1-8]", "n[01-72]", "rack2n1,rack10n1", "x", "n,n1"}) {
        CAPTURE(text);
        CHECK(compress_hostlist(expand_ok(text)) == text);
    }
}

TEST_CASE("round trip: random sets compress and expand to the sorted unique set") {
    std::mt19937_64 rng(20250530);
    const char* prefixes[] = {"n", "gb", "rack1n", "rack10n", "r2s", "x", ""};
    for (int trial = 0; trial < 300; ++trial) {
        names input;
        const std::uint64_t count = 1 + draw(rng, 60);
        for (std::uint64_t i = 0; i < count; ++i) {
            std::string name = prefixes[draw(rng, 7)];
            const std::uint64_t style = draw(rng, 4);
            if (style == 0 && !name.empty()) {
                input.push_back(name);
                continue;
            }
            const std::uint64_t number = draw(rng, style == 1 ? 1200 : 40);
            std::string digits = std::to_string(number);
            const std::uint64_t pad = style == 2 ? draw(rng, 3) : 0;
            name += std::string(pad, '0') + digits;
            input.push_back(name);
        }
        const std::string compressed = compress_hostlist(input);
        CAPTURE(compressed);
        const names expanded = expand_ok(compressed);
        CHECK(expanded == sort_hostnames(input));
        CHECK(std::set<std::string>(expanded.begin(), expanded.end()) ==
              std::set<std::string>(input.begin(), input.end()));
        CHECK(compress_hostlist(expanded) == compressed);
    }
}

TEST_CASE("fuzz: random mutations of expressions never crash") {
    std::mt19937_64 rng(7);
    const std::string seeds[] = {"gb[001-018,020]", "a[1-3],b7,c", "r[1-2]n[1-2]", "n[08-11]"};
    const std::string alphabet = "[]-,0123456789 an\t";
    for (int trial = 0; trial < 3000; ++trial) {
        std::string text = seeds[draw(rng, 4)];
        const std::uint64_t edits = 1 + draw(rng, 4);
        for (std::uint64_t e = 0; e < edits; ++e) {
            const std::size_t at = text.empty() ? 0 : draw(rng, text.size());
            switch (draw(rng, 3)) {
                case 0: if (!text.empty()) text.erase(at, 1); break;
                case 1: text.insert(at, 1, alphabet[draw(rng, alphabet.size())]); break;
                default: if (!text.empty()) text[at] = alphabet[draw(rng, alphabet.size())]; break;
            }
        }
        auto result = expand_hostlist(text);
        if (result) {
            CHECK(result->size() <= topoblock::io::max_hostlist_names);
        } else {
            CHECK(result.error().column >= 1);
            CHECK(result.error().column <= text.size() + 1);
        }
    }
}

TEST_CASE("count: range sizes that add up past 2^64 do not wrap (review: n[0-999999999999999999,...])") {
    // 18 ranges of 10^18 numbers and one of 446744073709551616 add up to
    // exactly 2^64; one more number made the unchecked sum 1, which passed the
    // cap and started expanding 10^18 names.
    std::string text = "n[";
    for (int i = 0; i < 18; ++i) text += "0-999999999999999999,";
    text += "0-446744073709551615,7]";
    expect_error(text, 1, "more than 1000000 names");
    // The same group times others: the product saturates too.
    expect_error("a[1-2]" + text.substr(1), 1, "more than 1000000 names");
    expect_error("a[0-4294967295]b[0-4294967296]c[1-2]", 1, "more than 1000000 names");
    // After an item that fits: the error points at the item that does not.
    expect_error("x,y," + text, 5, "more than 1000000 names");
}

TEST_CASE("count: many items are refused at the cap, before names are made") {
    // The review's 10 MB hostlist of one name repeated.
    std::string text;
    text.reserve(10'000'002);
    while (text.size() < 10'000'000) text += "a,";
    text += "a";
    // Item max_hostlist_names + 1 starts at byte 2 * max_hostlist_names.
    expect_error(text, static_cast<std::uint32_t>(2 * topoblock::io::max_hostlist_names + 1),
                 "more than 1000000 names");
    // Exactly the cap is allowed, and no more room than the names is taken.
    const std::string at_cap = text.substr(0, 2 * topoblock::io::max_hostlist_names - 1);
    const names expanded = expand_ok(at_cap);
    CHECK(expanded.size() == topoblock::io::max_hostlist_names);
    CHECK(expanded.capacity() == expanded.size());
}

TEST_CASE("count: a bracket group of more ranges than the cap has names is refused while read") {
    std::string text = "n[";
    for (std::size_t i = 0; i < topoblock::io::max_hostlist_names + 5; ++i) text += "1,";
    text += "1]";
    // The range after the first max_hostlist_names.
    expect_error(text, static_cast<std::uint32_t>(3 + 2 * topoblock::io::max_hostlist_names),
                 "more than 1000000 names");
}

TEST_CASE("a name has at most max_hostlist_groups bracket groups") {
    std::string text = "n";
    for (std::size_t g = 0; g < topoblock::io::max_hostlist_groups; ++g) text += "[1]";
    CHECK(expand_ok(text) == names{"n" + std::string(topoblock::io::max_hostlist_groups, '1')});
    const std::uint32_t next = static_cast<std::uint32_t>(text.size() + 1);
    text += "[1]";
    expect_error(text, next, "more than 64 bracket groups");
    std::string many(3'000'000, '[');
    for (std::size_t i = 0; i < many.size(); i += 3) many.replace(i, 3, "[1]");
    expect_error(many, static_cast<std::uint32_t>(3 * topoblock::io::max_hostlist_groups + 1), "bracket groups");
}

TEST_CASE("errors quote at most a few dozen bytes of the input, escaped") {
    const std::string huge = "n[" + std::string(10'000'000, 'a') + "]";
    auto result = expand_hostlist(huge);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().message.size() < 100);
    CHECK_MESSAGE(result.error().message.find("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'") != std::string::npos,
                  result.error().message);
    expect_error("n[1-\x1b[2J]", 2, "never closed");
    expect_error("n[1-\x1b]", 5, "range '1-\\x1b' is not numeric");
    expect_error(std::string("n[\0-2]", 6), 3, "range '\\x00-2' is not numeric");
    expect_error("n[1-" + std::string(40, '9') + "]", 5, "number '" + std::string(32, '9') + "...' is too large");
}

TEST_CASE("limits: the names' bytes are counted before any name is made") {
    // 231 bytes of long literals and small groups made 765,625 names of about
    // 200 bytes each, 150 MB, within the names cap (a fuzzer's find).
    std::string text = std::string(150, 'x');
    for (int g = 0; g < 8; ++g) text += "[1-5]";
    auto result = expand_hostlist(text);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().column == 1);
    CHECK_MESSAGE(result.error().message == "hostlist expands to more than 33554432 bytes of names",
                  result.error().message);
    // The widest number of a group counts, padded or not: "[8-10]" prints 2 digits.
    const topoblock::io::hostlist_limits ten_bytes{100, 10};
    CHECK(expand_hostlist("abc[9-10]", ten_bytes).has_value());  // 2 names of at most 5 bytes
    auto wide = expand_hostlist("abcd[9-10]", ten_bytes);           // 2 names of at most 6 bytes
    REQUIRE_FALSE(wide.has_value());
    CHECK(wide.error().message == "hostlist expands to more than 10 bytes of names");
    CHECK(expand_hostlist("a[01-3],bb", ten_bytes).error().column == 9);      // 3 x 3, then 2 more
}

TEST_CASE("limits: a caller's tighter limits are kept, exactly at the limit allowed") {
    const topoblock::io::hostlist_limits five{5, 1000};
    auto at = expand_hostlist("n[1-3],m,k", five);
    REQUIRE(at.has_value());
    CHECK(at->size() == 5);
    auto over = expand_hostlist("n[1-3],m,k,j", five);
    REQUIRE_FALSE(over.has_value());
    CHECK(over.error().column == 12);
    CHECK(over.error().message == "hostlist expands to more than 5 names");
}

}  // namespace test_io_hostlist
