#pragma once

// A comma-separated list of names, as a command line or a script gives
// policies.

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace topoblock::detail {

// The names of a comma-separated list, each once, in first-seen order
// (empty names skipped); `repeated` gets the names given more than once,
// each once. O(n log n) in the length of the text.
inline std::vector<std::string> split_list(std::string_view text, std::vector<std::string>& repeated) {
    std::vector<std::string> out;
    std::set<std::string_view> seen, seen_twice;  // views into `text`
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) {
            const std::string_view name = text.substr(start, comma - start);
            if (seen.insert(name).second) out.emplace_back(name);
            else if (seen_twice.insert(name).second) repeated.emplace_back(name);
        }
        start = comma + 1;
    }
    return out;
}

}  // namespace topoblock::detail
