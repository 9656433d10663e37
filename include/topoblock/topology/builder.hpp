#pragma once

#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace topoblock {

// The most GPUs one node may have: a node's GPUs are one 64-bit mask.
inline constexpr std::uint32_t max_gpus_per_node = 64;

// Collects domains, nodes and group levels, then validates them all at once in
// build(): a bad description is an error value naming what and where.
class topology_builder {
public:
    struct group_spec {
        std::string name;
        std::vector<std::string> domains;
    };

    // A domain of named nodes, each holding `gpus_per_node` GPUs. An empty
    // name list is an empty domain (it keeps its place in the order).
    topology_builder& add_domain(std::string name, std::uint32_t gpus_per_node,
                                 std::vector<std::string> node_names) {
        domains_.push_back({std::move(name), gpus_per_node, std::move(node_names)});
        return *this;
    }

    // A domain of `node_count` nodes named prefix + number, the numbers zero
    // padded to `width` digits and counted from `first_number`.
    topology_builder& add_numbered_domain(std::string name, std::uint32_t node_count,
                                          std::uint32_t gpus_per_node, const std::string& prefix,
                                          std::uint32_t first_number, std::uint32_t width) {
        std::vector<std::string> names;
        names.reserve(node_count);
        for (std::uint32_t i = 0; i < node_count; ++i) names.push_back(numbered_name(prefix, first_number + i, width));
        return add_domain(std::move(name), gpus_per_node, std::move(names));
    }

    // A grouping level above the domains, listed from the level nearest the
    // domains upwards; every domain must sit in exactly one group of it.
    topology_builder& add_level(std::string name, std::vector<group_spec> groups) {
        levels_.push_back({std::move(name), std::move(groups)});
        return *this;
    }

    expected<topology, error> build() const {
        topology::tables t;
        std::unordered_map<std::string, std::size_t> domain_index;
        std::unordered_map<std::string, std::size_t> node_domain;
        for (std::size_t d = 0; d < domains_.size(); ++d) {
            const auto& spec = domains_[d];
            const std::string where = "domain " + detail::quoted(spec.name);
            if (spec.name.empty()) return fail("domain #" + std::to_string(d + 1) + " has no name");
            if (!domain_index.emplace(spec.name, d).second)
                return fail("duplicate domain name " + detail::quoted(spec.name));
            if (spec.gpus_per_node == 0) return fail(where + ": nodes must hold at least one GPU");
            if (spec.gpus_per_node > max_gpus_per_node)
                return fail(where + ": " + std::to_string(spec.gpus_per_node) + " GPUs per node, at most " +
                            std::to_string(max_gpus_per_node) + " are supported");
            domain_info info{spec.name, static_cast<node_id>(t.nodes.size()),
                             static_cast<std::uint32_t>(spec.nodes.size()), spec.gpus_per_node};
            for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
                const std::string& node = spec.nodes[i];
                if (node.empty()) return fail(where + ": node #" + std::to_string(i + 1) + " has no name");
                const auto [it, fresh] = node_domain.emplace(node, d);
                if (!fresh)
                    return fail("duplicate node name " + detail::quoted(node) + " in " + where +
                                (it->second == d ? "" : " and domain " + detail::quoted(domains_[it->second].name)));
                if (t.nodes.size() >= max_nodes)
                    return fail("more than " + std::to_string(max_nodes) + " nodes");
                t.nodes.push_back({node, static_cast<domain_id>(d), static_cast<std::uint32_t>(i), spec.gpus_per_node, 0});
            }
            t.domains.push_back(std::move(info));
        }
        if (t.nodes.empty()) return fail("the topology has no nodes");
        for (const auto& level : levels_) {
            auto built = build_level(level, domain_index);
            if (!built) return unexpected(std::move(built).error());
            t.levels.push_back(std::move(*built));
        }
        return topology(std::move(t));
    }

    static std::string numbered_name(const std::string& prefix, std::uint32_t number, std::uint32_t width) {
        std::string digits = std::to_string(number);
        if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
        return prefix + digits;
    }

    // The most nodes a topology holds: every GPU index stays inside 32 bits
    // with room to spare.
    static constexpr std::size_t max_nodes = std::size_t{1} << 24;

private:

    struct domain_spec {
        std::string name;
        std::uint32_t gpus_per_node;
        std::vector<std::string> nodes;
    };
    struct level_spec {
        std::string name;
        std::vector<group_spec> groups;
    };

    static unexpected<error> fail(std::string message) { return unexpected(make_error(std::move(message))); }

    expected<group_level, error> build_level(const level_spec& spec,
                                             const std::unordered_map<std::string, std::size_t>& domain_index) const {
        const std::string where = "level " + detail::quoted(spec.name);
        group_level level;
        level.name = spec.name;
        level.group_of_domain.assign(domains_.size(), npos);
        std::unordered_map<std::string, std::size_t> seen_groups;
        for (std::size_t g = 0; g < spec.groups.size(); ++g) {
            const auto& group = spec.groups[g];
            if (!seen_groups.emplace(group.name, g).second)
                return fail(where + ": duplicate group name " + detail::quoted(group.name));
            level.group_names.push_back(group.name);
            level.domains_of_group.emplace_back();
            for (const auto& domain_name : group.domains) {
                const auto it = domain_index.find(domain_name);
                if (it == domain_index.end())
                    return fail(where + ", group " + detail::quoted(group.name) + ": unknown domain " +
                                detail::quoted(domain_name));
                auto& slot = level.group_of_domain[it->second];
                if (slot != npos)
                    return fail(where + ": domain " + detail::quoted(domain_name) + " is in group " +
                                detail::quoted(level.group_names[slot]) +
                                " and group " + detail::quoted(group.name));
                slot = static_cast<group_id>(g);
                level.domains_of_group.back().push_back(static_cast<domain_id>(it->second));
            }
        }
        for (std::size_t d = 0; d < domains_.size(); ++d)
            if (level.group_of_domain[d] == npos)
                return fail(where + ": domain " + detail::quoted(domains_[d].name) + " is in no group");
        return level;
    }

    static constexpr group_id npos = static_cast<group_id>(-1);
    std::vector<domain_spec> domains_;
    std::vector<level_spec> levels_;
};

}  // namespace topoblock
