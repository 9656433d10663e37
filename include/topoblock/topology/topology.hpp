#pragma once

#include <topoblock/config.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace topoblock {

using node_id = std::uint32_t;
using domain_id = std::uint32_t;
using group_id = std::uint32_t;

// A host the scheduler names: a compute tray of an NVL72 rack, an HGX server.
struct node_info {
    std::string name;
    domain_id domain = 0;
    std::uint32_t index_in_domain = 0;
    std::uint32_t gpus = 0;
    // Index of the node's GPU 0 among all GPUs of the cluster.
    std::uint32_t first_gpu = 0;
};

// node_info without the name: what the cluster state reads on every change
// to a node. 16 bytes against node_info's 48, so a change to a node far from
// the last one finds a quarter of the memory to fetch, four nodes a line.
struct node_place {
    domain_id domain = 0;
    std::uint32_t index_in_domain = 0;
    std::uint32_t gpus = 0;
    std::uint32_t first_gpu = 0;
    friend constexpr bool operator==(const node_place&, const node_place&) = default;
};

// domain_info without the name: what placement and the cluster state read
// for a domain on every change, 12 bytes against domain_info's 48.
struct domain_shape {
    node_id first_node = 0;
    std::uint32_t node_count = 0;
    std::uint32_t gpus_per_node = 0;
    std::uint32_t gpu_count() const noexcept { return node_count * gpus_per_node; }
    node_id end_node() const noexcept { return first_node + node_count; }
    friend constexpr bool operator==(const domain_shape&, const domain_shape&) = default;
};

// A set of nodes joined by NVLink. Its nodes have consecutive ids (domain
// d + 1's follow domain d's: the builder numbers them in order) and the same
// GPU count; it may hold no node at all (an empty Slurm block keeps its place
// in the block order).
struct domain_info {
    std::string name;
    node_id first_node = 0;
    std::uint32_t node_count = 0;
    std::uint32_t gpus_per_node = 0;
    std::uint32_t gpu_count() const noexcept { return node_count * gpus_per_node; }
    node_id end_node() const noexcept { return first_node + node_count; }
    // Everything but the name, for code that takes a domain_shape.
    operator domain_shape() const noexcept { return {first_node, node_count, gpus_per_node}; }
};

// One level of grouping above domains (rack row, InfiniBand leaf, spine):
// every domain belongs to exactly one group of each level.
struct group_level {
    std::string name;
    std::vector<std::string> group_names;
    std::vector<group_id> group_of_domain;
    std::vector<std::vector<domain_id>> domains_of_group;
};

// The immutable description of a cluster. Build one with topology_builder or a
// preset; the builder validates, so every topology object is consistent.
// Copies share the tables (names, places, levels), which nothing changes once
// built: a copy costs a reference count, however often an allocator is copied
// (the simulator's what-if copies). A move copies too, so a topology moved
// from is still the one it was.
class topology {
public:
    topology() = default;
    topology(const topology&) = default;
    topology& operator=(const topology&) = default;
    topology(topology&& other) noexcept : topology(std::as_const(other)) {}
    topology& operator=(topology&& other) noexcept { return *this = std::as_const(other); }

    const std::vector<node_info>& nodes() const noexcept { return t_->nodes; }
    const std::vector<domain_info>& domains() const noexcept { return t_->domains; }
    // Ordered from the level nearest the domains upwards.
    const std::vector<group_level>& levels() const noexcept { return t_->levels; }

    // Preconditions (TOPOBLOCK_ASSERT): n < node_count(), d < domain_count().
    const node_info& node(node_id n) const {
        TOPOBLOCK_ASSERT(n < node_count_);
        return t_->nodes[n];
    }
    // The same fields as node(n) and domain(d) without the names: for hot
    // paths. On a cluster of like domains (the same number of nodes, all with
    // the same GPUs) they are computed from the id, so a change to a far node
    // starts its other loads at once instead of after a load of its place;
    // otherwise they come from packed tables.
    node_place place(node_id n) const noexcept {
        TOPOBLOCK_ASSERT(n < node_count_);
        if (uniform_domain_nodes_ != 0) {
            const auto d = static_cast<std::uint32_t>((std::uint64_t{n} * domain_reciprocal_) >> domain_shift_);
            return {d, n - d * uniform_domain_nodes_, uniform_gpus_per_node_, n * uniform_gpus_per_node_};
        }
        return t_->places[n];
    }
    domain_shape shape(domain_id d) const noexcept {
        TOPOBLOCK_ASSERT(d < domain_count_);
        if (uniform_domain_nodes_ != 0) return {d * uniform_domain_nodes_, uniform_domain_nodes_, uniform_gpus_per_node_};
        return t_->shapes[d];
    }
    const domain_info& domain(domain_id d) const {
        TOPOBLOCK_ASSERT(d < domain_count_);
        return t_->domains[d];
    }
    std::uint32_t node_count() const noexcept { return node_count_; }
    std::uint32_t domain_count() const noexcept { return domain_count_; }
    std::uint32_t gpu_count() const noexcept { return gpu_count_; }
    std::uint32_t max_domain_gpus() const noexcept { return max_domain_gpus_; }
    std::uint32_t max_domain_nodes() const noexcept { return max_domain_nodes_; }
    std::uint32_t max_gpus_per_node() const noexcept { return max_gpus_per_node_; }
    // The GPU count every node shares, or 0 in a cluster that mixes them.
    std::uint32_t uniform_gpus_per_node() const noexcept { return uniform_gpus_per_node_; }
    // The fewest domains whose GPUs (`nodes`: whole nodes) add up to `units`,
    // taking the largest domains first: what a job of that size needs on the
    // empty cluster (request.hpp's locality::require). npos32 when the whole
    // cluster holds fewer. A divide on a cluster of like domains, else a
    // binary search over the domain sizes sorted once here: O(log domains).
    std::uint32_t fewest_domains_for(std::uint64_t units, bool nodes) const noexcept {
        constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();  // npos32
        if (units == 0) return 0;
        if (uniform_domain_nodes_ != 0) {
            const std::uint64_t per = nodes ? uniform_domain_nodes_ : std::uint64_t{uniform_domain_nodes_} * uniform_gpus_per_node_;
            const std::uint64_t k = (units + per - 1) / per;
            return k <= domain_count_ ? static_cast<std::uint32_t>(k) : none;
        }
        const std::vector<std::uint64_t>& sums = nodes ? t_->nodes_largest_first : t_->gpus_largest_first;
        const auto it = std::lower_bound(sums.begin(), sums.end(), units);
        return it == sums.end() ? none : static_cast<std::uint32_t>(it - sums.begin()) + 1;
    }

    std::optional<node_id> find_node(std::string_view name) const {
        const auto it = t_->node_by_name.find(std::string(name));
        if (it == t_->node_by_name.end()) return std::nullopt;
        return it->second;
    }
    std::optional<domain_id> find_domain(std::string_view name) const {
        for (domain_id d = 0; d < domain_count_; ++d)
            if (t_->domains[d].name == name) return d;
        return std::nullopt;
    }

private:
    friend class topology_builder;

    struct tables {
        std::vector<node_info> nodes;
        std::vector<node_place> places;  // [node], as nodes; empty when place() computes
        std::vector<domain_info> domains;
        std::vector<domain_shape> shapes;  // [domain], as places
        // [k]: the GPUs (nodes) of the k + 1 largest domains; empty for like domains.
        std::vector<std::uint64_t> gpus_largest_first;
        std::vector<std::uint64_t> nodes_largest_first;
        std::vector<group_level> levels;
        std::unordered_map<std::string, node_id> node_by_name;
    };

    // The builder's nodes, domains and levels (validated), indexed.
    explicit topology(tables t) {
        node_count_ = static_cast<std::uint32_t>(t.nodes.size());
        domain_count_ = static_cast<std::uint32_t>(t.domains.size());
        uniform_gpus_per_node_ = t.nodes.empty() ? 0 : t.nodes.front().gpus;
        t.node_by_name.reserve(t.nodes.size());
        for (node_id n = 0; n < node_count_; ++n) {
            node_info& info = t.nodes[n];
            info.first_gpu = gpu_count_;
            t.places.push_back({info.domain, info.index_in_domain, info.gpus, info.first_gpu});
            gpu_count_ += info.gpus;
            max_gpus_per_node_ = std::max(max_gpus_per_node_, info.gpus);
            if (info.gpus != uniform_gpus_per_node_) uniform_gpus_per_node_ = 0;
            t.node_by_name.emplace(info.name, n);
        }
        for (const auto& d : t.domains) {
            t.shapes.push_back(d);
            max_domain_gpus_ = std::max(max_domain_gpus_, d.gpu_count());
            max_domain_nodes_ = std::max(max_domain_nodes_, d.node_count);
        }
        // Like domains: place() and shape() compute, provided that what they
        // compute agrees with the tables for every node and domain; then the
        // tables are dropped. The domain of node n is n / nodes as a multiply
        // and a shift (Granlund and Montgomery): exact for n below 2^bits,
        // the product below 2^(2 bits + 1). A division would be some 25
        // cycles on the path of every change.
        uniform_domain_nodes_ = uniform_gpus_per_node_ != 0 ? max_domain_nodes_ : 0;
        const auto bits = static_cast<std::uint32_t>(std::bit_width(t.nodes.size()));
        if (2 * bits + 1 > 64) uniform_domain_nodes_ = 0;
        if (uniform_domain_nodes_ != 0) {
            domain_shift_ = bits + static_cast<std::uint32_t>(std::bit_width(uniform_domain_nodes_ - 1));
            domain_reciprocal_ = ((std::uint64_t{1} << domain_shift_) + uniform_domain_nodes_ - 1) / uniform_domain_nodes_;
        }
        for (node_id n = 0; n < node_count_ && uniform_domain_nodes_ != 0; ++n)
            if (!(place(n) == t.places[n])) uniform_domain_nodes_ = 0;
        for (domain_id d = 0; d < domain_count_ && uniform_domain_nodes_ != 0; ++d)
            if (!(shape(d) == t.shapes[d])) uniform_domain_nodes_ = 0;
        if (uniform_domain_nodes_ != 0) {
            t.places = {};
            t.shapes = {};
        } else {
            // fewest_domains_for: running totals of the domains' GPUs and
            // nodes, largest first (like domains divide instead).
            for (const auto& d : t.domains) {
                t.gpus_largest_first.push_back(d.gpu_count());
                t.nodes_largest_first.push_back(d.node_count);
            }
            for (auto* sums : {&t.gpus_largest_first, &t.nodes_largest_first}) {
                std::sort(sums->begin(), sums->end(), std::greater<>());
                std::partial_sum(sums->begin(), sums->end(), sums->begin());
            }
        }
        t_ = std::make_shared<const tables>(std::move(t));
    }

    static const std::shared_ptr<const tables>& no_tables() {
        static const auto none = std::make_shared<const tables>();
        return none;
    }

    std::shared_ptr<const tables> t_ = no_tables();  // never null
    std::uint32_t node_count_ = 0;
    std::uint32_t domain_count_ = 0;
    std::uint32_t gpu_count_ = 0;
    std::uint32_t max_domain_gpus_ = 0;
    std::uint32_t max_domain_nodes_ = 0;
    std::uint32_t max_gpus_per_node_ = 0;
    std::uint32_t uniform_gpus_per_node_ = 0;
    std::uint32_t uniform_domain_nodes_ = 0;  // nodes of every domain when all are alike, else 0
    std::uint64_t domain_reciprocal_ = 0;     // place(n): n / uniform_domain_nodes_ is (n * this) >> domain_shift_
    std::uint32_t domain_shift_ = 0;
};

}  // namespace topoblock
