#pragma once

// Declarations of the class templates with their defaults, and the short
// names for the common case, for code that only names the types.

#include <topoblock/config.hpp>

#include <cstddef>

namespace topoblock {

template <std::size_t MaxNodesPerDomain>
struct capacity;
using default_capacity = capacity<TOPOBLOCK_DEFAULT_MAX_NODES_PER_DOMAIN>;

template <class Capacity>
class basic_cluster_state;
using cluster_state = basic_cluster_state<default_capacity>;

template <class Policy, class Capacity>
class basic_allocator;
template <class Policy>
using allocator = basic_allocator<Policy, default_capacity>;

class topology;
class topology_builder;
struct request;
class placement;
struct piece;
struct allocation_id;
struct allocation_record;
struct first_fit;
struct best_fit;
class contiguous_block;
class buddy_split;
class slurm_block;

}  // namespace topoblock
