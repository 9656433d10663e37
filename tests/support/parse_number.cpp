// Numbers from text: the whole text one number inside its range, and a
// refusal that says whether it was no number, too small or too large.

#include <topoblock/support/parse_number.hpp>

#include <doctest/doctest.h>

#include <string_view>

namespace test_support_parse_number {

using namespace topoblock;

TEST_CASE("parse_whole: whole decimal numbers in range, and too large said as such") {
    CHECK(*parse_whole("0") == 0);
    CHECK(*parse_whole("18446744073709551615") == 18446744073709551615ULL);
    CHECK(*parse_whole("64", 1, 64) == 64);
    CHECK(parse_whole("65", 1, 64).error() == number_problem::too_large);
    CHECK(parse_whole("0", 1, 64).error() == number_problem::too_small);
    CHECK(parse_whole("18446744073709551616").error() == number_problem::too_large);
    CHECK(parse_whole("99999999999999999999999999").error() == number_problem::too_large);
    for (const std::string_view bad : {"", "-1", "+1", " 5", "5 ", "5x", "0x10", "nan", "inf", "1.5", "1e3", "9999999999999999999999x"}) {
        CAPTURE(bad);
        CHECK(parse_whole(bad, 0, 100).error() == number_problem::not_a_number);
    }
}

TEST_CASE("parse_real: finite numbers in range") {
    CHECK(*parse_real("0.85", 0.0, 1.0) == 0.85);
    CHECK(*parse_real("1e3", 0.0, 1e3) == 1000.0);
    CHECK(*parse_real("1e-400", 0.0, 1.0) == 0.0);  // below a double's precision: zero
    CHECK(parse_real("1001", 0.0, 1000.0).error() == number_problem::too_large);
    CHECK(parse_real("1e400", 0.0, 1000.0).error() == number_problem::too_large);
    CHECK(parse_real("-1", 0.0, 1000.0).error() == number_problem::too_small);
    CHECK(parse_real("-1e400", 0.0, 1000.0).error() == number_problem::too_small);
    for (const std::string_view bad : {"", "+1", "nan", "inf", "-inf", "5x", " 5", "5 ", "0x10", "--1", "e5"}) {
        CAPTURE(bad);
        CHECK(parse_real(bad, -10.0, 10.0).error() == number_problem::not_a_number);
    }
}

TEST_CASE("parse_duration: seconds, minutes, hours, days") {
    CHECK(*parse_duration("90") == 90.0);
    CHECK(*parse_duration("90s") == 90.0);
    CHECK(*parse_duration("30m") == 1800.0);
    CHECK(*parse_duration("12h") == 43200.0);
    CHECK(*parse_duration("2d") == 172800.0);
    CHECK(*parse_duration("0") == 0.0);
    CHECK(parse_duration("1e308d").error() == number_problem::too_large);  // finite, but not once in seconds
    CHECK(parse_duration("2h", 3600.0).error() == number_problem::too_large);
    CHECK(parse_duration("-1").error() == number_problem::too_small);
    for (const std::string_view bad : {"", "d", "nan", "infh", "5w", "5 m"}) {
        CAPTURE(bad);
        CHECK(parse_duration(bad).error() == number_problem::not_a_number);
    }
}

}  // namespace test_support_parse_number
