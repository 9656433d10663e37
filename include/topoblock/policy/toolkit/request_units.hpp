#pragma once

#include <topoblock/request/errc.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstddef>
#include <cstdint>

namespace topoblock::toolkit {

// Every domain has the same nodes of the same GPUs.
inline bool like_domains(const topology& topo) noexcept {
    return topo.uniform_gpus_per_node() != 0 &&
           std::uint64_t{topo.max_domain_nodes()} * topo.domain_count() == topo.node_count();
}

// How a request measures a domain: in whole nodes for node requests, in GPUs
// otherwise (a whole-node GPU request counts the GPUs of wholly free nodes).
template <class State>
struct request_units {
    const State& state;
    const request& req;

    std::uint64_t free_in(domain_id d) const noexcept {
        const auto& c = state.domain(d);
        if (req.what == unit::nodes) return c.free_nodes;
        if (req.whole_nodes) return std::uint64_t{c.free_nodes} * state.topo().shape(d).gpus_per_node;
        return c.free_gpus;
    }
    std::uint64_t capacity_of(domain_id d) const noexcept {
        const domain_shape info = state.topo().shape(d);
        return req.what == unit::nodes ? info.node_count : info.gpu_count();
    }
    std::uint64_t largest_domain() const noexcept {
        return req.what == unit::nodes ? state.topo().max_domain_nodes() : state.topo().max_domain_gpus();
    }
    std::uint64_t available() const noexcept {
        if (req.what == unit::nodes) return state.available().nodes;
        if (req.whole_nodes) {
            const std::uint32_t g = state.topo().uniform_gpus_per_node();
            return g != 0 ? state.available().nodes * g : state.available().gpus;
        }
        return state.available().gpus;
    }
    std::uint64_t group_free(std::size_t level, group_id g) const noexcept {
        const auto& f = state.group_free(level, g);
        if (req.what == unit::nodes) return f.nodes;
        return f.gpus;  // an upper bound for whole-node GPU requests
    }
    // Calls f(group, its free units) for each group of the level with at
    // least `size` free units, in group order.
    template <class F>
    void for_each_group_holding(std::size_t level, std::uint64_t size, F&& f) const {
        state.for_each_group_with_free(level, req.what == unit::nodes, size,
                                       [&](group_id g) { f(g, group_free(level, g)); });
    }
    // The domains a new part of this job may use at all.
    bool allowed(domain_id d) const noexcept {
        return req.exclusive_domain ? state.domain_idle(d) : state.domain_open(d);
    }
    // The reason when nothing fits, as the allocator's precheck answers:
    // fragmented when the free GPUs would cover the job in the right shape.
    errc shortfall(std::uint64_t size) const noexcept {
        if (req.what == unit::nodes) {
            const std::uint32_t g = state.topo().uniform_gpus_per_node();
            const bool enough = g != 0 ? state.available().gpus >= size * g : state.available().nodes >= size;
            return enough ? errc::fragmented : errc::insufficient_free;
        }
        return state.available().gpus >= size ? errc::fragmented : errc::insufficient_free;
    }
};

}  // namespace topoblock::toolkit
