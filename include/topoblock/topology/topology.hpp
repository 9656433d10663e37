#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
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
class topology {
public:
    topology() = default;
    topology(const topology&) = default;
    topology(topology&&) = default;
    topology& operator=(topology&&) = default;
    // Nothing changes a topology once built, so a copy of the same build is
    // equal already: an allocator copied into again and again (the
    // simulator's what-if copies) copies the names and tables once.
    topology& operator=(const topology& other) {
        if (build_.id == 0 || build_.id != other.build_.id) *this = topology(other);
        return *this;
    }

    const std::vector<node_info>& nodes() const noexcept { return nodes_; }
    const std::vector<domain_info>& domains() const noexcept { return domains_; }
    // Ordered from the level nearest the domains upwards.
    const std::vector<group_level>& levels() const noexcept { return levels_; }

    const node_info& node(node_id n) const { return nodes_[n]; }
    // The same fields as node(n) and domain(d) without the names: for hot
    // paths. On a cluster of like domains (the same number of nodes, all with
    // the same GPUs) they are computed from the id, so a change to a far node
    // starts its other loads at once instead of after a load of its place;
    // otherwise they come from packed tables.
    node_place place(node_id n) const noexcept {
        if (uniform_domain_nodes_ != 0) {
            const auto d = static_cast<std::uint32_t>((std::uint64_t{n} * domain_reciprocal_) >> domain_shift_);
            return {d, n - d * uniform_domain_nodes_, uniform_gpus_per_node_, n * uniform_gpus_per_node_};
        }
        return places_[n];
    }
    domain_shape shape(domain_id d) const noexcept {
        if (uniform_domain_nodes_ != 0) return {d * uniform_domain_nodes_, uniform_domain_nodes_, uniform_gpus_per_node_};
        return shapes_[d];
    }
    const domain_info& domain(domain_id d) const { return domains_[d]; }
    std::uint32_t node_count() const noexcept { return static_cast<std::uint32_t>(nodes_.size()); }
    std::uint32_t domain_count() const noexcept { return static_cast<std::uint32_t>(domains_.size()); }
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
            return k <= domains_.size() ? static_cast<std::uint32_t>(k) : none;
        }
        const std::vector<std::uint64_t>& sums = nodes ? nodes_largest_first_ : gpus_largest_first_;
        const auto it = std::lower_bound(sums.begin(), sums.end(), units);
        return it == sums.end() ? none : static_cast<std::uint32_t>(it - sums.begin()) + 1;
    }

    std::optional<node_id> find_node(std::string_view name) const {
        const auto it = node_by_name_.find(std::string(name));
        if (it == node_by_name_.end()) return std::nullopt;
        return it->second;
    }
    std::optional<domain_id> find_domain(std::string_view name) const {
        for (domain_id d = 0; d < domains_.size(); ++d)
            if (domains_[d].name == name) return d;
        return std::nullopt;
    }

private:
    friend class topology_builder;

    void index() {
        static std::atomic<std::uint64_t> builds{0};
        build_.id = ++builds;
        gpu_count_ = 0;
        max_domain_gpus_ = max_domain_nodes_ = max_gpus_per_node_ = 0;
        uniform_gpus_per_node_ = nodes_.empty() ? 0 : nodes_.front().gpus;
        node_by_name_.clear();
        node_by_name_.reserve(nodes_.size());
        places_.clear();
        places_.reserve(nodes_.size());
        for (node_id n = 0; n < nodes_.size(); ++n) {
            nodes_[n].first_gpu = gpu_count_;
            places_.push_back({nodes_[n].domain, nodes_[n].index_in_domain, nodes_[n].gpus, nodes_[n].first_gpu});
            gpu_count_ += nodes_[n].gpus;
            if (nodes_[n].gpus > max_gpus_per_node_) max_gpus_per_node_ = nodes_[n].gpus;
            if (nodes_[n].gpus != uniform_gpus_per_node_) uniform_gpus_per_node_ = 0;
            node_by_name_.emplace(nodes_[n].name, n);
        }
        shapes_.clear();
        shapes_.reserve(domains_.size());
        for (const auto& d : domains_) {
            shapes_.push_back(d);
            if (d.gpu_count() > max_domain_gpus_) max_domain_gpus_ = d.gpu_count();
            if (d.node_count > max_domain_nodes_) max_domain_nodes_ = d.node_count;
        }
        // Like domains: place() and shape() compute, provided that what they
        // compute agrees with the tables for every node and domain; then the
        // tables are dropped. The domain of node n is n / nodes as a multiply
        // and a shift (Granlund and Montgomery): exact for n below 2^bits,
        // the product below 2^(2 bits + 1). A division would be some 25
        // cycles on the path of every change.
        uniform_domain_nodes_ = uniform_gpus_per_node_ != 0 ? max_domain_nodes_ : 0;
        const auto bits = static_cast<std::uint32_t>(std::bit_width(nodes_.size()));
        if (2 * bits + 1 > 64) uniform_domain_nodes_ = 0;
        if (uniform_domain_nodes_ != 0) {
            domain_shift_ = bits + static_cast<std::uint32_t>(std::bit_width(uniform_domain_nodes_ - 1));
            domain_reciprocal_ = ((std::uint64_t{1} << domain_shift_) + uniform_domain_nodes_ - 1) / uniform_domain_nodes_;
        }
        for (node_id n = 0; n < nodes_.size() && uniform_domain_nodes_ != 0; ++n)
            if (!(place(n) == places_[n])) uniform_domain_nodes_ = 0;
        for (domain_id d = 0; d < domains_.size() && uniform_domain_nodes_ != 0; ++d)
            if (!(shape(d) == shapes_[d])) uniform_domain_nodes_ = 0;
        if (uniform_domain_nodes_ != 0) {
            places_ = {};
            shapes_ = {};
        }
        // fewest_domains_for: running totals of the domains' GPUs and nodes,
        // largest first (like domains divide instead).
        gpus_largest_first_.clear();
        nodes_largest_first_.clear();
        if (uniform_domain_nodes_ == 0) {
            for (const auto& d : domains_) {
                gpus_largest_first_.push_back(d.gpu_count());
                nodes_largest_first_.push_back(d.node_count);
            }
            for (auto* sums : {&gpus_largest_first_, &nodes_largest_first_}) {
                std::sort(sums->begin(), sums->end(), std::greater<>());
                std::partial_sum(sums->begin(), sums->end(), sums->begin());
            }
        }
    }

    std::vector<node_info> nodes_;
    std::vector<node_place> places_;  // [node], kept in step with nodes_ by index(); empty when computed
    std::vector<domain_info> domains_;
    std::vector<domain_shape> shapes_;  // [domain], as places_
    // [k]: the GPUs (nodes) of the k + 1 largest domains; empty for like domains.
    std::vector<std::uint64_t> gpus_largest_first_;
    std::vector<std::uint64_t> nodes_largest_first_;
    std::vector<group_level> levels_;
    std::unordered_map<std::string, node_id> node_by_name_;
    std::uint32_t gpu_count_ = 0;
    std::uint32_t max_domain_gpus_ = 0;
    std::uint32_t max_domain_nodes_ = 0;
    std::uint32_t max_gpus_per_node_ = 0;
    std::uint32_t uniform_gpus_per_node_ = 0;
    std::uint32_t uniform_domain_nodes_ = 0;  // nodes of every domain when all are alike, else 0
    std::uint64_t domain_reciprocal_ = 0;     // place(n): n / uniform_domain_nodes_ is (n * this) >> domain_shift_
    std::uint32_t domain_shift_ = 0;
    // Which build this is (index() numbers them), 0 for none; a topology
    // moved from is none, as its tables went with the move.
    struct build_stamp {
        std::uint64_t id = 0;
        build_stamp() = default;
        build_stamp(const build_stamp&) = default;
        build_stamp& operator=(const build_stamp&) = default;
        build_stamp(build_stamp&& other) noexcept : id(std::exchange(other.id, 0)) {}
        build_stamp& operator=(build_stamp&& other) noexcept {
            id = std::exchange(other.id, 0);
            return *this;
        }
    };
    build_stamp build_;
};

}  // namespace topoblock
