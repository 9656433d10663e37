#pragma once

#include <topoblock/policy/toolkit/domain_pick.hpp>
#include <topoblock/policy/toolkit/place_each_segment.hpp>
#include <topoblock/policy/toolkit/request_units.hpp>
#include <topoblock/policy/toolkit/whole_domains.hpp>
#include <topoblock/topoblock.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

// Packs each job, or each segment of a segmented job, into the fullest NVLink
// domain that holds it, so that the emptier domains stay whole for large
// jobs. A job larger than any domain takes wholly free domains.
struct pack_fullest {
    std::string_view name() const { return "pack-fullest"; }

    template <class State>
    topoblock::errc place(const State& state, const topoblock::request& req, topoblock::placement& out) const {
        using namespace topoblock;
        const toolkit::request_units<State> units{state, req};
        // Takes `count` units in domain d, around what earlier segments hold.
        const auto take = [&](domain_id d, std::uint64_t count) {
            auto open = toolkit::load_domain(state, out, d);
            return toolkit::take_units(open, req, static_cast<std::uint32_t>(count), out);
        };
        if (req.part_size() <= units.largest_domain()) {
            // The units domain d has left for this job: the state's counters,
            // or a recount where an earlier segment took some.
            const auto left = [&](domain_id d, bool touched) -> std::uint64_t {
                if (!touched) return units.free_in(d);
                const auto open = toolkit::load_domain(state, out, d);
                std::uint64_t n = 0;
                for (std::uint32_t i = 0; i < open.node_count; ++i) {
                    if (!req.takes_whole_nodes()) n += open.open_count(i);
                    else if (open.wholly_open(i)) n += req.what == unit::nodes ? 1 : open.gpus_per_node;
                }
                return n;
            };
            // The fullest domain that holds a part scores lowest.
            const auto score = [&](domain_id d, bool touched) {
                const std::uint64_t n = left(d, touched);
                return n >= req.part_size() ? n : toolkit::no_fit;
            };
            return toolkit::place_each_segment(units, out, score, [&](domain_id d) { take(d, req.part_size()); });
        }
        // Larger than a domain: whole domains, the last one holding the rest.
        std::vector<domain_id> chosen;
        if (!toolkit::pick_whole_domains(units, req.count, chosen)) return units.shortfall(req.count);
        const std::uint64_t covered = toolkit::take_all_but_last(units, chosen, out);
        take(chosen.back(), req.count - covered);
        return errc::ok;
    }
};
