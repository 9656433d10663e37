#pragma once

#include <topoblock/sim/job.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/utf8_bom.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

// Job traces as CSV: the common form the shared Helios and Philly cuts use.
//
//   submit_time_s,gpus,duration_s,nodes,status
//   0,1,84,1,Pass
//
// Required columns: submit_time_s, gpus, duration_s; optional: nodes; any
// other column is ignored; columns may come in any order. Times are
// seconds from 0 to 1e12. Fields may be quoted ("8"; text after the closing
// quote makes the field no number), lines may end in CRLF, blank lines are
// skipped. A row that cannot be a job is reported with its line number and
// skipped, never dropped silently.

namespace topoblock::sim {

// The most bad rows a read keeps an error for: a file of millions of bad
// rows must not make millions of messages.
inline constexpr std::size_t max_reported_bad_rows = 20;

// What a read produced: the jobs that parsed, the errors of the first
// max_reported_bad_rows rows that did not (in file order), and how many rows
// did not in all (bad_row_count >= bad_rows.size()).
struct trace_read {
    workload jobs;
    std::vector<error> bad_rows;
    std::size_t bad_row_count = 0;

    // Counts a bad row; keeps its error while fewer than the cap are kept.
    void add_bad_row(error e) {
        ++bad_row_count;
        if (bad_rows.size() < max_reported_bad_rows) bad_rows.push_back(std::move(e));
    }
};

namespace detail {

inline constexpr bool is_csv_blank(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_csv_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_csv_blank(s.back())) s.remove_suffix(1);
    return s;
}

// First position at or after `from` holding `a` or `b`, else text.size().
// A plain loop: string_view::find_first_of calls memchr once per character.
inline std::size_t find_either(std::string_view text, std::size_t from, char a, char b) noexcept {
    while (from < text.size() && text[from] != a && text[from] != b) ++from;
    return from;
}

// Splits text into CSV records (RFC 4180 quoting, tolerant of CRLF). Fields
// are views into the text; inside a quoted field a doubled quote stays
// doubled, and a field with text after its closing quote ("1"5) is kept
// whole, quotes and all: no number contains a quote, so numeric columns
// reject both rather than read a part of the field.
class csv_records {
public:
    explicit csv_records(std::string_view text) noexcept : text_(topoblock::detail::without_utf8_bom(text)) {}

    // Reads the next record; false at the end of the text. `line` is where
    // the record starts (1-based); `unterminated` reports a quote that never
    // closes (the field then runs to the end of the text).
    bool next(std::vector<std::string_view>& fields, std::uint32_t& line, bool& unterminated) {
        fields.clear();
        unterminated = false;
        if (pos_ >= text_.size()) return false;
        line = line_;
        for (;;) {
            fields.push_back(read_field(unterminated));
            if (pos_ >= text_.size()) return true;
            const char separator = text_[pos_++];
            if (separator == '\n') {
                ++line_;
                return true;
            }
        }
    }

private:
    // Leaves pos_ on the ',' or '\n' that ends the field, or at the end.
    std::string_view read_field(bool& unterminated) {
        auto start = pos_;
        while (start < text_.size() && (text_[start] == ' ' || text_[start] == '\t')) ++start;
        if (start < text_.size() && text_[start] == '"') return read_quoted(start, unterminated);
        const auto end = find_either(text_, pos_, ',', '\n');
        const auto field = text_.substr(pos_, end - pos_);
        pos_ = end;
        return trim(field);
    }

    std::string_view read_quoted(std::size_t open, bool& unterminated) {
        std::size_t i = open + 1;
        for (;;) {
            i = find_either(text_, i, '"', '\n');
            if (i == text_.size()) {
                unterminated = true;
                pos_ = text_.size();
                return text_.substr(open + 1);
            }
            if (text_[i] == '\n') {
                ++line_;
                ++i;
            } else if (i + 1 < text_.size() && text_[i + 1] == '"') {
                i += 2;  // an escaped quote
            } else {
                break;
            }
        }
        const auto field = text_.substr(open + 1, i - open - 1);
        pos_ = find_either(text_, i + 1, ',', '\n');
        if (!trim(text_.substr(i + 1, pos_ - i - 1)).empty()) return trim(text_.substr(open, pos_ - open));
        return trim(field);
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::uint32_t line_ = 1;
};

// The columns the reader uses, by name, in the order of trace_column.
enum class trace_column : std::size_t { submit, gpus, duration, nodes, count };
inline constexpr std::array<std::string_view, 4> trace_column_names{"submit_time_s", "gpus",
                                                                    "duration_s", "nodes"};
inline constexpr std::size_t no_column = std::numeric_limits<std::size_t>::max();

// Field index of each known column in the file (no_column when absent).
using column_map = std::array<std::size_t, static_cast<std::size_t>(trace_column::count)>;

inline expected<column_map, error> map_columns(const std::vector<std::string_view>& header,
                                               std::uint32_t line) {
    column_map map;
    map.fill(no_column);
    for (std::size_t field = 0; field < header.size(); ++field) {
        const auto name = trim(header[field]);
        const auto known = std::find(trace_column_names.begin(), trace_column_names.end(), name);
        if (known == trace_column_names.end()) continue;
        auto& slot = map[static_cast<std::size_t>(known - trace_column_names.begin())];
        if (slot != no_column)
            return unexpected(make_error("column '" + std::string(name) + "' appears twice", line));
        slot = field;
    }
    std::string missing;
    for (auto column : {trace_column::submit, trace_column::gpus, trace_column::duration}) {
        if (map[static_cast<std::size_t>(column)] != no_column) continue;
        missing += missing.empty() ? "" : ", ";
        missing += trace_column_names[static_cast<std::size_t>(column)];
    }
    if (!missing.empty())
        return unexpected(make_error("header lacks required column(s): " + missing, line));
    return map;
}

// "gpus: 'x' is not a whole number": names the column and shows the text.
inline std::string field_problem(std::string_view column, std::string_view text, std::string_view problem) {
    return std::string(column) + ": " + topoblock::detail::quoted(text) + " " + std::string(problem);
}

inline constexpr double max_trace_seconds = 1e12;

// The value of a field of 1 to 15 decimal digits, exact as a double; nullopt
// for any other text, which from_chars reads. Real traces give whole
// seconds, and the general path was most of a Philly-size parse's number
// reading.
inline std::optional<double> whole_seconds(std::string_view text) noexcept {
    if (text.empty() || text.size() > 15) return std::nullopt;
    std::uint64_t value = 0;
    for (const char c : text) {
        const auto digit = static_cast<unsigned>(c) - unsigned{'0'};
        if (digit > 9) return std::nullopt;
        value = value * 10 + digit;
    }
    return static_cast<double>(value);
}

inline expected<double, std::string> parse_seconds(std::string_view text, std::string_view column) {
    double value = 0.0;
    if (const auto whole = whole_seconds(text)) {
        value = *whole;
    } else {
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc::result_out_of_range) return unexpected(field_problem(column, text, "is out of range"));
        if (ec != std::errc{} || end != text.data() + text.size())
            return unexpected(field_problem(column, text, "is not a number"));
    }
    if (!std::isfinite(value)) return unexpected(field_problem(column, text, "is not a finite number"));
    if (value < 0.0) return unexpected(field_problem(column, text, "is negative"));
    // Far beyond any trace (31,700 years), and where sums of times and
    // GPU-seconds would stop being exact enough to report.
    if (value > max_trace_seconds) return unexpected(field_problem(column, text, "is more than 1e12 seconds"));
    return value;
}

// A count of GPUs or nodes; zero is allowed only where `positive` is false.
inline expected<std::uint32_t, std::string> parse_count(std::string_view text, std::string_view column,
                                                        bool positive) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range || value > std::numeric_limits<std::uint32_t>::max())
        return unexpected(field_problem(column, text, "is too large"));
    if (ec != std::errc{} || end != text.data() + text.size())
        return unexpected(field_problem(column, text, "is not a whole number"));
    if (value < 0) return unexpected(field_problem(column, text, "is negative"));
    if (positive && value == 0) return unexpected(field_problem(column, text, "must be at least 1"));
    return static_cast<std::uint32_t>(value);
}

// The field of `column`, or why the row does not have it.
inline expected<std::string_view, std::string> field_of(const std::vector<std::string_view>& fields,
                                                        const column_map& map, trace_column column) {
    const auto index = map[static_cast<std::size_t>(column)];
    const auto name = trace_column_names[static_cast<std::size_t>(column)];
    if (index >= fields.size())
        return unexpected("missing field " + std::string(name) + " (row has " +
                          std::to_string(fields.size()) + " fields)");
    if (fields[index].empty()) return unexpected(std::string(name) + " is empty");
    return fields[index];
}

// Parses the field of `column` with parse(text, column name), or says why
// the row does not have it.
template <class Parse>
auto parse_column(const std::vector<std::string_view>& fields, const column_map& map, trace_column column,
                  Parse parse) -> decltype(parse(std::string_view{}, std::string_view{})) {
    auto field = field_of(fields, map, column);
    if (!field) return unexpected(std::move(field).error());
    return parse(*field, trace_column_names[static_cast<std::size_t>(column)]);
}

inline expected<job, std::string> parse_job(const std::vector<std::string_view>& fields,
                                            const column_map& map) {
    const auto gpu_count = [](std::string_view text, std::string_view name) { return parse_count(text, name, true); };
    auto submit_s = parse_column(fields, map, trace_column::submit, parse_seconds);
    if (!submit_s) return unexpected(std::move(submit_s).error());
    auto gpus = parse_column(fields, map, trace_column::gpus, gpu_count);
    if (!gpus) return unexpected(std::move(gpus).error());
    auto duration_s = parse_column(fields, map, trace_column::duration, parse_seconds);
    if (!duration_s) return unexpected(std::move(duration_s).error());
    job out{0, *submit_s, *gpus, 0, *duration_s};

    // nodes is optional: an absent column or an empty field means "not given".
    const auto nodes_index = map[static_cast<std::size_t>(trace_column::nodes)];
    if (nodes_index < fields.size() && !fields[nodes_index].empty()) {
        auto nodes = parse_count(fields[nodes_index], "nodes", false);
        if (!nodes) return unexpected(std::move(nodes).error());
        if (*nodes > out.gpus)
            return unexpected("nodes: " + std::to_string(*nodes) + " nodes for " + std::to_string(out.gpus) +
                              " GPUs");
        out.nodes = *nodes;
    }
    return out;
}

inline bool is_blank(const std::vector<std::string_view>& fields) noexcept {
    return fields.size() == 1 && fields.front().empty();
}

// Appends the shortest text that reads back as exactly `value`.
inline void append_exact(std::string& out, double value) {
    std::array<char, 32> buffer;
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    out.append(buffer.data(), result.ptr);
}

inline void append_exact(std::string& out, std::uint64_t value) {
    std::array<char, 24> buffer;
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    out.append(buffer.data(), result.ptr);
}

// "dir/helios_15k.csv" -> "helios_15k": the default name of a workload read
// from a file.
inline std::string file_stem(std::string_view path) {
    const auto slash = path.find_last_of("/\\");
    if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
    const auto dot = path.rfind('.');
    return std::string(dot == 0 || dot == std::string_view::npos ? path : path.substr(0, dot));
}

}  // namespace detail

// Parses a CSV trace. Fails only when the header is unusable (empty text, a
// required column missing or repeated); bad rows are counted in
// bad_row_count, the first max_reported_bad_rows of them kept in bad_rows
// with their line numbers. Memory is the jobs and a bounded list of errors. Jobs get ids in input order among the rows that parsed, then
// are sorted by submit time (stable). Linear in the size of the text.
inline expected<trace_read, error> read_trace_csv(std::string_view text, std::string name) {
    detail::csv_records records(text);
    std::vector<std::string_view> fields;
    std::uint32_t line = 0;
    bool unterminated = false;
    do {
        if (!records.next(fields, line, unterminated))
            return unexpected(make_error("the trace is empty: no header line"));
    } while (detail::is_blank(fields));
    if (unterminated) return unexpected(make_error("quoted field in the header never closes", line));
    auto columns = detail::map_columns(fields, line);
    if (!columns) return unexpected(std::move(columns).error());

    trace_read out;
    out.jobs.name = std::move(name);
    // One job per line at most, and no more than the shortest job row
    // ("0,1,1\n", six bytes) fits: a file of blank lines reserves nothing big.
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    out.jobs.jobs.reserve(std::min(lines, text.size() / 6 + 1));
    while (records.next(fields, line, unterminated)) {
        if (unterminated) {
            out.add_bad_row(make_error("quoted field never closes", line));
            break;
        }
        if (detail::is_blank(fields)) continue;
        auto parsed = detail::parse_job(fields, *columns);
        if (parsed)
            out.jobs.jobs.push_back(*parsed);
        else
            out.add_bad_row(make_error(std::move(parsed).error(), line));
    }
    number_and_sort(out.jobs);
    return out;
}

// Reads a trace file; the workload is named after the file (its stem). Fails
// with an error naming the path when the file cannot be read.
inline expected<trace_read, error> read_trace_csv_file(const std::string& path) {
    // A lambda, not &std::fclose: the standard does not let programs take
    // the address of its functions.
    const auto close = [](std::FILE* f) { std::fclose(f); };
    const std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "rb"), close);
    const auto cannot_read = [&path] {
        const auto reason = std::generic_category().message(errno);
        return unexpected(make_error("cannot read trace '" + path + "': " + reason));
    };
    if (!file) return cannot_read();
    std::string text;
    std::array<char, 1 << 16> buffer;
    std::size_t got = 0;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) text.append(buffer.data(), got);
    if (std::ferror(file.get())) return cannot_read();
    auto read = read_trace_csv(text, detail::file_stem(path));
    if (read) return read;
    error e = std::move(read).error();
    e.file = path;
    return unexpected(std::move(e));
}

// Writes the CSV form read_trace_csv reads back: the same jobs, in the same
// order, with every number exact. nodes is left empty when not given.
inline std::string write_trace_csv(const workload& w) {
    std::string out = "submit_time_s,gpus,duration_s,nodes\n";
    out.reserve(out.size() + w.jobs.size() * 24);
    for (const auto& j : w.jobs) {
        detail::append_exact(out, j.submit_s);
        out += ',';
        detail::append_exact(out, std::uint64_t{j.gpus});
        out += ',';
        detail::append_exact(out, j.duration_s);
        out += ',';
        if (j.nodes != 0) detail::append_exact(out, std::uint64_t{j.nodes});
        out += '\n';
    }
    return out;
}

}  // namespace topoblock::sim
