// A re-description, in our own code, of how Slurm's topology/block selection
// spends its time: for every job, every base block's node bitmap (as wide as
// the whole cluster) is ANDed with the bitmap of usable nodes and counted, and
// the block with the fewest free nodes that still holds the job wins. Work
// per decision: blocks x cluster-wide words, so it grows with racks squared.
// It is a cost model for the slope comparison in docs/performance.md, not a
// placement policy.
//   slurm_bitmap/<racks>   one such decision for a 2-node job, 90% occupancy

#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using bitmap = std::vector<std::uint64_t>;

struct cluster_bitmaps {
    bitmap usable;               // one bit per node of the cluster
    std::vector<bitmap> blocks;  // one cluster-wide bitmap per base block
};

cluster_bitmaps make_cluster(std::uint32_t racks, double occupancy) {
    const std::uint32_t nodes = racks * 18;
    const std::size_t words = (nodes + 63) / 64;
    cluster_bitmaps c{bitmap(words), {}};
    std::mt19937_64 rng(42);
    for (std::uint32_t n = 0; n < nodes; ++n)
        if (static_cast<double>(rng() % 1000) >= occupancy * 1000) c.usable[n / 64] |= std::uint64_t{1} << (n % 64);
    for (std::uint32_t b = 0; b < racks; ++b) {
        bitmap block(words);
        for (std::uint32_t n = b * 18; n < (b + 1) * 18; ++n) block[n / 64] |= std::uint64_t{1} << (n % 64);
        c.blocks.push_back(std::move(block));
    }
    return c;
}

// The block with the fewest usable nodes that still holds `need`; ties go to
// the later block, as in Slurm.
std::size_t select_block(const cluster_bitmaps& c, std::uint32_t need, bitmap& scratch) {
    std::size_t best = c.blocks.size();
    std::uint32_t best_free = ~0U;
    for (std::size_t b = 0; b < c.blocks.size(); ++b) {
        std::uint32_t free = 0;
        for (std::size_t w = 0; w < scratch.size(); ++w) {
            scratch[w] = c.blocks[b][w] & c.usable[w];
            free += static_cast<std::uint32_t>(std::popcount(scratch[w]));
        }
        if (free >= need && free <= best_free) {
            best = b;
            best_free = free;
        }
    }
    return best;
}

void slurm_bitmap(benchmark::State& st, std::uint32_t racks) {
    const cluster_bitmaps c = make_cluster(racks, 0.90);
    bitmap scratch(c.usable.size());
    for (auto _ : st) benchmark::DoNotOptimize(select_block(c, 2, scratch));
    st.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(st.iterations()) * 1e-9,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

const bool slurm_bitmap_baseline_registered = [] {
    for (std::uint32_t racks : {125U, 500U, 2000U, 8000U})
        benchmark::RegisterBenchmark(("slurm_bitmap/" + std::to_string(racks)).c_str(), slurm_bitmap, racks);
    return true;
}();

}  // namespace
