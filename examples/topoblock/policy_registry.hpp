#pragma once

// Placement policies by the names the command line uses. Each entry calls
// f(policy) with a policy object of its own type, so commands stay templates
// over the policy and pay no virtual call per decision.

#include <topoblock/topoblock.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace topoblock::cli {

// Settings some policies take from the command line.
struct policy_settings {
    std::uint32_t block_gpus = 8;  // contiguous-block: sub-block size in GPUs
    slurm_block slurm;             // slurm-block: levels of the Slurm topology file, or defaults
};

inline constexpr std::array<std::string_view, 5> policy_names{"first-fit", "best-fit", "contiguous-block",
                                                                  "buddy-split", "slurm-block"};

// Returns false when `name` is not a policy.
template <class F>
bool with_policy(std::string_view name, const policy_settings& settings, F&& f) {
    if (name == "first-fit") return f(first_fit{}), true;
    if (name == "best-fit") return f(best_fit{}), true;
    if (name == "contiguous-block") return f(contiguous_block{settings.block_gpus}), true;
    if (name == "buddy-split") return f(buddy_split{}), true;
    if (name == "slurm-block") return f(settings.slurm), true;
    return false;
}

}  // namespace topoblock::cli
