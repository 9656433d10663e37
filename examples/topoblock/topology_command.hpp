#pragma once

// `topoblock topology`: checks a topology from any source `place` and
// `simulate` read, converts it between topology.conf, topology.yaml and a
// spec, and draws its rack map, with a snapshot's occupancy. See
// docs/topology.md.

#include "arguments.hpp"

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/load_topology.hpp>
#include <topoblock/io/slurm_cluster.hpp>
#include <topoblock/io/snapshot.hpp>
#include <topoblock/io/topology_conf.hpp>
#include <topoblock/io/topology_yaml.hpp>
#include <topoblock/sim/svg.hpp>
#include <topoblock/support/bitset.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/topoblock.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topoblock::cli {

struct topology_options {
    std::string topology;
    std::uint32_t gpus_per_node = 4;  // for Slurm files, which do not say
    std::string nodes;                // slurm.conf's node order, as a hostlist
    std::string to;                   // conf, yaml or spec; empty: the summary
    bool map = false;
    std::string svg_path;
    std::string state;                // a snapshot whose occupancy the map shows
};

namespace topology_detail {

inline constexpr std::string_view usage_text =
    "usage: topoblock topology --topology FILE|SPEC [--gpus-per-node N] [--nodes HOSTLIST]\n"
    "                          [--to conf|yaml|spec] [--map] [--svg FILE] [--state SNAPSHOT]\n"
    "Checks a topology and prints a summary: its domains, nodes, GPUs and levels.\n"
    "  --topology       any source `topoblock place` reads: topology.conf, topology.yaml,\n"
    "                   `kubectl get nodes --show-labels` or `-o json` output, or a spec (nvl72:4)\n"
    "  --gpus-per-node  GPUs of each node of a Slurm file (default 4)\n"
    "  --nodes          every node in slurm.conf order (nodes outside blocks included)\n"
    "  --to             print the topology as topology.conf, topology.yaml or a spec instead\n"
    "  --map            print a rack map: a line per NVLink domain, a mark per node\n"
    "  --svg FILE       draw the rack map as SVG\n"
    "  --state SNAPSHOT show the occupancy of a snapshot (`place --save-state`) on the map\n";

// The most nodes a rack map draws: beyond it the picture is no use to read
// and its size would grow without bound from a short spec.
inline constexpr std::uint32_t max_map_nodes = 100'000;

// Per node: the health and the GPUs in use.
struct occupancy {
    std::vector<node_health> health;
    std::vector<std::uint32_t> used;
    bool known = false;  // a snapshot gave the use
};

inline bool parse_args(const std::vector<std::string_view>& args, topology_options& o, bool& help, std::ostream& err) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return true;
        }
        if (is_stray_word(arg)) {
            err << "topoblock topology: unexpected argument " << topoblock::detail::quoted(arg) << '\n';
            return false;
        }
        if (arg == "--map") {
            o.map = true;
            continue;
        }
        std::string_view value;
        const option_word word = split_option(arg);
        static constexpr std::string_view valued[] = {"--topology", "--nodes", "--svg", "--state", "--to",
                                                      "--gpus-per-node"};
        if (!is_one_of(word.flag, valued)) {
            err << "topoblock topology: " << unknown_option(word.flag) << '\n';
            return false;
        }
        if (word.value) {
            value = *word.value;
            arg = word.flag;
        } else if (i + 1 < args.size()) {
            value = args[++i];
        } else {
            err << "topoblock topology: " << topoblock::detail::quoted(arg) << " needs a value\n";
            return false;
        }
        if (arg == "--topology") {
            o.topology = value;
        } else if (arg == "--nodes") {
            o.nodes = value;
        } else if (arg == "--svg") {
            o.svg_path = value;
        } else if (arg == "--state") {
            o.state = value;
        } else if (arg == "--to") {
            if (value != "conf" && value != "yaml" && value != "spec") {
                err << "topoblock topology: " << bad_value(arg, "conf, yaml or spec", value) << '\n';
                return false;
            }
            o.to = value;
        } else if (arg == "--gpus-per-node") {
            const auto n = parse_whole(value, 1, max_gpus_per_node);
            if (!n) {
                err << "topoblock topology: "
                    << bad_value(arg, "a whole number from 1 to " + std::to_string(max_gpus_per_node), value, n.error())
                    << '\n';
                return false;
            }
            o.gpus_per_node = static_cast<std::uint32_t>(*n);
        } else {
            err << "topoblock topology: " << unknown_option(arg) << '\n';
            return false;
        }
    }
    if (o.topology.empty()) {
        err << "topoblock topology: --topology is required\n";
        return false;
    }
    if (!o.to.empty() && (o.map || !o.svg_path.empty() || !o.state.empty())) {
        err << "topoblock topology: --to prints the topology alone; give --map, --svg and --state without it\n";
        return false;
    }
    return true;
}

// "2 of 18 nodes x 4 GPUs, 8 of 1 node x 8 GPUs": runs of one shape.
inline std::string shapes_of(const topology& t) {
    std::string out;
    for (domain_id d = 0; d < t.domain_count();) {
        const domain_info& first = t.domain(d);
        domain_id end = d + 1;
        while (end < t.domain_count() && t.domain(end).node_count == first.node_count &&
               t.domain(end).gpus_per_node == first.gpus_per_node)
            ++end;
        if (!out.empty()) out += ", ";
        out += std::to_string(end - d) + " of " + std::to_string(first.node_count) +
               (first.node_count == 1 ? " node x " : " nodes x ") + std::to_string(first.gpus_per_node) + " GPUs";
        d = end;
    }
    return out;
}

inline std::string summary(const topology_options& o, const io::loaded_topology& l, const occupancy& use) {
    const topology& t = l.topo;
    std::string out = "topology: " + topoblock::detail::quoted(o.topology) + " (" + std::string(io::format_name(l.format)) + ")\n";
    out += "domains: " + std::to_string(t.domain_count()) + " (" + shapes_of(t) + ")\n";
    out += "nodes: " + std::to_string(t.node_count()) + "\n";
    out += "GPUs: " + std::to_string(t.gpu_count()) + "\n";
    if (t.levels().empty()) out += "levels: none\n";
    for (const group_level& level : t.levels())
        out += "level " + topoblock::detail::quoted(level.name) + ": " + std::to_string(level.group_names.size()) + " groups\n";
    if (l.slurm) {
        out += "slurm-block: base block " + std::to_string(l.slurm->base_nodes) + " nodes, " +
               std::to_string(l.slurm->blocks) + " blocks, BlockSizes ";
        std::string sizes;
        for (std::uint32_t s : l.slurm->block_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
        out += (sizes.empty() ? "default" : sizes) + "\n";
    }
    if (!use.health.empty()) {
        std::uint32_t drain = 0, down = 0;
        for (node_health h : use.health) {
            drain += h == node_health::drain;
            down += h == node_health::down;
        }
        out += "health: " + std::to_string(t.node_count() - drain - down) + " up, " + std::to_string(drain) +
               " draining, " + std::to_string(down) + " down\n";
    }
    if (use.known) {
        std::uint64_t used = 0;
        for (std::uint32_t u : use.used) used += u;
        out += "in use: " + std::to_string(used) + " of " + std::to_string(t.gpu_count()) + " GPUs\n";
    }
    return out;
}

// A node's mark on the text map: x down, d draining, # all GPUs in use,
// + some, . none.
inline char mark(const topology& t, const occupancy& use, node_id n) {
    const node_health h = use.health.empty() ? node_health::up : use.health[n];
    if (h == node_health::down) return 'x';
    if (h == node_health::drain) return 'd';
    const std::uint32_t used = use.known ? use.used[n] : 0;
    return used == 0 ? '.' : used == t.place(n).gpus ? '#' : '+';
}

inline std::string text_map(const topology& t, const occupancy& use) {
    std::size_t name_width = 0, hosts_width = 0;
    std::vector<std::string> hosts(t.domain_count());
    for (domain_id d = 0; d < t.domain_count(); ++d) {
        const domain_info& domain = t.domain(d);
        std::vector<std::string> names;
        for (node_id n = domain.first_node; n < domain.end_node(); ++n) names.push_back(t.node(n).name);
        hosts[d] = io::compress_hostlist(names);
        name_width = std::max(name_width, domain.name.size());
        hosts_width = std::max(hosts_width, hosts[d].size());
    }
    name_width = std::min<std::size_t>(name_width, 40);
    hosts_width = std::min<std::size_t>(hosts_width, 40);
    std::string out;
    for (domain_id d = 0; d < t.domain_count(); ++d) {
        const domain_info& domain = t.domain(d);
        std::string line = domain.name;
        line.resize(std::max(line.size(), name_width), ' ');
        line += "  " + hosts[d];
        line.resize(std::max(line.size(), name_width + 2 + hosts_width), ' ');
        line += "  [";
        std::uint32_t used = 0;
        for (node_id n = domain.first_node; n < domain.end_node(); ++n) {
            line += mark(t, use, n);
            if (use.known) used += use.used[n];
        }
        line += "]";
        if (use.known) line += "  " + std::to_string(used) + "/" + std::to_string(domain.gpu_count()) + " GPUs in use";
        out += line + '\n';
    }
    out += use.known ? "# all GPUs in use, + some, . none; d draining, x down\n" : ". a node; d draining, x down\n";
    return out;
}

inline std::string svg_map(const std::string& title, const topology& t, const occupancy& use) {
    using sim::rgb;
    constexpr double node_w = 44, node_h = 9, gap = 2, rack_w = node_w + 8, label_h = 16, margin = 12, header = 34;
    const std::uint32_t per_row = std::clamp<std::uint32_t>(t.domain_count(), 1, 16);
    const std::uint32_t rows = (t.domain_count() + per_row - 1) / per_row;
    const double rack_h = label_h + t.max_domain_nodes() * (node_h + gap) + 6;
    const double width = std::max(2 * margin + per_row * (rack_w + gap * 3), 440.0);  // the legend fits
    const double height = header + rows * (rack_h + gap * 4) + margin + 16;
    sim::svg_document svg(width, height);
    svg.text({margin, 20}, title, {14.0, {}, sim::text_anchor::start});
    const rgb free{229, 231, 235}, some{147, 197, 253}, full{37, 99, 235}, drain{245, 158, 11}, down{220, 38, 38};
    for (domain_id d = 0; d < t.domain_count(); ++d) {
        const domain_info& domain = t.domain(d);
        const double x = margin + (d % per_row) * (rack_w + gap * 3);
        const double y = header + (d / per_row) * (rack_h + gap * 4);
        svg.begin_group(domain.name + ": " + std::to_string(domain.node_count) + " nodes, " +
                        std::to_string(domain.gpu_count()) + " GPUs");
        svg.rect(x, y, rack_w, rack_h, {rgb{249, 250, 251}, rgb{156, 163, 175}, 1.0, 1.0});
        svg.text({x + rack_w / 2, y + 11}, domain.name.substr(0, 10), {8.0, {}, sim::text_anchor::middle});
        for (node_id n = domain.first_node; n < domain.end_node(); ++n) {
            const char m = mark(t, use, n);
            const rgb fill = m == 'x' ? down : m == 'd' ? drain : m == '#' ? full : m == '+' ? some : free;
            const double ny = y + label_h + (n - domain.first_node) * (node_h + gap);
            std::string tip = t.node(n).name + ": ";
            tip += m == 'x' ? "down" : m == 'd' ? "draining" : "up";
            if (use.known) tip += ", " + std::to_string(use.used[n]) + "/" + std::to_string(t.place(n).gpus) + " GPUs in use";
            svg.begin_group(tip);
            svg.rect(x + 4, ny, node_w, node_h, {fill, std::nullopt, 1.0, 1.0});
            svg.end_group();
        }
        svg.end_group();
    }
    const double legend_y = height - 10;
    double lx = margin;
    for (const auto& [color, label] : {std::pair{free, "free"}, std::pair{some, "partly used"}, std::pair{full, "in use"},
                                       std::pair{drain, "draining"}, std::pair{down, "down"}}) {
        svg.rect(lx, legend_y - 8, 10, 8, {color, std::nullopt, 1.0, 1.0});
        svg.text({lx + 13, legend_y}, label, {9.0, {}, sim::text_anchor::start});
        lx += 80;
    }
    return svg.str();
}

// The occupancy a snapshot saved on this topology holds (under any policy:
// the state does not depend on it).
inline expected<occupancy, error> read_occupancy(const std::string& path, const topology& t) {
    auto text = topoblock::detail::read_regular_file(path);
    if (!text)
        return unexpected(make_error(topoblock::detail::quoted(path) + " " + std::string(topoblock::detail::describe(text.error()))));
    auto back = io::read_snapshot<first_fit>(*text, t);
    if (!back) {
        error e = std::move(back).error();
        e.file = path;
        return unexpected(std::move(e));
    }
    occupancy use;
    use.known = true;
    const auto& state = back->allocator.state();
    for (node_id n = 0; n < t.node_count(); ++n) {
        use.health.push_back(state.health(n));
        use.used.push_back(count_bits(state.node_full_mask(n) & ~state.unheld_gpus(n)));
    }
    return use;
}

// The topology in another form; false with the reason on `err` when it has
// none (a topology no spec makes, a name Slurm refuses).
inline bool convert(const topology_options& o, const io::loaded_topology& l, std::ostream& out, std::ostream& err) {
    if (o.to == "spec") {
        auto spec = write_topology_spec(l.topo);
        if (!spec) {
            err << "topoblock topology: --to spec: " << spec.error().message << '\n';
            return false;
        }
        out << *spec << '\n';
        return true;
    }
    const io::slurm_topology st = io::block_topology_of(l.topo, l.slurm ? &*l.slurm : nullptr);
    if (auto ok = io::validate_topology(st); !ok) {
        err << "topoblock topology: --to " << o.to << ": " << ok.error().message << '\n';
        return false;
    }
    const std::uint32_t gpus = l.topo.uniform_gpus_per_node();
    const std::string note = gpus != 0 ? "# " + std::to_string(gpus) + " GPUs per node (the file cannot say: give topoblock --gpus-per-node " +
                                             std::to_string(gpus) + ")\n"
                                       : "# nodes of several GPU counts (the file cannot say)\n";
    if (o.to == "conf") {
        out << note << io::write_topology_conf(st);
        return true;
    }
    io::slurm_topology named = st;
    named.name = "default";
    out << note << io::write_topology_yaml({{std::move(named)}, 0});
    return true;
}

}  // namespace topology_detail

// Runs `topoblock topology`. Returns 0 on success, 1 when the topology has
// no form of the kind --to asks or the picture cannot be written, 2 when
// the command line, the topology or the snapshot is wrong.
inline int run_topology(const std::vector<std::string_view>& args, std::ostream& out, std::ostream& err) {
    using namespace topology_detail;
    topology_options o;
    bool help = false;
    if (!parse_args(args, o, help, err)) {
        err << usage_text;
        return 2;
    }
    if (help) {
        out << usage_text;
        return 0;
    }
    io::topology_load_options options;
    options.gpus_per_node = o.gpus_per_node;
    if (!o.nodes.empty()) {
        auto names = io::expand_hostlist(o.nodes);
        if (!names) {
            err << "topoblock topology: --nodes: " << names.error().to_string() << '\n';
            return 2;
        }
        options.node_order = std::move(*names);
    }
    auto loaded = io::load_topology(o.topology, options);
    if (!loaded) {
        err << "topoblock topology: --topology: " << loaded.error().to_string() << '\n';
        return 2;
    }
    if (!o.to.empty()) return convert(o, *loaded, out, err) ? 0 : 1;
    occupancy use;
    use.health = loaded->health;
    if (!o.state.empty()) {
        auto read = read_occupancy(o.state, loaded->topo);
        if (!read) {
            err << "topoblock topology: --state: " << read.error().to_string() << '\n';
            return 2;
        }
        use = std::move(*read);
    }
    out << summary(o, *loaded, use);
    const bool drawn = o.map || !o.svg_path.empty();
    if (drawn && loaded->topo.node_count() > max_map_nodes) {
        err << "topoblock topology: a rack map draws at most " << max_map_nodes << " nodes, this topology has "
            << loaded->topo.node_count() << '\n';
        return 1;
    }
    if (o.map) out << '\n' << text_map(loaded->topo, use);
    if (!o.svg_path.empty()) {
        std::string why;
        const std::string title = "topoblock topology: " + o.topology + (o.state.empty() ? "" : ", state " + o.state);
        if (!topoblock::detail::replace_file(o.svg_path, svg_map(title, loaded->topo, use), why)) {
            err << "topoblock topology: --svg: " << why << '\n';
            return 1;
        }
        out << "wrote " << o.svg_path << '\n';
    }
    return 0;
}

inline int topology_main(const std::vector<std::string_view>& args) { return run_topology(args, std::cout, std::cerr); }

}  // namespace topoblock::cli
