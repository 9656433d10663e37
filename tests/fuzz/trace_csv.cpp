// Fuzz target: trace CSV (sim/trace_csv.hpp). A trace is read (bad rows
// reported with their line) or refused; the jobs read are legal, sorted by
// submit time, and written back they read back the same, with no bad row.

#include "fuzz_support.hpp"

#include <topoblock/sim/trace_csv.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    auto read = sim::read_trace_csv(fuzz::as_text(data, size), "fuzz");
    if (!read) {
        fuzz::require(!read.error().message.empty(), "an error without a message");
        return 0;
    }
    const auto& jobs = read->jobs.jobs;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        fuzz::require(jobs[i].gpus > 0, "a job of no GPUs");
        fuzz::require(jobs[i].submit_s >= 0 && jobs[i].duration_s >= 0, "a negative time");
        fuzz::require(i == 0 || jobs[i - 1].submit_s <= jobs[i].submit_s, "jobs out of submit order");
    }
    for (const auto& e : read->bad_rows) fuzz::require(e.line > 0, "a bad row without a line");
    const std::string written = sim::write_trace_csv(read->jobs);
    auto again = sim::read_trace_csv(written, "fuzz");
    fuzz::require(static_cast<bool>(again), "a written trace does not read back");
    fuzz::require(again->bad_rows.empty(), "a written trace has bad rows");
    fuzz::require(again->jobs.jobs.size() == jobs.size(), "a written trace reads back a different job count");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        auto expected = jobs[i];
        expected.id = i;  // ids are renumbered in the written order
        fuzz::require(again->jobs.jobs[i] == expected, "a written job reads back different");
    }
    return 0;
}
