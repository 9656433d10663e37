#pragma once

// Everything of the core library: topology, state, requests, policies, the
// allocator and its metrics. The io/ and sim/ headers are opt-in.

#include <topoblock/version.hpp>
#include <topoblock/config.hpp>
#include <topoblock/fwd.hpp>
#include <topoblock/topology/topology.hpp>
#include <topoblock/topology/builder.hpp>
#include <topoblock/topology/presets.hpp>
#include <topoblock/topology/health.hpp>
#include <topoblock/state/allocation.hpp>
#include <topoblock/state/cluster_state.hpp>
#include <topoblock/request/request.hpp>
#include <topoblock/request/placement.hpp>
#include <topoblock/request/errc.hpp>
#include <topoblock/policy/concept.hpp>
#include <topoblock/policy/first_fit.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/slurm_block.hpp>
#include <topoblock/policy/slurm_version.hpp>
#include <topoblock/policy/fragmentation_aware.hpp>
#include <topoblock/policy/registry.hpp>
#include <topoblock/allocator/allocator.hpp>
#include <topoblock/metrics/allocatable.hpp>
#include <topoblock/metrics/metrics.hpp>
#include <topoblock/advice/explain.hpp>
