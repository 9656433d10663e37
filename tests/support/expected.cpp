#include <topoblock/support/expected.hpp>
#include <topoblock/support/error.hpp>

#include <doctest/doctest.h>

#include <string>

namespace test_support_expected {

TEST_CASE("expected holds a value or an error") {
    topoblock::expected<int, std::string> ok = 7;
    CHECK(ok.has_value());
    CHECK(*ok == 7);
    topoblock::expected<int, std::string> bad = topoblock::unexpected(std::string("nope"));
    CHECK_FALSE(bad);
    CHECK(bad.error() == "nope");
    topoblock::expected<void, int> fine;
    CHECK(fine);
    topoblock::expected<void, int> failed = topoblock::unexpected(3);
    CHECK(failed.error() == 3);
}

TEST_CASE("error names its position") {
    CHECK(topoblock::make_error("bad token", 3, 7).to_string() == "line 3, column 7: bad token");
    CHECK(topoblock::make_error("bad", 2).to_string() == "line 2: bad");
    CHECK(topoblock::make_error("no nodes").to_string() == "no nodes");
    // The file comes first, then the position in it.
    auto in_file = topoblock::make_error("bad token", 3, 7);
    in_file.file = "t.csv";
    CHECK(in_file.to_string() == "t.csv, line 3, column 7: bad token");
    in_file.line = in_file.column = 0;
    CHECK(in_file.to_string() == "t.csv: bad token");
}

}  // namespace test_support_expected
