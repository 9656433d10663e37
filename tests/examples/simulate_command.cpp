// `topoblock simulate`'s options: every value a replay cannot use is refused
// before anything runs.

#include "../../examples/topoblock/simulate_command.hpp"
#include "../scratch_file.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using topoblock::cli::simulate_settings;

std::optional<int> parse(std::vector<std::string_view> args, simulate_settings& s) {
    return topoblock::cli::detail::parse_simulate_args(args, s);
}

bool refused(std::string_view flag, std::string_view value) {
    simulate_settings s;
    return parse({flag, value}, s) == std::optional<int>(2);
}

// What parse_simulate_args writes on its error stream for `args` (checked
// to stop with status 2).
std::string refusal(std::vector<std::string_view> args) {
    std::FILE* err = std::tmpfile();
    REQUIRE(err != nullptr);
    simulate_settings s;
    const auto status = topoblock::cli::detail::parse_simulate_args(args, s, err);
    std::rewind(err);
    std::string text;
    for (int c; (c = std::fgetc(err)) != EOF;) text += static_cast<char>(c);
    std::fclose(err);
    CHECK(status == std::optional<int>(2));
    return text;
}

}  // namespace

TEST_CASE("simulate: option values in range are taken") {
    simulate_settings s;
    CHECK_FALSE(parse({"--jobs", "100000000", "--load", "0.5", "--until", "2d", "--block-gpus", "4294967295",
                       "--node-mtbf-hours", "1", "--repair-hours", "0"},
                      s)
                    .has_value());
    CHECK(s.jobs == 100'000'000);
    CHECK(*s.load == 0.5);
    CHECK(*s.engine.until_s == 172800.0);
    CHECK(s.policy.block_gpus == 4294967295U);
    CHECK(s.engine.failures.node_mtbf_hours == 1.0);
    CHECK_FALSE(parse({"--node-mtbf-hours", "0"}, s).has_value());
}

TEST_CASE("simulate: values a replay cannot use are refused, not truncated or ignored") {
    // Sizes that would exhaust memory or wrap.
    CHECK(refused("--jobs", "18446744073709551615"));
    CHECK(refused("--jobs", "100000001"));
    CHECK(refused("--block-gpus", "4294967296"));
    // Numbers that are no numbers.
    for (std::string_view flag : {"--load", "--comm-share", "--nvlink-gbps", "--ib-gbps", "--repair-hours", "--node-mtbf-hours"}) {
        CAPTURE(flag);
        CHECK(refused(flag, "inf"));
        CHECK(refused(flag, "nan"));
    }
    CHECK(refused("--until", "nan"));
    CHECK(refused("--snapshot", "inf"));
    CHECK(refused("--until", "1e308d"));  // finite, but not once in seconds
    // Failures so frequent that the replay would never end.
    CHECK(refused("--node-mtbf-hours", "1e-9"));
    CHECK(refused("--node-mtbf-hours", "0.5"));
}

TEST_CASE("simulate: --opt=value, and stray words named as such") {
    simulate_settings s;
    CHECK_FALSE(parse({"--load=0.5", "--jobs=7", "--svg=-"}, s).has_value());
    CHECK(*s.load == 0.5);
    CHECK(s.jobs == 7);
    CHECK(s.svg_path.empty());
    CHECK(parse({"extra"}, s) == std::optional<int>(2));
    CHECK(parse({"--load="}, s) == std::optional<int>(2));
    CHECK(parse({"--load"}, s) == std::optional<int>(2));
}

TEST_CASE("simulate: every numeric option refuses values out of range, naming the option and the value") {
    // (option, a value just past its range)
    const std::vector<std::pair<std::string_view, std::string_view>> options = {
        {"--jobs", "100000001"},         {"--seed", "18446744073709551616"}, {"--load", "1001"},
        {"--until", "1e308d"},           {"--snapshot", "1e308d"},           {"--block-gpus", "4294967296"},
        {"--comm-share", "1.5"},         {"--nvlink-gbps", "1e7"},           {"--ib-gbps", "1e7"},
        {"--node-mtbf-hours", "2e9"},    {"--repair-hours", "2e9"},          {"--max-requeues", "4294967296"},
    };
    for (const auto& option : options) {
        // (Named, not bound: clang 14's CAPTURE cannot take a structured binding.)
        const std::string_view flag = option.first, too_large = option.second;
        for (const std::string_view value : {too_large, std::string_view("-1"), std::string_view("nan"), std::string_view("inf"),
                                             std::string_view("-inf"), std::string_view("5x"), std::string_view("5 "),
                                             std::string_view(" 5"), std::string_view("0x10"), std::string_view("")}) {
            CAPTURE(flag);
            CAPTURE(value);
            const std::string err = refusal({flag, value});
            CHECK(err.starts_with("topoblock simulate: " + std::string(flag) + " takes "));
            CHECK(err.find("got '" + std::string(value) + "'") != std::string::npos);
        }
    }
    // The edges of each range are taken.
    simulate_settings s;
    CHECK_FALSE(parse({"--seed", "18446744073709551615", "--load", "1000", "--comm-share", "1", "--nvlink-gbps", "1e6",
                       "--ib-gbps", "0.001", "--node-mtbf-hours", "1e9", "--repair-hours", "1e9", "--max-requeues",
                       "4294967295", "--until", "0"},
                      s)
                    .has_value());
    CHECK(s.seed == 18446744073709551615ULL);
    CHECK(s.engine.failures.repair_hours == 1e9);
    CHECK(s.engine.max_requeues == 4294967295U);
    CHECK(s.engine.cost.infiniband_gb_per_s == 0.001);
    // Below an hour of MTBF: refused by the program (the library takes it).
    CHECK(refusal({"--node-mtbf-hours", "0.5"}).find("0 (no failures) or hours from 1 to 1e9") != std::string::npos);
    CHECK(refused("--ib-gbps", "0"));
    CHECK(refused("--load", "0"));
    CHECK(refused("--jobs", "0"));
}

// Regression: `--policy contiguous-block --block-gpus 4294967293` divided
// by zero inside the policy. Now the size is refused before any policy
// runs, with the policy's message, and the program exits 2.
TEST_CASE("simulate: a block size the topology cannot use stops the program") {
    for (std::string_view size : {"4294967293", "4294967225", "73", "0"}) {
        CAPTURE(size);
        CHECK(topoblock::cli::simulate_main({"--topology", "nvl72:2", "--policy", "contiguous-block", "--block-gpus", size,
                                             "--jobs", "5"}) == 2);
        CHECK(topoblock::cli::simulate_main({"--topology", "nvl72:2", "--policy", "all", "--block-gpus", size, "--jobs",
                                             "5"}) == 2);
    }
}
