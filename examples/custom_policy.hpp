#pragma once

#include <topoblock/topoblock.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string_view>
#include <vector>

// Packs each job into the fullest NVLink domain that holds it, so that the
// emptier domains stay whole for large jobs; a job no domain holds takes the
// domains with the most free first, as few as it can.
struct pack_fullest {
    std::string_view name() const { return "pack-fullest"; }
    // Segments need a domain per part, which this policy does not do: a
    // refusal for good (unsupported_request), not a wait.
    bool supports(const topoblock::request& q) const { return !q.segmented(); }

    template <class State>
    topoblock::errc place(const State& s, const topoblock::request& q, topoblock::placement& out) const {
        using namespace topoblock;
        const topology& topo = s.topo();
        const bool whole = q.takes_whole_nodes();
        // What domain d can give this job now, in the job's units.
        const auto units_free = [&](domain_id d) -> std::uint64_t {
            if (q.exclusive_domain ? !s.domain_idle(d) : !s.domain_open(d)) return 0;
            const domain_counters& c = s.domain(d);
            if (!whole) return c.free_gpus;
            return q.what == unit::nodes ? c.free_nodes : std::uint64_t{c.free_nodes} * topo.domain(d).gpus_per_node;
        };
        // Takes `units` from domain d, lowest nodes and GPUs first.
        const auto take = [&](domain_id d, std::uint64_t units) {
            const domain_info& info = topo.domain(d);
            for (node_id n = info.first_node; n < info.end_node() && units > 0; ++n) {
                const gpu_mask usable = s.usable_gpus(n);
                if (whole && usable == s.node_full_mask(n)) {
                    out.add(n, usable);
                    units -= std::min<std::uint64_t>(units, q.what == unit::nodes ? 1 : topo.node(n).gpus);
                } else if (!whole && usable != 0) {
                    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(units, 64));
                    const gpu_mask mine = lowest_bits(usable, count);
                    out.add(n, mine);
                    units -= static_cast<std::uint64_t>(std::popcount(mine));
                }
            }
        };
        domain_id best = npos32;
        std::uint64_t best_free = std::numeric_limits<std::uint64_t>::max();
        for (domain_id d = 0; d < topo.domain_count(); ++d)
            if (const std::uint64_t f = units_free(d); f >= q.count && f < best_free) best = d, best_free = f;
        if (best != npos32) return take(best, q.count), errc::ok;
        // No domain holds it: the most free first, and under locality::require
        // no more domains than the empty cluster would need.
        std::vector<domain_id> order(topo.domain_count());
        std::iota(order.begin(), order.end(), domain_id{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](domain_id a, domain_id b) { return units_free(a) > units_free(b); });
        const std::uint32_t limit = q.where == locality::require
                                        ? topo.fewest_domains_for(q.count, q.what == unit::nodes)
                                        : topo.domain_count();
        std::uint64_t missing = q.count;
        for (std::uint32_t i = 0; i < order.size() && i < limit && missing > 0; ++i) {
            const std::uint64_t units = std::min(units_free(order[i]), missing);
            take(order[i], units);
            missing -= units;
        }
        return missing == 0 ? errc::ok : errc::fragmented;
    }
};
