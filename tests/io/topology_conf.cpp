#include <topoblock/io/topology_conf.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace test_io_topology_conf {

using namespace topoblock::io;
using names = std::vector<std::string>;

namespace {

slurm_topology parse_ok(std::string_view text) {
    auto result = parse_topology_conf(text);
    REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
    return *result;
}

void expect_error(std::string_view text, std::uint32_t line, std::uint32_t column, std::string_view fragment) {
    auto result = parse_topology_conf(text);
    REQUIRE_FALSE(result.has_value());
    CAPTURE(result.error().to_string());
    CHECK(result.error().line == line);
    CHECK(result.error().column == column);
    CHECK(result.error().message.find(fragment) != std::string::npos);
}

names range(std::string_view prefix, int lo, int hi, int width) {
    names out;
    for (int i = lo; i <= hi; ++i) {
        std::string digits = std::to_string(i);
        out.push_back(std::string(prefix) + std::string(digits.size() < static_cast<std::size_t>(width)
                                                            ? static_cast<std::size_t>(width) - digits.size()
                                                            : 0,
                                                        '0') +
                      digits);
    }
    return out;
}

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t bound) { return rng() % bound; }

const char* const slurm_example = R"(# Slurm's topology.conf(5) block example, scaled to node[1-8]
BlockName=b1 Nodes=node[1-4]
BlockName=b2 Nodes=node[5-8]
BlockSizes=4,8
)";

const char* const nvl72_racks = R"(# four GB200 NVL72 racks, 18 compute trays each
BlockName=b1 Nodes=n[01-18]
BlockName=b2 Nodes=n[19-36]
BlockName=b3 Nodes=n[37-54]
BlockName=b4 Nodes=n[55-72]
BlockSizes=18
)";

}  // namespace

TEST_CASE("topology.conf: Slurm's block example") {
    const slurm_topology topo = parse_ok(slurm_example);
    CHECK(topo.type == slurm_topology::kind::block);
    REQUIRE(topo.blocks.size() == 2);
    CHECK(topo.blocks[0].name == "b1");
    CHECK(topo.blocks[0].nodes == range("node", 1, 4, 1));
    CHECK(topo.blocks[0].line == 2);
    CHECK(topo.blocks[1].nodes == range("node", 5, 8, 1));
    CHECK(topo.block_sizes == std::vector<std::uint32_t>{4, 8});
    CHECK(effective_block_sizes(topo) == std::vector<std::uint32_t>{4, 8});
    CHECK(write_topology_conf(topo) ==
          "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n");
    const names cluster = range("node", 1, 10, 1);
    CHECK(nodes_outside_blocks(topo, cluster) == names{"node9", "node10"});
}

TEST_CASE("topology.conf: four NVL72 racks") {
    const slurm_topology topo = parse_ok(nvl72_racks);
    REQUIRE(topo.blocks.size() == 4);
    CHECK(topo.blocks[3].nodes == range("n", 55, 72, 2));
    CHECK(topo.block_sizes == std::vector<std::uint32_t>{18});
    CHECK(effective_block_sizes(topo) == std::vector<std::uint32_t>{18});
    CHECK(nodes_outside_blocks(topo, range("n", 1, 72, 2)).empty());
    CHECK(parse_ok(write_topology_conf(topo)) == topo);
}

TEST_CASE("topology.conf: default block sizes follow Slurm") {
    // No BlockSizes: base = node count of the first non-empty block, levels of
    // 1, 2, 4, 8, 16 base blocks cut after the first that spans all blocks.
    slurm_topology topo = parse_ok("BlockName=e\nBlockName=a Nodes=n[1-18]\nBlockName=b Nodes=n[19-30]\n");
    CHECK(base_block_size(topo) == 18);
    CHECK(effective_block_sizes(topo) == std::vector<std::uint32_t>{18, 36, 72});
    for (int i = 0; i < 40; ++i) topo.blocks.push_back({"x" + std::to_string(i), {}, 0});
    CHECK(effective_block_sizes(topo) == std::vector<std::uint32_t>{18, 36, 72, 144, 288});
}

TEST_CASE("topology.conf: the tree example") {
    const slurm_topology topo = parse_ok(
        "SwitchName=s0 Nodes=dev[0-5] LinkSpeed=100\nSwitchName=s1 Nodes=dev[6-11]\n"
        "SwitchName=s2 Nodes=dev[12-17]\nSwitchName=s3 Switches=s[0-2]\n");
    CHECK(topo.type == slurm_topology::kind::tree);
    REQUIRE(topo.switches.size() == 4);
    CHECK(topo.switches[0].link_speed == 100u);
    CHECK(topo.switches[3].children == names{"s0", "s1", "s2"});
    CHECK(parse_ok(write_topology_conf(topo)) == topo);
}

TEST_CASE("topology.conf: syntax details") {
    const slurm_topology topo = parse_ok(
        "  blockname=b1   NODES=n[1-2] # trailing comment\n"
        "\n"
        "# a comment line\n"
        "BlockName=b2 \\\n"
        "    Nodes=\"n[3-4]\"\r\n"
        "blocksizes=2,4\n");
    REQUIRE(topo.blocks.size() == 2);
    CHECK(topo.blocks[1].name == "b2");
    CHECK(topo.blocks[1].nodes == names{"n3", "n4"});
    CHECK(topo.blocks[1].line == 4);
    CHECK(parse_ok("") == slurm_topology{});
    // As parse_config.c reads them: blanks around '=', and a continuation
    // whose backslash a comment follows (comments go first).
    const slurm_topology spaced = parse_ok(
        "BlockName = b1 Nodes= n[1-2]\n"
        "BlockName\t=\tb2 \\ # rack 2, continued\n"
        "  Nodes =n[3-4]   # and a comment\n"
        "BlockSizes = 2,4\n");
    REQUIRE(spaced.blocks.size() == 2);
    CHECK(spaced.blocks[0].nodes == names{"n1", "n2"});
    CHECK(spaced.blocks[1].name == "b2");
    CHECK(spaced.blocks[1].nodes == names{"n3", "n4"});
    CHECK(spaced.block_sizes == std::vector<std::uint32_t>{2, 4});
    expect_error("BlockSizes=2, 4\n", 1, 15, "expected Key=Value, found '4'");  // a value ends at a blank
    // A byte order mark (Notepad) is not part of the first key.
    CHECK(parse_ok("\xEF\xBB\xBF" "BlockName=b1 Nodes=n[1-2]\n") == parse_ok("BlockName=b1 Nodes=n[1-2]\n"));
    expect_error("\xEF\xBB\xBF" "Frobnicate=1\n", 1, 1, "unknown key 'Frobnicate'");
    CHECK(parse_ok("# nothing\n\n").type == slurm_topology::kind::flat);
}

TEST_CASE("topology.conf: errors carry line and column") {
    expect_error("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodse=n[5-8]\n", 2, 14, "unknown key 'Nodse'");
    expect_error("Frobnicate=1\n", 1, 1, "unknown key 'Frobnicate'");
    expect_error("BlockName=b1 Nodes=n[1-4\n", 1, 21, "never closed");
    expect_error("BlockName=b1 Nodes=n[1-4]\nSwitchName=s1 Nodes=n[5-8]\n", 2, 1, "mixes tree lines");
    expect_error("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,6\n", 2, 12, "not 4 (the base size) times a power of two");
    expect_error("BlockName=b1 Nodes=n[1-4]\nBlockSizes=8,4\n", 2, 12, "not 8 (the base size) times a power of two");
    // Order and repeats are free, as in Slurm's parser; the reported sizes
    // come out ascending, once each.
    const slurm_topology unordered = parse_ok("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,16,8,8\n");
    CHECK(unordered.block_sizes == std::vector<std::uint32_t>{4, 16, 8, 8});
    CHECK(effective_block_sizes(unordered) == std::vector<std::uint32_t>{4, 8});
    expect_error("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,x\n", 2, 14, "not a number");
    expect_error("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4\nBlockSizes=4\n", 3, 1, "given twice");
    expect_error("BlockName=b1 Nodes\n", 1, 14, "expected Key=Value");
    expect_error("BlockName=b1 Nodes=\n", 1, 14, "'Nodes=' needs a value");  // Slurm: a parse error
    CHECK(parse_ok("BlockName=e Nodes=\"\"\nBlockName=b1 Nodes=n1\n").blocks[0].nodes.empty());  // quoted, it may be empty
    expect_error("BlockName=b1 Nodes=n1 nodes=n2\n", 1, 23, "given twice");
    expect_error("Nodes=n1\n", 1, 1, "must follow");
    expect_error("SwitchName=s1 LinkSpeed=fast\n", 1, 25, "not a number");
    expect_error("BlockName=b1 Nodes=\"n1\n", 1, 20, "unterminated");
    // "\#" is a literal '#', which no name may contain.
    auto escaped = parse_topology_conf("BlockName=b\\#2 Nodes=n1\n");
    REQUIRE_FALSE(escaped);
    CHECK(escaped.error().to_string() ==
          "line 1: block name 'b#2' contains a blank, a control or non-ASCII byte, or one of # = , [ ] \" ' \\");
    // "\\" is a backslash, which no name may contain either; "\x" is x.
    CHECK(parse_ok("BlockName=\\b1 Nodes=n1\n").blocks[0].name == "b1");
}

TEST_CASE("topology.conf: Slurm's validation rules") {
    auto message = [](std::string_view text) {
        auto result = parse_topology_conf(text);
        REQUIRE_FALSE(result.has_value());
        return result.error().to_string();
    };
    CHECK(message("BlockName=b1 Nodes=n[1-4]\nBlockName=b1 Nodes=n[5-8]\n") ==
          "line 2: block 'b1' is defined twice (first at line 1)");
    CHECK(message("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-8]\n") ==
          "line 2: node 'n4' is in block 'b1' and in block 'b2'");
    CHECK(message("BlockName=b1\nBlockName=b2\n") == "line 1: no block holds nodes and BlockSizes is not set");
    CHECK(message("BlockSizes=4\n") == "line 1: no blocks configured");
    CHECK(message("SwitchName=s1 Switches=s2\n") == "line 1: switch 's1' has unknown child switch 's2'");
    CHECK(message("SwitchName=s1 Switches=s2\nSwitchName=s2 Switches=s3\nSwitchName=s3 Switches=s1\n") ==
          "line 1: switches form a loop: s1 -> s2 -> s3 -> s1");
    CHECK(message("SwitchName=s1 Switches=s1\n") == "line 1: switch 's1' lists itself as a child");
    CHECK(message("SwitchName=s1 Switches=s2 Nodes=n1\nSwitchName=s2\n") ==
          "line 1: switch 's1' has both child switches and nodes");
    CHECK(message("SwitchName=" + std::string(65, 's') + "\n").find("longer than 64") != std::string::npos);
    // Blocks smaller than the base size, or empty, are allowed (Slurm 25.05).
    CHECK(parse_topology_conf("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-6]\nBlockName=b3\n"));
    CHECK(parse_topology_conf("BlockName=b1\nBlockSizes=4\n"));
}

TEST_CASE("topology.conf: a node a block's hostlist repeats is one node, as in Slurm's node bitmap") {
    const auto topo = parse_topology_conf("BlockName=b1 Nodes=n[1-4],n4,n2\nBlockName=b2 Nodes=n5,n[5-8]\n");
    REQUIRE(topo);
    REQUIRE(topo->blocks.size() == 2);
    CHECK(topo->blocks[0].nodes == names{"n1", "n2", "n3", "n4"});
    CHECK(topo->blocks[1].nodes == names{"n5", "n6", "n7", "n8"});
    CHECK(validate_topology(*topo));
    CHECK(write_topology_conf(*topo) == "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n");
    // Built in code, the description itself must hold each node once.
    slurm_topology built = *topo;
    built.blocks[0].nodes.push_back("n3");
    const auto wrong = validate_topology(built);
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().message == "node 'n3' is listed twice in block 'b1'");
    // Across blocks a repeat stays an error: one node, one base block.
    CHECK_FALSE(parse_topology_conf("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-8],n4\n"));
}

TEST_CASE("topology.conf: random round trips") {
    std::mt19937_64 rng(42);
    for (int trial = 0; trial < 100; ++trial) {
        slurm_topology topo;
        topo.type = slurm_topology::kind::block;
        const std::uint64_t blocks = 1 + draw(rng, 8);
        const std::uint64_t base = 1 + draw(rng, 18);
        int next = static_cast<int>(draw(rng, 5));
        for (std::uint64_t b = 0; b < blocks; ++b) {
            slurm_block block{"b" + std::to_string(b + 1), {}, 0};
            const std::uint64_t size = draw(rng, base + 1);
            names nodes = range("gb", next, next + static_cast<int>(size) - 1, 3);
            next += static_cast<int>(size + draw(rng, 3));
            block.nodes = sort_hostnames(nodes);
            topo.blocks.push_back(std::move(block));
        }
        topo.block_sizes.push_back(static_cast<std::uint32_t>(base));
        for (std::uint64_t k = 0, levels = draw(rng, 4); k < levels; ++k)
            topo.block_sizes.push_back(topo.block_sizes.back() * 2);
        if (!validate_topology(topo)) continue;
        const std::string text = write_topology_conf(topo);
        CAPTURE(text);
        CHECK(parse_ok(text) == topo);
    }
}

TEST_CASE("fuzz: mutated topology.conf files never crash") {
    std::mt19937_64 rng(99);
    const std::string seeds[] = {slurm_example, nvl72_racks,
                                 "SwitchName=s0 Nodes=dev[0-5]\nSwitchName=s3 Switches=s[0-2] LinkSpeed=9\n"};
    const std::string alphabet = "[]-,=#\\\"\n \t0123456789abBlockNameSwitchesNodes";
    for (int trial = 0; trial < 2000; ++trial) {
        std::string text = seeds[draw(rng, 3)];
        for (std::uint64_t e = 0, edits = 1 + draw(rng, 6); e < edits; ++e) {
            const std::size_t at = draw(rng, text.size() + 1);
            switch (draw(rng, 3)) {
                case 0: if (at < text.size()) text.erase(at, 1); break;
                case 1: text.insert(at, 1, alphabet[draw(rng, alphabet.size())]); break;
                default: if (at < text.size()) text[at] = alphabet[draw(rng, alphabet.size())]; break;
            }
        }
        auto result = parse_topology_conf(text);
        if (result) {
            CHECK(validate_topology(*result));
        } else {
            CHECK(result.error().line >= 1);
        }
    }
}

// topology.conf lines of a chain of switches s1 -> s2 -> ... -> s<count>, the
// last holding a node, or (loop) listing s1 as its child.
static std::string switch_chain(std::size_t count, bool loop) {
    std::string text;
    for (std::size_t i = 1; i < count; ++i)
        text += "SwitchName=s" + std::to_string(i) + " Switches=s" + std::to_string(i + 1) + "\n";
    text += "SwitchName=s" + std::to_string(count) + (loop ? " Switches=s1\n" : " Nodes=n1\n");
    return text;
}

TEST_CASE("topology.conf: a chain of 60,000 switches is walked without recursion") {
    // The review's file: the loop check recursed once per switch (SIGSEGV).
    const auto chain = parse_ok(switch_chain(60'000, false));
    CHECK(chain.switches.size() == 60'000);
    CHECK(chain.switches.back().nodes == names{"n1"});
    auto loop = parse_topology_conf(switch_chain(60'000, true));
    REQUIRE_FALSE(loop);
    // The loop is named by its ends and its length, not by 60,000 names.
    CHECK(loop.error().to_string() == "line 1: switches form a loop: s1 -> s2 -> s3 -> s4 -> ... -> s59998 -> "
                                      "s59999 -> s60000 -> s1 (60000 switches)");
    // Nine switches are short enough to name them all.
    auto nine = parse_topology_conf(switch_chain(9, true));
    REQUIRE_FALSE(nine);
    CHECK(nine.error().message == "switches form a loop: s1 -> s2 -> s3 -> s4 -> s5 -> s6 -> s7 -> s8 -> s9 -> s1");
    // A loop below a tree that has none: the line of the loop's first switch.
    auto lower = parse_topology_conf("SwitchName=top Switches=a\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n");
    REQUIRE_FALSE(lower);
    CHECK(lower.error().to_string() == "line 2: switches form a loop: a -> b -> a");
}

TEST_CASE("topology.conf: errors quote a few dozen bytes of the input, escaped") {
    const std::string long_name(100'000, 'b');
    auto result = parse_topology_conf("BlockName=" + long_name + "# Nodes=n1\nBlockName=" + long_name + "\n");
    REQUIRE_FALSE(result);
    CHECK(result.error().message.size() < 100);
    CHECK(result.error().message.find("'" + std::string(32, 'b') + "...'") != std::string::npos);
    expect_error("Frob\x1b[31m=1\n", 1, 1, "unknown key 'Frob\\x1b[31m'");
    expect_error("SwitchName=s1 LinkSpeed=" + std::string(1000, '9') + "\n", 1, 25,
                 "LinkSpeed: '" + std::string(32, '9') + "...' is too large");
    // Names that would not read back from a hostlist: a control byte, say.
    auto control = parse_topology_conf("BlockName=b1 Nodes=n\x01\n");
    REQUIRE_FALSE(control);
    CHECK(control.error().to_string() ==
          "line 1: block 'b1': node name 'n\\x01' contains a blank, a control or non-ASCII byte, or one of "
          "# = , [ ] \" ' \\");
    auto high = parse_topology_conf("SwitchName=s\xc3\xa9 Nodes=n1\n");
    REQUIRE_FALSE(high);
    CHECK(high.error().message.find("switch name 's\\xc3\\xa9'") != std::string::npos);
}

TEST_CASE("topology.conf: the hostlists of one file count against one limit") {
    // Each line is within the per-hostlist cap; together they are not, and
    // the line that passes it is named.
    const std::string text = "BlockName=b1 Nodes=a[0-599999]\nBlockName=b2 Nodes=c[0-9]\nBlockName=b3 Nodes=b[0-599999]\n";
    expect_error(text, 3, 20, "more than 1000000 names in all");
    // A caller's limits apply to the file, names and bytes.
    const std::string small = "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n";
    CHECK(parse_topology_conf(small, {8, 1000}).has_value());
    auto names_over = parse_topology_conf(small, {7, 1000});
    REQUIRE_FALSE(names_over.has_value());
    CHECK(names_over.error().line == 2);
    CHECK(names_over.error().message == "hostlist expands to more than 7 names in all, with the hostlists before it");
    auto bytes_over = parse_topology_conf(small, {8, 15});
    REQUIRE_FALSE(bytes_over.has_value());
    CHECK(bytes_over.error().line == 2);
    CHECK(bytes_over.error().message.find("more than 15 bytes of names in all") != std::string::npos);
}

}  // namespace test_io_topology_conf
