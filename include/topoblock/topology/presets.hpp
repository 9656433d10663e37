#pragma once

#include <topoblock/config.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <iterator>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock {

// The shape of one family of systems, as a preset builds it.
struct system_shape {
    std::string_view family;        // the spec word: "nvl72"
    std::string_view node_prefix;   // hostnames: prefix + number
    std::string_view domain_prefix; // domain names: prefix + number
    std::uint32_t nodes_per_domain;
    std::uint32_t gpus_per_node;
};

// GB200 NVL72: one rack, 18 compute trays of 4 GPUs, one NVLink domain.
inline constexpr system_shape gb200_nvl72_shape{"nvl72", "gb", "rack", 18, 4};
// GB300 NVL72: the same shape as GB200 (18 trays x 4 Blackwell Ultra GPUs).
inline constexpr system_shape gb300_nvl72_shape{"gb300", "gbx", "gbx-rack", 18, 4};
// NVL36x2: two racks of 9 trays x 4 GPUs cabled into one 72-GPU domain.
inline constexpr system_shape nvl36x2_shape{"nvl36x2", "nvl", "pair", 18, 4};
// HGX 8-GPU servers: each node is its own NVLink domain.
inline constexpr system_shape hgx8_shape{"hgx8", "hgx", "hgx", 1, 8};

namespace detail {

inline std::uint32_t decimal_width(std::uint64_t n) {
    std::uint32_t width = 1;
    while (n >= 10) {
        n /= 10;
        ++width;
    }
    return width;
}

// Adds `domains` domains of `shape` to the builder; returns their names.
// They are numbered from `first` + 1, zero padded to the width of
// `numbered` domains (at least `domains`): a spec with two parts of one
// family (nvl72:2+nvl72:2) continues the numbering instead of naming
// rack01 twice.
inline std::vector<std::string> add_preset_domains(topology_builder& builder, const system_shape& shape,
                                                   std::uint32_t domains, std::uint32_t first = 0,
                                                   std::uint32_t numbered = 0) {
    numbered = std::max(numbered, first + domains);
    const std::uint64_t nodes = std::uint64_t{numbered} * shape.nodes_per_domain;
    const std::uint32_t node_width = std::max<std::uint32_t>(2, decimal_width(nodes));
    const std::uint32_t domain_width = std::max<std::uint32_t>(2, decimal_width(numbered));
    std::vector<std::string> names;
    for (std::uint32_t d = first; d < first + domains; ++d) {
        std::string name = shape.nodes_per_domain == 1
                               ? topology_builder::numbered_name(std::string(shape.node_prefix), d + 1, node_width)
                               : topology_builder::numbered_name(std::string(shape.domain_prefix), d + 1, domain_width);
        builder.add_numbered_domain(name, shape.nodes_per_domain, shape.gpus_per_node,
                                    std::string(shape.node_prefix), d * shape.nodes_per_domain + 1, node_width);
        names.push_back(std::move(name));
    }
    return names;
}

// Groups consecutive domains `per_group` at a time into one level.
inline void add_consecutive_groups(topology_builder& builder, const std::vector<std::string>& domains,
                                   std::uint32_t per_group) {
    if (per_group == 0) return;
    std::vector<topology_builder::group_spec> groups;
    for (std::size_t d = 0; d < domains.size(); ++d) {
        if (d % per_group == 0)
            groups.push_back({topology_builder::numbered_name("group", static_cast<std::uint32_t>(d / per_group + 1), 2), {}});
        groups.back().domains.push_back(domains[d]);
    }
    builder.add_level("group", std::move(groups));
}

inline expected<std::uint32_t, error> parse_count(std::string_view text, std::string_view what, std::size_t column) {
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value == 0)
        return unexpected(make_error("expected a positive number for " + std::string(what) + ", got " +
                                         detail::quoted(text),
                                     1, static_cast<std::uint32_t>(column + 1)));
    return value;
}

}  // namespace detail

// `domains` systems of one shape, with an optional level grouping
// `domains_per_group` consecutive domains (0 = no level).
inline topology make_cluster(const system_shape& shape, std::uint32_t domains, std::uint32_t domains_per_group = 0) {
    topology_builder builder;
    detail::add_consecutive_groups(builder, detail::add_preset_domains(builder, shape, domains), domains_per_group);
    auto built = builder.build();
    TOPOBLOCK_ASSERT(built.has_value() && "a preset needs at least one domain");
    return std::move(built).value();
}

inline topology gb200_nvl72(std::uint32_t racks, std::uint32_t racks_per_group = 0) {
    return make_cluster(gb200_nvl72_shape, racks, racks_per_group);
}
inline topology gb300_nvl72(std::uint32_t racks, std::uint32_t racks_per_group = 0) {
    return make_cluster(gb300_nvl72_shape, racks, racks_per_group);
}
inline topology nvl36x2(std::uint32_t rack_pairs, std::uint32_t pairs_per_group = 0) {
    return make_cluster(nvl36x2_shape, rack_pairs, pairs_per_group);
}
inline topology hgx8(std::uint32_t servers, std::uint32_t servers_per_group = 0) {
    return make_cluster(hgx8_shape, servers, servers_per_group);
}

// Reads a topology spec, as the command line takes it:
//   nvl72:16     sixteen GB200 NVL72 racks      gb300:4   four GB300 NVL72 racks
//   nvl36x2:2    two NVL36x2 rack pairs         hgx8:32   thirty-two HGX servers
//   grid:D:N:G   D domains of N nodes of G GPUs
// Parts joined by '+' make a mixed cluster (nvl72:2+hgx8:8); a trailing @K
// groups every K consecutive domains into one level (nvl72:16@4).
inline expected<topology, error> parse_topology_spec(std::string_view spec) {
    static constexpr system_shape shapes[] = {gb200_nvl72_shape, gb300_nvl72_shape, nvl36x2_shape, hgx8_shape};
    topology_builder builder;
    std::vector<std::string> domains;
    std::uint32_t per_group = 0;
    std::string_view body = spec;
    if (const auto at = spec.find('@'); at != std::string_view::npos) {
        auto count = detail::parse_count(spec.substr(at + 1), "domains per group", at + 1);
        if (!count) return unexpected(std::move(count).error());
        per_group = *count;
        body = spec.substr(0, at);
    }
    // Every part is read and the nodes counted before a name is made: a
    // mistyped count must not build millions of names only to be refused.
    struct planned_part {
        const system_shape* preset = nullptr;  // nullptr: grid
        std::uint32_t domains = 0, nodes_per_domain = 0, gpus_per_node = 0;
    };
    std::vector<planned_part> parts;
    std::uint64_t nodes = 0;
    // Domains of each preset family (by index into shapes): in all, and
    // numbered so far. Kept per family rather than summed over the parts
    // for each part, which made a spec of 160k parts take 23 s.
    std::array<std::uint32_t, std::size(shapes)> family_total{};
    std::array<std::uint32_t, std::size(shapes)> family_numbered{};
    const auto family_of = [&](const system_shape* preset) { return static_cast<std::size_t>(preset - shapes); };
    for (std::size_t start = 0; start <= body.size();) {
        const std::size_t end = std::min(body.find('+', start), body.size());
        const std::string_view part = body.substr(start, end - start);
        std::vector<std::string_view> fields;
        for (std::size_t f = 0; f <= part.size();) {
            const std::size_t colon = std::min(part.find(':', f), part.size());
            fields.push_back(part.substr(f, colon - f));
            f = colon + 1;
        }
        const auto column_of = [&](std::size_t field) {
            return start + static_cast<std::size_t>(fields[field].data() - part.data());
        };
        std::vector<std::uint32_t> numbers;
        for (std::size_t f = 1; f < fields.size(); ++f) {
            auto n = detail::parse_count(fields[f], detail::quoted(fields[0]), column_of(f));
            if (!n) return unexpected(std::move(n).error());
            numbers.push_back(*n);
        }
        planned_part planned;
        for (const auto& s : shapes)
            if (fields[0] == s.family || (fields[0] == "gb200" && s.family == "nvl72")) planned.preset = &s;
        if (planned.preset != nullptr && numbers.size() == 1) {
            planned.domains = numbers[0];
            planned.nodes_per_domain = planned.preset->nodes_per_domain;
        } else if (fields[0] == "grid" && numbers.size() == 3) {
            planned = {nullptr, numbers[0], numbers[1], numbers[2]};
        } else {
            return unexpected(make_error("unknown topology " + detail::quoted(part) +
                                             ": expected nvl72:R, gb300:R, nvl36x2:P, hgx8:S or grid:D:N:G",
                                         1, static_cast<std::uint32_t>(start + 1)));
        }
        nodes += std::uint64_t{planned.domains} * planned.nodes_per_domain;
        if (nodes > topology_builder::max_nodes)
            return unexpected(make_error("topology " + detail::quoted(part) + ": more than " +
                                             std::to_string(topology_builder::max_nodes) + " nodes in all",
                                         1, static_cast<std::uint32_t>(start + 1)));
        // Below max_nodes nodes in all, so below 2^32 domains of a family.
        if (planned.preset != nullptr) family_total[family_of(planned.preset)] += planned.domains;
        parts.push_back(planned);
        start = end + 1;
    }
    std::uint32_t grid_parts = 0;
    for (const planned_part& part : parts) {
        std::vector<std::string> added;
        if (part.preset != nullptr) {
            std::uint32_t& numbered = family_numbered[family_of(part.preset)];
            added = detail::add_preset_domains(builder, *part.preset, part.domains, numbered,
                                               family_total[family_of(part.preset)]);
            numbered += part.domains;
        } else {
            ++grid_parts;
            const std::string tag = grid_parts == 1 ? "" : "g" + std::to_string(grid_parts);
            const std::string node_prefix = tag + "n";
            const std::string domain_prefix = tag + "d";
            const system_shape grid{"grid", node_prefix, domain_prefix, part.nodes_per_domain, part.gpus_per_node};
            added = detail::add_preset_domains(builder, grid, part.domains);
        }
        domains.insert(domains.end(), added.begin(), added.end());
    }
    detail::add_consecutive_groups(builder, domains, per_group);
    return builder.build();
}

namespace detail {

// The first way `a` and `b` differ in what a spec or a file states (names,
// shapes, levels and groups), or empty when they do not.
inline std::string first_difference(const topology& a, const topology& b) {
    if (a.domain_count() != b.domain_count())
        return std::to_string(a.domain_count()) + " domains, not " + std::to_string(b.domain_count());
    for (domain_id d = 0; d < a.domain_count(); ++d) {
        const domain_info& x = a.domain(d);
        const domain_info& y = b.domain(d);
        if (x.name != y.name) return "domain " + detail::quoted(x.name) + " is named " + detail::quoted(y.name);
        if (x.node_count != y.node_count || x.gpus_per_node != y.gpus_per_node)
            return "domain " + detail::quoted(x.name) + " has " + std::to_string(x.node_count) + " nodes of " +
                   std::to_string(x.gpus_per_node) + " GPUs, not " + std::to_string(y.node_count) + " of " +
                   std::to_string(y.gpus_per_node);
        for (node_id n = x.first_node; n < x.end_node(); ++n)
            if (a.node(n).name != b.node(n).name)
                return "node " + detail::quoted(a.node(n).name) + " is named " + detail::quoted(b.node(n).name);
    }
    if (a.levels().size() != b.levels().size())
        return std::to_string(a.levels().size()) + " levels, not " + std::to_string(b.levels().size());
    for (std::size_t l = 0; l < a.levels().size(); ++l) {
        const group_level& x = a.levels()[l];
        const group_level& y = b.levels()[l];
        if (x.name != y.name || x.group_names != y.group_names || x.group_of_domain != y.group_of_domain)
            return "level " + detail::quoted(x.name) + " groups its domains otherwise";
    }
    return {};
}

}  // namespace detail

// The spec parse_topology_spec reads back as exactly `t` (names, shapes and
// levels), or an error saying why none does: only topologies a spec makes
// have one. Consecutive domains of one preset family (told by shape and
// name) or of one grid shape make one part; one level of equal consecutive
// groups becomes @K. O(size of t).
inline expected<std::string, error> write_topology_spec(const topology& t) {
    static constexpr system_shape shapes[] = {gb200_nvl72_shape, gb300_nvl72_shape, nvl36x2_shape, hgx8_shape};
    if (t.levels().size() > 1)
        return unexpected(make_error("a spec groups domains at one level at most (@K); this topology has " +
                                     std::to_string(t.levels().size())));
    std::uint32_t per_group = 0;
    if (!t.levels().empty()) per_group = static_cast<std::uint32_t>(t.levels()[0].domains_of_group.front().size());
    struct part {
        std::string_view family;  // empty: grid
        std::uint32_t domains = 0, nodes = 0, gpus = 0;
    };
    std::vector<part> parts;
    for (const domain_info& d : t.domains()) {
        part p{{}, 1, d.node_count, d.gpus_per_node};
        for (const system_shape& s : shapes) {
            const std::string_view prefix = s.nodes_per_domain == 1 ? s.node_prefix : s.domain_prefix;
            if (d.node_count == s.nodes_per_domain && d.gpus_per_node == s.gpus_per_node &&
                std::string_view(d.name).starts_with(prefix)) {
                p.family = s.family;
                break;
            }
        }
        if (!parts.empty() && parts.back().family == p.family && parts.back().nodes == p.nodes &&
            parts.back().gpus == p.gpus)
            ++parts.back().domains;
        else
            parts.push_back(p);
    }
    std::string spec;
    for (const part& p : parts) {
        if (!spec.empty()) spec += '+';
        spec += p.family.empty() ? "grid:" + std::to_string(p.domains) + ':' + std::to_string(p.nodes) + ':' +
                                       std::to_string(p.gpus)
                                 : std::string(p.family) + ':' + std::to_string(p.domains);
    }
    if (per_group != 0) spec += '@' + std::to_string(per_group);
    auto back = parse_topology_spec(spec);
    std::string difference = back ? detail::first_difference(t, *back) : back.error().message;
    if (!difference.empty())
        return unexpected(make_error("no spec makes this topology: the nearest, " + detail::quoted(spec) + ", differs (" +
                                     difference + ")"));
    return spec;
}

}  // namespace topoblock
