// Fuzz target: `topoblock place` event lines (examples/topoblock/
// place_command.hpp). Byte 0 picks a small preset cluster, a policy and
// text or JSON answers; the rest is the command's standard input. Every line is applied or refused
// with a message naming its line; the command never fails as a whole (exit 2)
// on a good cluster, and prints one decision per alloc line applied.

#include "fuzz_support.hpp"

#include "../../examples/topoblock/place_command.hpp"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace topoblock;
    if (size == 0) return 0;
    static constexpr std::string_view clusters[] = {"nvl72:2", "grid:2:4:2", "hgx8:2+nvl72:1"};
    const std::string_view cluster = clusters[data[0] % 3];
    const std::string_view policy = policy_names[(data[0] / 3) % policy_names.size()];
    std::istringstream in(std::string(fuzz::as_text(data + 1, size - 1)));
    std::ostringstream out, err;
    const bool json = (data[0] / 15) % 2 == 1;
    std::vector<std::string_view> args{"--topology", cluster, "--policy", policy};
    if (json) args.push_back("--json");
    const int status = cli::run_place(args, in, out, err);
    fuzz::require(status == 0 || status == 1, "place failed as a whole: " + err.str());
    fuzz::require((status == 0) == err.str().empty(), "exit status and messages disagree");
    // Every message names a line of the input.
    std::istringstream messages(err.str());
    for (std::string line; std::getline(messages, line);)
        fuzz::require(line.starts_with("topoblock place: line "), "a message without its line: " + line);
    // In JSON mode every answer is one object on one line.
    std::istringstream answers(out.str());
    for (std::string line; json && std::getline(answers, line);)
        fuzz::require(line.starts_with('{') && line.ends_with('}'), "a JSON answer that is no object: " + line);
    return 0;
}
