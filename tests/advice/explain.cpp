// explain() against the allocator and a brute-force recount: its verdict is
// try_allocate's, and every number it gives is recomputed node by node from
// the state, for every registered policy, on uniform, mixed and partial
// topologies under random load and health changes.

#include "../reference_model.hpp"

#include <topoblock/advice/explain.hpp>
#include <topoblock/allocator/allocator.hpp>
#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace test_advice_explain {

using namespace topoblock;
using topoblock::test::rng;

namespace {

// Racks of 4-GPU trays beside small domains of 8-GPU servers.
topology mixed_nodes() {
    topology_builder b;
    b.add_numbered_domain("rack1", 18, 4, "a", 1, 2);
    b.add_numbered_domain("hgx1", 4, 8, "h", 1, 2);
    b.add_numbered_domain("rack2", 18, 4, "b", 1, 2);
    b.add_numbered_domain("hgx2", 2, 8, "g", 1, 2);
    return *b.build();
}

// The shared random requests, with more exclusive ones (idle domains are
// rare under load) and now and then an empty one.
request any_request(rng& r, const topology& t) {
    request q = test::mixed_request(r, t);
    if (r.chance(5)) q.exclusive_domain = true;
    if (r.chance(1)) q.count = 0;
    return q;
}

// A domain as the state has it, recounted node by node.
struct domain_recount {
    domain_shape shape;
    bool open = true;
    bool allowed = true;               // for the request at hand
    std::vector<gpu_mask> usable;      // per node: GPUs a new job may take
    std::vector<bool> up;              // per node
};

template <class Alloc>
std::vector<domain_recount> recount(const Alloc& a, const request& req) {
    const auto& state = a.state();
    const topology& topo = state.topo();
    std::vector<domain_recount> out(topo.domain_count());
    // Closed: an exclusive allocation holds a GPU there.
    state.for_each_allocation([&](allocation_id, const allocation_record& r) {
        if (!r.asked.exclusive_domain) return;
        for (const piece p : detail::run_pieces{r.pieces.runs()}) out[topo.node(p.node).domain].open = false;
    });
    for (domain_id d = 0; d < topo.domain_count(); ++d) {
        domain_recount& c = out[d];
        c.shape = topo.shape(d);
        bool held = false, any_up = false;
        for (node_id n = c.shape.first_node; n < c.shape.end_node(); ++n) {
            const bool up = state.health(n) == node_health::up;
            c.up.push_back(up);
            c.usable.push_back(up && c.open ? state.unheld_gpus(n) : 0);
            held = held || state.unheld_gpus(n) != full_gpu_mask(c.shape.gpus_per_node);
            any_up = any_up || up;
        }
        c.allowed = req.exclusive_domain ? c.open && !held && any_up : c.open;
        if (!c.allowed) std::fill(c.usable.begin(), c.usable.end(), gpu_mask{0});
    }
    return out;
}

std::uint64_t wholly(const domain_recount& c, const std::vector<gpu_mask>& usable) {
    std::uint64_t n = 0;
    for (gpu_mask m : usable) n += m == full_gpu_mask(c.shape.gpus_per_node) ? 1 : 0;
    return n;
}
std::uint64_t gpus(const std::vector<gpu_mask>& usable) {
    std::uint64_t n = 0;
    for (gpu_mask m : usable) n += static_cast<std::uint64_t>(std::popcount(m));
    return n;
}
// Every GPU of the up nodes, as if nothing were held.
std::vector<gpu_mask> emptied(const domain_recount& c) {
    std::vector<gpu_mask> out;
    for (bool up : c.up) out.push_back(up ? full_gpu_mask(c.shape.gpus_per_node) : 0);
    return out;
}

// The request's units free in `usable`: GPUs, whole nodes, or the GPUs of
// whole nodes.
std::uint64_t free_units(const request& req, const domain_recount& c, const std::vector<gpu_mask>& usable) {
    if (req.what == unit::nodes) return wholly(c, usable);
    return req.whole_nodes ? wholly(c, usable) * c.shape.gpus_per_node : gpus(usable);
}

// What the view should say, recomputed from the recount; `offer(c, usable,
// now)` gives a domain's offer for the usable GPUs given (now: as they
// are; else as if emptied). need_of(c) is what a part needs there, or
// npos when the domain cannot hold one at all.
template <class Offer>
toolkit::capacity_view by_domains(const std::vector<domain_recount>& domains, Offer&& offer) {
    toolkit::capacity_view v;
    for (const auto& c : domains) {
        toolkit::scope_offer o = offer(c, c.usable, true);
        o.holds_if_emptied = offer(c, emptied(c), false).holds_now;
        v.add(o);
        if (c.open && c.shape.node_count != 0 && wholly(c, c.usable) == c.shape.node_count) ++v.wholly_free;
    }
    return v;
}

// Domains offering what units(c, usable) counts, a part fitting where
// `need` of them are free.
template <class Units>
toolkit::capacity_view counting(const std::vector<domain_recount>& domains, std::uint64_t need, Units&& units) {
    auto v = by_domains(domains, [&](const domain_recount& c, const std::vector<gpu_mask>& u, bool) {
        toolkit::scope_offer o;
        o.free = units(c, u);
        o.most = o.free;
        o.holds_now = o.free >= need;
        return o;
    });
    v.need = need;
    return v;
}

// The generic measure: GPUs, whole nodes, or the GPUs of whole nodes.
template <class Alloc>
toolkit::capacity_view generic_expected(const Alloc& a, const request& req) {
    return counting(recount(a, req), req.part_size(),
                    [&](const domain_recount& c, const std::vector<gpu_mask>& u) { return free_units(req, c, u); });
}

template <class Alloc>
toolkit::capacity_view first_fit_expected(const Alloc& a, const request& req) {
    toolkit::capacity_view v;
    toolkit::scope_offer o;
    std::uint64_t up = 0;
    // Topology-oblivious: no domain is ruled out for being busy.
    for (const auto& c : recount(a, req.with_exclusive_domain(false))) {
        o.free += free_units(req, c, c.usable);
        up += req.what == unit::nodes ? wholly(c, emptied(c)) : gpus(emptied(c));
    }
    o.most = o.free;
    o.holds_now = o.free >= req.count;
    o.holds_if_emptied = up >= req.count;
    v.add(o);
    v.need = req.count;
    return v;
}

template <class Alloc>
toolkit::capacity_view slurm_expected(const Alloc& a, const request& req) {
    const topology& topo = a.topo();
    const std::uint64_t part = req.part_size();
    const auto domains = recount(a, req);
    if (req.what == unit::gpus && !req.whole_nodes && part <= topo.max_gpus_per_node()) {
        auto v = by_domains(domains, [&](const domain_recount& c, const std::vector<gpu_mask>& u, bool now) {
            toolkit::scope_offer o;
            if (now && !c.allowed) return o;
            o.free = gpus(u);
            for (gpu_mask m : u) o.most = std::max<std::uint64_t>(o.most, static_cast<std::uint64_t>(std::popcount(m)));
            o.holds_now = o.most >= part;
            return o;
        });
        v.need = part;
        return v;
    }
    const std::uint64_t g = topo.uniform_gpus_per_node() != 0 ? topo.uniform_gpus_per_node() : topo.max_gpus_per_node();
    const std::uint64_t nodes = req.what == unit::nodes ? part : (part + g - 1) / g;
    return counting(domains, nodes, [](const domain_recount& c, const std::vector<gpu_mask>& u) { return wholly(c, u); });
}

// Sub-blocks: the fewest whole nodes holding `block_gpus`, cut from each
// domain's first node; a part needs consecutive free ones holding its GPUs.
template <class Alloc>
toolkit::capacity_view contiguous_expected(const Alloc& a, const request& req, std::uint32_t block_gpus) {
    const std::uint64_t part = req.part_size();
    std::uint64_t need_blocks = ~std::uint64_t{0};
    auto v = by_domains(recount(a, req), [&](const domain_recount& c, const std::vector<gpu_mask>& u, bool now) {
        toolkit::scope_offer o;
        const std::uint32_t g = c.shape.gpus_per_node;
        const std::uint32_t per_block = block_gpus > g ? std::min((block_gpus + g - 1) / g, c.shape.node_count + 1) : 1;
        const std::uint64_t block = std::uint64_t{per_block} * g;
        const std::uint64_t need = req.what == unit::nodes ? part * g : part;
        need_blocks = std::min(need_blocks, (need + block - 1) / block);
        std::vector<bool> free;      // per sub-block
        std::vector<std::uint64_t> block_gpus_of;
        for (std::uint32_t first = 0; first < c.shape.node_count; first += per_block) {
            const std::uint32_t end = std::min(first + per_block, c.shape.node_count);
            bool all = true;
            for (std::uint32_t i = first; i < end; ++i) all = all && u[i] == full_gpu_mask(g);
            free.push_back(all);
            block_gpus_of.push_back(std::uint64_t{end - first} * g);
        }
        std::uint64_t run = 0;
        for (std::size_t b = 0; b < free.size(); ++b) {
            o.free += free[b] ? 1 : 0;
            run = free[b] ? run + 1 : 0;
            o.most = std::max(o.most, run);
            std::uint64_t held = 0;  // the window of free sub-blocks ending at b
            for (std::size_t k = b + 1; k-- > 0 && free[k];) {
                held += block_gpus_of[k];
                if (held >= need) o.holds_now = true;
            }
        }
        if (now && !c.allowed) o = {};
        return o;
    });
    v.need = need_blocks == ~std::uint64_t{0} ? 0 : need_blocks;
    return v;
}

// Buddies: the aligned power-of-two chunks of a domain's GPUs (node-major)
// inside its roots; the largest free buddy is the largest chunk all free.
template <class Alloc>
toolkit::capacity_view buddy_expected(const Alloc& a, const request& req) {
    const std::uint64_t part = req.part_size();
    std::uint64_t need_gpus = ~std::uint64_t{0};
    const auto domains = recount(a, req);
    // Some domain has a buddy the part fits; if none, a part a domain holds
    // takes the domain whole.
    bool buddies = false;
    for (const auto& c : domains) {
        const std::uint32_t g = c.shape.gpus_per_node;
        if (c.shape.node_count != 0 && std::has_single_bit(g))
            buddies = buddies || (std::uint64_t{1} << detail::buddy_level(req, part, g)) <= c.shape.gpu_count();
    }
    auto v = by_domains(domains, [&](const domain_recount& c, const std::vector<gpu_mask>& u, bool) {
        toolkit::scope_offer o;
        const std::uint32_t g = c.shape.gpus_per_node;
        o.free = gpus(u);
        if (c.shape.node_count == 0 || !std::has_single_bit(g)) return o;
        const std::uint64_t total = c.shape.gpu_count();
        if (!buddies) {
            for (std::uint32_t l = 0; (std::uint64_t{1} << l) <= total; ++l)
                for (std::uint64_t chunk = 0; chunk < total >> l; ++chunk) {
                    bool all = true;
                    for (std::uint64_t i = chunk << l; all && i < (chunk + 1) << l; ++i) all = (u[i / g] >> (i % g) & 1U) != 0;
                    if (all) o.most = std::uint64_t{1} << l;
                }
            const std::uint64_t units = req.what == unit::nodes ? c.shape.node_count : total;
            if (units < part) return o;
            need_gpus = std::min(need_gpus, req.what == unit::nodes ? part * g : part);
            o.holds_now = wholly(c, u) == c.shape.node_count;
            return o;
        }
        const auto gpu_free = [&](std::uint64_t i) { return (u[i / g] >> (i % g) & 1U) != 0; };
        const std::uint32_t level = detail::buddy_level(req, part, g);
        for (std::uint32_t l = 0; (std::uint64_t{1} << l) <= total; ++l) {
            const std::uint64_t size = std::uint64_t{1} << l;
            bool found = false;
            for (std::uint64_t chunk = 0; !found && chunk < total >> l; ++chunk) {
                bool all = true;
                for (std::uint64_t i = chunk * size; all && i < (chunk + 1) * size; ++i) all = gpu_free(i);
                found = all;
            }
            if (found) o.most = size;
            if (found && l == level) o.holds_now = true;
            if (l == level) need_gpus = std::min(need_gpus, size);
        }
        return o;
    });
    v.need = need_gpus == ~std::uint64_t{0} ? 0 : need_gpus;
    return v;
}

template <class Alloc>
toolkit::capacity_view expected_view(std::string_view policy, const Alloc& a, const request& req) {
    if (policy == "first-fit") return first_fit_expected(a, req);
    if (policy == "contiguous-block") return contiguous_expected(a, req, 8);
    if (policy == "buddy-split") return buddy_expected(a, req);
    if (policy == "slurm-block") return slurm_expected(a, req);
    return generic_expected(a, req);
}

void check_same(const toolkit::capacity_view& got, const toolkit::capacity_view& want) {
    CHECK(got.need == want.need);
    CHECK(got.free == want.free);
    CHECK(got.most == want.most);
    CHECK(got.holding_now == want.holding_now);
    CHECK(got.holding_if_emptied == want.holding_if_emptied);
    CHECK(got.scopes == want.scopes);
    if (got.scopes > 1) CHECK(got.wholly_free == want.wholly_free);
}

// Random load, releases and (unless `health` is false) health changes;
// after each step a random request is explained and checked.
template <class Policy>
void walk(std::string_view name, const topology& topo, Policy policy, std::uint64_t seed, std::size_t steps,
          bool health = true) {
    CAPTURE(name);
    CAPTURE(seed);
    auto a = std::move(*allocator<Policy>::create(topo, policy));
    rng r(seed);
    std::vector<allocation_id> live;
    std::size_t placeable = 0, refused = 0, scattered = 0;
    placement scratch;
    for (std::size_t step = 0; step < steps; ++step) {
        CAPTURE(step);
        const std::uint32_t kind = r.between(1, 100);
        if (kind <= 55) {
            if (auto id = a.try_allocate(any_request(r, topo))) live.push_back(*id);
        } else if (kind <= 93) {
            if (!live.empty()) {
                const std::size_t i = r.between(0, static_cast<std::uint32_t>(live.size() - 1));
                REQUIRE(a.release(live[i]));
                live[i] = live.back();
                live.pop_back();
            }
        } else if (health) {
            REQUIRE(a.set_health(r.between(0, topo.node_count() - 1),
                                 static_cast<node_health>(r.chance(60) ? 0 : r.between(1, 2))));
        }
        const request q = any_request(r, topo);
        CAPTURE(q.count);
        CAPTURE(static_cast<int>(q.what));
        CAPTURE(q.whole_nodes);
        CAPTURE(q.segment);
        CAPTURE(q.exclusive_domain);
        CAPTURE(static_cast<int>(q.where));
        const explanation e = explain(a, q, scratch);
        // The verdict is try_allocate's, on a copy.
        {
            auto copy = a;
            const auto id = copy.try_allocate(q);
            REQUIRE(e.placeable() == id.has_value());
            if (!id) REQUIRE(e.code == id.error());
        }
        REQUIRE((e.binding == binding_constraint::none) == e.placeable());
        CHECK(e.free == (q.what == unit::nodes ? a.state().available().nodes : a.state().available().gpus));
        CHECK(!to_string(e).empty());
        // The measure, placeable or not, agrees with the recount.
        const toolkit::capacity_view v = measure(a.policy(), a.state(), q);
        if (!q.malformed()) check_same(v, expected_view(name, a, q));
        if (e.measured) {
            CHECK(e.view.free == v.free);
            CHECK(e.view.holding_now == v.holding_now);
        }
        if (e.placeable()) ++placeable;
        else ++refused;
        if (e.binding == binding_constraint::scattered) {
            ++scattered;
            CHECK(v.holding_now == 0);
            CHECK(to_string(e).find(std::to_string(v.most)) != std::string::npos);
        }
        if (e.binding == binding_constraint::policy_rule) CHECK(v.holding_now > 0);
        // The view agrees with the policy: a one-part job a domain holds,
        // required in one domain, is placeable exactly when some domain
        // takes it now (first-fit: when the cluster has as many free).
        const bool one_part = !q.malformed() && !q.segmented() && q.count <= e.largest_domain &&
                              q.where == locality::require && e.code != errc::unsupported_request &&
                              e.code != errc::exceeds_healthy;
        const bool exact = name == "first-fit" || name == "contiguous-block" || name == "buddy-split" ||
                           (name == "best-fit" && !q.whole_nodes);
        if (one_part && exact) CHECK(e.placeable() == (v.holding_now > 0));
    }
    CHECK(placeable > steps / 10);
    CHECK(refused > steps / 10);
    CHECK(scattered > 0);
}

}  // namespace

TEST_CASE("explain: the verdict is try_allocate's and the numbers are a recount, for every policy") {
    const std::pair<const char*, topology> topologies[] = {
        {"uniform", gb200_nvl72(4)}, {"mixed", mixed_nodes()}, {"partial", test::partial_racks()}};
    std::uint64_t seed = 1;
    for (const auto& entry : topologies) {
        const std::string label = entry.first;
        const topology& topo = entry.second;
        CAPTURE(label);
        for (std::string_view name : policy_names) {
            REQUIRE(with_policy(name, policy_settings{}, [&](auto policy) { walk(name, topo, policy, seed++, 1500); }));
        }
    }
    // Every node up: the policies' measures from their indexes alone.
    for (std::string_view name : policy_names)
        REQUIRE(with_policy(name, policy_settings{}, [&](auto policy) { walk(name, gb200_nvl72(6), policy, seed++, 1500, false); }));
}

TEST_CASE("explain: sentences name the binding constraint and its numbers") {
    auto a = allocator<best_fit>::create(gb200_nvl72(4));
    REQUIRE(a);
    // 12 GPUs free in each rack: 48 free, the most in one domain 12.
    for (int rack = 0; rack < 4; ++rack) REQUIRE(a->try_allocate(request::gpus(60)));
    auto e = explain(*a, request::gpus(16));
    CHECK(e.binding == binding_constraint::scattered);
    CHECK(e.code == errc::fragmented);
    CHECK(e.view.most == 12);
    CHECK(e.view.holding_if_emptied == 4);
    CHECK(to_string(e) == "48 GPUs free, but the most in one NVLink domain is 12 (needs 16); 4 NVLink domains would hold it if their jobs ended");
    e = explain(*a, request::gpus(60));
    CHECK(e.binding == binding_constraint::insufficient_free);
    CHECK(to_string(e) == "asks 60 GPUs, 48 free");
    e = explain(*a, request::gpus(12));
    CHECK(e.placeable());
    CHECK(to_string(e) == "placeable now");
    e = explain(*a, request::gpus(400));
    CHECK(e.binding == binding_constraint::cluster_size);
    CHECK(to_string(e) == "asks 400 GPUs, the whole cluster has 288");
    e = explain(*a, request::gpus(160).with_segment(80));
    CHECK(e.binding == binding_constraint::domain_size);
    CHECK(to_string(e) == "a part of 80 GPUs must stay in one NVLink domain, the largest has 72");
    e = explain(*a, request::gpus(3).with_segment(2));
    CHECK(e.binding == binding_constraint::invalid_request);
    e = explain(*a, request::gpus(8).with_exclusive_domain());
    CHECK(e.binding == binding_constraint::exclusive);
    CHECK(to_string(e) == "needs an idle NVLink domain per part: 0 are idle, none holds 8 GPUs; 4 NVLink domains would hold it if their jobs ended");

    auto c = allocator<contiguous_block>::create(gb200_nvl72(2), contiguous_block{8});
    REQUIRE(c);
    // Every other 8-GPU sub-block taken: free sub-blocks, no two in a row.
    std::vector<allocation_id> ids;
    for (int i = 0; i < 18; ++i) ids.push_back(c->allocate(request::gpus(8)));
    for (int i = 0; i < 18; i += 2) REQUIRE(c->release(ids[static_cast<std::size_t>(i)]));
    e = explain(*c, request::gpus(16));
    CHECK(e.binding == binding_constraint::scattered);
    CHECK(to_string(e) == "9 8-GPU sub-blocks free, but the longest run in one NVLink domain is 1 (needs 2); 2 NVLink domains would hold it if their jobs ended (72 GPUs free in all)");
}

}  // namespace test_advice_explain
