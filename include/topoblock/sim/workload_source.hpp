#pragma once

// A workload as a command line or a script names it: a synthetic mix
// (helios, philly, llm) drawn to an offered load, or a CSV trace read from a
// file and, on request, rescaled to one. `topoblock simulate` and the Python
// module both load workloads here, so that they replay the same jobs.
//
// Opt-in, like trace_csv.hpp: it reads files.

#include <topoblock/sim/job.hpp>
#include <topoblock/sim/load.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace topoblock::sim {

// The most jobs a synthetic mix may be asked for (a few GB of jobs and
// outcomes); a trace has no such bound.
inline constexpr std::uint64_t max_synthetic_jobs = 100'000'000;
// The highest offered load asked for: beyond 1000 times the cluster every
// job arrives at once anyway.
inline constexpr double max_offered_load = 1000.0;
// The load of a synthetic mix when none is asked for.
inline constexpr double default_offered_load = 0.85;

struct workload_source {
    std::string name = "helios";  // a mix name (find_mix), else the path of a CSV trace
    std::size_t jobs = 20000;     // synthetic mixes only: 1 to max_synthetic_jobs
    // Synthetic: the load drawn to (default_offered_load when unset).
    // Trace: the load its arrivals are rescaled to; unset keeps them.
    // Above 0, at most max_offered_load.
    std::optional<double> load;
    std::uint64_t seed = 1;       // synthetic mixes only
    // Synthetic mixes only: reweight the mix so this share (0 to 1) of its
    // jobs is small (with_small_share); unset keeps the mix.
    std::optional<double> small_share;
    // What errors call the load: the option or argument that set it.
    std::string load_name = "the load";
};

struct loaded_workload {
    workload jobs;
    std::string description;      // "helios-like synthetic mix, 20000 jobs", "NAME trace, N jobs"
    double offered_load = 0.0;    // the target (synthetic, or a rescaled trace) or the trace's own
    double realized_load = 0.0;   // what a synthetic draw actually asks; 0 for traces
    bool trace = false;           // read from a CSV file
    // A trace's rows that were skipped (the first max_reported_bad_rows of
    // them, with line and reason) and how many were in all.
    std::vector<error> bad_rows;
    std::size_t bad_row_count = 0;
};

// Loads `source` for a cluster of `cluster_gpus` GPUs. Errors: a job count
// or load out of range, a cluster without GPUs, a trace that cannot be read
// (read_trace_csv_file's), a load asked of a trace whose jobs are all
// submitted at one moment (no rescaling reaches it). O(jobs).
inline expected<loaded_workload, error> load_workload(const workload_source& source, std::uint64_t cluster_gpus) {
    if (source.load && !(std::isfinite(*source.load) && *source.load > 0.0 && *source.load <= max_offered_load))
        return unexpected(make_error(source.load_name + " must be above 0 and at most 1000"));
    if (cluster_gpus == 0) return unexpected(make_error("the cluster has no GPU to offer a load to"));
    loaded_workload out;
    if (auto mix = find_mix(source.name)) {
        if (source.jobs < 1 || source.jobs > max_synthetic_jobs)
            return unexpected(make_error("a synthetic mix takes from 1 to " + std::to_string(max_synthetic_jobs) +
                                         " jobs, not " + std::to_string(source.jobs)));
        if (source.small_share) {
            auto reweighted = with_small_share(*mix, *source.small_share);
            if (!reweighted)
                return unexpected(make_error("the small-job share must be from 0 to 1 and ask only for job sizes the " +
                                             source.name + " mix has"));
            mix = std::move(reweighted);
        }
        generate_options g;
        g.jobs = source.jobs;
        g.offered_load = source.load.value_or(default_offered_load);
        g.cluster_gpus = cluster_gpus;
        g.seed = source.seed;
        out.jobs = generate(*mix, g);
        out.offered_load = g.offered_load;
        out.description = source.name + "-like synthetic mix, " + std::to_string(out.jobs.jobs.size()) + " jobs";
        if (source.small_share)
            out.description += ", " + std::to_string(static_cast<int>(std::lround(100.0 * *source.small_share))) +
                               "% under " + std::to_string(small_job_below_gpus) + " GPUs";
        // Heavy-tailed run times make one draw's load differ from the target.
        out.realized_load = offered_load(out.jobs, cluster_gpus);
        return out;
    }
    if (source.small_share)
        return unexpected(make_error("the small-job share applies to synthetic mixes (helios, philly, llm), not to the trace " +
                                     source.name));
    auto read = read_trace_csv_file(source.name);
    if (!read) return unexpected(std::move(read).error());
    out.trace = true;
    out.jobs = std::move(read->jobs);
    out.bad_rows = std::move(read->bad_rows);
    out.bad_row_count = read->bad_row_count;
    out.offered_load = offered_load(out.jobs, cluster_gpus);
    if (source.load) {
        if (!rescale_to_load(out.jobs, cluster_gpus, *source.load))
            return unexpected(make_error(source.name + ": " + source.load_name +
                                         " does not apply: every job is submitted at the same moment, so no "
                                         "rescaling of arrivals reaches a load"));
        out.offered_load = *source.load;
    }
    out.description = out.jobs.name + " trace, " + std::to_string(out.jobs.jobs.size()) + " jobs";
    return out;
}

}  // namespace topoblock::sim
