#pragma once

#include <topoblock/request/request_text.hpp>
#include <topoblock/sim/failures.hpp>
#include <topoblock/sim/results.hpp>
#include <topoblock/sim/svg.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The simulator's outputs: a comparison table for people, a CSV for
// spreadsheets, an SVG picture. All three are deterministic: the same
// results give the same bytes (numbers go through std::to_chars, never a
// locale).

namespace topoblock::sim {

namespace detail {

inline std::string fixed(double value, int decimals) {
    std::string out = fixed_notation(value, decimals);
    if (out.starts_with("-") && out.find_first_not_of("-0.") == std::string::npos) out.erase(0, 1);  // no "-0.0"
    return out;
}

inline std::string percent(double share, int decimals = 1) { return fixed(100.0 * share, decimals) + "%"; }

// A duration in the unit that keeps it short: 45s, 12.5m, 3.2h, 4.1d.
inline std::string human_duration(double s) {
    if (s < 60.0) return fixed(s, 0) + "s";
    if (s < 3600.0) return fixed(s / 60.0, 1) + "m";
    if (s < 172800.0) return fixed(s / 3600.0, 1) + "h";
    return fixed(s / 86400.0, 1) + "d";
}

// 950, 12.3k, 4.5M: counts whose last digits do not matter.
inline std::string short_count(double v) {
    if (v < 1e4) return fixed(v, 0);
    if (v < 1e6) return fixed(v / 1e3, 1) + "k";
    return fixed(v / 1e6, 1) + "M";
}

inline std::string pad(std::string text, std::size_t width, bool left) {
    if (text.size() >= width) return text;
    const std::string fill(width - text.size(), ' ');
    return left ? text + fill : fill + text;
}

}  // namespace detail

// The comparison table: one row per policy, then a line per policy whose
// books do not balance (there should be none). Its columns are the figures
// readers compare, and fit 100 columns with policy names of up to 20
// characters; the CSV holds every figure.
inline std::string format_table(std::span<const policy_result> results, std::string_view title = {}) {
    struct column {
        std::string_view name;
        std::string (*value)(const policy_result&);
    };
    using detail::fixed;
    using detail::human_duration;
    using detail::percent;
    static constexpr std::array<column, 9> columns{{
        {"policy", [](const policy_result& r) { return r.policy; }},
        {"useful", [](const policy_result& r) { return percent(r.totals.useful_utilization); }},
        {"held", [](const policy_result& r) { return percent(r.totals.utilization); }},
        {"ext-frag", [](const policy_result& r) { return percent(r.totals.external_fragmentation); }},
        {"wait-mean", [](const policy_result& r) { return human_duration(r.totals.wait_mean_s); }},
        {"wait-p95", [](const policy_result& r) { return human_duration(r.totals.wait_p95_s); }},
        {"bsld", [](const policy_result& r) { return fixed(r.totals.bounded_slowdown, 1); }},
        {"split-jobs", [](const policy_result& r) { return percent(r.totals.split_jobs); }},
        {"unplaceable", [](const policy_result& r) { return std::to_string(r.totals.unplaceable); }},
    }};
    std::vector<std::vector<std::string>> cells;
    std::array<std::size_t, columns.size()> width{};
    for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].name.size();
    for (const auto& r : results) {
        auto& row = cells.emplace_back();
        for (std::size_t c = 0; c < columns.size(); ++c) {
            row.push_back(columns[c].value(r));
            width[c] = std::max(width[c], row.back().size());
        }
    }
    std::string out;
    if (!title.empty()) (out += title) += "\n\n";
    const auto line = [&](auto cell_of) {
        for (std::size_t c = 0; c < columns.size(); ++c) {
            if (c != 0) out += "  ";
            out += detail::pad(std::string(cell_of(c)), width[c], c == 0);
        }
        while (out.ends_with(' ')) out.pop_back();
        out += '\n';
    };
    line([&](std::size_t c) { return columns[c].name; });
    for (const auto& row : cells) line([&](std::size_t c) { return std::string_view(row[c]); });
    out += "\nuseful: GPU time doing the jobs' work / healthy GPU time while jobs arrive (rounding and\n"
           "slow cross-domain traffic removed); held: GPUs held, rounding included; ext-frag: free\n"
           "GPUs the job mix cannot use; wait: time queued; bsld: bounded slowdown (tau 10 s);\n"
           "split-jobs: jobs that fit in one NVLink domain but were placed on more. Every figure,\n"
           "and more, is in the CSV (--csv; docs/simulate.md).\n";
    for (const auto& r : results)
        if (r.totals.abandoned != 0)
            out += "NOTE " + r.policy + ": " + std::to_string(r.totals.abandoned) +
                   " jobs given up: cut short by node failures more often than\n"
                   "  the requeue limit allows, or kept from starting by failures once nothing else ran\n"
                   "  (docs/simulate.md, \"Failures\")\n";
    for (const auto& r : results) {
        const auto& s = r.totals;
        if (s.conserved) continue;
        out += "WARNING " + r.policy + ": " + std::to_string(s.jobs) + " jobs but " + std::to_string(s.completed) +
               " completed + " + std::to_string(s.running) + " running + " + std::to_string(s.waiting) +
               " waiting + " + std::to_string(s.unplaceable) + " unplaceable + " + std::to_string(s.not_submitted) +
               " not submitted + " + std::to_string(s.abandoned) + " abandoned\n";
    }
    return out;
}

// The settings of one run, written on every CSV row so that the rows of
// many runs (a grid of loads and seeds run as separate processes) can be
// concatenated and still say where each came from. Empty text and zeros
// when the caller does not say.
struct run_settings {
    std::string workload;        // mix name or trace path
    std::string topology;        // as given
    double offered_load = 0.0;   // the target, or a trace's own
    std::uint64_t seed = 0;
    std::string locality;        // require, prefer, any
    double comm_share = 0.0;
    double node_mtbf_hours = 0.0;  // 0: no failures
    double repair_hours = 0.0;
};

// The settings of a replay as the CSV records them: the locality by name,
// the repair time only when failures are on (it changes nothing otherwise).
inline run_settings settings_of_run(std::string workload, std::string topology, double offered_load, std::uint64_t seed,
                                    locality where, double comm_share, const failure_model& failures) {
    run_settings out;
    out.workload = std::move(workload);
    out.topology = std::move(topology);
    out.offered_load = offered_load;
    out.seed = seed;
    out.locality = std::string(to_string(where));
    out.comm_share = comm_share;
    out.node_mtbf_hours = failures.node_mtbf_hours;
    out.repair_hours = failures.node_mtbf_hours > 0.0 ? failures.repair_hours : 0.0;
    return out;
}

// "85%", "85% (this draw: 79%)" when a synthetic draw's own load
// (`realized_load` above 0) differs from the target, "?" for no load.
inline std::string load_text(double offered_load, double realized_load) {
    std::string load = offered_load > 0.0 ? detail::percent(offered_load, 0) : "?";
    if (realized_load > 0.0) load += " (this draw: " + detail::percent(realized_load, 0) + ")";
    return load;
}

// The title over the comparison table, as the program and the Python
// module print it: the workload and its load, then the cluster and the
// queue ("easy" or "fifo"), on two lines so that it fits over the table.
inline std::string comparison_title(std::string_view workload, double offered_load, double realized_load,
                                    std::string_view cluster, const topology& topo, std::string_view queue) {
    return std::string(workload) + " at " + load_text(offered_load, realized_load) + " offered load\non " + std::string(cluster) + " (" +
           std::to_string(topo.gpu_count()) + " GPUs in " + std::to_string(topo.domain_count()) + " NVLink domains), " +
           (queue == "fifo" ? "FIFO" : "EASY backfill");
}

namespace detail {

// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a
// line break.
inline void append_csv_text(std::string& out, std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
        out += text;
        return;
    }
    out += '"';
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

// The columns every row of the simulator's CSV files starts with: the
// policy and queue, then the run's settings (format_csv,
// format_samples_csv).
inline constexpr std::string_view run_columns =
    "policy,queue,workload,topology,offered_load,seed,locality,comm_share,node_mtbf_hours,repair_hours";

// Those columns' fields for one policy's row, without a line break.
inline void append_run_fields(std::string& out, const policy_result& r, const run_settings& settings) {
    const auto text = [&out](std::string_view field) {
        out += ',';
        append_csv_text(out, field);
    };
    append_csv_text(out, r.policy);
    for (const std::string_view field : {std::string_view(r.queue), std::string_view(settings.workload),
                                         std::string_view(settings.topology)})
        text(field);
    out += ',';
    append_exact(out, settings.offered_load);
    out += ',';
    append_exact(out, settings.seed);
    text(settings.locality);
    for (const double v : {settings.comm_share, settings.node_mtbf_hours, settings.repair_hours}) {
        out += ',';
        append_exact(out, v);
    }
}

}  // namespace detail

// One header line, then one row per policy; numbers exact (shortest text
// that reads back as the same double), shares as fractions, times in seconds.
// The run's settings follow the policy and queue on every row.
inline std::string format_csv(std::span<const policy_result> results, const run_settings& settings = {}) {
    std::string out(detail::run_columns);
    out +=
        ",jobs,completed,running,waiting,unplaceable,not_submitted,conserved,utilization,"
        "useful_utilization,idle_held,"
        "external_fragmentation,wait_p50_s,wait_p95_s,wait_p99_s,bounded_slowdown,makespan_s,split_jobs,"
        "split_gpu_hours,comm_lost_gpu_hours,failure_lost_gpu_hours,requeues,abandoned,wait_mean_s,"
        "extra_domain_jobs\n";
    for (const auto& r : results) {
        const auto& s = r.totals;
        detail::append_run_fields(out, r, settings);
        for (const std::size_t n : {s.jobs, s.completed, s.running, s.waiting, s.unplaceable, s.not_submitted}) {
            out += ',';
            detail::append_exact(out, std::uint64_t{n});
        }
        out += s.conserved ? ",true" : ",false";
        for (const double v : {s.utilization, s.useful_utilization, s.idle_held, s.external_fragmentation, s.wait_p50_s, s.wait_p95_s,
                               s.wait_p99_s, s.bounded_slowdown, s.makespan_s, s.split_jobs, s.split_gpu_hours,
                               s.comm_lost_gpu_hours, s.failure_lost_gpu_hours}) {
            out += ',';
            detail::append_exact(out, v);
        }
        out += ',';
        detail::append_exact(out, std::uint64_t{s.requeues});
        out += ',';
        detail::append_exact(out, std::uint64_t{s.abandoned});
        for (const double v : {s.wait_mean_s, s.extra_domain_jobs}) {
            out += ',';
            detail::append_exact(out, v);
        }
        out += '\n';
    }
    return out;
}

// What the picture says around the numbers.
struct svg_options {
    std::string title;
    std::string subtitle;
    double offered_load = 0.0;  // drawn as a dashed line when > 0
    std::size_t bins = 240;     // points per utilization curve
};

namespace detail {

// Time-weighted mean of value(point) / healthy over `bins` equal bins of
// [0, end].
template <class Value>
std::vector<double> binned_utilization(const std::vector<timeline_point>& timeline, double end, std::size_t bins,
                                       Value value) {
    std::vector<double> held(bins, 0.0), healthy(bins, 0.0);
    if (end <= 0.0 || bins == 0) return held;
    const double width = end / static_cast<double>(bins);
    for (std::size_t i = 0; i < timeline.size(); ++i) {
        const double from = timeline[i].t;
        const double to = i + 1 < timeline.size() ? timeline[i + 1].t : end;
        if (to <= from || from >= end) continue;
        for (auto b = static_cast<std::size_t>(from / width); b < bins; ++b) {
            const double lo = std::max(from, width * static_cast<double>(b));
            const double hi = std::min(std::min(to, end), width * static_cast<double>(b + 1));
            if (hi <= lo) break;
            held[b] += value(timeline[i]) * (hi - lo);
            healthy[b] += timeline[i].healthy * (hi - lo);
        }
    }
    for (std::size_t b = 0; b < bins; ++b) held[b] = healthy[b] > 0.0 ? held[b] / healthy[b] : 0.0;
    return held;
}

// Colour of a job of `gpus` GPUs in the heat map: viridis on log2(size), so
// 1, 2, 4, ... 128+ GPU jobs are evenly spaced from purple to yellow.
inline rgb job_size_colour(std::int32_t gpus) {
    if (gpus == 0) return {0xee, 0xee, 0xee};
    if (gpus < 0) return {0x55, 0x55, 0x55};
    return sequential(std::log2(static_cast<double>(gpus)) / 7.0);
}

struct chart_box {
    double x, y, width, height;
};

// The end of the pictures' time axis: the longest makespan within 1.25
// times the median makespan (the lower median), so that a single policy
// running far longer than the others does not set the scale.
inline double time_axis_end(std::span<const policy_result> results) {
    std::vector<double> makespans;
    for (const auto& r : results) makespans.push_back(r.totals.makespan_s);
    if (makespans.empty()) return 0.0;
    std::sort(makespans.begin(), makespans.end());
    const double limit = 1.25 * makespans[(makespans.size() - 1) / 2];
    double end = 0.0;
    for (const double m : makespans)
        if (m <= limit) end = m;
    return end;
}

}  // namespace detail

// The comparison as a picture: utilization over time per policy, a row of
// bar charts (utilization, split jobs, p95 wait, GPU-hours lost to
// cross-domain traffic), and one occupancy heat map per policy at the
// snapshot moment (a row per domain, a cell per GPU, coloured by the size of
// the job holding it, split jobs underlined in red).
inline std::string render_svg(std::span<const policy_result> results, const topology& topo, const svg_options& options = {}) {
    using detail::fixed;
    constexpr double width = 1200.0, margin = 70.0;
    // alert is a pure red, apart from every policy colour of the palette.
    const rgb ink{0x22, 0x22, 0x22}, grey{0x77, 0x77, 0x77}, rule{0xdd, 0xdd, 0xdd}, alert{0xe0, 0x00, 0x10};

    // Heat map geometry: two maps per row.
    const std::uint32_t domains = std::max<std::uint32_t>(topo.domain_count(), 1);
    const double map_width = (width - 2 * margin - 40.0) / 2.0;
    const double cell_w = map_width / std::max<std::uint32_t>(topo.max_domain_gpus(), 1);
    const double row_h = std::clamp(320.0 / domains, 1.0, 14.0);
    const double map_height = row_h * domains + 34.0;
    const std::size_t map_rows = (results.size() + 1) / 2;

    const double util_top = 130.0, util_height = 240.0;
    const double bars_top = util_top + util_height + 80.0;
    const double bar_h = 16.0;
    const double bars_height = 40.0 + static_cast<double>(results.size()) * (bar_h + 6.0);
    const double frag_top = bars_top + bars_height + 50.0, frag_height = 110.0;
    const double maps_top = frag_top + frag_height + 100.0;
    const double height = maps_top + 40.0 + static_cast<double>(map_rows) * (map_height + 20.0) + 20.0;

    svg_document doc(width, height);
    doc.rect(0, 0, width, height, {.fill = rgb{0xff, 0xff, 0xff}});
    doc.text({margin, 34}, options.title.empty() ? "Placement policies compared" : options.title, {20, ink});
    if (!options.subtitle.empty()) doc.text({margin, 56}, options.subtitle, {13, grey});

    // ---- utilization over time --------------------------------------------
    // The time axis ends at the longest makespan within 1.25 times the
    // median one: one policy that runs far longer (starved by failures, say)
    // does not squeeze every other curve into the first pixels. Its curve is
    // cut at the axis's end and its legend says when it ended.
    const double end = detail::time_axis_end(results);
    const bool days = end >= 3 * 86400.0;
    const double unit = days ? 86400.0 : 3600.0;
    const detail::chart_box u{margin, util_top, width - 2 * margin, util_height};
    doc.text({u.x, u.y - 14},
             "Useful GPU utilization over time (higher is better; thin: GPUs held, including time lost to "
             "slow cross-domain traffic)",
             {14, ink});
    for (int pct = 0; pct <= 100; pct += 25) {
        const double y = u.y + u.height * (1.0 - pct / 100.0);
        doc.line({u.x, y}, {u.x + u.width, y}, {.stroke = rule});
        doc.text({u.x - 8, y + 4}, std::to_string(pct) + "%", {11, grey, text_anchor::end});
    }
    // Ticks and labels of the time axis under a chart.
    const auto time_axis = [&](const detail::chart_box& box) {
        const double span = end > 0.0 ? end / unit : 1.0;
        const double step = span <= 10 ? 1 : span <= 30 ? 5 : span <= 120 ? 10 : std::ceil(span / 100.0) * 10;
        for (double t = 0; t <= span + 1e-9; t += step) {
            const double x = box.x + box.width * t / span;
            doc.line({x, box.y + box.height}, {x, box.y + box.height + 5}, {.stroke = grey});
            doc.text({x, box.y + box.height + 18}, fixed(t, 0), {11, grey, text_anchor::middle});
        }
        doc.text({box.x + box.width / 2, box.y + box.height + 34}, days ? "time (days)" : "time (hours)",
                 {12, grey, text_anchor::middle});
    };
    time_axis(u);
    if (options.offered_load > 0.0) {
        const double y = u.y + u.height * (1.0 - std::min(options.offered_load, 1.0));
        for (double x = u.x; x < u.x + u.width; x += 12) doc.line({x, y}, {std::min(x + 6, u.x + u.width), y}, {.stroke = grey});
        doc.text({u.x + u.width - 4, y - 5}, "offered load " + detail::percent(options.offered_load, 0), {11, grey, text_anchor::end});
    }
    if (!results.empty() && results.front().snapshot.t >= 0.0 && results.front().snapshot.t <= end && end > 0.0) {
        const double x = u.x + u.width * results.front().snapshot.t / end;
        doc.line({x, u.y}, {x, u.y + u.height}, {.stroke = alert, .stroke_width = 1.5});
        doc.text({x + 4, u.y + u.height - 6}, "moment of the heat maps", {11, alert});
    }
    const auto curve = [&](const policy_result& r, const std::vector<double>& values) {
        std::vector<point> line;
        line.reserve(values.size());
        for (std::size_t b = 0; b < values.size(); ++b) {
            // Each bin is drawn at its centre, and only while this policy still ran.
            const double t = end * (static_cast<double>(b) + 0.5) / static_cast<double>(values.size());
            if (t > r.totals.makespan_s || t > end) break;
            line.push_back({u.x + u.width * t / end, u.y + u.height * (1.0 - values[b])});
        }
        return line;
    };
    for (std::size_t p = 0; p < results.size(); ++p) {
        const auto& r = results[p];
        const auto held = detail::binned_utilization(r.timeline, end, options.bins,
                                                     [](const timeline_point& q) { return double(q.held); });
        const auto useful = detail::binned_utilization(r.timeline, end, options.bins,
                                                       [](const timeline_point& q) { return q.useful; });
        doc.begin_group(r.policy);
        doc.polyline(curve(r, held), {.stroke = categorical(p), .stroke_width = 1.0, .opacity = 0.6});
        doc.polyline(curve(r, useful), {.stroke = categorical(p), .stroke_width = 2.5});
        doc.end_group();
        const double lx = u.x + static_cast<double>(p) * 170.0;
        doc.line({lx, u.y - 44}, {lx + 24, u.y - 44}, {.stroke = categorical(p), .stroke_width = 3.0});
        doc.text({lx + 30, u.y - 40}, r.totals.makespan_s > end ? r.policy + " (to " + detail::human_duration(r.totals.makespan_s) + ")" : r.policy,
                 {13, ink});
    }

    // ---- bar charts -------------------------------------------------------
    struct metric {
        std::string_view title;
        double (*value)(const summary&);
        std::string (*label)(double);
    };
    const std::array<metric, 4> metrics{{
        {"Useful utilization (higher is better)", [](const summary& s) { return s.useful_utilization; },
         [](double v) { return detail::percent(v); }},
        {"One-domain jobs split (lower is better)", [](const summary& s) { return s.split_jobs; },
         [](double v) { return detail::percent(v); }},
        {"p95 wait (lower is better)", [](const summary& s) { return s.wait_p95_s; },
         [](double v) { return detail::human_duration(v); }},
        {"GPU-hours lost to cross-domain traffic", [](const summary& s) { return s.comm_lost_gpu_hours; },
         [](double v) { return detail::short_count(v); }},
    }};
    const double chart_w = (width - 2 * margin) / metrics.size();
    const double name_w = 90.0;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
        const double x0 = margin + chart_w * static_cast<double>(m);
        doc.text({x0, bars_top}, metrics[m].title, {12, ink});
        double top = 0.0;
        for (const auto& r : results) top = std::max(top, metrics[m].value(r.totals));
        if (m == 0) top = 1.0;  // utilization on its full scale
        const double bar_max = chart_w - name_w - 70.0;
        for (std::size_t p = 0; p < results.size(); ++p) {
            const double y = bars_top + 14.0 + static_cast<double>(p) * (bar_h + 6.0);
            const double v = metrics[m].value(results[p].totals);
            const double w = top > 0.0 ? bar_max * v / top : 0.0;
            doc.text({x0 + name_w - 6, y + bar_h - 4}, results[p].policy, {11, grey, text_anchor::end});
            doc.rect(x0 + name_w, y, std::max(w, 1.0), bar_h, {.fill = categorical(p)});
            doc.text({x0 + name_w + w + 5, y + bar_h - 4}, metrics[m].label(v), {11, ink});
        }
    }

    // ---- external fragmentation over time ---------------------------------
    const detail::chart_box f{margin, frag_top, width - 2 * margin, frag_height};
    double frag_max = 0.0;
    for (const auto& r : results)
        for (const auto& sample : r.fragmentation) frag_max = std::max(frag_max, sample.value);
    frag_max = std::max(0.05, std::ceil(frag_max * 10.0) / 10.0);  // a round top, at least 5%
    doc.text({f.x, f.y - 12},
             "External fragmentation over time (free GPUs the job mix cannot use, lower is better; same time axis)",
             {14, ink});
    for (const double share : {0.0, frag_max / 2.0, frag_max}) {
        const double y = f.y + f.height * (1.0 - share / frag_max);
        doc.line({f.x, y}, {f.x + f.width, y}, {.stroke = rule});
        doc.text({f.x - 8, y + 4}, detail::percent(share, 0), {11, grey, text_anchor::end});
    }
    for (std::size_t p = 0; p < results.size() && end > 0.0; ++p) {
        std::vector<point> line;
        for (const auto& sample : results[p].fragmentation)
            if (sample.t <= end)
                line.push_back({f.x + f.width * sample.t / end, f.y + f.height * (1.0 - sample.value / frag_max)});
        doc.polyline(line, {.stroke = categorical(p), .stroke_width = 2.0});
    }
    time_axis(f);

    // ---- occupancy heat maps ----------------------------------------------
    const double snapshot_t = results.empty() ? -1.0 : results.front().snapshot.t;
    doc.text({margin, maps_top - 20},
             "Who holds which GPU at t = " + detail::human_duration(std::max(snapshot_t, 0.0)) +
                 ": a row per NVLink domain, a cell per GPU, coloured by the size of the job holding it",
             {15, ink});
    // Legend: job sizes, free, down, split.
    double lx = margin;
    const auto swatch = [&](rgb fill, std::string_view label) {
        doc.rect(lx, maps_top - 8, 14, 10, {.fill = fill});
        doc.text({lx + 18, maps_top + 1}, label, {11, grey});
        lx += 22.0 + 7.0 * static_cast<double>(label.size());
    };
    for (const std::int32_t size : {1, 2, 4, 8, 16, 32, 64, 128})
        swatch(detail::job_size_colour(size), size == 1 ? "1 GPU" : (size == 128 ? "128+" : std::to_string(size)) + " GPUs");
    swatch(detail::job_size_colour(0), "free");
    swatch(detail::job_size_colour(-1), "node down");
    doc.rect(lx, maps_top - 1, 14, 3, {.fill = alert});
    doc.text({lx + 18, maps_top + 1}, "job split across domains", {11, grey});

    for (std::size_t p = 0; p < results.size(); ++p) {
        const auto& snap = results[p].snapshot;
        const double x0 = margin + static_cast<double>(p % 2) * (map_width + 40.0);
        const double y0 = maps_top + 24.0 + static_cast<double>(p / 2) * (map_height + 20.0);
        std::size_t free = 0;
        for (const auto& c : snap.cells) free += c.job_gpus == 0;
        doc.text({x0, y0 + 12},
                 results[p].policy + ": " + std::to_string(free) + " GPUs free, " +
                     detail::percent(results[p].totals.split_jobs) + " of jobs split",
                 {13, categorical(p)});
        doc.begin_group(results[p].policy + " occupancy");
        for (domain_id d = 0; d < topo.domain_count() && !snap.cells.empty(); ++d) {
            const auto& info = topo.domain(d);
            if (info.node_count == 0) continue;
            const std::uint32_t first = topo.node(info.first_node).first_gpu;
            const double y = y0 + 22.0 + row_h * d;
            // Runs of equal cells become one rectangle: fewer elements.
            for (std::uint32_t g = 0; g < info.gpu_count();) {
                const auto& cell = snap.cells[first + g];
                std::uint32_t run = 1;
                while (g + run < info.gpu_count() && snap.cells[first + g + run].job_gpus == cell.job_gpus &&
                       snap.cells[first + g + run].split == cell.split)
                    ++run;
                const double x = x0 + cell_w * g;
                doc.rect(x, y, cell_w * run, std::max(row_h - 1.0, 1.0), {.fill = detail::job_size_colour(cell.job_gpus)});
                if (cell.split) doc.rect(x, y + std::max(row_h - 4.0, 0.0), cell_w * run, std::min(3.0, row_h), {.fill = alert});
                g += run;
            }
        }
        doc.end_group();
    }
    return doc.str();
}

}  // namespace topoblock::sim
