#include <topoblock/sim/trace_csv.hpp>

#include "../scratch_file.hpp"
#include "../shared_traces.hpp"

#include <doctest/doctest.h>

#include <charconv>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>

namespace test_sim_trace_csv {

using namespace topoblock::sim;

namespace {

trace_read read_ok(std::string_view text) {
    auto read = read_trace_csv(text, "t");
    REQUIRE_MESSAGE(read.has_value(), (read ? std::string() : read.error().to_string()));
    return std::move(read).value();
}

// The single bad row of a one-row trace.
topoblock::error bad_row(std::string_view row) {
    const auto read = read_ok(std::string("submit_time_s,gpus,duration_s,nodes\n") + std::string(row) + "\n");
    CHECK(read.jobs.jobs.empty());
    REQUIRE(read.bad_rows.size() == 1);
    CHECK(read.bad_rows.front().line == 2);
    return read.bad_rows.front();
}

bool mentions(const topoblock::error& e, std::string_view words) {
    return e.message.find(words) != std::string::npos;
}

}  // namespace

TEST_CASE("reads the shared traces' form") {
    const auto read = read_ok(
        "submit_time_s,gpus,duration_s,nodes,status\n"
        "0,1,84,1,Pass\n"
        "94,8,87.5,2,Failed\n");
    CHECK(read.bad_rows.empty());
    CHECK(read.jobs.name == "t");
    REQUIRE(read.jobs.jobs.size() == 2);
    CHECK(read.jobs.jobs[0] == job{0, 0.0, 1, 1, 84.0});
    CHECK(read.jobs.jobs[1] == job{1, 94.0, 8, 2, 87.5});
}

TEST_CASE("columns in any order, nodes optional, quotes, CRLF and blank lines") {
    const auto read = read_ok(
        "\xEF\xBB\xBF" "user,\"duration_s\",gpus,submit_time_s\r\n"
        "\"smith, j\",60,\"4\",10\r\n"
        "\r\n"
        "\"multi\nline\",30, 2 ,5\r\n"
        "\"say \"\"hi\"\"\",1,1,7");
    CHECK(read.bad_rows.empty());
    REQUIRE(read.jobs.jobs.size() == 3);
    // Sorted by submit time; ids keep input order.
    CHECK(read.jobs.jobs[0] == job{1, 5.0, 2, 0, 30.0});
    CHECK(read.jobs.jobs[1] == job{2, 7.0, 1, 0, 1.0});
    CHECK(read.jobs.jobs[2] == job{0, 10.0, 4, 0, 60.0});
}

TEST_CASE("equal submit times keep input order") {
    const auto read = read_ok("submit_time_s,gpus,duration_s\n5,1,1\n5,2,1\n1,3,1\n5,4,1\n");
    REQUIRE(read.jobs.jobs.size() == 4);
    CHECK(read.jobs.jobs[0].gpus == 3);
    CHECK(read.jobs.jobs[1].gpus == 1);
    CHECK(read.jobs.jobs[2].gpus == 2);
    CHECK(read.jobs.jobs[3].gpus == 4);
}

TEST_CASE("an unusable header is an error") {
    CHECK_FALSE(read_trace_csv("", "t"));
    CHECK_FALSE(read_trace_csv("\n\n", "t"));
    const auto missing = read_trace_csv("submit_time_s,nodes\n0,1\n", "t");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().line == 1);
    CHECK(mentions(missing.error(), "gpus, duration_s"));
    const auto twice = read_trace_csv("gpus,submit_time_s,duration_s,gpus\n", "t");
    REQUIRE_FALSE(twice);
    CHECK(mentions(twice.error(), "'gpus' appears twice"));
    CHECK_FALSE(read_trace_csv("\"submit_time_s,gpus,duration_s\n0,1,1\n", "t"));
}

TEST_CASE("each kind of bad row is reported with its line and skipped") {
    CHECK(mentions(bad_row("0,1"), "missing field duration_s (row has 2 fields)"));
    CHECK(mentions(bad_row("0,,5"), "gpus is empty"));
    CHECK(mentions(bad_row("zero,1,5"), "submit_time_s: 'zero' is not a number"));
    CHECK(mentions(bad_row("0,1,5s"), "duration_s: '5s' is not a number"));
    CHECK(mentions(bad_row("0,1.5,5"), "gpus: '1.5' is not a whole number"));
    CHECK(mentions(bad_row("0,-2,5"), "gpus: '-2' is negative"));
    CHECK(mentions(bad_row("0,0,5"), "gpus: '0' must be at least 1"));
    CHECK(mentions(bad_row("0,1,-5"), "duration_s: '-5' is negative"));
    CHECK(mentions(bad_row("-1,1,5"), "submit_time_s: '-1' is negative"));
    CHECK(mentions(bad_row("0,1,nan"), "duration_s: 'nan' is not a finite number"));
    CHECK(mentions(bad_row("inf,1,5"), "submit_time_s: 'inf' is not a finite number"));
    CHECK(mentions(bad_row("1e999,1,5"), "submit_time_s: '1e999' is out of range"));
    CHECK(mentions(bad_row("0,4294967296,5"), "gpus: '4294967296' is too large"));
    CHECK(mentions(bad_row("0,99999999999999999999999,5"), "is too large"));
    CHECK(mentions(bad_row("0,2,5,x"), "nodes: 'x' is not a whole number"));
    CHECK(mentions(bad_row("0,2,5,3"), "nodes: 3 nodes for 2 GPUs"));
    CHECK(mentions(bad_row("0,\"2,5"), "quoted field never closes"));
    // Text after a closing quote keeps the field whole, so it is no number.
    CHECK(mentions(bad_row("\"1\"5,2,5"), "submit_time_s: '\"1\"5' is not a number"));
    CHECK(mentions(bad_row("0,\"2\" x,5"), "gpus: '\"2\" x' is not a whole number"));
    CHECK(mentions(bad_row("0,2,1e308"), "duration_s: '1e308' is more than 1e12 seconds"));
    // A NUL or other control byte is shown, not printed raw.
    CHECK(mentions(bad_row(std::string("1\0x,2,5", 7)), "submit_time_s: '1\\x00x' is not a number"));
    CHECK(mentions(bad_row("1e80,2,5"), "submit_time_s: '1e80' is more than 1e12 seconds"));
}

TEST_CASE("bad rows are counted and good rows around them kept") {
    const auto read = read_ok(
        "submit_time_s,gpus,duration_s\n"
        "0,1,10\n"
        "1,x,10\n"
        "\n"
        "2,2,10\n"
        "3,0,10\n"
        "4,4,10\n");
    CHECK(read.jobs.jobs.size() == 3);
    REQUIRE(read.bad_rows.size() == 2);
    CHECK(read.bad_row_count == 2);
    CHECK(read.bad_rows[0].line == 3);
    CHECK(read.bad_rows[1].line == 6);
    CHECK(read.bad_rows[1].to_string() == "line 6: gpus: '0' must be at least 1");
    // ids number the rows that parsed.
    CHECK(read.jobs.jobs[2].id == 2);
}

TEST_CASE("millions of bad rows keep the first errors and a count, not an error each") {
    // The hostile-input review's 10 MB trace: 5M rows of "x\n" kept an error
    // per row (930 MB). Now the first max_reported_bad_rows are kept.
    constexpr std::size_t rows = 5'000'000;
    std::string text = "submit_time_s,gpus,duration_s\n";
    text.reserve(text.size() + 2 * rows + 8);
    for (std::size_t i = 0; i < rows; ++i) text += "x\n";
    text += "1,2,3\n";
    const auto read = read_ok(text);
    CHECK(read.bad_row_count == rows);
    REQUIRE(read.bad_rows.size() == max_reported_bad_rows);
    CHECK(read.bad_rows.front().line == 2);
    CHECK(read.bad_rows.back().line == 1 + max_reported_bad_rows);
    CHECK(mentions(read.bad_rows.front(), "submit_time_s: 'x' is not a number"));
    REQUIRE(read.jobs.jobs.size() == 1);
    CHECK(read.jobs.jobs.front().gpus == 2);
    // The jobs reserved for no more rows than the text can hold jobs.
    CHECK(read.jobs.jobs.capacity() <= text.size() / 6 + 1);
}

TEST_CASE("a trace of blank lines reserves room for no job") {
    const std::string text = "submit_time_s,gpus,duration_s\n" + std::string(1'000'000, '\n');
    const auto read = read_ok(text);
    CHECK(read.jobs.jobs.empty());
    CHECK(read.bad_row_count == 0);
    CHECK(read.jobs.jobs.capacity() <= text.size() / 6 + 1);
}

TEST_CASE("write then read gives the same workload") {
    workload w{"rt", {job{0, 0.0, 1, 1, 84.0}, job{1, 0.1, 8, 0, 1e-7}, job{2, 1234567.891, 1024, 256, 3e9},
                      job{3, 1234567.891, 3, 0, 0.0}}};
    const std::string text = write_trace_csv(w);
    CHECK(text.starts_with("submit_time_s,gpus,duration_s,nodes\n0,1,84,1\n0.1,8,1e-07,\n"));
    const auto read = read_ok(text);
    CHECK(read.bad_rows.empty());
    CHECK(read.jobs.jobs == w.jobs);
}

TEST_CASE("an unreadable file is an error naming the path") {
    const auto read = read_trace_csv_file("/nonexistent/dir/trace.csv");
    REQUIRE_FALSE(read);
    CHECK(mentions(read.error(), "/nonexistent/dir/trace.csv"));
}

TEST_CASE("a Philly-size trace of 82,000 rows reads completely") {
    std::string text = "submit_time_s,gpus,duration_s,nodes,status\n";
    const int rows = 82000;
    for (int i = 0; i < rows; ++i)
        text += std::to_string(i * 37) + "," + std::to_string(1 << (i % 7)) + "," + std::to_string(i % 86400 + 1) +
                "." + std::to_string(i % 10) + "," + std::to_string(1 + (i % 7) / 3) + ",Pass\n";
    const auto read = read_ok(text);
    CHECK(read.jobs.jobs.size() == rows);
    CHECK(read.bad_rows.empty());
    CHECK(read.jobs.jobs.back().gpus == 1U << ((rows - 1) % 7));
}

TEST_CASE("the shared Helios and Philly traces read without a bad row") {
    const std::filesystem::path dir = topoblock::test::shared_trace();
    if (!topoblock::test::shared_trace_present(dir)) return;
    struct expectation {
        std::string file;
        std::size_t jobs;
    };
    for (const auto& expected : {expectation{"helios_dirlab15k.csv", 10796}, expectation{"philly_dirlab15k.csv", 15000}}) {
        const std::string& file = expected.file;
        const std::size_t jobs = expected.jobs;
        CAPTURE(file);
        const auto read = read_trace_csv_file((dir / file).string());
        REQUIRE(read.has_value());
        CHECK(read->jobs.jobs.size() == jobs);
        CHECK(read->bad_rows.empty());
        CHECK(read->jobs.name == file.substr(0, file.size() - 4));
        CHECK(std::is_sorted(read->jobs.jobs.begin(), read->jobs.jobs.end(),
                             [](const job& a, const job& b) { return a.submit_s < b.submit_s; }));
    }
}

TEST_CASE("a file's error names the file, then the line") {
    const topoblock::test::scratch_file file("no_gpus.csv", "submit_time_s,duration_s\n0,1\n");
    const auto read = read_trace_csv_file(file.string());
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().to_string().starts_with(file.string() + ", line 1: "));
}

TEST_CASE("a written file reads back, named after its stem") {
    const workload w{"ignored", {job{0, 0.0, 4, 1, 60.0}, job{1, 2.5, 1, 0, 10.0}}};
    const topoblock::test::scratch_file file("trace_csv_test.csv", write_trace_csv(w));
    const auto read = read_trace_csv_file(file.string());
    REQUIRE(read.has_value());
    CHECK(read->jobs.name == file.path().stem().string());
    CHECK(read->jobs.jobs == w.jobs);
}

TEST_CASE("seconds: the whole-seconds path reads what from_chars reads, and sends every other text to it") {
    // Digit strings of every length around the path's 15-digit bound, with
    // now and then a character that is no digit.
    const std::string_view alphabet = "0123456789012345678901234567890123456789.-+e /:";
    std::mt19937_64 rng(17);
    int whole = 0;
    for (int i = 0; i < 200000; ++i) {
        std::string text;
        const auto length = static_cast<std::size_t>(rng() % 19);
        for (std::size_t k = 0; k < length; ++k) text += alphabet[rng() % (k % 5 == 4 ? alphabet.size() : 10)];
        CAPTURE(text);
        double reference = 0.0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), reference);
        const bool read_whole = ec == std::errc{} && end == text.data() + text.size();
        const auto fast = topoblock::sim::detail::whole_seconds(text);
        if (fast) {
            ++whole;
            REQUIRE(read_whole);
            REQUIRE(*fast == reference);
        } else {
            // Only texts from_chars may need: not all digits, or too long.
            REQUIRE((text.empty() || text.size() > 15 || text.find_first_not_of("0123456789") != std::string::npos));
        }
        const auto parsed = topoblock::sim::detail::parse_seconds(text, "duration_s");
        if (parsed) {
            REQUIRE(read_whole);
            REQUIRE(*parsed == reference);
        } else {
            REQUIRE((!read_whole || reference > 1e12));
        }
    }
    CHECK(whole > 50000);  // the path was taken, and often
}

}  // namespace test_sim_trace_csv
