#pragma once

// `topoblock place`: a topology, a policy and a stream of events in; one line
// per allocation decision out, as text or as JSON. The format is
// docs/place.md.

#include "arguments.hpp"
#include "json.hpp"
#include "read_file.hpp"

#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/load_topology.hpp>
#include <topoblock/io/snapshot.hpp>
#include <topoblock/policy/registry.hpp>
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
};

namespace place_detail {

inline constexpr std::string_view usage_text =
    "usage: topoblock place --topology FILE|SPEC [--policy NAME] [--gpus-per-node N] [--nodes HOSTLIST]\n"
    "                       [--load-state FILE] [--save-state FILE] [--json]\n"
    "  --topology       topology.conf, topology.yaml, `kubectl get nodes --show-labels` or\n"
    "                   `-o json` output, or a preset such as nvl72:4 (or a file holding one)\n"
    "  --policy         slurm-block (default), first-fit, best-fit, ...\n"
    "  --gpus-per-node  GPUs of each node of a Slurm file, or of a labelled node without\n"
    "                   nvidia.com/gpu.count (default 4)\n"
    "  --nodes          every node in slurm.conf order (nodes outside blocks included)\n"
    "  --load-state     start from a snapshot that --save-state or `save` wrote\n"
    "  --save-state     write a snapshot when the input ends\n"
    "  --json           each answer as one JSON object a line (docs/place.md)\n"
    "Events on standard input, one per line (docs/place.md):\n"
    "  alloc ID nodes=N [segment=S] [spread-segments] [exclusive=topo]\n"
    "  alloc ID gpus=N [locality=require|prefer|any] [whole-nodes] [exclusive=topo]\n"
    "  hold ID HOSTLIST | release ID | down HOSTLIST | drain HOSTLIST | up HOSTLIST | save FILE | # comment\n";

// The options that take a value, and the one that takes none.
inline constexpr std::array<std::string_view, 6> valued_flags{"--topology",   "--policy",     "--nodes",
                                                              "--load-state", "--save-state", "--gpus-per-node"};

// A word of an event line and its 1-based column.
using word = topoblock::detail::text_word;

// GPU indices as ranges: 0b1011 -> "0-1,3".
inline std::string gpu_ranges(gpu_mask mask) {
    std::string out;
    while (mask != 0) {
        const auto lo = static_cast<std::uint32_t>(std::countr_zero(mask));
        const auto run = static_cast<std::uint32_t>(std::countr_one(mask >> lo));
        if (!out.empty()) out += ',';
        out += std::to_string(lo);
        if (run > 1) out += '-' + std::to_string(lo + run - 1);
        mask = run + lo >= 64 ? 0 : mask & ~((gpu_mask{1} << (lo + run)) - 1);
    }
    return out;
}

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

// Applies the events of `in` to one allocator and answers each decision on
// `out`, as text or as JSON; errors on `err`.
template <class Policy>
class event_runner {
public:
    // `live`: the running allocations by ID, as a snapshot restored them.
    event_runner(basic_allocator<Policy, default_capacity> a, std::ostream& out, std::ostream& err, bool json,
                 std::unordered_map<std::string, allocation_id> live = {})
        : a_(std::move(a)), out_(out), err_(err), json_(json), live_(std::move(live)) {}

    // False when some line was malformed or could not be applied.
    bool run(std::istream& in) {
        std::string line;
        bool clean = true;
        for (line_ = 1; std::getline(in, line); ++line_) {
            const std::string_view text = std::string_view(line).substr(0, line.find('#'));
            const std::vector<word> words = topoblock::detail::split_blank_separated(text);
            if (!words.empty() && !apply(words)) clean = false;
        }
        return clean;
    }

    // Writes a snapshot of the allocator, with the IDs of the running
    // allocations as its labels, to `path`; false with `why` on failure.
    bool save_state(const std::string& path, std::string& why) const {
        io::snapshot_labels labels;
        for (const auto& [id, got] : live_) labels.emplace_back(got, id);
        auto text = io::write_snapshot(a_, std::move(labels));
        if (!text) {
            why = text.error().to_string();
            return false;
        }
        return replace_file(path, *text, why);
    }

private:
    using allocator_type = basic_allocator<Policy, default_capacity>;

    // A line that could not be applied: named on err, and in JSON mode
    // answered too, with the errc of a refusal when there is one.
    bool fail(std::uint32_t column, const std::string& message, std::optional<errc> reason = std::nullopt) {
        err_ << "topoblock place: " << make_error(message, line_, column).to_string() << '\n';
        if (json_) {
            out_ << "{\"line\":" << line_ << ",\"column\":" << column << ",\"state\":\"error\"";
            if (reason) out_ << ",\"reason\":\"" << to_string(*reason) << '"';
            out_ << ",\"message\":" << json_string(message) << "}\n";
        }
        return false;
    }

    bool apply(const std::vector<word>& w) {
        const std::string_view verb = w[0].text;
        if (verb == "alloc") return alloc(w);
        if (verb == "hold") return hold(w);
        if (verb == "release") return release(w);
        if (verb == "down") return health(w, node_health::down);
        if (verb == "drain") return health(w, node_health::drain);
        if (verb == "up") return health(w, node_health::up);
        if (verb == "save") return save(w);
        return fail(w[0].column, "unknown event " + topoblock::detail::quoted(verb) +
                                     " (expected alloc, hold, release, down, drain, up or save)");
    }

    // The ID of `alloc` and `hold`: present, not naming a live job, and in
    // JSON mode text a JSON string carries unchanged.
    bool new_id(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), std::string(w[0].text) + " needs an ID");
        if (live_.contains(std::string(w[1].text)))
            return fail(w[1].column, "allocation " + topoblock::detail::quoted(w[1].text) + " is already running");
        if (json_ && !valid_utf8(w[1].text))
            return fail(w[1].column, "ID " + topoblock::detail::quoted(w[1].text) + " is not UTF-8, which JSON cannot carry");
        return true;
    }

    bool alloc(const std::vector<word>& w) {
        if (!new_id(w)) return false;
        const auto q = parse_request(std::span<const word>(w).subspan(2), after(w[1]));
        if (!q) return fail(q.error().column, q.error().message);
        const std::string id(w[1].text);
        const auto got = a_.try_allocate(*q);
        if (!got) {
            if (!json_) out_ << id << " PENDING " << to_string(got.error()) << '\n';
            else
                out_ << "{\"id\":" << json_string(id) << ",\"state\":\""
                     << (may_succeed_later(got.error()) ? "pending" : "refused") << "\",\"reason\":\""
                     << to_string(got.error()) << "\",\"message\":" << json_string(describe(got.error())) << "}\n";
            return true;
        }
        live_.emplace(id, *got);
        if (json_) answer_json(id, "placed", *got);
        else answer_text(id, *got);
        return true;
    }

    // "ID HOSTLIST", then NODE:GPUS for each node held in part.
    void answer_text(const std::string& id, allocation_id got) {
        const topology& t = a_.topo();
        std::vector<std::string> names;
        std::vector<piece> partial;
        for (const piece& p : a_.find(got)->pieces) {
            names.push_back(t.node(p.node).name);
            if (p.gpus != full_gpu_mask(t.node(p.node).gpus)) partial.push_back(p);
        }
        out_ << id << ' ' << io::compress_hostlist(names);
        std::sort(partial.begin(), partial.end(), [](const piece& x, const piece& y) { return x.node < y.node; });
        for (const piece& p : partial) out_ << ' ' << t.node(p.node).name << ':' << gpu_ranges(p.gpus);
        out_ << '\n';
    }

    // {"id":..,"state":..,"domains":[..],"nodes":[{"node":..,"gpus":[..]},..]},
    // nodes and domains in topology order.
    void answer_json(const std::string& id, std::string_view state, allocation_id got) {
        const topology& t = a_.topo();
        std::vector<piece> pieces;
        for (const piece& p : a_.find(got)->pieces) pieces.push_back(p);
        std::sort(pieces.begin(), pieces.end(), [](const piece& x, const piece& y) { return x.node < y.node; });
        std::vector<domain_id> domains;
        for (const piece& p : pieces) domains.push_back(t.node(p.node).domain);
        std::sort(domains.begin(), domains.end());
        domains.erase(std::unique(domains.begin(), domains.end()), domains.end());
        out_ << "{\"id\":" << json_string(id) << ",\"state\":\"" << state << "\",\"domains\":[";
        for (std::size_t i = 0; i < domains.size(); ++i) out_ << (i ? "," : "") << json_string(t.domain(domains[i]).name);
        out_ << "],\"nodes\":[";
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            out_ << (i ? "," : "") << "{\"node\":" << json_string(t.node(pieces[i].node).name) << ",\"gpus\":[";
            bool first = true;
            for (gpu_mask m = pieces[i].gpus; m != 0; m &= m - 1) {
                out_ << (first ? "" : ",") << std::countr_zero(m);
                first = false;
            }
            out_ << "]}";
        }
        out_ << "]}\n";
    }

    // The nodes of a hostlist word, each named once and known.
    bool nodes_of(const word& w, std::vector<node_id>& nodes) {
        auto names = io::expand_hostlist(w.text);
        if (!names) return fail(w.column + (names.error().column > 0 ? names.error().column - 1 : 0), names.error().message);
        std::vector<bool> seen(a_.topo().node_count(), false);
        for (const std::string& name : *names) {
            const auto n = a_.topo().find_node(name);
            if (!n) return fail(w.column, "unknown node " + topoblock::detail::quoted(name));
            if (seen[*n]) return fail(w.column, "node " + topoblock::detail::quoted(name) + " is named twice");
            seen[*n] = true;
            nodes.push_back(*n);
        }
        return true;
    }

    bool one_hostlist(const std::vector<word>& w, std::size_t at, std::vector<node_id>& nodes) {
        if (w.size() <= at) return fail(after(w.back()), std::string(w[0].text) + " needs a hostlist");
        if (w.size() > at + 1) return fail(w[at + 1].column, "unexpected " + topoblock::detail::quoted(w[at + 1].text));
        return nodes_of(w[at], nodes);
    }

    bool hold(const std::vector<word>& w) {
        std::vector<node_id> nodes;
        if (!new_id(w) || !one_hostlist(w, 2, nodes)) return false;
        std::vector<piece> pieces;
        for (node_id n : nodes) {
            const gpu_mask full = a_.state().node_full_mask(n);
            const auto d = a_.topo().node(n).domain;
            if (a_.state().unheld_gpus(n) != full || a_.state().health(n) == node_health::down || !a_.state().domain_open(d))
                return fail(w[2].column, "node " + topoblock::detail::quoted(a_.topo().node(n).name) + " is not free",
                            errc::not_free);
            pieces.push_back({n, full});
        }
        auto got = a_.hold(pieces, request::nodes(static_cast<std::uint32_t>(nodes.size())));
        if (!got) return fail(w[2].column, std::string(describe(got.error())), got.error());
        const std::string id(w[1].text);
        live_.emplace(id, *got);
        if (json_) answer_json(id, "held", *got);
        return true;
    }

    // The column just after word w, where a missing word would start.
    static std::uint32_t after(const word& w) { return w.column + static_cast<std::uint32_t>(w.text.size()); }

    bool release(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), "release needs an ID");
        if (w.size() > 2) return fail(w[2].column, "unexpected " + topoblock::detail::quoted(w[2].text));
        const auto it = live_.find(std::string(w[1].text));
        if (it == live_.end())
            return fail(w[1].column, "no running allocation " + topoblock::detail::quoted(w[1].text), errc::unknown_allocation);
        (void)a_.release(it->second);
        if (json_) out_ << "{\"id\":" << json_string(it->first) << ",\"state\":\"released\"}\n";
        live_.erase(it);
        return true;
    }

    bool health(const std::vector<word>& w, node_health h) {
        std::vector<node_id> nodes;
        if (!one_hostlist(w, 1, nodes)) return false;
        for (node_id n : nodes) (void)a_.set_health(n, h);
        return true;
    }

    bool save(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), "save needs a FILE");
        if (w.size() > 2) return fail(w[2].column, "unexpected " + topoblock::detail::quoted(w[2].text));
        std::string why;
        return save_state(std::string(w[1].text), why) || fail(w[1].column, why);
    }

    allocator_type a_;
    std::ostream& out_;
    std::ostream& err_;
    bool json_;
    std::unordered_map<std::string, allocation_id> live_;
    std::uint32_t line_ = 0;
};

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
        }
    }
    if (o.topology.empty()) return bad("--topology is required");
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
    if (names_other_than_a_file(path)) return unexpected(make_error("--load-state '" + path + "' is not a regular file"));
    const std::optional<std::string> text = read_regular_file(path);
    if (!text) return unexpected(make_error("--load-state '" + path + "' is not a readable file"));
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
        place_detail::event_runner<policy_type> runner(std::move(*a), out, err, o.json, std::move(live));
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
