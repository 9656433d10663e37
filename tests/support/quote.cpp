#include <topoblock/support/quote.hpp>

#include <doctest/doctest.h>

#include <string>

namespace test_support_quote {

// Qualified: std::quoted is found by argument-dependent lookup on a string.
namespace text = topoblock::detail;

TEST_CASE("quoted: short printable text is quoted as it is") {
    CHECK(text::quoted("n[1-2]") == "'n[1-2]'");
    CHECK(text::quoted("") == "''");
}

TEST_CASE("quoted: control bytes and bytes outside ASCII are escaped") {
    CHECK(text::quoted(std::string("a\0b", 3)) == "'a\\x00b'");
    CHECK(text::quoted("\x1b[2J") == "'\\x1b[2J'");
    CHECK(text::quoted("\t\n\r\x7f") == "'\\x09\\x0a\\x0d\\x7f'");
    // A C1 control (0x9b is CSI on some terminals) and UTF-8 alike.
    CHECK(text::quoted("\x9b" "1m\xc3\xa9") == "'\\x9b1m\\xc3\\xa9'");
}

TEST_CASE("quoted: a huge text shows its first bytes only") {
    const std::string huge(10'000'000, '\x01');
    const std::string q = text::quoted(huge);
    // Each shown byte takes at most four characters; two quotes and "...".
    CHECK(q.size() == 2 + 4 * text::quoted_bytes + 3);
    CHECK(q.ends_with("\\x01...'"));
    CHECK(text::quoted(std::string(text::quoted_bytes, 'x')) == "'" + std::string(text::quoted_bytes, 'x') + "'");
    CHECK(text::quoted(std::string(text::quoted_bytes + 1, 'x')) == "'" + std::string(text::quoted_bytes, 'x') + "...'");
}

}  // namespace test_support_quote
