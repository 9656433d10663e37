#pragma once

// The built-in placement policies by name, for programs that choose one at
// run time: f(policy) gets the policy's own type (no virtual call).

#include <topoblock/policy/best_fit.hpp>
#include <topoblock/policy/buddy_split.hpp>
#include <topoblock/policy/contiguous_block.hpp>
#include <topoblock/policy/first_fit.hpp>
#include <topoblock/policy/fragmentation_aware.hpp>
#include <topoblock/policy/slurm_block.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace topoblock {

// Settings some policies take by name (from a command line, say).
struct policy_settings {
    std::uint32_t block_gpus = 8;  // contiguous-block: sub-block size in GPUs
    slurm_block slurm;             // slurm-block: levels of the Slurm topology file, or defaults
};

inline constexpr std::array<std::string_view, 6> policy_names{"first-fit",   "best-fit",    "contiguous-block",
                                                                  "buddy-split", "slurm-block", "frag-aware"};

// Returns false when `name` is not a policy.
template <class F>
bool with_policy(std::string_view name, const policy_settings& settings, F&& f) {
    if (name == "first-fit") return f(first_fit{}), true;
    if (name == "best-fit") return f(best_fit{}), true;
    if (name == "contiguous-block") return f(contiguous_block{settings.block_gpus}), true;
    if (name == "buddy-split") return f(buddy_split{}), true;
    if (name == "slurm-block") return f(settings.slurm), true;
    if (name == "frag-aware") return f(fragmentation_aware{}), true;
    return false;
}

}  // namespace topoblock
