#pragma once

// Snapshots of an allocator: its whole state as versioned, line-oriented
// text, read back into an allocator that gives the same ids, the same
// answers and the same decisions from then on as one that never stopped.
// The format is docs/snapshots.md.

#include <topoblock/allocator/allocator.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/state/cluster_state.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/support/error.hpp>
#include <topoblock/support/expected.hpp>
#include <topoblock/support/text_lines.hpp>
#include <topoblock/topology/topology.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace topoblock::io {

// The format version this build writes and the only one it reads.
inline constexpr std::uint32_t snapshot_version = 1;
// No line of a snapshot is longer (a longer one is refused before it is read).
inline constexpr std::size_t snapshot_max_line = 4096;

// Text a scheduler attaches to live allocations (its job names), saved and
// read back with them: (allocation, text), sorted by allocation.
using snapshot_labels = std::vector<std::pair<allocation_id, std::string>>;

namespace detail::snapshot {

// FNV-1a, 64 bits: the snapshot's checksum and the topology's fingerprint.
class fnv1a64 {
public:
    void add(std::string_view bytes) noexcept {
        for (const char c : bytes) {
            hash_ ^= static_cast<unsigned char>(c);
            hash_ *= 0x100000001b3ULL;
        }
    }
    // A number as its 8 bytes, low first: the same on every platform.
    void add(std::uint64_t value) noexcept {
        for (int i = 0; i < 8; ++i) {
            hash_ ^= (value >> (8 * i)) & 0xffU;
            hash_ *= 0x100000001b3ULL;
        }
    }
    // A name with its length before it, so that no two lists of names
    // hash the same bytes.
    void add_name(std::string_view name) noexcept {
        add(std::uint64_t{name.size()});
        add(name);
    }
    std::uint64_t value() const noexcept { return hash_; }

private:
    std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

inline std::string hex16(std::uint64_t value) {
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = "0123456789abcdef"[value & 0xfU];
    return out;
}

// A whole word as a number (decimal, or hex without a prefix); false when
// it is not one or does not fit.
template <class T>
bool whole_number(std::string_view word, T& value, int base = 10) {
    if (word.empty() || word.front() == '+' || word.front() == '-') return false;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, base);
    return ec == std::errc{} && end == word.data() + word.size();
}

// A label's text: one line, with no control characters and no blank at
// either end (the reader takes the rest of the line).
inline bool valid_label(std::string_view text) {
    if (text.empty() || text.size() > snapshot_max_line / 2) return false;
    if (text.front() == ' ' || text.back() == ' ') return false;
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
    return true;
}

inline std::string_view locality_word(locality l) {
    switch (l) {
        case locality::require: return "require";
        case locality::prefer: return "prefer";
        case locality::any: return "any";
    }
    return "require";
}

// One live allocation as read, before the state is built.
struct read_allocation {
    allocation_id id;
    request asked;
    std::uint32_t requested_gpus = 0;
    bool hit_by_failure = false;
    std::size_t first_run = 0;
    std::size_t run_count = 0;
    std::size_t declared_runs = 0;
    std::uint32_t line = 0;
};

}  // namespace detail::snapshot

// A hash of the topology's shape and names (domains, nodes, GPUs per node,
// levels and groups), the same on every platform: a snapshot taken on
// another topology is refused by it. O(nodes + domains x levels).
inline std::uint64_t topology_fingerprint(const topology& topo) {
    detail::snapshot::fnv1a64 h;
    h.add(std::uint64_t{topo.domain_count()});
    for (const auto& d : topo.domains()) {
        h.add_name(d.name);
        h.add(std::uint64_t{d.first_node});
        h.add(std::uint64_t{d.node_count});
        h.add(std::uint64_t{d.gpus_per_node});
    }
    h.add(std::uint64_t{topo.node_count()});
    for (const auto& n : topo.nodes()) {
        h.add_name(n.name);
        h.add(std::uint64_t{n.domain});
        h.add(std::uint64_t{n.gpus});
    }
    h.add(std::uint64_t{topo.levels().size()});
    for (const auto& level : topo.levels()) {
        h.add_name(level.name);
        h.add(std::uint64_t{level.group_names.size()});
        for (const auto& g : level.group_names) h.add_name(g);
        for (const group_id g : level.group_of_domain) h.add(std::uint64_t{g});
    }
    return h.value();
}

// The allocator's whole state as snapshot text: topology fingerprint, the
// policy's name, the slot table (live allocations with their requests,
// pieces and flags; the free slots in the order the next allocations take
// them; retired slots), the nodes that are not up, and `labels`, each of
// which names a live allocation once and is one line of text (no control
// characters, no blank at either end). Errors: a label that breaks those
// rules. O(slots + pieces + nodes + labels).
template <class Policy, class Capacity>
expected<std::string, error> write_snapshot(const basic_allocator<Policy, Capacity>& a, snapshot_labels labels = {}) {
    const auto& state = a.state();
    const topology& topo = a.topo();
    std::sort(labels.begin(), labels.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t i = 0; i < labels.size(); ++i) {
        const std::string which = "label of allocation " + std::to_string(labels[i].first.value);
        if (state.find(labels[i].first) == nullptr) return unexpected(make_error(which + ": no such live allocation"));
        if (i > 0 && labels[i].first == labels[i - 1].first) return unexpected(make_error(which + ": given twice"));
        if (!detail::snapshot::valid_label(labels[i].second))
            return unexpected(make_error(which + ": empty, longer than " + std::to_string(snapshot_max_line / 2) +
                                         " characters, with a control character, or with a blank at an end"));
    }
    std::string out;
    out += "topoblock-snapshot " + std::to_string(snapshot_version) + '\n';
    out += "topology " + detail::snapshot::hex16(topology_fingerprint(topo)) + " domains=" + std::to_string(topo.domain_count()) +
           " nodes=" + std::to_string(topo.node_count()) + " gpus=" + std::to_string(topo.gpu_count()) + '\n';
    std::string policy_name(a.policy_name());
    if (!detail::snapshot::valid_label(policy_name) || policy_name.find(' ') != std::string::npos) policy_name = "custom";
    out += "policy " + policy_name + '\n';
    out += "slots " + std::to_string(state.slot_count()) + '\n';
    // 0: retired, 1: live, 2: free.
    std::vector<std::uint8_t> kind(state.slot_count(), 0);
    state.for_each_allocation([&](allocation_id id, const allocation_record& r) {
        kind[static_cast<std::size_t>((id.value & 0xffffffffULL) - 1)] = 1;
        const request& q = r.asked;
        std::string flags;
        if (q.whole_nodes) flags += 'w';
        if (q.spread_segments) flags += 's';
        if (q.exclusive_domain) flags += 'x';
        if (r.hit_by_failure) flags += 'h';
        if (flags.empty()) flags = "-";
        const auto runs = r.pieces.runs();
        out += "alloc " + std::to_string(id.value) + (q.what == unit::nodes ? " nodes " : " gpus ") + std::to_string(q.count) +
               ' ' + std::string(detail::snapshot::locality_word(q.where)) + ' ' + std::to_string(q.segment) + ' ' + flags + ' ' +
               std::to_string(r.requested_gpus) + ' ' + std::to_string(runs.size()) + '\n';
        for (const piece_run& run : runs)
            out += "run " + std::to_string(run.first) + ' ' + std::to_string(run.nodes) + ' ' + detail::snapshot::hex16(run.gpus) + '\n';
    });
    state.for_each_free_slot([&](std::uint32_t s, std::uint32_t generation) {
        kind[s] = 2;
        out += "free " + std::to_string(s) + ' ' + std::to_string(generation) + '\n';
    });
    for (std::uint32_t s = 0; s < state.slot_count(); ++s)
        if (kind[s] == 0) out += "retired " + std::to_string(s) + '\n';
    for (node_id n = 0; n < topo.node_count(); ++n)
        if (state.health(n) != node_health::up)
            out += "node " + std::to_string(n) + ' ' + std::string(to_string(state.health(n))) + '\n';
    for (const auto& [id, text] : labels) out += "label " + std::to_string(id.value) + ' ' + text + '\n';
    detail::snapshot::fnv1a64 sum;
    sum.add(out);
    out += "checksum " + detail::snapshot::hex16(sum.value()) + '\n';
    return out;
}

// What read_snapshot gives back.
template <class Policy, class Capacity>
struct restored_allocator {
    basic_allocator<Policy, Capacity> allocator;
    snapshot_labels labels;   // sorted by allocation
    std::string policy_name;  // the policy the snapshot was saved under
};

// Reads a snapshot into a new allocator on `topo` with `policy` (any
// policy: the state does not depend on it). Checks, each refusal naming
// its line: the magic and version, that no line is longer than
// snapshot_max_line, the checksum, the topology fingerprint, every word
// and number (a number that does not fit is refused), the order of the
// line kinds, each slot accounted for once (live, free or retired), the
// pieces of each allocation (node in range, GPUs that exist, no GPU
// claimed twice, exclusive domains not shared: the state's own commit
// checks), each node and label named once, and that an allocation on a
// down node is marked hit. The allocator is built aside and returned only
// when all of it is read; memory stays within a small multiple of the text
// and the topology. O(text + cluster).
template <class Policy, class Capacity = default_capacity>
expected<restored_allocator<Policy, Capacity>, error> read_snapshot(std::string_view text, topology topo,
                                                                    Policy policy = Policy{}) {
    using topoblock::detail::text_word;
    const auto fail = [](std::uint32_t line, std::string message) -> expected<restored_allocator<Policy, Capacity>, error> {
        return unexpected(make_error("snapshot: " + std::move(message), line));
    };
    const std::string magic = "topoblock-snapshot";

    // The lines: none too long, the first the magic, the last the checksum.
    topoblock::detail::text_lines lines(text);
    std::string_view line;
    std::size_t checksum_offset = 0, offset = 0;
    std::string_view last;
    std::uint32_t last_number = 0;
    while (lines.next(line)) {
        if (line.size() > snapshot_max_line)
            return fail(lines.number(), "line longer than " + std::to_string(snapshot_max_line) + " characters");
        if (lines.number() == 1) {
            const auto words = topoblock::detail::split_blank_separated(line);
            if (words.size() != 2 || words[0].text != magic)
                return fail(1, "not a topoblock snapshot (its first line is not '" + magic + " VERSION')");
            std::uint32_t version = 0;
            if (!detail::snapshot::whole_number(words[1].text, version) || version != snapshot_version)
                return fail(1, "version '" + std::string(words[1].text) + "' is not one this build reads (it reads " +
                                   std::to_string(snapshot_version) + ")");
        }
        if (!line.empty()) {
            last = line;
            last_number = lines.number();
            checksum_offset = offset;
        }
        offset = static_cast<std::size_t>(line.data() - text.data()) + line.size();
        if (offset < text.size() && text[offset] == '\r') ++offset;
        if (offset < text.size()) ++offset;  // the '\n'
    }
    if (last_number == 0) return fail(1, "empty, not a topoblock snapshot");
    {
        const auto words = topoblock::detail::split_blank_separated(last);
        std::uint64_t written = 0;
        if (words.size() != 2 || words[0].text != "checksum" || words[1].text.size() != 16 ||
            !detail::snapshot::whole_number(words[1].text, written, 16))
            return fail(last_number, "the last line is not 'checksum HEX16' (a truncated snapshot?)");
        detail::snapshot::fnv1a64 sum;
        sum.add(text.substr(0, checksum_offset));
        if (sum.value() != written)
            return fail(last_number, "checksum " + std::string(words[1].text) + " does not match the content's " +
                                         detail::snapshot::hex16(sum.value()) + " (the snapshot was changed or damaged)");
    }

    // The words, line kind by line kind, in the documented order.
    enum rank : int { r_magic, r_topology, r_policy, r_slots, r_alloc, r_free, r_retired, r_node, r_label, r_checksum };
    int at_rank = r_magic;
    std::string policy_name;
    bool have_slots = false;
    std::uint32_t slot_count = 0;
    std::uint64_t slot_lines = 0;
    std::vector<detail::snapshot::read_allocation> allocs;
    std::vector<piece_run> runs;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> free_slots;
    std::vector<std::uint32_t> free_lines;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> retired;  // slot, line
    std::vector<std::pair<node_id, node_health>> health;
    std::vector<std::uint32_t> health_lines;
    std::vector<std::pair<allocation_id, std::string>> labels;
    std::vector<std::uint32_t> label_lines;
    const std::uint64_t fingerprint = topology_fingerprint(topo);

    topoblock::detail::text_lines body(text.substr(0, checksum_offset));
    while (body.next(line)) {
        const std::uint32_t n = body.number();
        if (n == 1 || line.empty()) continue;
        const std::vector<text_word> w = topoblock::detail::split_blank_separated(line);
        if (w.empty()) continue;
        const std::string_view kind = w[0].text;
        const auto bad = [&](std::size_t i, const std::string& what) {
            return unexpected(make_error("snapshot: " + what + (i < w.size() ? ", got '" + std::string(w[i].text) + "'" : ""), n,
                                         i < w.size() ? w[i].column : 0));
        };
        const int r = kind == "topology" ? r_topology
                      : kind == "policy" ? r_policy
                      : kind == "slots"  ? r_slots
                      : kind == "alloc" || kind == "run" ? r_alloc
                      : kind == "free"    ? r_free
                      : kind == "retired" ? r_retired
                      : kind == "node"    ? r_node
                      : kind == "label"   ? r_label
                                          : -1;
        if (r < 0) return bad(0, "unknown line kind (expected topology, policy, slots, alloc, run, free, retired, node or label)");
        const bool once = r == r_topology || r == r_policy || r == r_slots;
        if (r < at_rank || (once && r == at_rank))
            return bad(0, "line out of order (the order is topology, policy, slots, alloc with its runs, free, retired, "
                          "node, label; the first three once each)");
        if (at_rank < r_slots && r != at_rank + 1)
            return fail(n, "expected the topology, policy and slots lines after the first, in that order");
        // An allocation's runs follow it, exactly as many as it says.
        const bool open_alloc = !allocs.empty() && allocs.back().run_count < allocs.back().declared_runs;
        if (kind == "run" ? !open_alloc : open_alloc)
            return fail(n, kind == "run" ? "a run line that no allocation expects"
                                         : "allocation of line " + std::to_string(allocs.back().line) + " declares " +
                                               std::to_string(allocs.back().declared_runs) + " runs, but has " +
                                               std::to_string(allocs.back().run_count));
        at_rank = r;

        if (kind == "topology") {
            std::uint64_t written = 0;
            if (w.size() != 5) return bad(0, "expected 'topology HEX16 domains=D nodes=N gpus=G'");
            if (w[1].text.size() != 16 || !detail::snapshot::whole_number(w[1].text, written, 16)) return bad(1, "expected a 16-digit hex fingerprint");
            if (written != fingerprint)
                return fail(n, "taken on another topology (" + std::string(w[2].text) + ' ' + std::string(w[3].text) + ' ' +
                                   std::string(w[4].text) + ", fingerprint " + std::string(w[1].text) + "; this one has domains=" +
                                   std::to_string(topo.domain_count()) + " nodes=" + std::to_string(topo.node_count()) +
                                   " gpus=" + std::to_string(topo.gpu_count()) + ", fingerprint " + detail::snapshot::hex16(fingerprint) + ")");
        } else if (kind == "policy") {
            if (w.size() != 2) return bad(0, "expected 'policy NAME'");
            policy_name = std::string(w[1].text);
        } else if (kind == "slots") {
            if (w.size() != 2) return bad(0, "expected 'slots COUNT'");
            if (!detail::snapshot::whole_number(w[1].text, slot_count) || slot_count >= npos32 - 1)
                return bad(1, "expected a slot count below " + std::to_string(npos32 - 1));
            have_slots = true;
        } else if (kind == "alloc") {
            if (w.size() != 9) return bad(0, "expected 'alloc ID gpus|nodes COUNT LOCALITY SEGMENT FLAGS REQUESTED RUNS'");
            detail::snapshot::read_allocation a;
            a.line = n;
            std::uint64_t id = 0;
            if (!detail::snapshot::whole_number(w[1].text, id) || id == 0) return bad(1, "expected an allocation id");
            a.id = allocation_id{id};
            if (w[2].text == "gpus") a.asked.what = unit::gpus;
            else if (w[2].text == "nodes") a.asked.what = unit::nodes;
            else return bad(2, "expected gpus or nodes");
            if (!detail::snapshot::whole_number(w[3].text, a.asked.count)) return bad(3, "expected a count that fits 32 bits");
            if (w[4].text == "require") a.asked.where = locality::require;
            else if (w[4].text == "prefer") a.asked.where = locality::prefer;
            else if (w[4].text == "any") a.asked.where = locality::any;
            else return bad(4, "expected require, prefer or any");
            if (!detail::snapshot::whole_number(w[5].text, a.asked.segment)) return bad(5, "expected a segment size that fits 32 bits");
            if (w[6].text != "-") {
                std::string_view order = "wsxh";
                std::size_t from = 0;
                for (const char c : w[6].text) {
                    const std::size_t at = order.find(c, from);
                    if (at == std::string_view::npos) return bad(6, "expected '-' or the flags w, s, x, h in that order, each once");
                    from = at + 1;
                    a.asked.whole_nodes = a.asked.whole_nodes || c == 'w';
                    a.asked.spread_segments = a.asked.spread_segments || c == 's';
                    a.asked.exclusive_domain = a.asked.exclusive_domain || c == 'x';
                    a.hit_by_failure = a.hit_by_failure || c == 'h';
                }
            }
            if (!detail::snapshot::whole_number(w[7].text, a.requested_gpus) || a.requested_gpus == 0)
                return bad(7, "expected a positive requested GPU count that fits 32 bits");
            if (!detail::snapshot::whole_number(w[8].text, a.declared_runs) || a.declared_runs == 0)
                return bad(8, "expected a positive run count");
            a.first_run = runs.size();
            allocs.push_back(a);
            ++slot_lines;
        } else if (kind == "run") {
            if (w.size() != 4) return bad(0, "expected 'run FIRST_NODE NODES GPU_MASK'");
            piece_run run;
            if (!detail::snapshot::whole_number(w[1].text, run.first)) return bad(1, "expected a node id");
            if (!detail::snapshot::whole_number(w[2].text, run.nodes) || run.nodes == 0) return bad(2, "expected a positive node count");
            if (run.first >= topo.node_count() || run.nodes > topo.node_count() - run.first)
                return fail(n, "run of nodes " + std::to_string(run.first) + " to " +
                                   std::to_string(std::uint64_t{run.first} + run.nodes - 1) + " is out of range (the topology has " +
                                   std::to_string(topo.node_count()) + " nodes)");
            if (w[3].text.size() != 16 || !detail::snapshot::whole_number(w[3].text, run.gpus, 16) || run.gpus == 0)
                return bad(3, "expected a non-zero 16-digit hex GPU mask");
            runs.push_back(run);
            ++allocs.back().run_count;
        } else if (kind == "free") {
            std::uint32_t s = 0, generation = 0;
            if (w.size() != 3) return bad(0, "expected 'free SLOT GENERATION'");
            if (!detail::snapshot::whole_number(w[1].text, s)) return bad(1, "expected a slot number");
            if (!detail::snapshot::whole_number(w[2].text, generation)) return bad(2, "expected a generation that fits 32 bits");
            free_slots.emplace_back(s, generation);
            free_lines.push_back(n);
            ++slot_lines;
        } else if (kind == "retired") {
            std::uint32_t s = 0;
            if (w.size() != 2) return bad(0, "expected 'retired SLOT'");
            if (!detail::snapshot::whole_number(w[1].text, s)) return bad(1, "expected a slot number");
            retired.emplace_back(s, n);
            ++slot_lines;
        } else if (kind == "node") {
            node_id id = 0;
            if (w.size() != 3) return bad(0, "expected 'node INDEX drain|down'");
            if (!detail::snapshot::whole_number(w[1].text, id)) return bad(1, "expected a node index");
            if (id >= topo.node_count())
                return bad(1, "node index out of range (the topology has " + std::to_string(topo.node_count()) + " nodes)");
            node_health h = node_health::up;
            if (w[2].text == "drain") h = node_health::drain;
            else if (w[2].text == "down") h = node_health::down;
            else return bad(2, "expected drain or down");
            health.emplace_back(id, h);
            health_lines.push_back(n);
        } else {  // label
            std::uint64_t id = 0;
            if (w.size() < 3) return bad(0, "expected 'label ID TEXT'");
            if (!detail::snapshot::whole_number(w[1].text, id) || id == 0) return bad(1, "expected an allocation id");
            const std::string_view label = line.substr(w[2].column - 1);
            if (!detail::snapshot::valid_label(label)) return fail(n, "label text with a control character, or a blank at its end");
            labels.emplace_back(allocation_id{id}, std::string(label));
            label_lines.push_back(n);
        }
    }
    if (!allocs.empty() && allocs.back().run_count < allocs.back().declared_runs)
        return fail(last_number, "allocation of line " + std::to_string(allocs.back().line) + " declares " +
                                     std::to_string(allocs.back().declared_runs) + " runs, but has " +
                                     std::to_string(allocs.back().run_count));
    if (!have_slots) return fail(last_number, "no topology, policy and slots lines");
    // Every slot once: the table's memory is then bounded by the lines.
    if (slot_lines != slot_count)
        return fail(last_number, "the slots line says " + std::to_string(slot_count) + " slots, but " +
                                     std::to_string(slot_lines) + " are listed (alloc, free and retired lines)");
    {
        std::vector<std::uint32_t> seen(slot_count, 0);  // the line that named it
        const auto name_slot = [&](std::uint64_t s, std::uint32_t n) -> expected<void, error> {
            if (s >= slot_count)
                return unexpected(make_error("snapshot: slot " + std::to_string(s) + " is beyond the table's " +
                                             std::to_string(slot_count) + " slots", n));
            if (seen[s] != 0)
                return unexpected(make_error("snapshot: slot " + std::to_string(s) + " is named already, on line " +
                                             std::to_string(seen[s]) + " (a duplicate id or slot)", n));
            seen[s] = n;
            return {};
        };
        for (const auto& a : allocs)
            if (auto ok = name_slot((a.id.value & 0xffffffffULL) - 1, a.line); !ok) return unexpected(std::move(ok).error());
        for (std::size_t i = 0; i < free_slots.size(); ++i)
            if (auto ok = name_slot(free_slots[i].first, free_lines[i]); !ok) return unexpected(std::move(ok).error());
        for (const auto& [s, n] : retired)
            if (auto ok = name_slot(s, n); !ok) return unexpected(std::move(ok).error());
    }
    {
        std::vector<std::uint32_t> seen(topo.node_count(), 0);
        for (std::size_t i = 0; i < health.size(); ++i) {
            if (seen[health[i].first] != 0)
                return fail(health_lines[i], "node " + std::to_string(health[i].first) + " is named already, on line " +
                                                 std::to_string(seen[health[i].first]));
            seen[health[i].first] = health_lines[i];
        }
    }

    // The state, built aside.
    auto made = basic_cluster_state<Capacity>::create(std::move(topo));
    if (!made) return unexpected(std::move(made).error());
    auto& state = *made;
    for (const auto& a : allocs) {
        auto done = state.restore_allocation(a.id, a.asked, std::span<const piece_run>(runs).subspan(a.first_run, a.run_count),
                                             a.requested_gpus, a.hit_by_failure);
        if (!done) return fail(a.line, "allocation " + std::to_string(a.id.value) + ": " + done.error().message);
    }
    if (auto done = state.restore_free_slots(slot_count, free_slots); !done)
        return fail(free_lines.empty() ? last_number : free_lines.front(), done.error().message);
    for (const auto& [n, h] : health) (void)state.set_health(n, h);
    for (const auto& a : allocs)
        if (!a.hit_by_failure && state.find(a.id)->hit_by_failure)
            return fail(a.line, "allocation " + std::to_string(a.id.value) + " holds GPUs on a down node but is not marked hit (h)");
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (state.find(labels[i].first) == nullptr)
            return fail(label_lines[i], "label of allocation " + std::to_string(labels[i].first.value) + ", which is not live");
        if (i > 0 && !(labels[i - 1].first < labels[i].first))
            return fail(label_lines[i], "labels out of order or given twice (sorted by allocation, each once)");
    }
    if (const std::string wrong = state.verify(); !wrong.empty()) return fail(last_number, "inconsistent state: " + wrong);
    return restored_allocator<Policy, Capacity>{basic_allocator<Policy, Capacity>::adopt(std::move(state), std::move(policy)),
                                                std::move(labels), std::move(policy_name)};
}

}  // namespace topoblock::io
