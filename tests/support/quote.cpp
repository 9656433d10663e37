#include <topoblock/support/quote.hpp>

#include <doctest/doctest.h>

#include <string>

using topoblock::detail::quoted;
using topoblock::detail::quoted_bytes;

TEST_CASE("quoted: short printable text is quoted as it is") {
    CHECK(quoted("n[1-2]") == "'n[1-2]'");
    CHECK(quoted("") == "''");
}

TEST_CASE("quoted: control bytes and bytes outside ASCII are escaped") {
    CHECK(quoted(std::string("a\0b", 3)) == "'a\\x00b'");
    CHECK(quoted("\x1b[2J") == "'\\x1b[2J'");
    CHECK(quoted("\t\n\r\x7f") == "'\\x09\\x0a\\x0d\\x7f'");
    // A C1 control (0x9b is CSI on some terminals) and UTF-8 alike.
    CHECK(quoted("\x9b" "1m\xc3\xa9") == "'\\x9b1m\\xc3\\xa9'");
}

TEST_CASE("quoted: a huge text shows its first bytes only") {
    const std::string huge(10'000'000, '\x01');
    const std::string q = quoted(huge);
    // Each shown byte takes at most four characters; two quotes and "...".
    CHECK(q.size() == 2 + 4 * quoted_bytes + 3);
    CHECK(q.ends_with("\\x01...'"));
    CHECK(quoted(std::string(quoted_bytes, 'x')) == "'" + std::string(quoted_bytes, 'x') + "'");
    CHECK(quoted(std::string(quoted_bytes + 1, 'x')) == "'" + std::string(quoted_bytes, 'x') + "...'");
}
