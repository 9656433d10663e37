// `topoblock place` end to end: options, a topology file, events in, the
// decisions and errors out.

#include "../../examples/topoblock/place_command.hpp"
#include "../scratch_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct outcome {
    int status;
    std::string out;
    std::string err;
};

outcome run(std::vector<std::string_view> args, const std::string& events) {
    std::istringstream in(events);
    std::ostringstream out, err;
    const int status = topoblock::cli::run_place(args, in, out, err);
    return {status, out.str(), err.str()};
}

using topoblock::test::scratch_file;

// Written by the test cases that read it, not when the process starts.
const std::string& eight_nodes() {
    static const scratch_file file("eight.conf", "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n");
    static const std::string path = file.string();
    return path;
}

}  // namespace

TEST_CASE("place: Slurm's examples from a topology.conf") {
    const auto r = run({"--topology", eight_nodes()},
                       "# 2, 3, 3 nodes\n"
                       "alloc j1 nodes=2\nalloc j2 nodes=3\nalloc j3 nodes=3\n"
                       "release j1\nrelease j2\n"
                       "alloc j4 nodes=3\nalloc j5 nodes=5\n"
                       "release j4\nrelease j5\n"
                       "alloc j6 nodes=4 segment=2\n"
                       "alloc j7 nodes=5 segment=2\n");
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "j1 node[5-6]\nj2 node[1-3]\nj3 PENDING fragmented\n"
          "j4 node[5-7]\nj5 node[1-4,8]\n"
          "j6 node[5-8]\nj7 PENDING invalid_request\n");
}

TEST_CASE("place: a kubectl node listing, cordoned and NotReady nodes kept out") {
    const scratch_file nodes("nodes.txt",
                             "NAME    STATUS                     ROLES    AGE   VERSION   LABELS\n"
                             "gb-01   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
                             "gb-02   Ready,SchedulingDisabled   <none>   9d    v1.31.2   nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
                             "gb-03   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4\n"
                             "gb-04   NotReady                   <none>   9d    v1.31.2   nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4\n"
                             "gb-05   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4\n"
                             "cpu-01  Ready                      <none>   9d    v1.31.2   kubernetes.io/os=linux\n");
    const auto r = run({"--topology", nodes.string(), "--policy", "best-fit"},
                       "alloc j1 nodes=2\nalloc j2 nodes=2\nalloc j3 gpus=4\nup gb-02\nalloc j4 gpus=4\n");
    CHECK(r.err.empty());
    CHECK(r.out == "j1 gb-[03,05]\nj2 PENDING insufficient_free\nj3 gb-01\nj4 gb-02\n");  // one usable node left
    CHECK(r.status == 0);
    // A bad label names the file and line.
    const scratch_file bad("bad_nodes.txt", "NAME STATUS LABELS\ngb-01 Ready nvidia.com/gpu.count=x\n");
    const auto e = run({"--topology", bad.string()}, "");
    CHECK(e.status == 2);
    CHECK(e.err.find(bad.string() + ", line 2, column 34: node 'gb-01': nvidia.com/gpu.count 'x' is not a GPU count") !=
          std::string::npos);
}

TEST_CASE("place: four racks from a topology.yaml, detected by content") {
    const scratch_file yaml("racks.txt",
                                        "- topology: racks\n"
                                        "  cluster_default: true\n"
                                        "  block:\n"
                                        "    block_sizes: [18]\n"
                                        "    blocks:\n"
                                        "      - block: r1\n        nodes: n[01-18]\n"
                                        "      - block: r2\n        nodes: n[19-36]\n"
                                        "      - block: r3\n        nodes: n[37-54]\n"
                                        "      - block: r4\n        nodes: n[55-72]\n");
    const std::string option = "--topology=" + yaml.string();
    const auto r = run({option},
                       "alloc a nodes=4\nalloc b nodes=8\nalloc c nodes=18\nalloc d nodes=6\nalloc e nodes=12\n");
    CHECK(r.status == 0);
    CHECK(r.out == "a n[55-58]\nb n[59-66]\nc n[37-54]\nd n[67-72]\ne n[19-30]\n");
}

TEST_CASE("place: holds, health events and GPU-level jobs") {
    const auto r = run({"--topology", eight_nodes(), "--gpus-per-node", "8"},
                       "hold running node[6-8]\n"
                       "alloc g1 gpus=3\n"  // b2 has one free node, the tighter block
                       "alloc g2 gpus=12\n"  // two whole-node's worth: 8 + 4 GPUs
                       "down node1\n"
                       "alloc n1 nodes=2 exclusive=topo\n"
                       "up node1\n"
                       "release running\n"
                       "drain node[5-6]\n"
                       "alloc n2 nodes=2\n");
    CHECK(r.err == "");
    CHECK(r.out ==
          "g1 node5 node5:0-2\n"
          "g2 node[1-2] node2:0-3\n"
          "n1 PENDING fragmented\n"
          "n2 node[7-8]\n");
}

TEST_CASE("place: other policies and presets") {
    const auto r = run({"--topology", "nvl72:2", "--policy", "best-fit"}, "alloc a gpus=2\nalloc b nodes=18\n");
    CHECK(r.status == 0);
    CHECK(r.out == "a gb01 gb01:0-1\nb gb[19-36]\n");
    const auto s = run({"--topology", "nvl72:2"}, "alloc a nodes=1\n");
    CHECK(s.out == "a gb19\n");  // slurm-block on a preset: each rack a base block
}

TEST_CASE("place: a malformed line is reported with its line number and changes nothing") {
    const auto r = run({"--topology", eight_nodes()},
                       "alloc a nodes=2\n"
                       "alloc a nodes=1\n"
                       "alloc b nodes=two\n"
                       "alloc c\n"
                       "alloc d nodes=1 colour=red\n"
                       "hold e node[7-9]\n"
                       "hold e node5\n"
                       "release zz\n"
                       "reboot node1\n"
                       "down node[3-\n"
                       "   # only a comment\n"
                       "alloc f nodes=2\n"
                       "alloc g nodes\n");
    CHECK(r.status == 1);
    CHECK(r.out == "a node[5-6]\nf node[7-8]\n");
    CHECK(r.err ==
          "topoblock place: line 2, column 7: allocation 'a' is already running\n"
          "topoblock place: line 3, column 15: expected a positive number, got 'two'\n"
          "topoblock place: line 4, column 8: the request needs nodes=N or gpus=N\n"
          "topoblock place: line 5, column 17: unknown request word 'colour=red' (expected nodes=, gpus=, segment=, "
          "spread-segments, exclusive=topo, whole-nodes, locality=)\n"
          "topoblock place: line 6, column 8: unknown node 'node9'\n"
          "topoblock place: line 7, column 8: node 'node5' is not free\n"
          "topoblock place: line 8, column 9: no running allocation 'zz'\n"
          "topoblock place: line 9, column 1: unknown event 'reboot' (expected alloc, hold, release, down, drain, up or save)\n"
          "topoblock place: line 10, column 10: unbalanced bracket: '[' is never closed\n"
          "topoblock place: line 13, column 9: 'nodes' needs a value: nodes=...\n");
}

TEST_CASE("place: command-line errors") {
    CHECK(run({}, "").status == 2);
    CHECK(run({"--topology", "nvl72:1", "--policy", "random"}, "").err.find("unknown policy 'random'") !=
          std::string::npos);
    CHECK(run({"--topology", "/no/such/file"}, "").status == 2);
    // A directory opens as a stream but throws when read: named, not thrown.
    const std::string directory = std::filesystem::temp_directory_path().string();
    const auto not_a_file = run({"--topology", directory}, "alloc j nodes=1\n");
    CHECK(not_a_file.status == 2);
    CHECK(not_a_file.err.find("'" + directory + "' is not a regular file") != std::string::npos);
    CHECK(not_a_file.out.empty());
    for (const std::string_view bad : {"0", "65", "-1", "nan", "inf", "4x", "4294967296", ""}) {
        CAPTURE(bad);
        const auto r = run({"--topology", eight_nodes(), "--gpus-per-node", bad}, "");
        CHECK(r.status == 2);
        CHECK(r.err.starts_with("topoblock place: --gpus-per-node takes a whole number from 1 to 64, got '" +
                                std::string(bad) + "'"));
    }
    CHECK(run({"--topology", eight_nodes(), "--gpus-per-node=64"}, "").status == 0);
    const auto help = run({"--help"}, "");
    CHECK(help.status == 0);
    CHECK(help.out.find("alloc ID nodes=N") != std::string::npos);
    const scratch_file tree("tree.conf", "SwitchName=s1 Nodes=n[1-2]\n");
    CHECK(run({"--topology", tree.string()}, "").err.find("needs a block topology") != std::string::npos);
    // Whatever the policy: the file is what is wrong, not slurm-block.
    const auto best_fit = run({"--topology", tree.string(), "--policy", "best-fit"}, "");
    CHECK(best_fit.err.find("slurm-block") == std::string::npos);
    CHECK(run({"--topology", eight_nodes(), "extra"}, "").err.find("unexpected argument 'extra'") != std::string::npos);
}

TEST_CASE("place: echoed words are cut to a few dozen bytes and escaped") {
    // The review's 100 MB word made a 100 MB message; 10 MB shows the same.
    const std::string huge(10'000'000, 'x');
    const std::string cut = "'" + std::string(topoblock::detail::quoted_bytes, 'x') + "...'";
    const auto r = run({"--topology", eight_nodes()},
                       huge + "\n"
                       "alloc a nodes=1 " + huge + "\n"
                       "release " + huge + "\n"
                       "alloc b nodes=1\x1b[2J\n"
                       "down node\x07[1-2]\n"
                       "down node[1-" + huge + "]\n"
                       "hold c node1 \x1b]0;pwned\x07\n");
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err.size() < 1'000);
    CHECK(r.err ==
          "topoblock place: line 1, column 1: unknown event " + cut +
              " (expected alloc, hold, release, down, drain, up or save)\n"
              "topoblock place: line 2, column 17: unknown request word " + cut +
              " (expected nodes=, gpus=, segment=, spread-segments, exclusive=topo, whole-nodes, locality=)\n"
              "topoblock place: line 3, column 9: no running allocation " + cut + "\n"
              "topoblock place: line 4, column 15: expected a positive number, got '1\\x1b[2J'\n"
              "topoblock place: line 5, column 6: unknown node 'node\\x071'\n"
              "topoblock place: line 6, column 13: range '1-" + std::string(30, 'x') + "...' is not numeric\n"
              "topoblock place: line 7, column 14: unexpected '\\x1b]0;pwned\\x07'\n");
    // The command line too.
    const auto option = run({"--topology", eight_nodes(), "--frob\x1b[2J" + huge, "v"}, "");
    CHECK(option.status == 2);
    CAPTURE(option.err.substr(0, 200));
    CHECK(option.err.starts_with("topoblock place: unknown option '--frob\\x1b[2Jxxxx"));
    CHECK(option.err.find('\x1b') == std::string::npos);
    CHECK(option.err.size() < 2'000);
    const auto policy = run({"--topology", "nvl72:1", "--policy", "\x1b[31mred"}, "");
    CHECK(policy.err.find("unknown policy '\\x1b[31mred'") != std::string::npos);
    const auto spec = run({"--topology", "nvl72:" + huge}, "");
    CHECK(spec.status == 2);
    CHECK(spec.err.size() < 1'000);
}

namespace {

// The lines of a stream, each ending in '\n'.
std::vector<std::string> lines_of(const std::string& events) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at < events.size();) {
        const std::size_t end = events.find('\n', at) + 1;
        out.push_back(events.substr(at, end - at));
        at = end;
    }
    return out;
}

// The stream run whole, and split before every line: the first part saves
// its state (by --save-state, or by a `save` event when `by_event`), the
// second starts from it; the decisions printed must match byte for byte.
void check_restarts(std::vector<std::string_view> args, const std::string& events, bool by_event) {
    const outcome whole = run(args, events);
    REQUIRE(whole.status == 0);
    REQUIRE(whole.err.empty());
    const auto lines = lines_of(events);
    const scratch_file state("state.snapshot", "");
    const std::string path = state.string();  // the arguments are views
    for (std::size_t cut = 0; cut <= lines.size(); ++cut) {
        CAPTURE(cut);
        std::string first, second;
        for (std::size_t i = 0; i < lines.size(); ++i) (i < cut ? first : second) += lines[i];
        auto save_args = args;
        if (by_event) first += "save " + path + "   # mid-stream\n";
        else save_args.insert(save_args.end(), {"--save-state", path});
        const outcome before = run(save_args, first);
        REQUIRE(before.status == 0);
        CHECK(before.err.empty());
        auto load_args = args;
        load_args.insert(load_args.end(), {"--load-state", path});
        const outcome after = run(load_args, second);
        CHECK(after.status == 0);
        CHECK(after.err.empty());
        CHECK(before.out + after.out == whole.out);
    }
}

const std::string restart_events =
    "alloc j1 nodes=2\n"
    "alloc j2 gpus=3\n"
    "alloc j3 nodes=3\n"
    "hold h1 node8\n"
    "alloc j4 gpus=2\n"
    "drain node4\n"
    "release j2\n"
    "alloc j5 gpus=5\n"
    "down node6\n"
    "alloc j6 nodes=1\n"
    "release j1\n"
    "alloc j12 gpus=2\n"
    "up node6\n"
    "release j3\n"
    "release j12\n"
    "alloc j1 gpus=4\n"
    "up node4\n"
    "alloc j7 nodes=4 segment=2\n"
    "release h1\n"
    "release j4\n"
    "alloc j8 nodes=3\n";

}  // namespace

TEST_CASE("place: a stream split at a saved state answers as the whole stream, at every line") {
    check_restarts({"--topology", eight_nodes()}, restart_events, false);
    check_restarts({"--topology", eight_nodes(), "--policy", "best-fit"}, restart_events, true);
    std::string racks = restart_events;
    for (const char* from : {"node8", "node4", "node6"}) {
        const std::string name = std::string("gb") + (from[4] == '8' ? "17" : from[4] == '4' ? "04" : "40");
        for (std::size_t at = racks.find(from); at != std::string::npos; at = racks.find(from)) racks.replace(at, 5, name);
    }
    check_restarts({"--topology", "nvl72:3", "--policy", "contiguous-block"}, racks, true);
}

TEST_CASE("place: a snapshot for another topology or policy, or none, is refused before any event") {
    const scratch_file state("state.snapshot", "");
    REQUIRE(run({"--topology", eight_nodes(), "--save-state", state.string()}, "alloc j1 nodes=2\n").status == 0);
    const auto other_topology = run({"--topology", "nvl72:1", "--load-state", state.string()}, "release j1\n");
    CHECK(other_topology.status == 2);
    CHECK(other_topology.err.find("another topology") != std::string::npos);
    CHECK(other_topology.err.find(state.string() + ", line 2") != std::string::npos);
    CHECK(other_topology.out.empty());
    const auto other_policy = run({"--topology", eight_nodes(), "--policy", "best-fit", "--load-state", state.string()}, "");
    CHECK(other_policy.status == 2);
    CHECK(other_policy.err.find("saved under policy slurm-block, not best-fit") != std::string::npos);
    CHECK(run({"--topology", eight_nodes(), "--load-state", "/no/such/snapshot"}, "").status == 2);
    const scratch_file damaged("damaged.snapshot", "topoblock-snapshot 1\n");
    const auto cut = run({"--topology", eight_nodes(), "--load-state", damaged.string()}, "");
    CHECK(cut.status == 2);
    CHECK(cut.err.find("truncated") != std::string::npos);
    // The running IDs come back: j1 is released, and a new j1 may start.
    const auto again = run({"--topology", eight_nodes(), "--load-state", state.string()},
                           "alloc j1 nodes=1\nrelease j1\nalloc j1 nodes=1\n");
    CHECK(again.status == 1);
    CHECK(again.err == "topoblock place: line 1, column 7: allocation 'j1' is already running\n");
    CHECK(again.out == "j1 node5\n");
}

TEST_CASE("place: a save event that cannot be written is an error of its line") {
    const auto r = run({"--topology", eight_nodes()}, "alloc j1 nodes=1\nsave\nsave /no/such/dir/state\nsave a b\n");
    CHECK(r.status == 1);
    CHECK(r.out == "j1 node5\n");
    CHECK(r.err ==
          "topoblock place: line 2, column 5: save needs a FILE\n"
          "topoblock place: line 3, column 6: cannot write '/no/such/dir/state.tmp'\n"
          "topoblock place: line 4, column 8: unexpected 'b'\n");
    const auto end = run({"--topology", eight_nodes(), "--save-state", "/no/such/dir/state"}, "alloc j1 nodes=1\n");
    CHECK(end.status == 1);
    CHECK(end.out == "j1 node5\n");
    CHECK(end.err.find("--save-state") != std::string::npos);
}
