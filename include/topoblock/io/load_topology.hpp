#pragma once

// One way to load a topology from any source topoblock reads, as a command
// line names it: a preset spec (nvl72:16), a file holding one, Slurm's
// topology.conf or topology.yaml, or a Kubernetes node listing
// (`kubectl get nodes --show-labels` or `-o json`). The format is told from
// the file's content (and its name), errors name the file, the line and what
// was wrong. Slurm sources also give the settings slurm-block needs.
//
// Opt-in, like every io header: it reads files (<filesystem>, <cstdio>),
// which topoblock.hpp's core leaves out. read_topology does the same from
// text already in memory.

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/k8s_nodes.hpp>
#include <topoblock/io/slurm_cluster.hpp>
#include <topoblock/io/topology_conf.hpp>
#include <topoblock/io/topology_yaml.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/read_file.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/support/utf8_bom.hpp>
#include <topoblock/topology/presets.hpp>
#include <topoblock/topology/topology.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::io {

enum class topology_format {
    spec,            // nvl72:16, or a file holding a spec
    topology_conf,   // Slurm topology.conf
    topology_yaml,   // Slurm topology.yaml (its default topology)
    kubectl_labels,  // kubectl get nodes --show-labels
    kubectl_json,    // kubectl get nodes -o json
};

inline std::string_view format_name(topology_format f) noexcept {
    switch (f) {
        case topology_format::spec: return "spec";
        case topology_format::topology_conf: return "topology.conf";
        case topology_format::topology_yaml: return "topology.yaml";
        case topology_format::kubectl_labels: return "kubectl node labels";
        case topology_format::kubectl_json: return "kubectl JSON";
    }
    return "?";
}

struct topology_load_options {
    // GPUs of each node of a Slurm file (which does not say), and of a
    // labelled Kubernetes node without a GPU count.
    std::uint32_t gpus_per_node = 4;
    // slurm.conf's node order, nodes outside every block included
    // (make_slurm_cluster). Slurm sources only: another source refuses it.
    std::vector<std::string> node_order;
};

struct loaded_topology {
    topology topo;
    topology_format format = topology_format::spec;
    // Slurm sources: the block levels of the file, for the slurm-block
    // policy. Other sources: nullopt (the policy's defaults fit them).
    std::optional<slurm_block_settings> slurm;
    // Kubernetes sources: each node's health as listed (per node id);
    // other sources: empty, every node up.
    std::vector<node_health> health;
};

namespace detail::load {

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The spec a spec file holds: its lines without '#' comments and blanks,
// joined.
inline std::string spec_of_file(std::string_view text) {
    std::string spec;
    topoblock::detail::text_lines lines(topoblock::detail::without_utf8_bom(text));
    for (std::string_view line; lines.next(line);)
        for (const char c : line.substr(0, line.find('#')))
            if (c != ' ' && c != '\t') spec += c;
    return spec;
}

// Characters a spec is written with.
inline bool spec_text(std::string_view s) noexcept {
    for (const char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '+' || c == '@')) return false;
    return !s.empty();
}

// The first line that is neither blank nor a '#' comment, without the
// blanks and YAML dashes before it.
inline std::string_view first_significant(std::string_view text) {
    topoblock::detail::text_lines lines(topoblock::detail::without_utf8_bom(text));
    for (std::string_view line; lines.next(line);) {
        const std::size_t first = line.find_first_not_of(" \t-");
        if (first != std::string_view::npos && line[first] != '#') return line.substr(first);
    }
    return {};
}

inline error in_file(error e, std::string_view name) {
    if (e.file.empty()) e.file = std::string(name);
    return e;
}

}  // namespace detail::load

// The format of a topology file from its name and content:
// - a name ending in .yaml/.yml is topology.yaml, .json kubectl JSON, .conf
//   topology.conf;
// - else the content: '{' first is kubectl JSON; a first line with NAME and
//   LABELS the kubectl label listing; a first entry starting "topology:"
//   topology.yaml; a file of spec characters only (after comments and
//   blanks) a spec; anything else topology.conf (whose reader then names
//   the line that is wrong).
inline topology_format sniff_topology_format(std::string_view name, std::string_view text) {
    using detail::load::ends_with;
    if (ends_with(name, ".yaml") || ends_with(name, ".yml")) return topology_format::topology_yaml;
    if (ends_with(name, ".json")) return topology_format::kubectl_json;
    if (ends_with(name, ".conf")) return topology_format::topology_conf;
    if (looks_like_json(text)) return topology_format::kubectl_json;
    if (looks_like_kubectl_nodes(text)) return topology_format::kubectl_labels;
    if (detail::load::first_significant(text).starts_with("topology:")) return topology_format::topology_yaml;
    if (detail::load::spec_text(detail::load::spec_of_file(text))) return topology_format::spec;
    return topology_format::topology_conf;
}

// Reads a topology file's text. `name` (the file name, or empty) is used to
// tell the format (sniff_topology_format) and names the file in errors.
// Errors: the reader's, with the file, line and column; a node order given
// for a source that is not a Slurm file.
inline expected<loaded_topology, error> read_topology(std::string_view text, std::string_view name,
                                                      const topology_load_options& options = {}) {
    const topology_format format = sniff_topology_format(name, text);
    const auto fail = [&](error e) { return unexpected(detail::load::in_file(std::move(e), name)); };
    const bool slurm = format == topology_format::topology_conf || format == topology_format::topology_yaml;
    if (!slurm && !options.node_order.empty())
        return fail(make_error("a node order applies to Slurm topology files, not to a " +
                               std::string(format_name(format))));
    switch (format) {
        case topology_format::spec: {
            const std::string spec = detail::load::spec_of_file(text);
            auto t = parse_topology_spec(spec);
            if (!t) {
                // Its column counts in the spec the file's lines make, not
                // in the file: the spec is quoted instead.
                error e = std::move(t).error();
                e.message = "spec " + detail::quoted(spec) + " (column " + std::to_string(e.column) + "): " + e.message;
                e.line = e.column = 0;
                return fail(std::move(e));
            }
            return loaded_topology{std::move(*t), format, std::nullopt, {}};
        }
        case topology_format::kubectl_labels:
        case topology_format::kubectl_json: {
            auto k8s = format == topology_format::kubectl_json ? read_k8s_nodes_json(text, options.gpus_per_node)
                                                               : read_k8s_nodes(text, options.gpus_per_node);
            if (!k8s) return fail(std::move(k8s).error());
            return loaded_topology{std::move(k8s->topo), format, std::nullopt, std::move(k8s->health)};
        }
        case topology_format::topology_conf:
        case topology_format::topology_yaml: {
            std::optional<slurm_block_settings> settings;
            auto cluster = [&]() -> expected<slurm_cluster, error> {
                if (format == topology_format::topology_yaml) {
                    auto set = parse_topology_yaml(text);
                    if (!set) return unexpected(std::move(set).error());
                    if (auto ok = validate_topology_set(*set); ok)
                        settings = block_settings(set->topologies[set->default_index]);
                    return make_slurm_cluster(*set, options.gpus_per_node, options.node_order);
                }
                auto conf = parse_topology_conf(text);
                if (!conf) return unexpected(std::move(conf).error());
                settings = block_settings(*conf);
                return make_slurm_cluster(*conf, options.gpus_per_node, options.node_order);
            }();
            if (!cluster) return fail(std::move(cluster).error());
            return loaded_topology{std::move(cluster->topo), format, std::move(settings), {}};
        }
    }
    return fail(make_error("unknown topology format"));
}

// Loads a topology as a command line names it: `source` is a file (read
// with read_topology) when a regular file of that name exists, else a spec
// such as nvl72:16. Errors: a path that names a directory or a device, a
// file that cannot be read, a word that is neither a file nor a spec, and
// read_topology's.
inline expected<loaded_topology, error> load_topology(const std::string& source,
                                                      const topology_load_options& options = {}) {
    auto text = topoblock::detail::read_regular_file(source);
    if (text) return read_topology(*text, source, options);
    if (text.error() != topoblock::detail::file_problem::missing)
        return unexpected(make_error(detail::quoted(source) + " " + std::string(topoblock::detail::describe(text.error()))));
    auto spec = parse_topology_spec(source);
    if (!spec)
        return unexpected(make_error(detail::quoted(source) + " is neither a readable file nor a topology spec (" +
                                     spec.error().to_string() + ")"));
    if (!options.node_order.empty())
        return unexpected(make_error("a node order applies to Slurm topology files, not to a spec"));
    return loaded_topology{std::move(*spec), topology_format::spec, std::nullopt, {}};
}

}  // namespace topoblock::io
