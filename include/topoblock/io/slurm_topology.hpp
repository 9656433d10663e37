#pragma once

// A neutral description of a Slurm topology (topology.conf or one entry of
// topology.yaml) and the checks Slurm applies to it. No parsing here.
//
// Rules follow Slurm 25.05's src/plugins/topology/block/block_record.c,
// src/plugins/topology/tree/switch_record.c and the topology.conf(5) /
// topology.yaml(5) man pages; docs/formats.md lists each rule and its source.

#include <topoblock/policy/slurm_block.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace topoblock::io {

// A base block of topology/block: the nodes of one NVLink domain, say.
// `line` records where it was read (0 = built in code); it is provenance, not
// content, so equality ignores it.
struct slurm_block {
    std::string name;
    std::vector<std::string> nodes;
    std::uint32_t line = 0;

    friend bool operator==(const slurm_block& a, const slurm_block& b) {
        return a.name == b.name && a.nodes == b.nodes;
    }
};

// A switch of topology/tree: a leaf holds nodes, an inner switch holds
// child switches, never both. Slurm reads LinkSpeed as an unsigned number
// and does not use it yet.
struct slurm_switch {
    std::string name;
    std::vector<std::string> nodes;
    std::vector<std::string> children;
    std::optional<std::uint32_t> link_speed;
    std::uint32_t line = 0;

    friend bool operator==(const slurm_switch& a, const slurm_switch& b) {
        return a.name == b.name && a.nodes == b.nodes && a.children == b.children &&
               a.link_speed == b.link_speed;
    }
};

struct slurm_topology {
    enum class kind { block, tree, flat };

    kind type = kind::flat;
    std::string name;                        // topology.yaml only; empty for topology.conf
    std::vector<slurm_block> blocks;         // kind::block
    std::vector<std::uint32_t> block_sizes;  // as given, in nodes; empty = not set
    std::vector<slurm_switch> switches;      // kind::tree

    friend bool operator==(const slurm_topology&, const slurm_topology&) = default;
};

// topology.yaml: several named topologies, one of them the cluster default.
struct slurm_topology_set {
    std::vector<slurm_topology> topologies;
    std::size_t default_index = 0;

    friend bool operator==(const slurm_topology_set&, const slurm_topology_set&) = default;
};

// Slurm keeps block levels in a 16-bit map: the largest level is 2^15 base
// blocks (block_record.c, "block_level > 15").
inline constexpr std::uint32_t slurm_max_block_level = ::topoblock::slurm_block::max_level;
// SwitchName may not be longer than HOST_NAME_MAX (64) characters.
inline constexpr std::size_t slurm_max_switch_name = 64;
// Without BlockSizes Slurm enables levels 0..4: 1, 2, 4, 8, 16 base blocks.
inline constexpr std::uint32_t slurm_default_block_levels = 5;

namespace detail {

using topoblock::detail::quoted;

inline expected<void, error> fail(std::string message, std::uint32_t line = 0) {
    return unexpected(make_error(std::move(message), line));
}

// Whether a name may be written back unquoted into a hostlist, a key=value
// line and YAML: printable ASCII without blanks, and none of the characters
// those formats give a meaning (# = , [ ] " ' \).
inline bool is_plain_name_char(char c) noexcept {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte < 0x7f && std::string_view("#=,[]\"'\\").find(c) == std::string_view::npos;
}

// Names are written back unquoted into key=value lines, hostlists and YAML,
// so they must be non-empty words of plain characters: a node named "a,b" or
// "c[1-2]" would read back as other nodes.
inline expected<void, error> check_entity_name(std::string_view what, const std::string& name,
                                               std::uint32_t line) {
    if (name.empty()) return fail(std::string(what) + " without a name", line);
    if (!std::all_of(name.begin(), name.end(), is_plain_name_char))
        return fail(std::string(what) + " name " + detail::quoted(name) +
                        " contains a blank, a control or non-ASCII byte, or one of # = , [ ] \" ' \\",
                    line);
    return {};
}

inline expected<void, error> check_node_names(std::string_view owner, const std::vector<std::string>& nodes,
                                              std::uint32_t line) {
    for (const std::string& node : nodes)
        if (auto ok = check_entity_name("node", node, line); !ok)
            return fail(std::string(owner) + ": " + ok.error().message, line);
    return {};
}

// A block's nodes as Slurm holds them, a set: a name the hostlist repeats
// (`n[1-4],n4`) is one node, kept where it first appears. Slurm turns each
// block's hostlist into a node bitmap (node_name2bitmap), so it never sees
// the repeat; the parsers read blocks the same way.
inline void drop_repeated_nodes(std::vector<std::string>& nodes) {
    std::set<std::string_view> seen;
    std::vector<bool> repeat(nodes.size(), false);
    bool any = false;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (!seen.insert(nodes[i]).second) repeat[i] = any = true;
    if (!any) return;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (repeat[i]) continue;
        if (kept != i) nodes[kept] = std::move(nodes[i]);
        ++kept;
    }
    nodes.resize(kept);
}


inline expected<void, error> validate_blocks(const slurm_topology& topo);
inline expected<void, error> validate_tree(const slurm_topology& topo);

}  // namespace detail

// BlockSizes: the first value is the planning base block size; each later one
// must be the base times a power of two (at most 2^15): the rule the policy
// states (slurm_block::block_size_error). Any order, repeats included:
// Slurm's _read_topo_file sets one level per value (the man page lists them
// ascending, the parser does not ask).
inline expected<void, error> validate_block_sizes(std::span<const std::uint32_t> sizes) {
    if (sizes.empty()) return {};
    if (sizes.front() == 0) return detail::fail("BlockSizes: the base block size must be positive");
    if (const std::string wrong = ::topoblock::slurm_block::block_size_error(sizes.front(), sizes); !wrong.empty())
        return detail::fail("BlockSizes: " + wrong);
    return {};
}

// The planning base block size in nodes: the first BlockSizes value, else the
// node count of the first block that has nodes (block_record_validate); 0 if
// neither exists.
inline std::uint32_t base_block_size(const slurm_topology& topo) {
    if (!topo.block_sizes.empty()) return topo.block_sizes.front();
    for (const slurm_block& block : topo.blocks)
        if (!block.nodes.empty()) return static_cast<std::uint32_t>(block.nodes.size());
    return 0;
}

// The block sizes (in nodes) Slurm reports (`scontrol show topology`) and
// aggregates blocks by: BlockSizes as given or the default levels of 1, 2,
// 4, 8, 16 base blocks, cut after the first level that spans all configured
// blocks, as block_record_validate does. Node selection still uses every
// level, cut or not (slurm_block::shape). Assumes validate_block_sizes
// passed.
inline std::vector<std::uint32_t> effective_block_sizes(const slurm_topology& topo) {
    const std::uint32_t base = base_block_size(topo);
    if (base == 0) return {};
    std::vector<std::uint32_t> levels;  // in base blocks
    if (topo.block_sizes.empty()) {
        for (std::uint32_t level = 0; level < slurm_default_block_levels; ++level)
            levels.push_back(std::uint32_t{1} << level);
    } else {
        for (std::uint32_t size : topo.block_sizes) levels.push_back(size / base);
        // Slurm walks its level bits upwards, whatever order the file gave.
        std::sort(levels.begin(), levels.end());
        levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    }
    std::vector<std::uint32_t> sizes;
    for (std::uint32_t blocks : levels) {
        sizes.push_back(blocks * base);
        if (blocks >= topo.blocks.size()) break;
    }
    return sizes;
}

// Checks a topology as Slurm would before using it; the error names the
// entity (and its line when it was read from a file).
inline expected<void, error> validate_topology(const slurm_topology& topo) {
    switch (topo.type) {
        case slurm_topology::kind::block:
            if (!topo.switches.empty()) return detail::fail("a block topology cannot have switches");
            return detail::validate_blocks(topo);
        case slurm_topology::kind::tree:
            if (!topo.blocks.empty() || !topo.block_sizes.empty())
                return detail::fail("a tree topology cannot have blocks or BlockSizes");
            return detail::validate_tree(topo);
        case slurm_topology::kind::flat:
            if (!topo.blocks.empty() || !topo.block_sizes.empty() || !topo.switches.empty())
                return detail::fail("a flat topology has no blocks or switches");
            return {};
    }
    return detail::fail("unknown topology kind");
}

// topology.yaml: every topology valid, names present and unique, the default
// index in range.
inline expected<void, error> validate_topology_set(const slurm_topology_set& set) {
    if (set.topologies.empty()) return detail::fail("no topology defined");
    if (set.default_index >= set.topologies.size())
        return detail::fail("default topology index " + std::to_string(set.default_index) +
                            " is out of range");
    std::set<std::string_view> seen;
    for (const slurm_topology& topo : set.topologies) {
        if (auto ok = detail::check_entity_name("topology", topo.name, 0); !ok) return ok;
        if (!seen.insert(topo.name).second)
            return detail::fail("topology " + detail::quoted(topo.name) + " is defined twice");
        if (auto ok = validate_topology(topo); !ok)
            return detail::fail("topology " + detail::quoted(topo.name) + ": " + ok.error().message, ok.error().line);
    }
    return {};
}

// The names in cluster_nodes that no block holds (block topology) or that
// sit under no leaf switch (tree topology), in the given order. Slurm only
// warns about them ("Blocks lack access to N nodes"), but jobs can never be
// placed on them under that topology.
inline std::vector<std::string> nodes_outside_blocks(const slurm_topology& topo,
                                                     std::span<const std::string> cluster_nodes) {
    std::set<std::string_view> placed;
    for (const slurm_block& block : topo.blocks) placed.insert(block.nodes.begin(), block.nodes.end());
    for (const slurm_switch& sw : topo.switches) placed.insert(sw.nodes.begin(), sw.nodes.end());
    std::vector<std::string> outside;
    if (topo.type == slurm_topology::kind::flat) return outside;
    for (const std::string& node : cluster_nodes)
        if (!placed.contains(node)) outside.push_back(node);
    return outside;
}

namespace detail {

inline expected<void, error> validate_blocks(const slurm_topology& topo) {
    if (topo.blocks.empty()) return fail("no blocks configured");
    std::map<std::string_view, const slurm_block*> by_name;
    std::map<std::string_view, const slurm_block*> owner;  // node -> block
    for (const slurm_block& block : topo.blocks) {
        if (auto ok = check_entity_name("block", block.name, block.line); !ok) return ok;
        if (auto ok = check_node_names("block " + detail::quoted(block.name), block.nodes, block.line); !ok) return ok;
        if (auto [it, fresh] = by_name.emplace(block.name, &block); !fresh)
            return fail("block " + detail::quoted(block.name) + " is defined twice" +
                            (it->second->line ? " (first at line " + std::to_string(it->second->line) + ")" : ""),
                        block.line);
        for (const std::string& node : block.nodes)
            if (auto [it, fresh] = owner.emplace(node, &block); !fresh) {
                if (it->second == &block)
                    return fail("node " + detail::quoted(node) + " is listed twice in block " + detail::quoted(block.name), block.line);
                return fail("node " + detail::quoted(node) + " is in block " + detail::quoted(it->second->name) + " and in block " +
                                detail::quoted(block.name),
                            block.line);
            }
    }
    if (auto ok = validate_block_sizes(topo.block_sizes); !ok) return ok;
    // Blocks may hold fewer nodes than the base size, or none (Slurm 25.05
    // dropped the "children count lower than bblock_node_cnt" check), but
    // something must fix the base size.
    if (base_block_size(topo) == 0) return fail("no block holds nodes and BlockSizes is not set");
    return {};
}

// A switch that is its own ancestor, as the switches from it round to it
// again (first == last); empty when the children form no loop. A depth-first
// search with an explicit stack: a chain of 60,000 switches overflowed the
// call stack when each level was a call. children[i] are the indexes of
// switch i's children.
inline std::vector<std::size_t> find_switch_loop(const std::vector<std::vector<std::size_t>>& children) {
    enum : std::uint8_t { unseen, on_path, done };
    std::vector<std::uint8_t> state(children.size(), unseen);
    struct frame {
        std::size_t node;
        std::size_t next_child;
    };
    std::vector<frame> path;
    for (std::size_t root = 0; root < children.size(); ++root) {
        if (state[root] != unseen) continue;
        state[root] = on_path;
        path.push_back({root, 0});
        while (!path.empty()) {
            frame& top = path.back();
            if (top.next_child == children[top.node].size()) {
                state[top.node] = done;
                path.pop_back();
                continue;
            }
            const std::size_t child = children[top.node][top.next_child++];
            if (state[child] == on_path) {
                std::vector<std::size_t> loop;
                auto it = path.begin();
                while (it->node != child) ++it;
                for (; it != path.end(); ++it) loop.push_back(it->node);
                loop.push_back(child);
                return loop;
            }
            if (state[child] == unseen) {
                state[child] = on_path;
                path.push_back({child, 0});
            }
        }
    }
    return {};
}

// "s1 -> s2 -> s3 -> s1"; a long loop shows its first and last switches and
// how many it has, so the message stays short.
inline std::string describe_switch_loop(const std::vector<slurm_switch>& switches,
                                        const std::vector<std::size_t>& loop) {
    constexpr std::size_t shown_each_end = 4;
    const bool elide = loop.size() > 2 * shown_each_end + 2;  // more than nine switches
    std::string out;
    for (std::size_t i = 0; i < loop.size(); ++i) {
        if (elide && i == shown_each_end) {
            out += " -> ...";
            i = loop.size() - shown_each_end - 1;
            continue;
        }
        out += (out.empty() ? "" : " -> ") + switches[loop[i]].name;
    }
    if (elide) out += " (" + std::to_string(loop.size() - 1) + " switches)";
    return out;
}

inline expected<void, error> validate_tree(const slurm_topology& topo) {
    if (topo.switches.empty()) return fail("no switches configured");
    std::map<std::string_view, const slurm_switch*> by_name;
    for (const slurm_switch& sw : topo.switches) {
        if (auto ok = check_entity_name("switch", sw.name, sw.line); !ok) return ok;
        if (sw.name.size() > slurm_max_switch_name)
            return fail("switch name " + detail::quoted(sw.name) + " is longer than " +
                            std::to_string(slurm_max_switch_name) + " characters",
                        sw.line);
        if (auto ok = check_node_names("switch " + detail::quoted(sw.name), sw.nodes, sw.line); !ok) return ok;
        if (!sw.nodes.empty() && !sw.children.empty())
            return fail("switch " + detail::quoted(sw.name) + " has both child switches and nodes", sw.line);
        if (auto [it, fresh] = by_name.emplace(sw.name, &sw); !fresh)
            return fail("switch " + detail::quoted(sw.name) + " is defined twice", sw.line);
    }
    for (const slurm_switch& sw : topo.switches)
        for (const std::string& child : sw.children) {
            if (child == sw.name) return fail("switch " + detail::quoted(sw.name) + " lists itself as a child", sw.line);
            if (!by_name.contains(child))
                return fail("switch " + detail::quoted(sw.name) + " has unknown child switch " + detail::quoted(child), sw.line);
        }
    std::vector<std::vector<std::size_t>> children(topo.switches.size());
    for (std::size_t i = 0; i < topo.switches.size(); ++i)
        for (const std::string& child : topo.switches[i].children)
            children[i].push_back(static_cast<std::size_t>(by_name.at(child) - topo.switches.data()));
    if (const auto loop = find_switch_loop(children); !loop.empty())
        return fail("switches form a loop: " + describe_switch_loop(topo.switches, loop),
                    topo.switches[loop.front()].line);
    return {};
}

}  // namespace detail

}  // namespace topoblock::io
