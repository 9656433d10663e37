// The Python module `topoblock`: topologies, an allocator for each built-in
// policy chosen by name, and the simulator, for research code that does not
// want to write C++. docs/python.md is its reference.
//
// Everything the module returns is plain Python (ints, floats, strings,
// lists and dicts), so that results load straight into a pandas DataFrame.
// Every refusal and every bad input is a topoblock.Error carrying `.code`;
// nothing a caller passes can crash the interpreter.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <topoblock/advice/advise.hpp>
#include <topoblock/advice/drain_plan.hpp>
#include <topoblock/advice/explain.hpp>
#include <topoblock/io/hostlist.hpp>
#include <topoblock/io/load_topology.hpp>
#include <topoblock/metrics/metrics.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/sim/cost_model.hpp>
#include <topoblock/sim/engine.hpp>
#include <topoblock/sim/failures.hpp>
#include <topoblock/sim/load.hpp>
#include <topoblock/sim/queue.hpp>
#include <topoblock/sim/report.hpp>
#include <topoblock/sim/synthetic.hpp>
#include <topoblock/sim/trace_csv.hpp>
#include <topoblock/sim/workload_source.hpp>
#include <topoblock/support/name_list.hpp>
#include <topoblock/topoblock.hpp>

#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace py = pybind11;
using namespace pybind11::literals;

namespace topoblock::python {

// ---------------------------------------------------------------- errors

// What the module raises as topoblock.Error: `code` is an errc name
// (request/errc.hpp) for the allocator's refusals, or one of the module's
// own codes: parse_error (a topology or trace text), invalid_argument (a
// value the call cannot take), unknown_node (a node name the topology does
// not have).
struct module_error {
    std::string code;
    std::string message;
};

[[noreturn]] inline void raise(std::string code, std::string message) {
    throw module_error{std::move(code), std::move(message)};
}
[[noreturn]] inline void raise(errc code) {
    raise(std::string(to_string(code)), std::string(describe(code)));
}
[[noreturn]] inline void raise_invalid(std::string message) { raise("invalid_argument", std::move(message)); }

// The Error class, made once at import and kept for the translator.
inline py::object& error_type() {
    // Leaked on purpose: the interpreter may finalize after static
    // destructors would run.
    static auto* type = new py::object();
    return *type;
}

// ---------------------------------------------------------------- words

inline locality locality_of(std::string_view word) {
    if (word == "require") return locality::require;
    if (word == "prefer") return locality::prefer;
    if (word == "any") return locality::any;
    raise_invalid("locality must be 'require', 'prefer' or 'any', not " + detail::quoted(word));
}

inline node_health health_of(std::string_view word) {
    if (word == "up") return node_health::up;
    if (word == "drain") return node_health::drain;
    if (word == "down") return node_health::down;
    raise_invalid("health must be 'up', 'drain' or 'down', not " + detail::quoted(word));
}

// A count from Python, checked against [lo, hi].
inline std::uint32_t count_of(std::int64_t value, std::string_view what, std::int64_t lo = 0,
                              std::int64_t hi = std::numeric_limits<std::uint32_t>::max()) {
    if (value < lo || value > hi)
        raise_invalid(std::string(what) + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) +
                      ", not " + std::to_string(value));
    return static_cast<std::uint32_t>(value);
}

inline std::string number_text(double value) {
    std::string out;
    sim::detail::append_exact(out, value);
    return out;
}

inline double real_of(double value, std::string_view what, double lo, double hi) {
    if (!std::isfinite(value) || value < lo || value > hi)
        raise_invalid(std::string(what) + " must be a number from " + number_text(lo) +
                      (hi == std::numeric_limits<double>::max() ? " up" : " to " + number_text(hi)) + ", not " +
                      number_text(value));
    return value;
}

// Calls f(item) for each item of a Python list, tuple or other iterable
// (not a string); a wrong type is an invalid_argument naming `what`.
template <class F>
void for_each_item(const py::handle& items, std::string_view what, F&& f) {
    if (py::isinstance<py::str>(items) || !py::isinstance<py::iterable>(items))
        raise_invalid(std::string(what) + " must be a list");
    try {
        for (const py::handle item : items) f(item);
    } catch (const py::cast_error&) {
        raise_invalid(std::string(what) + ": an item of the wrong type");
    }
}

// A Python int, or an integer of another type (an object with __index__:
// a NumPy integer), as a number from 0 to `hi`; nullopt for anything else,
// bools included.
inline std::optional<std::uint64_t> whole_number_of(const py::handle& value, std::uint64_t hi) {
    if (py::isinstance<py::bool_>(value) || !PyIndex_Check(value.ptr())) return std::nullopt;
    const auto number = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    if (!number) {
        PyErr_Clear();
        return std::nullopt;
    }
    const unsigned long long v = PyLong_AsUnsignedLongLong(number.ptr());
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();  // negative, or beyond 64 bits
        return std::nullopt;
    }
    if (v > hi) return std::nullopt;
    return v;
}

// A value for an error message: an int as its digits, anything else by type.
inline std::string shown(const py::handle& value) {
    if (PyLong_Check(value.ptr()) && !py::isinstance<py::bool_>(value)) return py::str(value).cast<std::string>();
    return std::string("a value of type ") + Py_TYPE(value.ptr())->tp_name;
}

// ---------------------------------------------------------------- topology

// A topology with what its source said beyond the shape: the slurm-block
// settings of a Slurm file, the nodes' health of a Kubernetes listing.
struct cluster {
    topology topo;
    std::optional<slurm_block> slurm;
    std::vector<node_health> health;  // per node; empty: every node up
    std::string source;               // how it was made, for repr()
};

inline cluster from_spec(const std::string& spec) {
    auto t = parse_topology_spec(spec);
    if (!t) raise("parse_error", "topology spec " + detail::quoted(spec) + ": " + t.error().to_string());
    return cluster{std::move(*t), std::nullopt, {}, spec};
}

// The loader's options from the keyword arguments of load() and read().
inline io::topology_load_options load_options_of(std::int64_t gpus_per_node, const std::optional<std::string>& nodes) {
    io::topology_load_options options;
    options.gpus_per_node = count_of(gpus_per_node, "gpus_per_node", 1, 64);
    if (nodes) {
        auto names = io::expand_hostlist(*nodes);
        if (!names) raise("parse_error", "nodes: " + names.error().to_string());
        options.node_order = std::move(*names);
    }
    return options;
}

inline cluster cluster_of(expected<io::loaded_topology, error> loaded, std::string source) {
    if (!loaded) raise("parse_error", loaded.error().to_string());
    cluster c{std::move(loaded->topo), std::nullopt, std::move(loaded->health), std::move(source)};
    if (loaded->slurm) c.slurm = slurm_block(*loaded->slurm);
    return c;
}

// A topology as `topoblock simulate --topology` takes it: a file of any
// format the loader reads (io::load_topology), else a spec.
inline cluster load_cluster(const std::string& source, std::int64_t gpus_per_node,
                            const std::optional<std::string>& nodes) {
    return cluster_of(io::load_topology(source, load_options_of(gpus_per_node, nodes)), source);
}

// A topology file's text already in memory (io::read_topology); `name`, a
// file name or empty, helps tell the format and names the text in errors.
inline cluster read_cluster(std::string_view text, const std::string& name, std::int64_t gpus_per_node,
                            const std::optional<std::string>& nodes) {
    auto loaded = io::read_topology(text, name, load_options_of(gpus_per_node, nodes));
    std::string source = name;
    if (loaded && source.empty()) source = std::string(io::format_name(loaded->format)) + " text";
    return cluster_of(std::move(loaded), std::move(source));
}

// A path given as a str or an os.PathLike.
inline std::string path_of(const py::object& path, std::string_view what) {
    if (py::isinstance<py::str>(path)) return path.cast<std::string>();
    if (py::hasattr(path, "__fspath__")) {
        const py::object p = path.attr("__fspath__")();
        if (py::isinstance<py::str>(p)) return p.cast<std::string>();
    }
    raise_invalid(std::string(what) + " must be a str or a path");
}

inline py::list domains_of(const topology& t) {
    py::list out;
    for (domain_id d = 0; d < t.domain_count(); ++d) {
        const domain_info& info = t.domain(d);
        out.append(py::dict("id"_a = d, "name"_a = info.name, "first_node"_a = info.first_node,
                            "nodes"_a = info.node_count, "gpus_per_node"_a = info.gpus_per_node,
                            "gpus"_a = info.gpu_count()));
    }
    return out;
}

inline py::list nodes_of(const cluster& c) {
    py::list out;
    const topology& t = c.topo;
    for (node_id n = 0; n < t.node_count(); ++n) {
        const node_info& info = t.node(n);
        const node_health h = c.health.empty() ? node_health::up : c.health[n];
        out.append(py::dict("id"_a = n, "name"_a = info.name, "domain"_a = t.domain(info.domain).name,
                            "domain_id"_a = info.domain, "gpus"_a = info.gpus, "first_gpu"_a = info.first_gpu,
                            "health"_a = to_string(h)));
    }
    return out;
}

inline py::list levels_of(const topology& t) {
    py::list out;
    for (const group_level& level : t.levels()) {
        py::list groups;
        for (const auto& domains : level.domains_of_group) {
            py::list names;
            for (const domain_id d : domains) names.append(t.domain(d).name);
            groups.append(names);
        }
        out.append(py::dict("name"_a = level.name, "groups"_a = level.group_names, "domains"_a = groups));
    }
    return out;
}

// ---------------------------------------------------------------- allocator

// The allocator is a template per policy; Python picks the policy by name at
// run time, so each policy's allocator sits behind this interface. Only the
// calls that depend on the policy are virtual; the state is the same type
// for every policy.
class any_allocator {
public:
    virtual ~any_allocator() = default;
    virtual expected<allocation_id, errc> try_allocate(const request& req) = 0;
    virtual expected<void, errc> release(allocation_id id) = 0;
    virtual expected<void, errc> set_health(node_id n, node_health h, std::vector<allocation_id>& hit) = 0;
    virtual errc plan(const request& req, placement& out) const = 0;
    virtual double external_fragmentation(std::span<const size_weight> mix) const = 0;
    virtual std::uint32_t largest_placeable(const request& shape) const = 0;
    virtual explanation explain(const request& req) const = 0;
    virtual advice advise(const request& req, const advise_options& options) = 0;
    virtual expected<std::vector<drain_move>, error> drain_plan(std::span<const node_id> nodes) const = 0;
    virtual std::string_view policy_name() const = 0;
    virtual const cluster_state& state() const noexcept = 0;
};

template <class Policy>
class policy_allocator final : public any_allocator {
public:
    explicit policy_allocator(allocator<Policy> a) : a_(std::move(a)) {}
    expected<allocation_id, errc> try_allocate(const request& req) override { return a_.try_allocate(req); }
    expected<void, errc> release(allocation_id id) override { return a_.release(id); }
    expected<void, errc> set_health(node_id n, node_health h, std::vector<allocation_id>& hit) override {
        return a_.set_health(n, h, hit);
    }
    errc plan(const request& req, placement& out) const override { return a_.plan(req, out); }
    double external_fragmentation(std::span<const size_weight> mix) const override {
        return weighted_external_fragmentation(a_, mix);
    }
    std::uint32_t largest_placeable(const request& shape) const override {
        return topoblock::largest_placeable(a_, shape);
    }
    explanation explain(const request& req) const override { return topoblock::explain(a_, req); }
    advice advise(const request& req, const advise_options& options) override {
        return topoblock::advise(a_, req, options);
    }
    expected<std::vector<drain_move>, error> drain_plan(std::span<const node_id> nodes) const override {
        return topoblock::drain_plan(a_, nodes);
    }
    std::string_view policy_name() const override { return a_.policy_name(); }
    const cluster_state& state() const noexcept override { return a_.state(); }

private:
    allocator<Policy> a_;
};

inline std::string known_policies() {
    std::string known;
    for (const auto& n : policy_names) known += (known.empty() ? "" : ", ") + std::string(n);
    return known;
}

// `slurm_version`: the Slurm release slurm-block follows ("25.11" or "26.05").
inline policy_settings settings_for(const cluster& c, std::int64_t block_gpus, std::string_view slurm_version_text) {
    policy_settings settings;
    settings.block_gpus = count_of(block_gpus, "block_gpus", 1);
    if (c.slurm) settings.slurm = *c.slurm;
    const auto version = parse_slurm_version(slurm_version_text);
    if (!version) raise_invalid("slurm_version: " + slurm_version_error(slurm_version_text));
    settings.slurm.set_version(*version);
    return settings;
}

// A request from the keyword arguments of allocate() and plan().
inline request request_of(const std::optional<std::int64_t>& gpus, const std::optional<std::int64_t>& nodes,
                          bool whole_nodes, std::string_view where, bool exclusive_domain, std::int64_t segment,
                          bool spread_segments) {
    if (gpus.has_value() == nodes.has_value()) raise_invalid("give either gpus or nodes");
    request r = gpus ? request::gpus(count_of(*gpus, "gpus")) : request::nodes(count_of(*nodes, "nodes"));
    r.whole_nodes = whole_nodes;
    r.where = where == "require" ? locality::require : locality_of(where);
    r.exclusive_domain = exclusive_domain;
    r.segment = count_of(segment, "segment");
    r.spread_segments = spread_segments;
    return r;
}

inline py::list gpu_indices(gpu_mask mask) {
    py::list out;
    for (std::uint32_t g = 0; mask != 0; ++g, mask >>= 1)
        if (mask & 1) out.append(g);
    return out;
}

template <class Pieces>
py::list pieces_of(const topology& t, const Pieces& pieces) {
    py::list out;
    for (const piece& p : pieces) {
        const node_info& n = t.node(p.node);
        out.append(py::dict("node"_a = n.name, "node_id"_a = p.node, "domain"_a = t.domain(n.domain).name,
                            "domain_id"_a = n.domain, "gpus"_a = gpu_indices(p.gpus)));
    }
    return out;
}

inline const char* unit_name(unit u) { return u == unit::gpus ? "gpus" : "nodes"; }
inline const char* locality_name(locality l) {
    return l == locality::require ? "require" : l == locality::prefer ? "prefer" : "any";
}

class py_allocator {
public:
    py_allocator(const cluster& c, std::string_view policy, std::int64_t block_gpus, std::string_view slurm_version_text) {
        const policy_settings settings = settings_for(c, block_gpus, slurm_version_text);
        const bool known = with_policy(policy, settings, [&](auto p) {
            auto made = allocator<decltype(p)>::create(c.topo, p);
            if (!made) raise_invalid("policy " + detail::quoted(policy) + ": " + made.error().to_string());
            impl_ = std::make_unique<policy_allocator<decltype(p)>>(std::move(*made));
        });
        if (!known) raise_invalid("unknown policy " + detail::quoted(policy) + " (known: " + known_policies() + ")");
        // A Kubernetes listing's cordoned and failed nodes.
        for (node_id n = 0; n < c.health.size(); ++n)
            if (c.health[n] != node_health::up)
                if (auto done = impl_->set_health(n, c.health[n], hit_); !done) raise(done.error());
        hit_.clear();
    }

    std::uint64_t allocate(const request& r) {
        check_not_advising();
        const auto id = impl_->try_allocate(r);
        if (!id) raise(id.error());
        return id->value;
    }
    // The id, or the refusal's code.
    std::pair<std::optional<std::uint64_t>, std::string_view> try_allocate(const request& r) {
        check_not_advising();
        const auto id = impl_->try_allocate(r);
        if (!id) return {std::nullopt, to_string(id.error())};
        return {id->value, "ok"};
    }
    void release(std::uint64_t id) {
        check_not_advising();
        if (auto done = impl_->release(allocation_id{id}); !done) raise(done.error());
    }
    py::list plan(const request& r) {
        placement where;
        if (const errc e = impl_->plan(r, where); e != errc::ok) raise(e);
        return pieces_of(topo(), where.pieces());
    }
    py::list set_health(const py::object& node, std::string_view health) {
        check_not_advising();
        const node_health h = health_of(health);
        hit_.clear();
        if (auto done = impl_->set_health(node_of(node), h, hit_); !done) raise(done.error());
        py::list out;
        for (const allocation_id id : hit_) out.append(id.value);
        return out;
    }
    // explain() as a dict; `view` is the policy's measure, None when the
    // refusal is not one of the moment (advice/explain.hpp).
    py::dict explain(const request& r) const {
        const explanation e = impl_->explain(r);
        py::object view = py::none();
        if (e.measured) {
            const toolkit::capacity_view& v = e.view;
            view = py::dict("unit"_a = v.unit, "unit_gpus"_a = v.unit_gpus, "scope"_a = v.scope, "most_is"_a = v.most_is,
                            "need"_a = v.need, "free"_a = v.free, "most"_a = v.most, "holding_now"_a = v.holding_now,
                            "holding_if_emptied"_a = v.holding_if_emptied, "wholly_free"_a = v.wholly_free,
                            "scopes"_a = v.scopes);
        }
        return py::dict("code"_a = to_string(e.code), "binding"_a = to_string(e.binding), "sentence"_a = to_string(e),
                        "policy"_a = e.policy, "unit"_a = unit_name(e.asked_unit), "asked"_a = e.asked,
                        "part"_a = e.part, "parts"_a = e.parts, "total"_a = e.total, "up"_a = e.up, "free"_a = e.free,
                        "free_gpus"_a = e.free_gpus, "closed_free_gpus"_a = e.closed_free_gpus,
                        "largest_domain"_a = e.largest_domain, "domains_needed"_a = e.domains_needed,
                        "idle_domains"_a = e.idle_domains, "view"_a = view);
    }
    // advise(): `protect` an iterable of allocation ids (unknown ones are
    // ignored), `cost` None or a callable id -> int. The callable is asked
    // at most once per allocation per call (its answers are kept, so the
    // search sees one cost per allocation); an exception it raises
    // propagates as it is, a value that is not an int from 0 to
    // max_stop_cost is an invalid_argument. Either way the allocator is left
    // as it was (advise changes it only inside with_released, never while
    // the callable runs). A cost fits 32 bits so that the sum over a set
    // (fewer allocations than GPUs, which a topology counts in 32 bits)
    // stays within advise's 64.
    static constexpr std::uint64_t max_stop_cost = std::numeric_limits<std::uint32_t>::max();
    py::dict advise(const request& r, const py::handle& protect, const py::object& cost) {
        check_not_advising();
        advise_options options;
        if (!protect.is_none())
            for_each_item(protect, "protect", [&](const py::handle& id) { options.protect.push_back(id_of(id, "protect")); });
        std::unordered_map<std::uint64_t, std::uint64_t> costs;
        if (!cost.is_none()) {
            if (!PyCallable_Check(cost.ptr())) raise_invalid("cost must be None or a callable: allocation id -> int");
            options.cost = [&](allocation_id id) { return cost_from(cost, id.value, costs); };
        }
        // A cost callable must not change the allocator under the search.
        struct advising {
            bool& flag;
            explicit advising(bool& f) : flag(f) { flag = true; }
            ~advising() { flag = false; }
        } busy{advising_};
        const advice a = impl_->advise(r, options);
        py::list stop;
        for (const allocation_id id : a.stop) stop.append(id.value);
        const char* kind = a.kind == advice_kind::none ? "none" : a.kind == advice_kind::stop ? "stop" : "impossible";
        return py::dict("kind"_a = kind, "stop"_a = stop, "cost"_a = a.cost, "reason"_a = to_string(a.reason),
                        "exact"_a = a.exact);
    }
    // drain_plan(): `nodes` one node (id or name) or an iterable of them.
    py::list drain_plan(const py::object& nodes) const {
        std::vector<node_id> ids;
        if (py::isinstance<py::str>(nodes) || py::isinstance<py::int_>(nodes))
            ids.push_back(node_of(nodes));
        else
            for_each_item(nodes, "nodes", [&](const py::handle& n) { ids.push_back(node_of(py::reinterpret_borrow<py::object>(n))); });
        const auto moves = impl_->drain_plan(ids);
        if (!moves) raise_invalid(moves.error().to_string());
        py::list out;
        for (const drain_move& m : *moves) {
            py::object pieces = py::none();
            if (m.result == errc::ok) pieces = pieces_of(topo(), m.where.pieces());
            out.append(py::dict("id"_a = m.id.value, "result"_a = to_string(m.result), "pieces"_a = pieces));
        }
        return out;
    }
    std::string_view health(const py::object& node) const {
        return to_string(impl_->state().health(node_of(node)));
    }
    py::dict find(std::uint64_t id) const {
        const allocation_record* r = impl_->state().find(allocation_id{id});
        if (r == nullptr) raise(errc::unknown_allocation);
        return record_of(id, *r);
    }
    py::list allocations() const {
        py::list out;
        impl_->state().for_each_allocation([&](allocation_id id, const allocation_record& r) { out.append(record_of(id.value, r)); });
        return out;
    }
    py::dict metrics(const py::object& sizes) const {
        const cluster_state& s = impl_->state();
        const internal_fragmentation inner = internal_fragmentation_of(s);
        const domain_spread spread = domain_spread_of(s);
        py::dict out("utilization"_a = utilization(s), "held_gpus"_a = s.held_gpus(),
                     "requested_gpus"_a = s.requested_gpus(), "idle_held_gpus"_a = inner.idle_held_gpus,
                     "internal_fragmentation"_a = inner.share_of_held, "free_gpus"_a = s.available().gpus,
                     "free_nodes"_a = s.available().nodes, "up_gpus"_a = s.up_gpus(), "up_nodes"_a = s.up_nodes(),
                     "healthy_gpus"_a = s.healthy_gpus(), "allocations"_a = spread.allocations,
                     "multi_domain"_a = spread.multi_domain, "split_but_fit"_a = spread.split_but_fit,
                     "mean_domains"_a = spread.mean_domains);
        out["largest_placeable_gpus"] = impl_->largest_placeable(request::gpus(1));
        out["external_fragmentation"] = py::none();
        if (!sizes.is_none()) {
            std::vector<size_weight> mix;
            if (py::isinstance<py::dict>(sizes)) {
                try {
                    for (const auto& [gpus, weight] : sizes.cast<py::dict>())
                        mix.push_back({request::gpus(count_of(gpus.cast<std::int64_t>(), "size", 1)),
                                       real_of(weight.cast<double>(), "weight", 0.0, std::numeric_limits<double>::max())});
                } catch (const py::cast_error&) {
                    raise_invalid("fragmentation_sizes: sizes are whole numbers, weights numbers");
                }
            } else {
                for_each_item(sizes, "fragmentation_sizes", [&](const py::handle& gpus) {
                    mix.push_back({request::gpus(count_of(gpus.cast<std::int64_t>(), "size", 1)), 1.0});
                });
            }
            out["external_fragmentation"] = impl_->external_fragmentation(mix);
        }
        return out;
    }
    std::string_view policy() const { return impl_->policy_name(); }
    const topology& topo() const noexcept { return impl_->state().topo(); }

private:
    void check_not_advising() const {
        if (advising_)
            raise_invalid("the allocator is being advised: a cost callable cannot allocate, release, set_health or advise on it");
    }
    // An allocation id from Python: a non-negative integer.
    static allocation_id id_of(const py::handle& id, std::string_view what) {
        if (const auto v = whole_number_of(id, std::numeric_limits<std::uint64_t>::max())) return allocation_id{*v};
        raise_invalid(std::string(what) + ": an allocation id is a non-negative int, not " + shown(id));
    }
    // What the caller's cost callable says stopping allocation `id` costs,
    // asked once and kept in `costs`.
    static std::uint64_t cost_from(const py::object& cost, std::uint64_t id,
                                   std::unordered_map<std::uint64_t, std::uint64_t>& costs) {
        if (const auto known = costs.find(id); known != costs.end()) return known->second;
        const py::object value = cost(id);  // an exception propagates
        const auto v = whole_number_of(value, max_stop_cost);
        if (!v)
            raise_invalid("cost(" + std::to_string(id) + ") must return an int from 0 to " +
                          std::to_string(max_stop_cost) + ", not " + shown(value));
        costs.emplace(id, *v);
        return *v;
    }
    node_id node_of(const py::object& node) const {
        if (py::isinstance<py::str>(node)) {
            const auto name = node.cast<std::string>();
            const auto n = topo().find_node(name);
            if (!n) raise("unknown_node", "no node named " + detail::quoted(name));
            return *n;
        }
        if (!py::isinstance<py::int_>(node)) raise_invalid("a node is named by its id (an int) or its name");
        // Beyond 64 bits is beyond the topology too.
        const auto n = PyLong_AsLongLong(node.ptr());
        if (n == -1 && PyErr_Occurred()) PyErr_Clear();
        if (n < 0 || n >= std::int64_t{topo().node_count()})
            raise("node_out_of_range", "node id " + std::to_string(n) + " is not from 0 to " +
                                           std::to_string(std::int64_t{topo().node_count()} - 1));
        return static_cast<node_id>(n);
    }
    py::dict record_of(std::uint64_t id, const allocation_record& r) const {
        return py::dict("id"_a = id, "count"_a = r.asked.count, "unit"_a = unit_name(r.asked.what),
                        "locality"_a = locality_name(r.asked.where), "requested_gpus"_a = r.requested_gpus,
                        "held_gpus"_a = r.held_gpus, "domains"_a = r.domains, "hit_by_failure"_a = r.hit_by_failure,
                        "pieces"_a = pieces_of(topo(), r.pieces));
    }

    std::unique_ptr<any_allocator> impl_;
    std::vector<allocation_id> hit_;
    bool advising_ = false;  // an advise() is running (its cost callable may call back)
};

// ---------------------------------------------------------------- simulator

// Jobs given as Python objects: dicts with submit_s, gpus, duration_s and
// optionally nodes, or (submit_s, gpus, duration_s) sequences. Checked as
// the CSV reader checks a row, but a bad job is an error, not skipped.
inline sim::workload jobs_of(const py::handle& items) {
    if (py::isinstance<py::str>(items) || !py::isinstance<py::iterable>(items))
        raise_invalid("workload must be a mix name, a trace path or a list of jobs");
    sim::workload w;
    w.name = "python";
    std::size_t i = 0;
    for (const py::handle item : items) {
        const std::string where = "job " + std::to_string(i++);
        double submit = 0.0, duration = 0.0;
        std::int64_t gpus = 0, nodes = 0;
        try {
            if (py::isinstance<py::dict>(item)) {
                const auto d = item.cast<py::dict>();
                for (const char* key : {"submit_s", "gpus", "duration_s"})
                    if (!d.contains(key)) raise_invalid(where + ": no " + key);
                submit = d["submit_s"].cast<double>();
                gpus = d["gpus"].cast<std::int64_t>();
                duration = d["duration_s"].cast<double>();
                if (d.contains("nodes") && !d["nodes"].is_none()) nodes = d["nodes"].cast<std::int64_t>();
            } else {
                if (py::isinstance<py::str>(item) || !py::isinstance<py::sequence>(item))
                    raise_invalid(where + ": expected a dict or (submit_s, gpus, duration_s)");
                const auto t = py::reinterpret_borrow<py::sequence>(item);
                if (t.size() != 3) raise_invalid(where + ": expected (submit_s, gpus, duration_s)");
                submit = t[0].cast<double>();
                gpus = t[1].cast<std::int64_t>();
                duration = t[2].cast<double>();
            }
        } catch (const py::cast_error&) {
            raise_invalid(where + ": submit_s and duration_s must be numbers, gpus and nodes whole numbers");
        }
        sim::job j;
        j.submit_s = real_of(submit, where + ": submit_s", 0.0, sim::detail::max_trace_seconds);
        j.duration_s = real_of(duration, where + ": duration_s", 0.0, sim::detail::max_trace_seconds);
        j.gpus = count_of(gpus, where + ": gpus", 1);
        j.nodes = count_of(nodes, where + ": nodes", 0, j.gpus);
        w.jobs.push_back(j);
    }
    sim::number_and_sort(w);
    return w;
}

inline std::vector<std::string> policies_of(const py::object& policies) {
    std::vector<std::string> names;
    if (py::isinstance<py::str>(policies)) {
        const auto text = policies.cast<std::string>();
        if (text == "all") names.assign(policy_names.begin(), policy_names.end());
        else {
            std::vector<std::string> repeated;  // each policy runs once, as in the program
            names = detail::split_list(text, repeated);
        }
    } else {
        for_each_item(policies, "policies", [&](const py::handle& p) { names.push_back(p.cast<std::string>()); });
    }
    if (names.empty()) raise_invalid("policies names no policy");
    for (const auto& name : names)
        if (!with_policy(name, policy_settings{}, [](auto&&) {}))
            raise_invalid("unknown policy " + detail::quoted(name) + " (known: " + known_policies() + ")");
    return names;
}

struct simulate_args {
    std::size_t jobs = 20000;
    std::optional<double> load;
    std::string queue = "easy";
    std::uint64_t seed = 1;
    locality where = locality::require;
    std::int64_t block_gpus = 8;
    std::string slurm_version{to_string(newest_slurm_version)};
    sim::engine_options engine;
};

// A policy's row of `topoblock simulate --csv`: the run's settings, then
// its figures.
inline py::dict summary_of(const sim::policy_result& r, const sim::run_settings& run) {
    const sim::summary& s = r.totals;
    return py::dict("policy"_a = r.policy, "queue"_a = r.queue, "workload"_a = run.workload, "topology"_a = run.topology,
                    "offered_load"_a = run.offered_load, "seed"_a = run.seed, "locality"_a = run.locality,
                    "comm_share"_a = run.comm_share, "node_mtbf_hours"_a = run.node_mtbf_hours,
                    "repair_hours"_a = run.repair_hours, "jobs"_a = s.jobs, "completed"_a = s.completed,
                    "running"_a = s.running, "waiting"_a = s.waiting, "unplaceable"_a = s.unplaceable,
                    "not_submitted"_a = s.not_submitted, "abandoned"_a = s.abandoned, "conserved"_a = s.conserved,
                    "utilization"_a = s.utilization, "useful_utilization"_a = s.useful_utilization,
                    "idle_held"_a = s.idle_held, "external_fragmentation"_a = s.external_fragmentation,
                    "wait_mean_s"_a = s.wait_mean_s, "wait_p50_s"_a = s.wait_p50_s, "wait_p95_s"_a = s.wait_p95_s, "wait_p99_s"_a = s.wait_p99_s,
                    "bounded_slowdown"_a = s.bounded_slowdown, "makespan_s"_a = s.makespan_s,
                    "split_jobs"_a = s.split_jobs, "extra_domain_jobs"_a = s.extra_domain_jobs,
                    "split_gpu_hours"_a = s.split_gpu_hours,
                    "comm_lost_gpu_hours"_a = s.comm_lost_gpu_hours,
                    "failure_lost_gpu_hours"_a = s.failure_lost_gpu_hours, "requeues"_a = s.requeues);
}

inline py::dict simulate(const cluster& c, const py::object& workload, const py::object& policies,
                         simulate_args a, bool job_records, bool timeline) {
    const std::vector<std::string> names = policies_of(policies);
    const policy_settings settings = settings_for(c, a.block_gpus, a.slurm_version);
    for (const auto& name : names)
        with_policy(name, settings, [&](const auto& policy) {
            if (std::string wrong = policy_traits<std::decay_t<decltype(policy)>>::validate(policy, c.topo); !wrong.empty())
                raise_invalid("policy " + detail::quoted(name) + ": " + wrong);
        });
    if (a.queue != "easy" && a.queue != "fifo") raise_invalid("queue must be 'easy' or 'fifo', not " + detail::quoted(a.queue));
    if (const auto checked = sim::check_failure_model(a.engine.failures, c.topo.node_count()); !checked)
        raise_invalid(checked.error().to_string());

    // The workload, as `topoblock simulate` loads it for a mix or a trace.
    sim::loaded_workload loaded;
    std::string workload_name = "python jobs";  // the CSV's workload column
    py::list bad_rows;
    if (py::isinstance<py::str>(workload) || py::hasattr(workload, "__fspath__")) {
        sim::workload_source source;
        source.name = path_of(workload, "workload");
        workload_name = source.name;
        source.jobs = a.jobs;
        source.load = a.load;
        source.seed = a.seed;
        source.load_name = "load";
        auto made = sim::load_workload(source, c.topo.gpu_count());
        if (!made) raise("parse_error", made.error().to_string());
        loaded = std::move(*made);
        for (const auto& bad : loaded.bad_rows) bad_rows.append(bad.to_string());
        if (loaded.bad_row_count > loaded.bad_rows.size())
            bad_rows.append(std::to_string(loaded.bad_row_count - loaded.bad_rows.size()) + " more bad rows");
    } else {
        loaded.jobs = jobs_of(workload);
        loaded.offered_load = sim::offered_load(loaded.jobs, c.topo.gpu_count());
        loaded.description = "python jobs, " + std::to_string(loaded.jobs.jobs.size()) + " jobs";
    }

    const locality where = a.where;
    a.engine.seed = a.seed;
    a.engine.to_request = [where](const sim::job& j) { return request::gpus(j.gpus).with_locality(where); };
    std::vector<sim::policy_result> results;
    {
        py::gil_scoped_release unlocked;
        for (const auto& name : names)
            with_policy(name, settings, [&](auto policy) {
                auto alloc = allocator<decltype(policy)>::create(c.topo, policy);
                if (!alloc) return;  // validated above
                if (a.queue == "fifo")
                    results.push_back(sim::simulate(std::move(*alloc), loaded.jobs, a.engine, sim::fifo{}));
                else
                    results.push_back(sim::simulate(std::move(*alloc), loaded.jobs, a.engine, sim::easy_backfill{}));
            });
    }
    if (results.size() != names.size()) raise_invalid("a policy could not be built on this topology");

    const sim::run_settings run = sim::settings_of_run(workload_name, c.source, loaded.offered_load, a.seed, a.where,
                                                       a.engine.cost.comm_share, a.engine.failures);
    py::list summaries, jobs, points;
    for (const auto& r : results) {
        summaries.append(summary_of(r, run));
        if (job_records) {
            for (std::size_t i = 0; i < r.jobs.size(); ++i) {
                const sim::job& j = loaded.jobs.jobs[i];
                const sim::job_outcome& o = r.jobs[i];
                jobs.append(py::dict("policy"_a = r.policy, "job"_a = j.id, "submit_s"_a = j.submit_s,
                                     "gpus"_a = j.gpus, "duration_s"_a = j.duration_s,
                                     "state"_a = sim::to_string(o.state), "reason"_a = to_string(o.reason),
                                     "start_s"_a = o.start_s, "end_s"_a = o.end_s, "wait_s"_a = o.wait_s,
                                     "run_s"_a = o.run_s, "slowdown"_a = o.slowdown, "held_gpus"_a = o.held_gpus,
                                     "domains"_a = o.domains, "min_domains"_a = o.min_domains,
                                     "failures"_a = o.failures,
                                     "longest_wait_reason"_a = to_string(o.longest_wait_reason)));
            }
        }
        if (timeline)
            for (const auto& p : r.timeline)
                points.append(py::dict("policy"_a = r.policy, "t"_a = p.t, "held"_a = p.held,
                                       "requested"_a = p.requested, "healthy"_a = p.healthy, "useful"_a = p.useful));
    }
    // The program's title, so that the table reads as `topoblock simulate` prints it.
    const std::string title =
        sim::comparison_title(loaded.description, loaded.offered_load, loaded.realized_load, c.source, c.topo, a.queue);
    py::dict out("workload"_a = loaded.description, "offered_load"_a = loaded.offered_load,
                 "realized_load"_a = loaded.realized_load, "summary"_a = summaries, "jobs"_a = jobs,
                 "timeline"_a = points, "bad_rows"_a = bad_rows,
                 "table"_a = sim::format_table(results, "topoblock simulate: " + title));
    return out;
}

}  // namespace topoblock::python

PYBIND11_MODULE(topoblock, m) {
    using namespace topoblock;
    using namespace topoblock::python;
    m.doc() = "Topology-aware GPU block allocation (NVLink domains): topologies, allocators, the simulator";
    m.attr("__version__") = std::to_string(version_major) + "." + std::to_string(version_minor) + "." +
                            std::to_string(version_patch);

    error_type() = py::reinterpret_steal<py::object>(PyErr_NewException("topoblock.Error", PyExc_Exception, nullptr));
    error_type().attr("__doc__") =
        "Raised for every refusal and bad input; .code names what went wrong (an errc name such as "
        "'insufficient_free', or parse_error, invalid_argument, unknown_node), .message says it for a person.";
    m.attr("Error") = error_type();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const module_error& e) {
            py::object exc = error_type()(e.code + ": " + e.message);
            exc.attr("code") = e.code;
            exc.attr("message") = e.message;
            PyErr_SetObject(error_type().ptr(), exc.ptr());
        }
    });

    {
        py::list codes;
        for (auto code = static_cast<std::uint8_t>(errc::invalid_request);
             code <= static_cast<std::uint8_t>(errc::not_free); ++code)
            codes.append(to_string(static_cast<errc>(code)));
        for (const char* own : {"parse_error", "invalid_argument", "unknown_node"}) codes.append(own);
        m.attr("error_codes") = py::tuple(codes);
    }
    m.attr("policy_names") = py::tuple(py::cast(std::vector<std::string>(policy_names.begin(), policy_names.end())));
    m.attr("workload_names") = py::make_tuple("helios", "philly", "llm");

    py::class_<cluster>(m, "Topology", "An immutable cluster: NVLink domains of nodes of GPUs, and levels above them")
        .def(py::init(&from_spec), "spec"_a,
             "From a spec: nvl72:16, gb300:4, nvl36x2:2, hgx8:32, grid:D:N:G, parts joined by '+', @K groups")
        .def_static("from_spec", &from_spec, "spec"_a)
        .def_static(
            "preset",
            [](std::string_view family, std::int64_t count, std::int64_t per_group) {
                std::string spec = std::string(family) + ":" + std::to_string(count_of(count, "count", 1));
                if (per_group != 0) spec += "@" + std::to_string(count_of(per_group, "per_group", 1));
                return from_spec(spec);
            },
            "family"_a, "count"_a, "per_group"_a = 0,
            "`count` systems of a family (nvl72, gb300, nvl36x2, hgx8), grouped `per_group` to a level")
        .def_static(
            "load",
            [](const py::object& source, std::int64_t gpus_per_node, const std::optional<std::string>& nodes) {
                return load_cluster(path_of(source, "source"), gpus_per_node, nodes);
            },
            "source"_a, py::kw_only(), "gpus_per_node"_a = 4, "nodes"_a = py::none(),
            "From a file (a spec, Slurm topology.conf or topology.yaml, `kubectl get nodes --show-labels` or "
            "`-o json` output; the format is told from the content) or, when no such file exists, a spec")
        .def_static("read", &read_cluster, "text"_a, py::kw_only(), "name"_a = "", "gpus_per_node"_a = 4,
                    "nodes"_a = py::none(),
                    "From the text of a topology file of any format Topology.load reads; `name` (a file name) "
                    "helps tell the format and names the text in errors")
        .def_property_readonly("domain_count", [](const cluster& c) { return c.topo.domain_count(); })
        .def_property_readonly("node_count", [](const cluster& c) { return c.topo.node_count(); })
        .def_property_readonly("gpu_count", [](const cluster& c) { return c.topo.gpu_count(); })
        .def_property_readonly("max_domain_gpus", [](const cluster& c) { return c.topo.max_domain_gpus(); })
        .def_property_readonly("max_domain_nodes", [](const cluster& c) { return c.topo.max_domain_nodes(); })
        .def_property_readonly("domain_names",
                               [](const cluster& c) {
                                   py::list out;
                                   for (const auto& d : c.topo.domains()) out.append(d.name);
                                   return out;
                               })
        .def_property_readonly("node_names",
                               [](const cluster& c) {
                                   py::list out;
                                   for (const auto& n : c.topo.nodes()) out.append(n.name);
                                   return out;
                               })
        .def_property_readonly("domains", [](const cluster& c) { return domains_of(c.topo); })
        .def_property_readonly("nodes", &nodes_of)
        .def_property_readonly("levels", [](const cluster& c) { return levels_of(c.topo); })
        .def_property_readonly("source", [](const cluster& c) { return c.source; })
        .def_property_readonly("has_slurm_blocks", [](const cluster& c) { return c.slurm.has_value(); })
        .def("find_node",
             [](const cluster& c, std::string_view name) -> std::optional<node_id> { return c.topo.find_node(name); },
             "name"_a)
        .def("find_domain",
             [](const cluster& c, std::string_view name) -> std::optional<domain_id> {
                 return c.topo.find_domain(name);
             },
             "name"_a)
        .def("__repr__", [](const cluster& c) {
            return "<topoblock.Topology " + c.source + ": " + std::to_string(c.topo.domain_count()) + " domains, " +
                   std::to_string(c.topo.node_count()) + " nodes, " + std::to_string(c.topo.gpu_count()) + " GPUs>";
        });

    const auto req = [](const std::optional<std::int64_t>& gpus, const std::optional<std::int64_t>& nodes,
                        bool whole_nodes, std::string_view where, bool exclusive_domain, std::int64_t segment,
                        bool spread_segments) {
        return request_of(gpus, nodes, whole_nodes, where, exclusive_domain, segment, spread_segments);
    };
    // A request built once and passed again and again skips the parsing of
    // keyword arguments on every call.
    py::class_<request>(m, "Request", "What a job asks for; the arguments of Allocator.allocate, built once")
        .def(py::init(req), "gpus"_a = py::none(), py::kw_only(), "nodes"_a = py::none(), "whole_nodes"_a = false,
             "locality"_a = "require", "exclusive_domain"_a = false, "segment"_a = 0, "spread_segments"_a = false)
        .def_readonly("count", &request::count)
        .def_property_readonly("unit", [](const request& r) { return unit_name(r.what); })
        .def_readonly("whole_nodes", &request::whole_nodes)
        .def_property_readonly("locality", [](const request& r) { return locality_name(r.where); })
        .def_readonly("exclusive_domain", &request::exclusive_domain)
        .def_readonly("segment", &request::segment)
        .def_readonly("spread_segments", &request::spread_segments)
        .def("__eq__", [](const request& a, const request& b) { return a == b; }, py::is_operator())
        .def("__repr__", [](const request& r) {
            return std::string("<topoblock.Request ") + std::to_string(r.count) + " " + unit_name(r.what) + ">";
        });

    py::class_<py_allocator> allocator_class(m, "Allocator", "Places requests on a topology under one built-in policy");
    allocator_class
        .def(py::init([](const cluster& c, std::string_view policy, std::int64_t block_gpus, std::string_view slurm_version) {
                 return py_allocator(c, policy, block_gpus, slurm_version);
             }),
             "topology"_a, "policy"_a = "best-fit", "block_gpus"_a = 8, "slurm_version"_a = to_string(newest_slurm_version))
        // The common call first: pybind11 tries overloads in order, and one
        // GPU count is what a scheduler loop passes most.
        .def(
            "allocate",
            [](py_allocator& a, std::int64_t gpus) { return a.allocate(request::gpus(count_of(gpus, "gpus"))); },
            "gpus"_a)
        .def("allocate", [](py_allocator& a, const request& r) { return a.allocate(r); }, "request"_a)
        .def("try_allocate", [](py_allocator& a, const request& r) { return a.try_allocate(r); }, "request"_a)
        .def("plan", [](py_allocator& a, const request& r) { return a.plan(r); }, "request"_a)
        .def("explain", [](const py_allocator& a, const request& r) { return a.explain(r); }, "request"_a)
        .def(
            "advise",
            [](py_allocator& a, const request& r, const py::object& protect, const py::object& cost) {
                return a.advise(r, protect, cost);
            },
            "request"_a, py::kw_only(), "protect"_a = py::tuple(), "cost"_a = py::none())
        .def("drain_plan", &py_allocator::drain_plan, "nodes"_a,
             "For nodes (ids or names) being drained: where the policy would place each allocation on them now, "
             "elsewhere; a list of dicts (id, result, pieces)")
        .def("release", &py_allocator::release, "id"_a)
        .def("set_health", &py_allocator::set_health, "node"_a, "health"_a,
             "Sets a node (id or name) up, drain or down; returns the ids of allocations hit by a failure")
        .def("health", &py_allocator::health, "node"_a)
        .def("find", &py_allocator::find, "id"_a)
        .def("allocations", &py_allocator::allocations)
        .def("metrics", &py_allocator::metrics, "fragmentation_sizes"_a = py::none())
        .def_property_readonly("policy", &py_allocator::policy);
    // allocate, try_allocate and plan also take the request's fields as
    // keyword arguments, as Request() does.
    const auto def_with_request_keywords = [&](const char* name, auto method, const char* doc) {
        allocator_class.def(
            name,
            [req, method](py_allocator& a, std::optional<std::int64_t> gpus, std::optional<std::int64_t> nodes,
                          bool whole_nodes, std::string_view where, bool exclusive_domain, std::int64_t segment,
                          bool spread_segments) {
                return (a.*method)(req(gpus, nodes, whole_nodes, where, exclusive_domain, segment, spread_segments));
            },
            "gpus"_a = py::none(), py::kw_only(), "nodes"_a = py::none(), "whole_nodes"_a = false,
            "locality"_a = "require", "exclusive_domain"_a = false, "segment"_a = 0, "spread_segments"_a = false, doc);
    };
    def_with_request_keywords("allocate", &py_allocator::allocate,
                              "Places a request; returns its allocation id, raises Error on refusal (nothing changes)");
    def_with_request_keywords("try_allocate", &py_allocator::try_allocate,
                              "As allocate, but a refusal is returned: (id, 'ok') or (None, code)");
    def_with_request_keywords("plan", &py_allocator::plan, "The pieces the policy would take now, without taking them");
    def_with_request_keywords("explain", &py_allocator::explain,
                              "Why the request can or cannot be placed now: a dict (code, binding, sentence, the numbers)");
    allocator_class.def(
        "advise",
        [req](py_allocator& a, std::optional<std::int64_t> gpus, std::optional<std::int64_t> nodes, bool whole_nodes,
              std::string_view where, bool exclusive_domain, std::int64_t segment, bool spread_segments,
              const py::object& protect, const py::object& cost) {
            return a.advise(req(gpus, nodes, whole_nodes, where, exclusive_domain, segment, spread_segments), protect, cost);
        },
        "gpus"_a = py::none(), py::kw_only(), "nodes"_a = py::none(), "whole_nodes"_a = false, "locality"_a = "require",
        "exclusive_domain"_a = false, "segment"_a = 0, "spread_segments"_a = false, "protect"_a = py::tuple(),
        "cost"_a = py::none(),
        "The running allocations to stop so that the request places: a dict (kind, stop, cost, reason, exact); "
        "`protect` ids are never chosen, `cost` (a callable id -> int) replaces the GPUs held as the cost");

    m.def(
        "simulate",
        [](const py::object& topology_arg, const py::object& workload, const py::object& policies,
           std::int64_t jobs, std::optional<double> load, std::string queue, std::uint64_t seed,
           std::string_view where, std::int64_t block_gpus, std::string slurm_version, std::optional<double> until,
           std::optional<double> snapshot, double comm_share, double nvlink_gbps, double ib_gbps, bool stretch,
           double node_mtbf_hours, double repair_hours, std::int64_t max_requeues, bool job_records, bool timeline) {
            if (!py::isinstance<py::str>(topology_arg) && !py::isinstance<cluster>(topology_arg))
                raise_invalid("topology must be a Topology or a spec string");
            const cluster c = py::isinstance<py::str>(topology_arg)
                                  ? load_cluster(topology_arg.cast<std::string>(), 4, std::nullopt)
                                  : topology_arg.cast<cluster>();
            simulate_args a;
            a.jobs = count_of(jobs, "jobs", 1, static_cast<std::int64_t>(sim::max_synthetic_jobs));
            if (load) a.load = real_of(*load, "load", 0.0, sim::max_offered_load);
            if (load && *load <= 0.0) raise_invalid("load must be above 0");
            a.queue = std::move(queue);
            a.seed = seed;
            a.where = locality_of(where);
            a.block_gpus = block_gpus;
            a.slurm_version = std::move(slurm_version);
            const double forever = std::numeric_limits<double>::max();
            if (until) a.engine.until_s = real_of(*until, "until", 0.0, forever);
            if (snapshot) a.engine.snapshot_s = real_of(*snapshot, "snapshot", 0.0, forever);
            a.engine.cost.comm_share = real_of(comm_share, "comm_share", 0.0, 1.0);
            a.engine.cost.nvlink_gb_per_s = real_of(nvlink_gbps, "nvlink_gbps", sim::min_link_gb_per_s, sim::max_link_gb_per_s);
            a.engine.cost.infiniband_gb_per_s = real_of(ib_gbps, "ib_gbps", sim::min_link_gb_per_s, sim::max_link_gb_per_s);
            a.engine.cost.stretch_runtime = stretch;
            // As the program's --node-mtbf-hours: below an hour per node,
            // failures outnumber every other event so far that a replay takes hours.
            a.engine.failures.node_mtbf_hours = real_of(node_mtbf_hours, "node_mtbf_hours", 0.0, sim::max_failure_hours);
            if (node_mtbf_hours > 0.0 && node_mtbf_hours < 1.0)
                raise_invalid("node_mtbf_hours must be 0 (no failures) or hours from 1 to 1e9, not " +
                              number_text(node_mtbf_hours));
            a.engine.failures.repair_hours = real_of(repair_hours, "repair_hours", 0.0, sim::max_failure_hours);
            a.engine.max_requeues = count_of(max_requeues, "max_requeues");
            return simulate(c, workload, policies, std::move(a), job_records, timeline);
        },
        "topology"_a, "workload"_a = "helios", py::kw_only(), "policies"_a = "all", "jobs"_a = 20000,
        "load"_a = py::none(), "queue"_a = "easy", "seed"_a = 1, "locality"_a = "require", "block_gpus"_a = 8,
        "slurm_version"_a = to_string(newest_slurm_version), "until"_a = py::none(), "snapshot"_a = py::none(), "comm_share"_a = 0.1, "nvlink_gbps"_a = 900.0,
        "ib_gbps"_a = 50.0, "stretch"_a = true, "node_mtbf_hours"_a = 0.0, "repair_hours"_a = 4.0,
        "max_requeues"_a = 5, "job_records"_a = true, "timeline"_a = false,
        "Replays a workload (a mix name, a CSV trace path, or a list of jobs) under each policy; returns a dict "
        "with 'summary' and 'jobs' as lists of dicts");
}
