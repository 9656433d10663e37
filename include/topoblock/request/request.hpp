#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace topoblock {

// What a request counts.
enum class unit : std::uint8_t {
    gpus,   // GPUs, which may share nodes with other jobs
    nodes,  // whole nodes
};

// How strictly a job wants to stay inside NVLink domains.
enum class locality : std::uint8_t {
    // A job that fits in one domain must land in one; a larger job must use
    // no more domains than the empty cluster would need, its largest
    // domains first (topology::fewest_domains_for), however much is free or
    // healthy now: when the free domains cannot give that few, it waits.
    // first-fit ignores locality, and slurm-block follows Slurm's block
    // rules instead (docs/policies.md, "How many domains a job spans").
    require,
    // As require when possible, otherwise spread over the fewest domains
    // free (the block policies: wholly free domains, as they take them whole).
    prefer,
    // No constraint: the policy's own choice.
    any,
};

// What a job asks for. Build with request::gpus(n) or request::nodes(n) and
// the with_ modifiers.
struct request {
    std::uint32_t count = 0;
    unit what = unit::gpus;
    // For a GPU request: the job takes the nodes it touches whole (no other
    // job shares them); the GPUs beyond `count` count as held but idle.
    bool whole_nodes = false;
    locality where = locality::require;
    // The job is cut into count / segment parts, each inside one domain
    // (Slurm --segment). 0, or a segment larger than the job, means one part;
    // a segment that does not divide the job is an invalid request.
    std::uint32_t segment = 0;
    // Each segment avoids domains the job's other segments already use.
    bool spread_segments = false;
    // The domains the job touches are closed to every other job, and the job
    // takes only domains with nothing running (Slurm --exclusive=topo).
    bool exclusive_domain = false;

    static constexpr request gpus(std::uint32_t n) noexcept { return request{n, unit::gpus}; }
    static constexpr request nodes(std::uint32_t n) noexcept { return request{n, unit::nodes}; }

    constexpr request with_locality(locality l) const noexcept { auto r = *this; r.where = l; return r; }
    constexpr request with_whole_nodes(bool on = true) const noexcept { auto r = *this; r.whole_nodes = on; return r; }
    constexpr request with_segment(std::uint32_t size, bool spread = false) const noexcept {
        auto r = *this;
        r.segment = size;
        r.spread_segments = spread;
        return r;
    }
    constexpr request with_exclusive_domain(bool on = true) const noexcept { auto r = *this; r.exclusive_domain = on; return r; }

    // Whole nodes are what the job counts or takes.
    constexpr bool takes_whole_nodes() const noexcept { return what == unit::nodes || whole_nodes; }
    // The size of one part that must stay in one domain (the whole job when
    // it has no segments).
    constexpr std::uint32_t part_size() const noexcept { return segment == 0 || segment > count ? count : segment; }
    // 0 for an empty job (malformed), which has no part size to divide by.
    constexpr std::uint32_t part_count() const noexcept { return count == 0 ? 0 : count / part_size(); }
    // part_count() > 1, and malformed(), as every placement asks them: a job
    // of one part needs no divide, and an empty one divides by nothing.
    constexpr bool segmented() const noexcept { return segment != 0 && std::uint64_t{segment} * 2 <= count; }
    // Malformed regardless of the cluster.
    constexpr bool malformed() const noexcept {
        return count == 0 || (segment != 0 && segment < count && count % segment != 0);
    }

    friend constexpr bool operator==(const request&, const request&) = default;
    // Some order, so that equal requests can be sorted together.
    friend constexpr auto operator<=>(const request&, const request&) = default;
};

}  // namespace topoblock

// Requests as keys of hash tables (the simulator numbers the distinct
// requests of a workload with one). Every field counts.
template <>
struct std::hash<topoblock::request> {
    std::size_t operator()(const topoblock::request& r) const noexcept {
        const std::uint64_t sizes = std::uint64_t{r.count} | std::uint64_t{r.segment} << 32;
        const std::uint64_t flags = std::uint64_t{static_cast<std::uint8_t>(r.what)} |
                                    std::uint64_t{static_cast<std::uint8_t>(r.where)} << 8 |
                                    std::uint64_t{r.whole_nodes} << 16 | std::uint64_t{r.spread_segments} << 17 |
                                    std::uint64_t{r.exclusive_domain} << 18;
        // Odd multipliers spread both words over every bit; the shift brings
        // the high bits, where they mix most, down to a table's low bits.
        const std::uint64_t h = sizes * 0x9E3779B97F4A7C15ULL ^ (flags + 1) * 0xC2B2AE3D27D4EB4FULL;
        return static_cast<std::size_t>(h ^ h >> 32);
    }
};
