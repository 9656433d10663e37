#pragma once

// A Slurm block topology (topology.conf, or the default entry of
// topology.yaml) as a topoblock cluster: the topology and the settings the
// slurm-block policy needs to select nodes the way Slurm does on it, as
// plain data (no io header builds a policy: slurm_block(c.settings) does).
// docs/slurm-block.md explains the mapping.

#include <topoblock/io/slurm_topology.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace topoblock::io {

// What the slurm-block policy needs of a block topology, as plain data: the
// base block size S in nodes, the BlockSizes values in nodes (empty: Slurm's
// default levels) and how many leading domains are base blocks. The policy
// is built from it above io: slurm_block(base_nodes, block_sizes, blocks).
struct slurm_block_settings {
    std::uint32_t base_nodes = 0;
    std::vector<std::uint32_t> block_sizes;
    std::uint32_t blocks = 0;

    friend bool operator==(const slurm_block_settings&, const slurm_block_settings&) = default;
};

// The settings of a block topology that validate_topology accepted.
inline slurm_block_settings block_settings(const slurm_topology& st) {
    return {base_block_size(st), st.block_sizes, static_cast<std::uint32_t>(st.blocks.size())};
}

// A cluster described to Slurm, ready for an allocator.
struct slurm_cluster {
    topology topo;
    slurm_block_settings settings;  // for the slurm-block policy: slurm_block(settings)
};

// Builds the cluster of a block topology whose nodes hold `gpus_per_node`
// GPUs each.
// - One domain per base block, in config order, named after the block; an
//   empty block is an empty domain, so level arithmetic keeps its place.
// - Nodes of a block are ordered as Slurm indexes them: by their position in
//   `node_order` (slurm.conf's node order) when it is given, else in the order
//   of the block's node list.
// - Nodes of `node_order` that no block holds follow the blocks, each as a
//   one-node domain of its own name ("node:" and its name when a block has
//   that name: Slurm keeps block and node names apart); slurm-block gives
//   them to jobs only when no base-block node can serve (as
//   topology_p_eval_nodes does).
// Errors: not a block topology, a topology Slurm would reject, a block node
// missing from a given node_order, a node listed twice in it, gpus_per_node
// out of range.
inline expected<slurm_cluster, error> make_slurm_cluster(const slurm_topology& st, std::uint32_t gpus_per_node,
                                                         std::span<const std::string> node_order = {}) {
    if (st.type != slurm_topology::kind::block)
        return unexpected(make_error("a cluster from a Slurm topology needs a block topology (BlockName lines or a "
                                     "block: entry): its base blocks become the NVLink domains"));
    if (auto ok = validate_topology(st); !ok) return unexpected(std::move(ok).error());
    std::unordered_map<std::string, std::size_t> rank;
    for (std::size_t i = 0; i < node_order.size(); ++i) {
        // Nodes outside the blocks become nodes of the cluster: their names
        // must read back from a hostlist as the blocks' names do.
        if (auto ok = detail::check_entity_name("node", node_order[i], 0); !ok)
            return unexpected(make_error("the cluster's node list: " + ok.error().message));
        if (!rank.emplace(node_order[i], i).second)
            return unexpected(
                make_error("node " + detail::quoted(node_order[i]) + " is listed twice in the cluster's node list"));
    }
    topology_builder builder;
    for (const slurm_block& block : st.blocks) {
        std::vector<std::string> nodes = block.nodes;
        if (!node_order.empty()) {
            for (const std::string& node : nodes)
                if (!rank.contains(node))
                    return unexpected(make_error("node " + detail::quoted(node) + " of block " +
                                                 detail::quoted(block.name) +
                                                     " is not in the cluster's node list",
                                                 block.line));
            std::stable_sort(nodes.begin(), nodes.end(),
                             [&](const std::string& a, const std::string& b) { return rank.at(a) < rank.at(b); });
        }
        builder.add_domain(block.name, gpus_per_node, std::move(nodes));
    }
    std::unordered_set<std::string_view> block_names;
    for (const slurm_block& block : st.blocks) block_names.insert(block.name);
    for (const std::string& node : nodes_outside_blocks(st, node_order))
        builder.add_domain(block_names.contains(node) ? "node:" + node : node, gpus_per_node, {node});
    auto built = builder.build();
    if (!built) return unexpected(std::move(built).error());
    return slurm_cluster{std::move(*built), block_settings(st)};
}

// topology.yaml: the cluster of its default topology.
inline expected<slurm_cluster, error> make_slurm_cluster(const slurm_topology_set& set, std::uint32_t gpus_per_node,
                                                         std::span<const std::string> node_order = {}) {
    if (auto ok = validate_topology_set(set); !ok) return unexpected(std::move(ok).error());
    const slurm_topology& st = set.topologies[set.default_index];
    auto cluster = make_slurm_cluster(st, gpus_per_node, node_order);
    if (!cluster) return unexpected(make_error("topology " + detail::quoted(st.name) + ": " + cluster.error().message));
    return cluster;
}

// The block topology of a cluster, for topology.conf or topology.yaml: a
// base block per domain, named after it, its nodes in topology order. With
// `settings` (a cluster make_slurm_cluster built), only the leading
// settings->blocks domains are blocks (the rest were nodes outside every
// block, which belong in slurm.conf) and BlockSizes is kept. GPUs per node
// have no place in these files. validate_topology checks the result (a
// domain name Slurm would refuse, say).
inline slurm_topology block_topology_of(const topology& t, const slurm_block_settings* settings = nullptr) {
    slurm_topology st;
    st.type = slurm_topology::kind::block;
    const std::uint32_t blocks = settings ? std::min(settings->blocks, t.domain_count()) : t.domain_count();
    for (domain_id d = 0; d < blocks; ++d) {
        const domain_info& domain = t.domain(d);
        slurm_block block{domain.name, {}, 0};
        for (node_id n = domain.first_node; n < domain.end_node(); ++n) block.nodes.push_back(t.node(n).name);
        st.blocks.push_back(std::move(block));
    }
    if (settings) st.block_sizes = settings->block_sizes;
    return st;
}

}  // namespace topoblock::io
