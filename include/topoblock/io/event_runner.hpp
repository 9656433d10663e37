#pragma once

// The event stream of `topoblock place` (docs/place.md), applied to one
// allocator: alloc, hold, release, down, drain, up, save, explain, stats,
// advise and protect lines in; one answer per decision (and per question)
// out, as text or as JSON objects.

#include <topoblock/advice/advise.hpp>
#include <topoblock/advice/explain.hpp>
#include <topoblock/allocator/allocator.hpp>
#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/snapshot.hpp>
#include <topoblock/metrics/allocatable.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/request/request_text.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/json_string.hpp>
#include <topoblock/support/quote.hpp>
#include <topoblock/support/replace_file.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/topology/health.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace topoblock::io {

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

// Applies the events of `in` to one allocator and answers each decision on
// `out`, as text or as JSON; errors on `err`.
template <class Policy, class Capacity = default_capacity>
class event_runner {
public:
    // `live`: the running allocations by ID, as a snapshot restored them;
    // `program` starts each message on `err`.
    event_runner(basic_allocator<Policy, Capacity> a, std::ostream& out, std::ostream& err, bool json,
                 std::unordered_map<std::string, allocation_id> live = {}, std::string program = "topoblock place")
        : a_(std::move(a)), out_(out), err_(err), json_(json), live_(std::move(live)), program_(std::move(program)) {}

    const basic_allocator<Policy, Capacity>& allocator() const noexcept { return a_; }

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
        return write_file_ ? write_file_(path, *text, why) : topoblock::detail::replace_file(path, *text, why);
    }

    // What `save` and save_state do with a snapshot's text: write(path,
    // text, why), false with `why` on failure. By default the file at
    // `path` is replaced whole; a caller that must not touch files (a fuzz
    // target, a test) keeps the text instead.
    using file_writer = std::function<bool(const std::string& path, const std::string& text, std::string& why)>;
    void set_file_writer(file_writer write) { write_file_ = std::move(write); }

private:
    // A word of an event line and its 1-based column.
    using word = topoblock::detail::text_word;
    using allocator_type = basic_allocator<Policy, Capacity>;

    // A line that could not be applied: named on err, and in JSON mode
    // answered too, with the errc of a refusal when there is one.
    bool fail(std::uint32_t column, const std::string& message, std::optional<errc> reason = std::nullopt) {
        err_ << program_ << ": " << make_error(message, line_, column).to_string() << '\n';
        if (json_) {
            out_ << "{\"line\":" << line_ << ",\"column\":" << column << ",\"state\":\"error\"";
            if (reason) out_ << ",\"reason\":\"" << to_string(*reason) << '"';
            out_ << ",\"message\":" << topoblock::detail::json_string(message) << "}\n";
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
        if (verb == "explain") return explain_event(w);
        if (verb == "stats") return stats(w);
        if (verb == "advise") return advise_event(w);
        if (verb == "protect") return protect(w);
        return fail(w[0].column, "unknown event " + topoblock::detail::quoted(verb) +
                                     " (expected alloc, hold, release, down, drain, up, save, explain, stats, advise or protect)");
    }

    // The ID of `alloc` and `hold`: present, not naming a live job, and in
    // JSON mode text a JSON string carries unchanged.
    bool new_id(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), std::string(w[0].text) + " needs an ID");
        if (live_.contains(std::string(w[1].text)))
            return fail(w[1].column, "allocation " + topoblock::detail::quoted(w[1].text) + " is already running");
        if (json_ && !topoblock::detail::valid_utf8(w[1].text))
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
                out_ << "{\"id\":" << topoblock::detail::json_string(id) << ",\"state\":\""
                     << (may_succeed_later(got.error()) ? "pending" : "refused") << "\",\"reason\":\""
                     << to_string(got.error()) << "\",\"message\":" << topoblock::detail::json_string(describe(got.error())) << "}\n";
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
        out_ << "{\"id\":" << topoblock::detail::json_string(id) << ",\"state\":\"" << state << "\",\"domains\":[";
        for (std::size_t i = 0; i < domains.size(); ++i) out_ << (i ? "," : "") << topoblock::detail::json_string(t.domain(domains[i]).name);
        out_ << "],\"nodes\":[";
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            out_ << (i ? "," : "") << "{\"node\":" << topoblock::detail::json_string(t.node(pieces[i].node).name) << ",\"gpus\":[";
            bool first = true;
            for (gpu_mask m = pieces[i].gpus; m != 0; m &= m - 1) {
                out_ << (first ? "" : ",") << std::countr_zero(m);
                first = false;
            }
            out_ << "]}";
        }
        out_ << "]}\n";
    }

    // The nodes of a hostlist word, each named once and known: so no more
    // names than the topology has nodes, which bounds the expansion.
    bool nodes_of(const word& w, std::vector<node_id>& nodes) {
        auto names = io::expand_hostlist(w.text, {a_.topo().node_count(), io::max_hostlist_bytes});
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

    // The running allocation an event of one ID word names (release,
    // protect), or live_.end() with the line failed.
    auto running(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), std::string(w[0].text) + " needs an ID"), live_.end();
        if (w.size() > 2) return fail(w[2].column, "unexpected " + topoblock::detail::quoted(w[2].text)), live_.end();
        const auto it = live_.find(std::string(w[1].text));
        if (it == live_.end())
            fail(w[1].column, "no running allocation " + topoblock::detail::quoted(w[1].text), errc::unknown_allocation);
        return it;
    }

    bool release(const std::vector<word>& w) {
        const auto it = running(w);
        if (it == live_.end()) return false;
        (void)a_.release(it->second);
        protected_.erase(std::remove(protected_.begin(), protected_.end(), it->second), protected_.end());
        if (json_) out_ << "{\"id\":" << topoblock::detail::json_string(it->first) << ",\"state\":\"released\"}\n";
        live_.erase(it);
        return true;
    }

    bool health(const std::vector<word>& w, node_health h) {
        std::vector<node_id> nodes;
        if (!one_hostlist(w, 1, nodes)) return false;
        for (node_id n : nodes) (void)a_.set_health(n, h);
        return true;
    }

    // "ID ADVISE a,b,c": the running allocations to stop so that the
    // request places (advice/advise.hpp), by their IDs in the stream's
    // sorted order; "ID ADVISE none" when it places now; "ID ADVISE
    // impossible REASON" when stopping every unprotected one would not help.
    bool advise_event(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), "advise needs an ID");
        if (json_ && !topoblock::detail::valid_utf8(w[1].text))
            return fail(w[1].column, "ID " + topoblock::detail::quoted(w[1].text) + " is not UTF-8, which JSON cannot carry");
        const auto q = parse_request(std::span<const word>(w).subspan(2), after(w[1]));
        if (!q) return fail(q.error().column, q.error().message);
        advise_options options;
        options.protect = protected_;
        const advice got = topoblock::advise(a_, *q, options);
        std::vector<std::string> names;
        for (const auto& [name, id] : live_)
            if (std::binary_search(got.stop.begin(), got.stop.end(), id)) names.push_back(name);
        std::sort(names.begin(), names.end());
        const std::string id(w[1].text);
        if (!json_) {
            out_ << id << " ADVISE ";
            if (got.kind == advice_kind::none) out_ << "none";
            else if (got.kind == advice_kind::impossible) out_ << "impossible " << to_string(got.reason);
            for (std::size_t i = 0; i < names.size(); ++i) out_ << (i ? "," : "") << names[i];
            out_ << '\n';
            return true;
        }
        out_ << "{\"id\":" << topoblock::detail::json_string(id) << ",\"state\":\"advice\",\"advice\":\"";
        if (got.kind == advice_kind::none) {
            out_ << "none\"";
        } else if (got.kind == advice_kind::impossible) {
            out_ << "impossible\",\"reason\":\"" << to_string(got.reason)
                 << "\",\"message\":" << topoblock::detail::json_string(describe(got.reason));
        } else {
            out_ << "stop\",\"stop\":[";
            for (std::size_t i = 0; i < names.size(); ++i) out_ << (i ? "," : "") << topoblock::detail::json_string(names[i]);
            out_ << "],\"gpus\":" << got.cost << ",\"exact\":" << (got.exact ? "true" : "false");
        }
        out_ << "}\n";
        return true;
    }

    // Marks a running allocation as never advised to stop.
    bool protect(const std::vector<word>& w) {
        const auto it = running(w);
        if (it == live_.end()) return false;
        if (std::find(protected_.begin(), protected_.end(), it->second) == protected_.end())
            protected_.push_back(it->second);
        if (json_) out_ << "{\"id\":" << topoblock::detail::json_string(it->first) << ",\"state\":\"protected\"}\n";
        return true;
    }

    bool save(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), "save needs a FILE");
        if (w.size() > 2) return fail(w[2].column, "unexpected " + topoblock::detail::quoted(w[2].text));
        std::string why;
        return save_state(std::string(w[1].text), why) || fail(w[1].column, why);
    }

    // "explain ID REQUEST": why the request would or would not be placed
    // now; the ID only labels the answer (it need not be new, and nothing
    // is placed).
    bool explain_event(const std::vector<word>& w) {
        if (w.size() < 2) return fail(after(w[0]), "explain needs an ID");
        if (json_ && !topoblock::detail::valid_utf8(w[1].text))
            return fail(w[1].column, "ID " + topoblock::detail::quoted(w[1].text) + " is not UTF-8, which JSON cannot carry");
        const auto q = parse_request(std::span<const word>(w).subspan(2), after(w[1]));
        if (!q) return fail(q.error().column, q.error().message);
        const explanation e = explain(a_, *q, scratch_);
        const std::string id(w[1].text);
        if (!json_) {
            out_ << id << " EXPLAIN " << to_string(e) << '\n';
            return true;
        }
        const toolkit::capacity_view& v = e.view;
        using topoblock::detail::json_string;
        out_ << "{\"id\":" << json_string(id) << ",\"state\":\"explain\",\"placeable\":" << (e.placeable() ? "true" : "false")
             << ",\"reason\":\"" << to_string(e.code) << "\",\"binding\":\"" << to_string(e.binding)
             << "\",\"message\":" << json_string(to_string(e)) << ",\"unit\":\"" << (e.asked_unit == unit::nodes ? "nodes" : "gpus")
             << "\",\"asked\":" << e.asked << ",\"part\":" << e.part << ",\"parts\":" << e.parts << ",\"total\":" << e.total
             << ",\"up\":" << e.up << ",\"free\":" << e.free << ",\"free_gpus\":" << e.free_gpus
             << ",\"closed_free_gpus\":" << e.closed_free_gpus << ",\"largest_domain\":" << e.largest_domain
             << ",\"domains_needed\":" << e.domains_needed << ",\"idle_domains\":" << e.idle_domains;
        if (e.measured)
            out_ << ",\"view\":{\"unit\":" << json_string(v.unit) << ",\"unit_gpus\":" << v.unit_gpus
                 << ",\"scope\":" << json_string(v.scope) << ",\"most_is\":" << json_string(v.most_is) << ",\"need\":" << v.need
                 << ",\"free\":" << v.free << ",\"most\":" << v.most << ",\"holding_now\":" << v.holding_now
                 << ",\"holding_if_emptied\":" << v.holding_if_emptied << ",\"wholly_free\":" << v.wholly_free
                 << ",\"scopes\":" << v.scopes << '}';
        out_ << "}\n";
        return true;
    }

    // "stats": the allocatable jobs by size and the compaction, one line
    // per figure (one JSON object in JSON mode).
    bool stats(const std::vector<word>& w) {
        if (w.size() > 1) return fail(w[1].column, "unexpected " + topoblock::detail::quoted(w[1].text));
        const allocatable_by_size n = allocatable_of(a_.state());
        const compaction c = compaction_of(a_.state());
        const auto sizes = [&](const std::vector<std::uint64_t>& jobs, bool json) {
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                if (json) out_ << (i ? "," : "") << jobs[i];
                else out_ << ' ' << i + 1 << '=' << jobs[i];
            }
        };
        if (json_) {
            out_ << "{\"state\":\"stats\",\"allocatable_gpus\":[";
            sizes(n.gpus, true);
            out_ << "],\"allocatable_nodes\":[";
            sizes(n.nodes, true);
            out_ << "],\"held_gpus\":" << c.held_gpus << ",\"occupied_domains\":" << c.occupied_domains
                 << ",\"fewest_domains\":" << c.fewest_domains << "}\n";
            return true;
        }
        out_ << "STATS allocatable-gpus";
        sizes(n.gpus, false);
        out_ << "\nSTATS allocatable-nodes";
        sizes(n.nodes, false);
        out_ << "\nSTATS compaction held-gpus=" << c.held_gpus << " occupied-domains=" << c.occupied_domains
             << " fewest-domains=" << c.fewest_domains << '\n';
        return true;
    }

    allocator_type a_;
    std::ostream& out_;
    std::ostream& err_;
    bool json_;
    std::unordered_map<std::string, allocation_id> live_;
    // Running allocations `protect` marked (not kept in snapshots).
    std::vector<allocation_id> protected_;
    std::string program_;
    file_writer write_file_;
    std::uint32_t line_ = 0;
    placement scratch_;  // explain's dry runs
};

}  // namespace topoblock::io
