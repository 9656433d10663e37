#pragma once

// A Kubernetes cluster's GPU nodes, from the labels its operators already
// publish, as a topoblock topology:
//
//   $ kubectl get nodes --show-labels
//   NAME    STATUS                     ROLES    AGE   VERSION   LABELS
//   gb-01   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=8a1f...c3.1,nvidia.com/gpu.count=4,...
//   gb-02   Ready,SchedulingDisabled   <none>   9d    v1.31.2   nvidia.com/gpu.clique=8a1f...c3.1,nvidia.com/gpu.count=4,...
//
// - NVLink domain: nodes sharing `nvidia.com/gpu.clique` (the GPU
//   Operator's <ClusterUUID>.<CliqueID> of an NVLink partition), else
//   sharing Topograph's `network.topology.nvidia.com/accelerator` (the same
//   identifier on MNNVL systems). A GPU node with neither is a domain of its
//   own (HGX, DGX B200: NVLink stops at the node). Domains come in the order
//   their first node is listed, named after the label value (a lone node:
//   after the node).
// - GPUs per node: `nvidia.com/gpu.count` (GPU Feature Discovery); a node
//   with a clique label but no count holds `default_gpus_per_node`. A node
//   with neither a count nor an NVLink label, or a count of 0, is not a GPU
//   node and is left out.
// - Levels: Topograph's `network.topology.nvidia.com/leaf`, `spine` and
//   `core` become group levels above the domains (nearest first), each
//   domain in the group of its first node; a domain without the label is a
//   group of its own.
// - Health, from STATUS: Ready is up, Ready,SchedulingDisabled (cordoned)
//   drain, anything else (NotReady, Unknown) down.
// The header line names the columns; NAME, STATUS and LABELS are needed
// (LABELS last, as kubectl prints it). Errors name the line and column.
//
// The same cluster from the API objects themselves (read_k8s_nodes_json):
//
//   $ kubectl get nodes -o json
//   {"kind": "List", "items": [{"metadata": {"name": "gb-01", "labels": {"nvidia.com/gpu.clique": "8a1f...c3.1"}},
//                               "spec": {"unschedulable": true},
//                               "status": {"capacity": {"nvidia.com/gpu": "4"},
//                                          "conditions": [{"type": "Ready", "status": "True"}]}}, ...]}
//
// - Labels as above (metadata.labels).
// - GPUs per node: status.capacity `nvidia.com/gpu` (the device plugin's
//   count), else the `nvidia.com/gpu.count` label, else, for a node with an
//   NVLink label, `default_gpus_per_node`. A capacity of 0, or neither a
//   capacity nor an NVLink label, is not a GPU node.
// - Health: the Ready condition "True" is up, and drain when
//   spec.unschedulable (cordoned) is true; any other Ready status, or none,
//   is down.
// - A single Node object (`kubectl get node NAME -o json`) is a listing of
//   one.

#include <topoblock/io/detail/json.hpp>
#include <topoblock/io/hostlist.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/support/utf8_bom.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace topoblock::io {

inline constexpr std::string_view k8s_clique_label = "nvidia.com/gpu.clique";
inline constexpr std::string_view k8s_accelerator_label = "network.topology.nvidia.com/accelerator";
inline constexpr std::string_view k8s_gpu_count_label = "nvidia.com/gpu.count";
// Topograph's switch levels, nearest the nodes first.
inline constexpr std::array<std::string_view, 3> k8s_level_labels{
    "network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine", "network.topology.nvidia.com/core"};

struct k8s_cluster {
    topology topo;
    std::vector<node_health> health;  // per node id
};

namespace detail::k8s {

struct listed_node {
    std::string name;
    node_health health = node_health::up;
    std::optional<std::string> domain;  // the NVLink label's value
    std::optional<std::uint32_t> gpus;
    std::array<std::optional<std::string>, k8s_level_labels.size()> levels;
};

// Kubernetes node names are DNS subdomain names (RFC 1123, as the API
// server's IsDNS1123Subdomain checks them): at most 253 characters of
// lowercase letters, digits, '-' and '.', each dot-separated label starting
// and ending with a letter or digit. Such a name never holds a character a
// hostlist gives a meaning (',', '[', ']', blanks), so the hostlists printed
// for the nodes read back as the same nodes.
inline constexpr std::size_t max_node_name = 253;

// Where the first character that breaks the rule is (name.size() for a name
// that ends wrongly or is empty), or npos when the name is valid.
inline std::size_t node_name_problem(std::string_view name) noexcept {
    const auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (name.empty()) return 0;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (alphanumeric(c)) continue;
        if (c != '-' && c != '.') return i;
        // '-' and '.' stand between letters or digits, except '-' next to '-'.
        const bool after_ok = i > 0 && (alphanumeric(name[i - 1]) || (c == '-' && name[i - 1] == '-'));
        if (!after_ok) return i;
        if (i + 1 == name.size()) return i;
        if (c == '.' && !alphanumeric(name[i + 1])) return i + 1;
    }
    if (name.size() > max_node_name) return max_node_name;
    return std::string_view::npos;
}

// Label values (Kubernetes' IsValidLabelValue): at most 63 letters, digits,
// '-', '_' and '.', starting and ending with a letter or digit. The values
// read here name domains and groups, which messages and reports print.
inline constexpr std::size_t max_label_value = 63;

// Where the first character that breaks the rule is, or npos.
inline std::size_t label_value_problem(std::string_view value) noexcept {
    const auto alphanumeric = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        const bool inner = c == '-' || c == '_' || c == '.';
        if (!alphanumeric(c) && !(inner && i > 0 && i + 1 < value.size())) return i;
    }
    return value.size() > max_label_value ? max_label_value : std::string_view::npos;
}

inline node_health health_of(std::string_view status) {
    if (status == "Ready") return node_health::up;
    if (status.starts_with("Ready,") && status.find("SchedulingDisabled") != std::string_view::npos) return node_health::drain;
    if (status.starts_with("Ready,")) return node_health::up;
    return node_health::down;
}

// A GPU count as a label or a capacity states it: decimal digits, at most
// 2^32 - 1. `what` names where it was read.
inline expected<std::uint32_t, error> gpu_count(const listed_node& node, std::string_view what, std::string_view value,
                                                std::uint32_t line, std::uint32_t column) {
    std::uint64_t n = 0;
    if (value.empty() || value.size() > max_number_digits ||
        value.find_first_not_of("0123456789") != std::string_view::npos || (n = to_number(value)) > 0xFFFF'FFFFu)
        return unexpected(make_error("node " + detail::quoted(node.name) + ": " + std::string(what) + " " +
                                         detail::quoted(value) + " is not a GPU count",
                                     line, column));
    return static_cast<std::uint32_t>(n);
}

// One label of a node: `key` with `value` (empty when none), the value
// starting at line:column. Errors name the node and point into the value.
inline expected<void, error> read_label(listed_node& node, std::string_view key, std::string_view value,
                                        std::uint32_t line, std::uint32_t column) {
    const bool names_a_group = key == k8s_clique_label || key == k8s_accelerator_label ||
                               std::find(k8s_level_labels.begin(), k8s_level_labels.end(), key) != k8s_level_labels.end();
    if (const std::size_t bad = names_a_group ? label_value_problem(value) : std::string_view::npos;
        bad != std::string_view::npos)
        return unexpected(make_error("node " + detail::quoted(node.name) + ": " + std::string(key) + " value " +
                                         detail::quoted(value) +
                                         " is not a Kubernetes label value (at most 63 letters, digits, '-', '_' "
                                         "and '.', starting and ending with a letter or digit)",
                                     line, column + static_cast<std::uint32_t>(bad)));
    if (key == k8s_clique_label || (key == k8s_accelerator_label && !node.domain)) {
        if (!value.empty()) node.domain = std::string(value);
    } else if (key == k8s_gpu_count_label) {
        auto n = gpu_count(node, key, value, line, column);
        if (!n) return unexpected(std::move(n).error());
        node.gpus = *n;
    } else {
        for (std::size_t l = 0; l < k8s_level_labels.size(); ++l)
            if (key == k8s_level_labels[l] && !value.empty()) node.levels[l] = std::string(value);
    }
    return {};
}

// The comma-separated key=value labels of one node; `at` is the column of
// the first.
inline expected<listed_node, error> read_labels(listed_node node, std::string_view labels, std::uint32_t line,
                                                std::uint32_t at) {
    if (labels == "<none>") return node;
    for (std::size_t start = 0; start <= labels.size();) {
        const std::size_t end = std::min(labels.find(',', start), labels.size());
        const std::string_view label = labels.substr(start, end - start);
        const auto column = static_cast<std::uint32_t>(at + start);
        const std::size_t eq = label.find('=');
        if (label.empty() || eq == 0)
            return unexpected(make_error("node " + detail::quoted(node.name) + ": empty label key", line, column));
        const std::string_view key = label.substr(0, eq == std::string_view::npos ? label.size() : eq);
        const std::string_view value = eq == std::string_view::npos ? std::string_view{} : label.substr(eq + 1);
        if (auto ok = read_label(node, key, value, line, column + static_cast<std::uint32_t>(eq + 1)); !ok)
            return unexpected(std::move(ok).error());
        start = end + 1;
    }
    return node;
}

// The error of a node name that is not a Kubernetes node name, or nullopt;
// line:column is where the name starts.
inline std::optional<error> node_name_error(std::string_view name, std::uint32_t line, std::uint32_t column) {
    const std::size_t bad = node_name_problem(name);
    if (bad == std::string_view::npos) return std::nullopt;
    return make_error("node name " + detail::quoted(name) +
                          (bad == max_node_name && name.size() > max_node_name
                               ? " is longer than " + std::to_string(max_node_name) + " characters"
                               : " is not a Kubernetes node name (lowercase letters, digits, '-' and '.', each "
                                 "dot-separated part starting and ending with a letter or digit)"),
                      line, column + static_cast<std::uint32_t>(std::min(bad, name.empty() ? 0 : name.size() - 1)));
}

// The cluster of the GPU nodes read from a listing, in listing order (see
// the top of this file).
inline expected<k8s_cluster, error> build_cluster(std::vector<listed_node> nodes) {
    // Domains in the order of their first node.
    struct domain_nodes {
        std::string name;
        std::vector<std::size_t> members;  // indexes into nodes
    };
    std::vector<domain_nodes> domains;
    std::unordered_map<std::string, std::size_t> domain_of_label;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].domain) {
            domains.push_back({nodes[i].name, {i}});
            continue;
        }
        const auto [it, fresh] = domain_of_label.emplace(*nodes[i].domain, domains.size());
        if (fresh) domains.push_back({*nodes[i].domain, {}});
        domains[it->second].members.push_back(i);
    }
    std::unordered_set<std::string_view> clique_names;  // a lone node named like one is renamed
    for (const auto& d : domains)
        if (nodes[d.members.front()].domain) clique_names.insert(d.name);
    topology_builder builder;
    std::vector<node_health> health;
    for (auto& d : domains) {
        const listed_node& first = nodes[d.members.front()];
        if (!first.domain && clique_names.contains(d.name)) d.name = "node:" + d.name;
        std::vector<std::string> names;
        for (std::size_t i : d.members) {
            if (*nodes[i].gpus != *first.gpus)
                return unexpected(make_error("NVLink domain " + detail::quoted(d.name) + ": node " +
                                             detail::quoted(nodes[i].name) + " has " + std::to_string(*nodes[i].gpus) +
                                             " GPUs, node " + detail::quoted(first.name) + " " +
                                             std::to_string(*first.gpus) + " (" + std::string(k8s_gpu_count_label) + ")"));
            names.push_back(nodes[i].name);
            health.push_back(nodes[i].health);
        }
        builder.add_domain(d.name, *first.gpus, std::move(names));
    }
    for (std::size_t l = 0; l < k8s_level_labels.size(); ++l) {
        bool any = false;
        for (const auto& d : domains) any = any || nodes[d.members.front()].levels[l].has_value();
        if (!any) continue;
        std::vector<topology_builder::group_spec> groups;
        std::unordered_map<std::string, std::size_t> group_of;
        for (const auto& d : domains) {
            const auto& label = nodes[d.members.front()].levels[l];
            // Unlabelled: a group of its own, named so no label can be.
            const std::string group = label ? *label : "(" + d.name + ")";
            const auto [it, fresh] = group_of.emplace(group, groups.size());
            if (fresh) groups.push_back({group, {}});
            groups[it->second].domains.push_back(d.name);
        }
        const std::string_view key = k8s_level_labels[l];
        builder.add_level(std::string(key.substr(key.rfind('/') + 1)), std::move(groups));
    }
    auto built = builder.build();
    if (!built) return unexpected(std::move(built).error());
    return k8s_cluster{std::move(*built), std::move(health)};
}


}  // namespace detail::k8s

// Whether the text starts as kubectl's node table does: a header line
// beginning with NAME and naming LABELS. For tools that take several kinds
// of topology file.
inline bool looks_like_kubectl_nodes(std::string_view text) {
    text = topoblock::detail::without_utf8_bom(text);
    const std::string_view first = text.substr(0, text.find('\n'));
    return first.starts_with("NAME") && first.find("LABELS") != std::string_view::npos;
}

// Reads `kubectl get nodes --show-labels` output (see the top of this file).
inline expected<k8s_cluster, error> read_k8s_nodes(std::string_view text, std::uint32_t default_gpus_per_node = 4) {
    using namespace detail::k8s;
    text = topoblock::detail::without_utf8_bom(text);
    std::vector<listed_node> nodes;
    std::optional<std::size_t> name_at, status_at;
    std::size_t columns = 0;
    topoblock::detail::text_lines lines(text);
    for (std::string_view raw; lines.next(raw);) {
        const std::uint32_t line = lines.number();
        const std::vector<topoblock::detail::text_word> words = topoblock::detail::split_blank_separated(raw);
        if (words.empty()) continue;
        if (!name_at) {  // the header
            for (std::size_t c = 0; c < words.size(); ++c) {
                if (words[c].text == "NAME") name_at = c;
                if (words[c].text == "STATUS") status_at = c;
            }
            if (!name_at || !status_at || words.back().text != "LABELS")
                return unexpected(make_error("expected the header of `kubectl get nodes --show-labels` (NAME, STATUS, "
                                             "..., LABELS), found " + detail::quoted(raw),
                                             line, 1));
            columns = words.size();
            continue;
        }
        if (words.size() != columns)
            return unexpected(make_error("expected " + std::to_string(columns) + " columns as the header has, found " +
                                             std::to_string(words.size()),
                                         line, words.back().column));
        const topoblock::detail::text_word& name = words[*name_at];
        if (auto bad = node_name_error(name.text, line, name.column)) return unexpected(std::move(*bad));
        listed_node node;
        node.name = std::string(name.text);
        node.health = health_of(words[*status_at].text);
        auto read = read_labels(std::move(node), words.back().text, line, words.back().column);
        if (!read) return unexpected(std::move(read).error());
        if (read->gpus == std::uint32_t{0} || (!read->gpus && !read->domain)) continue;  // not a GPU node
        if (!read->gpus) read->gpus = default_gpus_per_node;
        nodes.push_back(std::move(*read));
    }
    if (!name_at) return unexpected(make_error("no header line: expected `kubectl get nodes --show-labels` output"));
    if (nodes.empty()) return unexpected(make_error("no GPU node: none has " + std::string(k8s_gpu_count_label) + " or " +
                                                    std::string(k8s_clique_label)));

    return build_cluster(std::move(nodes));
}

namespace detail::k8s {

// One item of `kubectl get nodes -o json` as a listed node; nullopt when it
// is not a GPU node.
inline expected<std::optional<listed_node>, error> read_node_object(const json::document& doc, const json::value& item,
                                                                    std::uint32_t default_gpus_per_node) {
    using json::kind;
    // The member `key` of `v`, which must be of type `want` when present.
    const auto member = [&](const json::value& v, std::string_view key, kind want,
                            std::string_view path) -> expected<const json::value*, error> {
        const json::value* m = doc.member(v, key);
        if (m != nullptr && m->type != want)
            return unexpected(json::error_at(*m, std::string(path) + " is " + std::string(json::kind_name(m->type)) +
                                                     ", expected " + std::string(json::kind_name(want))));
        return m;
    };
    if (item.type != kind::object)
        return unexpected(json::error_at(item, "expected a Node object, found " + std::string(json::kind_name(item.type))));
    if (const json::value* k = doc.member(item, "kind"); k && (k->type != kind::string || doc.text(*k) != "Node"))
        return unexpected(json::error_at(*k, "expected an object of kind Node, found " +
                                                 (k->type == kind::string ? detail::quoted(doc.text(*k))
                                                                          : std::string(json::kind_name(k->type)))));
    auto metadata = member(item, "metadata", kind::object, "metadata");
    if (!metadata) return unexpected(std::move(metadata).error());
    if (*metadata == nullptr) return unexpected(json::error_at(item, "a Node without metadata"));
    auto name = member(**metadata, "name", kind::string, "metadata.name");
    if (!name) return unexpected(std::move(name).error());
    if (*name == nullptr) return unexpected(json::error_at(**metadata, "a Node without metadata.name"));
    listed_node node;
    node.name = std::string(doc.text(**name));
    if (auto bad = node_name_error(node.name, (*name)->line, (*name)->column + 1)) return unexpected(std::move(*bad));
    auto labels = member(**metadata, "labels", kind::object, "node " + detail::quoted(node.name) + ": metadata.labels");
    if (!labels) return unexpected(std::move(labels).error());
    std::optional<error> wrong;
    if (*labels != nullptr)
        doc.for_each_child(**labels, [&](const json::value& label) {
            if (wrong) return;
            const std::string_view key = doc.key(label);
            if (label.type != kind::string) {
                wrong = json::error_at(label, "node " + detail::quoted(node.name) + ": label " + detail::quoted(key) +
                                                  " is " + std::string(json::kind_name(label.type)) + ", expected a string");
                return;
            }
            // The value's first character is one column after its quote.
            if (auto ok = read_label(node, key, doc.text(label), label.line, label.column + 1); !ok)
                wrong = std::move(ok).error();
        });
    if (wrong) return unexpected(std::move(*wrong));

    const std::string where = "node " + detail::quoted(node.name) + ": ";
    auto spec = member(item, "spec", kind::object, where + "spec");
    if (!spec) return unexpected(std::move(spec).error());
    bool cordoned = false;
    if (*spec != nullptr) {
        auto unschedulable = member(**spec, "unschedulable", kind::boolean, where + "spec.unschedulable");
        if (!unschedulable) return unexpected(std::move(unschedulable).error());
        cordoned = *unschedulable != nullptr && doc.text(**unschedulable) == "true";
    }
    auto status = member(item, "status", kind::object, where + "status");
    if (!status) return unexpected(std::move(status).error());
    bool ready = false;
    if (*status != nullptr) {
        auto conditions = member(**status, "conditions", kind::array, where + "status.conditions");
        if (!conditions) return unexpected(std::move(conditions).error());
        if (*conditions != nullptr)
            doc.for_each_child(**conditions, [&](const json::value& c) {
                const json::value* type = doc.member(c, "type");
                const json::value* value = doc.member(c, "status");
                if (type && value && type->type == kind::string && doc.text(*type) == "Ready")
                    ready = value->type == kind::string && doc.text(*value) == "True";
            });
        auto capacity = member(**status, "capacity", kind::object, where + "status.capacity");
        if (!capacity) return unexpected(std::move(capacity).error());
        const json::value* gpus = *capacity == nullptr ? nullptr : doc.member(**capacity, "nvidia.com/gpu");
        if (gpus != nullptr) {
            // A quantity: a string such as "4" (a plain number is taken too).
            if (gpus->type != kind::string && gpus->type != kind::number)
                return unexpected(json::error_at(*gpus, where + "status.capacity nvidia.com/gpu is " +
                                                            std::string(json::kind_name(gpus->type)) +
                                                            ", expected a quantity such as \"4\""));
            auto n = gpu_count(node, "status.capacity nvidia.com/gpu", doc.text(*gpus), gpus->line,
                               gpus->column + (gpus->type == kind::string ? 1 : 0));
            if (!n) return unexpected(std::move(n).error());
            node.gpus = *n;
        }
    }
    node.health = !ready ? node_health::down : cordoned ? node_health::drain : node_health::up;
    if (node.gpus == std::uint32_t{0} || (!node.gpus && !node.domain)) return std::optional<listed_node>{};
    if (!node.gpus) node.gpus = default_gpus_per_node;
    return std::optional<listed_node>(std::move(node));
}

}  // namespace detail::k8s

// Whether the text is a JSON object (its first character after blanks is
// '{'), as `kubectl get nodes -o json` prints. For tools that take several
// kinds of topology file.
inline bool looks_like_json(std::string_view text) {
    text = topoblock::detail::without_utf8_bom(text);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{';
}

// Reads `kubectl get nodes -o json` output, or one Node object (see the top
// of this file). Errors: malformed JSON (line and column), a document that
// is not a Node list, a member of the wrong type, the label and name errors
// of read_k8s_nodes, no GPU node.
inline expected<k8s_cluster, error> read_k8s_nodes_json(std::string_view text, std::uint32_t default_gpus_per_node = 4) {
    using namespace detail::k8s;
    auto doc = detail::json::parse(text);
    if (!doc) return unexpected(std::move(doc).error());
    const detail::json::value& root = doc->root();
    if (root.type != detail::json::kind::object)
        return unexpected(detail::json::error_at(root, "expected a JSON object (`kubectl get nodes -o json`), found " +
                                                           std::string(detail::json::kind_name(root.type))));
    std::vector<listed_node> nodes;
    const auto add = [&](const detail::json::value& item) -> expected<void, error> {
        auto node = read_node_object(*doc, item, default_gpus_per_node);
        if (!node) return unexpected(std::move(node).error());
        if (*node) nodes.push_back(std::move(**node));
        return {};
    };
    const detail::json::value* kind = doc->member(root, "kind");
    if (kind != nullptr && kind->type == detail::json::kind::string && doc->text(*kind) == "Node") {
        if (auto ok = add(root); !ok) return unexpected(std::move(ok).error());
    } else {
        const detail::json::value* items = doc->member(root, "items");
        if (items == nullptr || items->type != detail::json::kind::array)
            return unexpected(detail::json::error_at(
                items ? *items : root, "expected `kubectl get nodes -o json` output: an object with an \"items\" array"));
        std::optional<error> wrong;
        doc->for_each_child(*items, [&](const detail::json::value& item) {
            if (wrong) return;
            if (auto ok = add(item); !ok) wrong = std::move(ok).error();
        });
        if (wrong) return unexpected(std::move(*wrong));
    }
    if (nodes.empty())
        return unexpected(make_error("no GPU node: none has status.capacity nvidia.com/gpu or " +
                                     std::string(k8s_clique_label)));
    return build_cluster(std::move(nodes));
}

}  // namespace topoblock::io
