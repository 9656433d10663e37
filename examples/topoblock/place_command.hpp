#pragma once

// `topoblock place`: a topology, a policy and a stream of events in; one line
// per allocation decision out, as text or as JSON. The format is
// docs/place.md.

#include "arguments.hpp"

#include <topoblock/io/event_runner.hpp>
#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/load_topology.hpp>
#include <topoblock/io/snapshot.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/policy/slurm_version.hpp>
#include <topoblock/request/request_text.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/read_file.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/topoblock.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace topoblock::cli {

// The command line of `topoblock place`.
struct place_options {
    std::string topology;          // topology.conf, topology.yaml or a preset spec
    std::string policy = "slurm-block";
    std::uint32_t gpus_per_node = 4;  // for Slurm files, which do not say
    bool gpus_per_node_given = false;
    std::string nodes;             // slurm.conf's node order, as a hostlist
    std::string load_state;        // a snapshot to start from
    std::string save_state;        // where to write a snapshot when the input ends
    bool json = false;             // answers as JSON objects, one a line
    slurm_version slurm = newest_slurm_version;  // slurm-block: whose node selection
    bool slurm_given = false;
};

namespace place_detail {

inline constexpr std::string_view usage_text =
    "usage: topoblock place --topology FILE|SPEC [--policy NAME] [--gpus-per-node N] [--nodes HOSTLIST]\n"
    "                       [--slurm-version V] [--load-state FILE] [--save-state FILE] [--json]\n"
    "  --topology       topology.conf, topology.yaml, `kubectl get nodes --show-labels` or\n"
    "                   `-o json` output, or a preset such as nvl72:4 (or a file holding one)\n"
    "  --policy         slurm-block (default), first-fit, best-fit, ...\n"
    "  --gpus-per-node  GPUs of each node of a Slurm file, or of a labelled node without\n"
    "                   nvidia.com/gpu.count (default 4)\n"
    "  --nodes          every node in slurm.conf order (nodes outside blocks included)\n"
    "  --slurm-version  slurm-block: the Slurm release whose node selection to follow,\n"
    "                   25.11 or 26.05 (default 26.05; docs/slurm-block.md)\n"
    "  --load-state     start from a snapshot that --save-state or `save` wrote\n"
    "  --save-state     write a snapshot when the input ends\n"
    "  --json           each answer as one JSON object a line (docs/place.md)\n"
    "Events on standard input, one per line (docs/place.md):\n"
    "  alloc ID nodes=N [segment=S] [spread-segments] [exclusive=topo]\n"
    "  alloc ID gpus=N [locality=require|prefer|any] [whole-nodes] [exclusive=topo]\n"
    "  hold ID HOSTLIST | release ID | down HOSTLIST | drain HOSTLIST | up HOSTLIST | save FILE | # comment\n"
    "  explain ID REQUEST (why it would or would not be placed now) | stats (allocatable jobs by size, compaction)\n";

// The options that take a value, and the one that takes none.
inline constexpr std::array<std::string_view, 7> valued_flags{"--topology",   "--policy",     "--nodes",
                                                              "--load-state", "--save-state", "--gpus-per-node",
                                                              "--slurm-version"};

// The topology of --topology, whatever its source (io::load_topology).
inline expected<io::loaded_topology, error> load(const place_options& o) {
    io::topology_load_options options;
    options.gpus_per_node = o.gpus_per_node;
    if (!o.nodes.empty()) {
        auto names = io::expand_hostlist(o.nodes);
        if (!names) return unexpected(make_error("--nodes: " + names.error().to_string()));
        options.node_order = std::move(*names);
        // --nodes with a file that is not a Slurm file is named as such,
        // before the loader refuses the node order.
        if (auto text = topoblock::detail::read_regular_file(o.topology)) {
            const io::topology_format format = io::sniff_topology_format(o.topology, *text);
            if (format == io::topology_format::kubectl_labels || format == io::topology_format::kubectl_json)
                return unexpected(make_error("--nodes applies to Slurm files, not to a kubectl listing"));
            if (format == io::topology_format::spec)
                return unexpected(make_error("--nodes applies to Slurm files, not to a spec file"));
            return io::read_topology(*text, o.topology, options);
        }
    }
    return io::load_topology(o.topology, options);
}

// Reads the command line; false (with a message on err) when it is wrong.
inline bool parse_args(const std::vector<std::string_view>& args, place_options& o, bool& help, std::ostream& err) {
    const auto bad = [&err](const std::string& message) {
        err << "topoblock place: " << message << '\n';
        return false;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return true;
        }
        if (is_stray_word(arg)) return bad("unexpected argument " + topoblock::detail::quoted(arg));
        const option_word word = split_option(arg);
        const std::string_view flag = word.flag;
        if (flag == "--json") {
            if (word.value) return bad("--json takes no value");
            o.json = true;
            continue;
        }
        if (!is_one_of(flag, valued_flags)) return bad(unknown_option(flag));
        if (!word.value && i + 1 >= args.size()) return bad(topoblock::detail::quoted(flag) + " needs a value");
        const std::string_view value = word.value ? *word.value : args[++i];
        if (flag == "--topology") {
            o.topology = value;
        } else if (flag == "--policy") {
            o.policy = value;
        } else if (flag == "--nodes") {
            o.nodes = value;
        } else if (flag == "--load-state") {
            o.load_state = value;
        } else if (flag == "--save-state") {
            o.save_state = value;
        } else if (flag == "--gpus-per-node") {
            const auto n = parse_whole(value, 1, max_gpus_per_node);
            if (!n)
                return bad(bad_value(flag, "a whole number from 1 to " + std::to_string(max_gpus_per_node), value, n.error()));
            o.gpus_per_node = static_cast<std::uint32_t>(*n);
            o.gpus_per_node_given = true;
        } else if (flag == "--slurm-version") {
            const auto v = parse_slurm_version(value);
            if (!v) return bad(bad_value(flag, "one of " + std::string(slurm_version_names), value));
            o.slurm = *v;
            o.slurm_given = true;
        }
    }
    if (o.topology.empty()) return bad("--topology is required");
    if (o.slurm_given && o.policy != "slurm-block")
        return bad("--slurm-version applies to slurm-block, not to --policy " + topoblock::detail::quoted(o.policy));
    return true;
}

// Options that only a topology file reads, refused with a preset rather
// than ignored; empty when every option given applies.
inline std::string unused_with_preset(const place_options& o) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(o.topology, ec)) return {};
    // Neither a file nor a spec: the loader names that.
    if (o.nodes.empty() && !o.gpus_per_node_given) return {};
    if (!parse_topology_spec(o.topology)) return {};
    const std::string preset = topoblock::detail::quoted(o.topology);
    if (!o.nodes.empty()) return "--nodes applies to Slurm topology files, not to the preset " + preset;
    if (o.gpus_per_node_given)
        return "--gpus-per-node applies to Slurm topology files and kubectl listings, not to the preset " + preset +
               " (its nodes have their GPUs)";
    return {};
}

// The allocator and the running IDs of a snapshot file (--load-state),
// saved under the same policy on the same topology.
template <class Policy>
expected<basic_allocator<Policy, default_capacity>, error> load_state(const std::string& path, const topology& topo,
                                                                      Policy policy,
                                                                      std::unordered_map<std::string, allocation_id>& live) {
    const auto text = topoblock::detail::read_regular_file(path);
    if (!text)
        return unexpected(make_error("--load-state '" + path + "' is not a " +
                                     (text.error() == topoblock::detail::file_problem::not_a_file ? "regular" : "readable") + " file"));
    auto back = io::read_snapshot<Policy>(*text, topo, std::move(policy));
    if (!back) {
        auto e = std::move(back).error();
        e.file = path;
        return unexpected(std::move(e));
    }
    if (back->policy_name != back->allocator.policy_name())
        return unexpected(make_error(path + ": saved under policy " + back->policy_name + ", not " +
                                     std::string(back->allocator.policy_name()) + " (give --policy " + back->policy_name + ")"));
    for (const auto& [id, name] : back->labels)
        if (!live.emplace(name, id).second)
            return unexpected(make_error(path + ": two running allocations are both named '" + name + "'"));
    return std::move(back->allocator);
}

}  // namespace place_detail

// Runs `topoblock place` on the given streams. Returns 0 when every line was
// applied, 1 when some line was malformed or could not be applied (each named
// on err, with its line number), 2 when the command line or the topology is
// wrong.
inline int run_place(const std::vector<std::string_view>& args, std::istream& in, std::ostream& out, std::ostream& err) {
    place_options o;
    bool help = false;
    if (!place_detail::parse_args(args, o, help, err)) {
        err << place_detail::usage_text;
        return 2;
    }
    if (help) {
        out << place_detail::usage_text;
        return 0;
    }
    // Before loading: the loader's own refusal of a node order would hide
    // which option does not apply.
    if (const std::string unused = place_detail::unused_with_preset(o); !unused.empty()) {
        err << "topoblock place: " << unused << '\n';
        return 2;
    }
    auto cluster = place_detail::load(o);
    if (!cluster) {
        err << "topoblock place: --topology: " << cluster.error().to_string() << '\n';
        return 2;
    }
    policy_settings settings;
    if (cluster->slurm) settings.slurm = slurm_block(*cluster->slurm);
    settings.slurm.set_version(o.slurm);
    int status = 2;
    const bool known = with_policy(o.policy, settings, [&](auto policy) {
        using policy_type = decltype(policy);
        std::unordered_map<std::string, allocation_id> live;
        const bool restart = !o.load_state.empty();
        auto a = restart ? place_detail::load_state(o.load_state, cluster->topo, std::move(policy), live)
                         : basic_allocator<policy_type, default_capacity>::create(cluster->topo, std::move(policy));
        if (!a) {
            err << "topoblock place: " << a.error().to_string() << '\n';
            return;
        }
        // Cordoned and NotReady nodes of a kubectl listing: nothing runs on
        // them yet, so no allocation is hit. A snapshot has its own health.
        for (node_id n = 0; !restart && n < cluster->health.size(); ++n)
            if (cluster->health[n] != node_health::up) (void)a->set_health(n, cluster->health[n]);
        io::event_runner<policy_type> runner(std::move(*a), out, err, o.json, std::move(live));
        status = runner.run(in) ? 0 : 1;
        std::string why;
        if (!o.save_state.empty() && !runner.save_state(o.save_state, why)) {
            err << "topoblock place: --save-state: " << why << '\n';
            status = 1;
        }
    });
    if (!known) {
        err << "topoblock place: unknown policy " << topoblock::detail::quoted(o.policy) << " (expected";
        for (std::string_view name : policy_names) err << ' ' << name;
        err << ")\n";
        return 2;
    }
    return status;
}

// `topoblock place` on the process's standard streams.
inline int place_main(const std::vector<std::string_view>& args) { return run_place(args, std::cin, std::cout, std::cerr); }

}  // namespace topoblock::cli
