#pragma once

// `topoblock simulate`: replays one workload under every chosen placement
// policy on one topology and compares them. See docs/simulate.md.

#include "arguments.hpp"

#include <topoblock/io/load_topology.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/policy/slurm_version.hpp>
#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/load.hpp>
#include <topoblock/sim/queue.hpp>
#include <topoblock/sim/report.hpp>
#include <topoblock/sim/samples_csv.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/sim/workload_source.hpp>
#include <topoblock/request/request_text.hpp>
#include <topoblock/support/name_list.hpp>
#include <topoblock/support/parse_number.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/topoblock.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#if __has_include(<unistd.h>)
#include <unistd.h>
#define TOPOBLOCK_CLI_HAS_ISATTY 1
#endif

namespace topoblock::cli {

// Everything the command line sets, with the defaults of the main job.
struct simulate_settings {
    std::string topology = "nvl72:16";
    std::string workload = "helios";
    std::size_t jobs = 20000;                 // synthetic workloads only
    std::optional<double> load;               // synthetic: 0.85 when unset; trace: rescale when set
    std::optional<double> small_share;        // synthetic: share of jobs under 8 GPUs
    std::string policies = "all";
    std::string queue = "easy";
    std::uint64_t seed = 1;
    sim::engine_options engine;
    locality where = locality::require;
    policy_settings policy;
    slurm_version slurm = newest_slurm_version;  // slurm-block: whose node selection
    std::string csv_path;
    std::string samples_csv_path;
    std::string svg_path = "topoblock-comparison.svg";
    // The options the command line gave, for the checks that refuse one
    // that does not apply (--jobs with a trace, ...).
    std::vector<std::string_view> given;

    bool was_given(std::string_view flag) const { return std::find(given.begin(), given.end(), flag) != given.end(); }
};

namespace detail {

inline void simulate_usage(std::FILE* to) {
    std::fputs(
        "usage: topoblock simulate [options]\n"
        "Replays a workload under several placement policies on one cluster and compares them.\n"
        "  --topology SPEC|FILE   cluster: nvl72:16 (default), gb300:8, nvl36x2:4, hgx8:64, grid:D:N:G,\n"
        "                         parts joined by '+', a trailing @K groups K domains; FILE holds a spec,\n"
        "                         a Slurm topology.conf or topology.yaml (4 GPUs per node), or\n"
        "                         `kubectl get nodes --show-labels` or `-o json` output (NVLink cliques)\n"
        "  --workload NAME|FILE   helios (default), philly, llm (synthetic mixes) or a CSV trace\n"
        "  --jobs N               jobs of a synthetic workload (default 20000)\n"
        "  --load X               offered load (default 0.85 for synthetic mixes; for a trace,\n"
        "                         rescales its arrival times to reach X; unset keeps them)\n"
        "  --small-share X        synthetic mixes: reweight so a share X (0 to 1) of the jobs ask\n"
        "                         for fewer than 8 GPUs (default: the mix's own)\n"
        "  --policy all|LIST      comma-separated policy names (default all)\n"
        "  --queue easy|fifo      queue discipline (default easy: EASY backfill)\n"
        "  --seed N               seed of the synthetic workload and the failures (default 1)\n"
        "  --until T              stop at time T (seconds, or with suffix m, h, d)\n"
        "  --snapshot T           moment of the heat map (default: middle of the arrivals)\n"
        "  --locality require|prefer|any   how jobs treat NVLink domains (default require)\n"
        "  --block-gpus N         sub-block size of block policies (default 8)\n"
        "  --slurm-version V      slurm-block: the Slurm release whose node selection to follow,\n"
        "                         25.11 or 26.05 (default 26.05; docs/slurm-block.md)\n"
        "  --comm-share X         communication share of run time (default 0.1; 0 disables)\n"
        "  --nvlink-gbps X        NVLink GB/s per GPU per direction (default 900)\n"
        "  --ib-gbps X            InfiniBand GB/s per GPU per direction (default 50)\n"
        "  --no-stretch           report the communication cost without lengthening jobs\n"
        "  --node-mtbf-hours X    mean hours between failures of one node (default 0: none;\n"
        "                         otherwise 1 to 1e9)\n"
        "  --repair-hours X       hours a failed node stays down (default 4; 0 to 1e9)\n"
        "  --max-requeues N       a job cut short by failures more often is given up (default 5)\n"
        "  --csv FILE             also write the comparison as CSV\n"
        "  --samples-csv FILE     also write the figures over time as CSV: a row per policy per\n"
        "                         sample moment (fragmentation, compaction, jobs of each size\n"
        "                         that could start)\n"
        "  --svg FILE             picture (default topoblock-comparison.svg; '-' for none)\n",
        to);
}

// The ranges of the numeric options (docs/simulate.md): the library's
// (sim::max_synthetic_jobs, sim::max_offered_load, sim::min_link_gb_per_s,
// sim::max_link_gb_per_s) and the 32-bit counts.
inline constexpr std::uint64_t max_u32 = std::numeric_limits<std::uint32_t>::max();

// The workload the settings name, as the library loads it; a trace's skipped
// rows are reported on stderr.
inline expected<sim::loaded_workload, error> load_workload(const simulate_settings& s, const topology& topo) {
    sim::workload_source source;
    source.name = s.workload;
    source.jobs = s.jobs;
    source.load = s.load;
    source.seed = s.seed;
    source.small_share = s.small_share;
    source.load_name = "--load";
    auto out = sim::load_workload(source, topo.gpu_count());
    if (!out) return out;
    for (const auto& bad : out->bad_rows)
        std::fprintf(stderr, "topoblock simulate: %s: skipped %s\n", s.workload.c_str(), bad.to_string().c_str());
    if (out->bad_row_count > out->bad_rows.size())
        std::fprintf(stderr, "topoblock simulate: %s: skipped %zu more bad rows (%zu in all)\n", s.workload.c_str(),
                     out->bad_row_count - out->bad_rows.size(), out->bad_row_count);
    return out;
}

inline bool stderr_is_terminal() {
#ifdef TOPOBLOCK_CLI_HAS_ISATTY
    return isatty(2) != 0;
#else
    return false;
#endif
}

// The options that take a value; --no-stretch and --help take none.
inline constexpr std::array<std::string_view, 22> simulate_valued_flags{
    "--topology",    "--workload",    "--jobs",           "--load",         "--small-share",  "--policy", "--queue",  "--seed",
    "--until",       "--snapshot",    "--locality",       "--block-gpus",   "--comm-share",   "--nvlink-gbps",
    "--ib-gbps",     "--node-mtbf-hours", "--repair-hours", "--max-requeues", "--csv",         "--svg",
    "--slurm-version", "--samples-csv"};

// Parses argv into settings; returns an exit code when the command should
// stop (help: 0, bad usage: 2, the error on `err`).
inline std::optional<int> parse_simulate_args(const std::vector<std::string_view>& args, simulate_settings& s,
                                              std::FILE* err = stderr) {
    const auto bad = [err](std::string_view what) {
        std::fprintf(err, "topoblock simulate: %.*s\n", static_cast<int>(what.size()), what.data());
        std::fputs("Run `topoblock simulate --help` for the options.\n", err);
        return std::optional<int>(2);
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (is_stray_word(args[i])) return bad("unexpected argument " + topoblock::detail::quoted(args[i]));
        const option_word word = split_option(args[i]);
        const std::string_view flag = word.flag;
        if (flag == "--help" || flag == "-h") {
            simulate_usage(stdout);
            return 0;
        }
        if (flag == "--no-stretch") {
            if (word.value) return bad("--no-stretch takes no value");
            s.engine.cost.stretch_runtime = false;
            s.given.push_back(flag);
            continue;
        }
        if (!is_one_of(flag, simulate_valued_flags)) return bad(unknown_option(flag));
        if (!word.value && i + 1 >= args.size()) return bad("option " + std::string(flag) + " needs a value");
        const std::string_view value = word.value ? *word.value : args[++i];
        const std::string v(value);
        s.given.push_back(flag);
        // A numeric option's value, or the error naming the option, its
        // range and which way the value is out of it.
        const auto refuse = [&](std::string_view what, std::optional<number_problem> why = std::nullopt) {
            return bad(bad_value(flag, what, value, why));
        };
        if (flag == "--topology") s.topology = v;
        else if (flag == "--workload") s.workload = v;
        else if (flag == "--policy") s.policies = v;
        else if (flag == "--csv") s.csv_path = v;
        else if (flag == "--samples-csv") {
            // The table goes to standard output; a file named '-' would surprise.
            if (value == "-" || value.empty()) return refuse("a file name (standard output holds the table)");
            s.samples_csv_path = v;
        }
        else if (flag == "--svg") s.svg_path = value == "-" ? "" : v;
        else if (flag == "--queue") {
            if (value != "easy" && value != "fifo") return refuse("easy or fifo");
            s.queue = v;
        } else if (flag == "--jobs") {
            const auto n = parse_whole(value, 1, sim::max_synthetic_jobs);
            if (!n) return refuse("a whole number from 1 to " + std::to_string(sim::max_synthetic_jobs), n.error());
            s.jobs = static_cast<std::size_t>(*n);
        } else if (flag == "--seed") {
            const auto n = parse_whole(value);
            if (!n) return refuse("a whole number from 0 to 2^64-1", n.error());
            s.seed = s.engine.seed = *n;
        } else if (flag == "--load") {
            const auto x = parse_real(value, 0.0, sim::max_offered_load);
            if (!x || *x <= 0.0)
                return refuse("a number above 0 and at most 1000, e.g. 0.85", x ? number_problem::too_small : x.error());
            s.load = *x;
        } else if (flag == "--small-share") {
            const auto x = parse_real(value, 0.0, 1.0);
            if (!x) return refuse("a number from 0 to 1", x.error());
            s.small_share = *x;
        } else if (flag == "--until" || flag == "--snapshot") {
            const auto t = parse_duration(value);
            if (!t) return refuse("a time >= 0: 3600, 90m, 12h, 7d", t.error());
            (flag == "--until" ? s.engine.until_s : s.engine.snapshot_s) = *t;
        } else if (flag == "--locality") {
            const auto l = parse_locality(value);
            if (!l) return refuse("require, prefer or any");
            s.where = *l;
        } else if (flag == "--block-gpus") {
            const auto n = parse_whole(value, 1, max_u32);
            if (!n) return refuse("a whole number from 1 to 4294967295", n.error());
            s.policy.block_gpus = static_cast<std::uint32_t>(*n);
        } else if (flag == "--slurm-version") {
            const auto v = parse_slurm_version(value);
            if (!v) return refuse("one of " + std::string(slurm_version_names));
            s.slurm = *v;
        } else if (flag == "--comm-share") {
            const auto x = parse_real(value, 0.0, 1.0);
            if (!x) return refuse("a number from 0 to 1", x.error());
            s.engine.cost.comm_share = *x;
        } else if (flag == "--nvlink-gbps" || flag == "--ib-gbps") {
            const auto x = parse_real(value, sim::min_link_gb_per_s, sim::max_link_gb_per_s);
            if (!x) return refuse("GB/s from 0.001 to 1000000", x.error());
            (flag == "--nvlink-gbps" ? s.engine.cost.nvlink_gb_per_s : s.engine.cost.infiniband_gb_per_s) = *x;
        } else if (flag == "--node-mtbf-hours") {
            // Below an hour per node, failures outnumber every other event
            // so far that a replay takes hours (the library takes less:
            // sim::check_failure_model).
            const auto x = parse_real(value, 0.0, sim::max_failure_hours);
            if (!x || (*x > 0.0 && *x < 1.0))
                return refuse("0 (no failures) or hours from 1 to 1e9", x ? number_problem::too_small : x.error());
            s.engine.failures.node_mtbf_hours = *x;
        } else if (flag == "--max-requeues") {
            const auto n = parse_whole(value, 0, max_u32);
            if (!n) return refuse("a whole number from 0 to 4294967295", n.error());
            s.engine.max_requeues = static_cast<std::uint32_t>(*n);
        } else if (flag == "--repair-hours") {
            const auto x = parse_real(value, 0.0, sim::max_failure_hours);
            if (!x) return refuse("hours from 0 to 1e9", x.error());
            s.engine.failures.repair_hours = *x;
        }
    }
    return std::nullopt;
}

// An option given that the run would not use, named with why; empty when
// every option given applies. `trace`: the workload is a CSV trace.
inline std::string unused_option(const simulate_settings& s, const std::vector<std::string>& policies, bool trace) {
    const bool failures = s.engine.failures.node_mtbf_hours > 0.0;
    if (trace && s.was_given("--jobs")) return "--jobs applies to synthetic workloads (helios, philly, llm), not to a trace";
    if (trace && s.was_given("--small-share"))
        return "--small-share applies to synthetic workloads (helios, philly, llm), not to a trace";
    if (trace && !failures && s.was_given("--seed"))
        return "--seed applies to synthetic workloads and to failures (--node-mtbf-hours), not to a trace replayed without them";
    for (const std::string_view flag : {"--repair-hours", "--max-requeues"})
        if (!failures && s.was_given(flag)) return std::string(flag) + " applies only with failures (--node-mtbf-hours above 0)";
    if (s.engine.cost.comm_share == 0.0)
        for (const std::string_view flag : {"--nvlink-gbps", "--ib-gbps", "--no-stretch"})
            if (s.was_given(flag)) return std::string(flag) + " does not apply with --comm-share 0 (no communication cost)";
    if (s.was_given("--block-gpus") && std::find(policies.begin(), policies.end(), "contiguous-block") == policies.end())
        return "--block-gpus applies to contiguous-block, which --policy does not name";
    if (s.was_given("--slurm-version") && std::find(policies.begin(), policies.end(), "slurm-block") == policies.end())
        return "--slurm-version applies to slurm-block, which --policy does not name";
    if (s.was_given("--snapshot") && s.svg_path.empty()) return "--snapshot sets the picture's moment, and --svg - draws none";
    return {};
}

// Shows how far the replay is when it takes long; nothing when stderr is not
// a terminal (logs and pipes stay clean).
class progress_line {
public:
    explicit progress_line(bool enabled) : enabled_(enabled), start_(clock::now()) {}

    void show(std::string_view policy, std::size_t index, std::size_t count, double done) {
        if (!enabled_) return;
        const auto now = clock::now();
        if (now - start_ < std::chrono::milliseconds(700) || now - last_ < std::chrono::milliseconds(200)) return;
        last_ = now;
        shown_ = true;
        std::fprintf(stderr, "\r  simulating %.*s (%zu/%zu): %3.0f%%   ", static_cast<int>(policy.size()), policy.data(),
                     index + 1, count, 100.0 * done);
        std::fflush(stderr);
    }
    void clear() {
        if (shown_) std::fputs("\r\033[K", stderr);
        shown_ = false;
    }
    double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

private:
    using clock = std::chrono::steady_clock;
    bool enabled_;
    clock::time_point start_, last_{};
    bool shown_ = false;
};

inline bool write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    return static_cast<bool>(out.flush());
}

// Writes the file of one output option; on failure says so on stderr,
// naming the option, the file and, where the system says, why.
inline bool write_output(std::string_view flag, const std::string& path, const std::string& text) {
    errno = 0;
    if (write_text(path, text)) return true;
    const int why = errno;
    std::fprintf(stderr, "topoblock simulate: %.*s: cannot write '%s'%s\n", static_cast<int>(flag.size()), flag.data(),
                 path.c_str(), why != 0 ? (": " + std::generic_category().message(why)).c_str() : "");
    return false;
}

}  // namespace detail

inline int simulate_main(const std::vector<std::string_view>& args) {
    simulate_settings s;
    if (const auto stop = detail::parse_simulate_args(args, s)) return *stop;

    std::vector<std::string> names, repeated;
    if (s.policies == "all") names.assign(policy_names.begin(), policy_names.end());
    else names = topoblock::detail::split_list(s.policies, repeated);
    for (const auto& name : repeated)
        std::fprintf(stderr, "topoblock simulate: --policy names %s more than once: it runs once\n",
                     topoblock::detail::quoted(name).c_str());
    for (const auto& name : names)
        if (!with_policy(name, s.policy, [](auto&&) {})) {
            std::string known;
            for (const auto& n : policy_names) known += (known.empty() ? "" : ", ") + std::string(n);
            std::fprintf(stderr, "topoblock simulate: unknown policy %s (known: %s)\n",
                         topoblock::detail::quoted(name).c_str(), known.c_str());
            return 2;
        }
    if (names.empty()) {
        std::fputs("topoblock simulate: --policy names no policy\n", stderr);
        return 2;
    }
    if (const std::string unused = detail::unused_option(s, names, !sim::find_mix(s.workload)); !unused.empty()) {
        std::fprintf(stderr, "topoblock simulate: %s\n", unused.c_str());
        return 2;
    }

    // Whatever `topoblock place` reads; the replay starts with every node
    // up (a kubectl listing's health is for `topoblock place`).
    auto loaded_topology = io::load_topology(s.topology);
    if (!loaded_topology) {
        std::fprintf(stderr, "topoblock simulate: --topology: %s\n", loaded_topology.error().to_string().c_str());
        return 2;
    }
    if (loaded_topology->slurm) s.policy.slurm = slurm_block(*loaded_topology->slurm);
    s.policy.slurm.set_version(s.slurm);
    const auto topo = &loaded_topology->topo;
    auto loaded = detail::load_workload(s, *topo);
    if (!loaded) {
        std::fprintf(stderr, "topoblock simulate: --workload: %s\n", loaded.error().to_string().c_str());
        return 2;
    }
    // Settings a policy cannot use on this topology (a sub-block larger than
    // every domain, ...) are refused before any policy runs.
    for (const auto& name : names) {
        std::string wrong;
        with_policy(name, s.policy, [&](const auto& policy) {
            wrong = policy_traits<std::decay_t<decltype(policy)>>::validate(policy, *topo);
        });
        if (!wrong.empty()) {
            std::fprintf(stderr, "topoblock simulate: %s\n", wrong.c_str());
            return 2;
        }
    }

    const locality where = s.where;
    s.engine.to_request = [where](const sim::job& j) { return request::gpus(j.gpus).with_locality(where); };
    detail::progress_line progress(detail::stderr_is_terminal());
    std::vector<sim::policy_result> results;
    for (std::size_t p = 0; p < names.size(); ++p) {
        s.engine.progress = [&](double done) { progress.show(names[p], p, names.size(), done); };
        bool built = true;
        with_policy(names[p], s.policy, [&](auto policy) {
            auto alloc = allocator<decltype(policy)>::create(*topo, policy);
            if (!alloc) {
                std::fprintf(stderr, "topoblock simulate: %s\n", alloc.error().to_string().c_str());
                built = false;
                return;
            }
            if (s.queue == "fifo")
                results.push_back(sim::simulate(std::move(*alloc), loaded->jobs, s.engine, sim::fifo{}));
            else
                results.push_back(sim::simulate(std::move(*alloc), loaded->jobs, s.engine, sim::easy_backfill{}));
        });
        if (!built) return 1;
    }
    progress.clear();

    const std::string queue = s.queue == "fifo" ? "FIFO" : "EASY backfill";
    const std::string load = sim::load_text(loaded->offered_load, loaded->realized_load);
    const std::string title =
        sim::comparison_title(loaded->description, loaded->offered_load, loaded->realized_load, s.topology, *topo, s.queue);
    std::fputs(sim::format_table(results, "topoblock simulate: " + title).c_str(), stdout);

    int status = 0;
    for (const auto& r : results)
        if (!r.totals.conserved) status = 1;
    // The run's settings, on every row of both CSV files.
    const sim::run_settings settings = sim::settings_of_run(s.workload, s.topology, loaded->offered_load, s.seed, s.where,
                                                            s.engine.cost.comm_share, s.engine.failures);
    if (!s.csv_path.empty()) {
        if (detail::write_output("--csv", s.csv_path, sim::format_csv(results, settings)))
            std::printf("\nwrote %s\n", s.csv_path.c_str());
        else
            status = 1;
    }
    if (!s.samples_csv_path.empty()) {
        if (std::all_of(results.begin(), results.end(), [](const sim::policy_result& r) { return r.fragmentation.empty(); }))
            std::fputs("topoblock simulate: --samples-csv: no sample moment fell in the replay (they lie in the arrival\n"
                       "  window, which is empty when every job is submitted at one moment): the file has the header only\n",
                       stderr);
        if (detail::write_output("--samples-csv", s.samples_csv_path, sim::format_samples_csv(results, *topo, settings)))
            std::printf("\nwrote %s\n", s.samples_csv_path.c_str());
        else
            status = 1;
    }
    if (!s.svg_path.empty()) {
        sim::svg_options picture;
        picture.title = "Placement policies on " + s.topology + ": " + loaded->description;
        // The seed, where it draws anything: a synthetic mix, or failures.
        const bool seeded = !loaded->trace || s.engine.failures.node_mtbf_hours > 0.0;
        picture.subtitle = "at " + load + " offered load, " + queue + (seeded ? ", seed " + std::to_string(s.seed) : "") +
                           ", communication share " + sim::detail::fixed_notation(s.engine.cost.comm_share, 2);
        if (s.engine.failures.node_mtbf_hours > 0.0)
            picture.subtitle += ", node MTBF " + sim::detail::fixed_notation(s.engine.failures.node_mtbf_hours, 0) +
                                " h, repair " + sim::detail::fixed_notation(s.engine.failures.repair_hours, 1) +
                                " h, at most " + std::to_string(s.engine.max_requeues) + " requeues";
        else
            picture.subtitle += ", no node failures";
        picture.subtitle += "; topoblock simulate";
        picture.offered_load = loaded->offered_load;
        if (detail::write_output("--svg", s.svg_path, sim::render_svg(results, *topo, picture))) {
            std::error_code ec;
            const auto where_written = std::filesystem::absolute(s.svg_path, ec);
            std::printf("\nwrote %s (open it in a web browser)\n", (ec ? s.svg_path : where_written.string()).c_str());
        } else {
            status = 1;
        }
    }
    std::fprintf(stderr, "simulated %zu jobs under %zu policies in %.1f s\n", loaded->jobs.jobs.size(), names.size(),
                 progress.seconds());
    return status;
}

}  // namespace topoblock::cli
