#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace topoblock {

// The Slurm release whose node selection the slurm-block policy follows
// (docs/slurm-block.md lists what differs). Later releases compare greater.
enum class slurm_version {
    v25_11,  // 25.11: every job goes through the block plugin's eval_nodes_block
    v26_05,  // 26.05 and later: a job of at most one node takes the first free node (_get_one_res)
};

inline constexpr slurm_version newest_slurm_version = slurm_version::v26_05;

// The accepted text forms, for messages.
inline constexpr std::string_view slurm_version_names = "25.11, 26.05";

inline std::string_view to_string(slurm_version v) noexcept {
    return v == slurm_version::v25_11 ? "25.11" : "26.05";
}

// "25.11" or "26.05"; nothing for any other text.
inline std::optional<slurm_version> parse_slurm_version(std::string_view text) noexcept {
    if (text == "25.11") return slurm_version::v25_11;
    if (text == "26.05") return slurm_version::v26_05;
    return std::nullopt;
}

// What is wrong with `text` as a Slurm version: empty when it is one.
inline std::string slurm_version_error(std::string_view text) {
    if (parse_slurm_version(text)) return {};
    return "unknown Slurm version '" + std::string(text) + "' (accepted: " + std::string(slurm_version_names) + ")";
}

}  // namespace topoblock
