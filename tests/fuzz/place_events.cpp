// Fuzz target: the event lines of `topoblock place` (io/event_runner.hpp).
// Byte 0 picks a small preset cluster, a policy and text or JSON answers;
// the rest is the event stream. Every line is applied or refused with a
// message naming its line, and in JSON mode every answer is one object.
// `save` writes no file: its snapshot must read back whole.

#include "fuzz_support.hpp"

#include <topoblock/io/event_runner.hpp>
#include <topoblock/io/load_topology.hpp>
#include <topoblock/io/snapshot.hpp>
#include <topoblock/policy/registry.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
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
    auto loaded = io::load_topology(std::string(cluster));
    fuzz::require(loaded.has_value(), "a preset does not load");
    bool clean = false;
    const bool known = with_policy(policy, policy_settings{}, [&](auto chosen) {
        using Policy = decltype(chosen);
        const Policy same = chosen;
        auto a = basic_allocator<Policy, default_capacity>::create(loaded->topo, std::move(chosen));
        fuzz::require(a.has_value(), "an allocator cannot be made on a preset");
        io::event_runner runner(std::move(*a), out, err, json);
        // `save` writes no file (a path from the input could be any file):
        // each snapshot it makes must read back and write the same text.
        runner.set_file_writer([&](const std::string&, const std::string& text, std::string&) {
            auto back = io::read_snapshot<Policy>(text, loaded->topo, same);
            fuzz::require(back.has_value(), "a saved snapshot does not read back");
            const auto again = io::write_snapshot(back->allocator, back->labels);
            fuzz::require(again.has_value() && *again == text, "a snapshot read back writes other text");
            return true;
        });
        clean = runner.run(in);
        // Whatever the stream did, the allocator still agrees with itself.
        fuzz::require(runner.allocator().state().verify().empty(), "the state fails its own check");
    });
    fuzz::require(known, "a registered policy is unknown");
    fuzz::require(clean == err.str().empty(), "the run's result and its messages disagree");
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
