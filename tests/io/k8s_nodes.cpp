#include <topoblock/io/k8s_nodes.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace test_io_k8s_nodes {

using namespace topoblock;
using names = std::vector<std::string>;

namespace {

io::k8s_cluster read_ok(std::string_view text, std::uint32_t gpus = 4) {
    auto read = io::read_k8s_nodes(text, gpus);
    REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
    return std::move(*read);
}

void expect_error(std::string_view text, std::uint32_t line, std::string_view fragment) {
    auto read = io::read_k8s_nodes(text);
    REQUIRE_FALSE(read.has_value());
    CAPTURE(read.error().to_string());
    CHECK(read.error().line == line);
    CHECK(read.error().message.find(fragment) != std::string::npos);
}

names domain_names(const topology& t) {
    names out;
    for (const auto& d : t.domains()) out.push_back(d.name);
    return out;
}

names node_names(const topology& t, domain_id d) {
    names out;
    for (node_id n = t.domain(d).first_node; n < t.domain(d).end_node(); ++n) out.push_back(t.node(n).name);
    return out;
}

const std::string header = "NAME     STATUS                     ROLES           AGE   VERSION   LABELS\n";

std::string row(std::string_view name, std::string_view status, std::string_view labels) {
    return std::string(name) + "   " + std::string(status) + "   <none>   9d   v1.31.2   " + std::string(labels) + "\n";
}

}  // namespace

TEST_CASE("k8s nodes: cliques are NVLink domains, in the order of their first node") {
    const std::string text =
        header +
        row("cpu-01", "Ready", "kubernetes.io/arch=amd64,kubernetes.io/hostname=cpu-01") +
        row("gb-01", "Ready", "kubernetes.io/arch=arm64,nvidia.com/gpu.clique=8a1f-c3.1,nvidia.com/gpu.count=4") +
        row("gb-02", "Ready,SchedulingDisabled", "nvidia.com/gpu.clique=8a1f-c3.1,nvidia.com/gpu.count=4") +
        row("gb-19", "NotReady", "nvidia.com/gpu.count=4,nvidia.com/gpu.clique=77d0-e1.1") +
        row("gb-03", "Ready", "nvidia.com/gpu.clique=8a1f-c3.1,nvidia.com/gpu.count=4") +
        row("hgx-01", "Ready", "nvidia.com/gpu.count=8,nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3") +
        row("gpu-off", "Ready", "nvidia.com/gpu.count=0");
    const auto c = read_ok(text);
    // cpu-01 (no GPU label) and gpu-off (0 GPUs) are no GPU nodes.
    CHECK(domain_names(c.topo) == names{"8a1f-c3.1", "77d0-e1.1", "hgx-01"});
    CHECK(node_names(c.topo, 0) == names{"gb-01", "gb-02", "gb-03"});
    CHECK(c.topo.domain(0).gpus_per_node == 4);
    CHECK(c.topo.domain(2).gpus_per_node == 8);  // NVLink inside the node only
    REQUIRE(c.health.size() == 5);
    CHECK(c.health == std::vector<node_health>{node_health::up, node_health::drain, node_health::up, node_health::down,
                                               node_health::up});
    CHECK(c.topo.levels().empty());
}

TEST_CASE("k8s nodes: Topograph's accelerator label and switch levels") {
    const std::string text =
        header +
        row("a1", "Ready", "network.topology.nvidia.com/accelerator=dom-a,network.topology.nvidia.com/leaf=leaf-1,"
                           "network.topology.nvidia.com/spine=spine-1,nvidia.com/gpu.count=4") +
        row("a2", "Ready", "network.topology.nvidia.com/accelerator=dom-a,network.topology.nvidia.com/leaf=leaf-9") +
        row("b1", "Ready", "network.topology.nvidia.com/accelerator=dom-b,network.topology.nvidia.com/leaf=leaf-1,"
                           "network.topology.nvidia.com/spine=spine-1") +
        row("c1", "Ready", "network.topology.nvidia.com/accelerator=dom-c,network.topology.nvidia.com/spine=spine-1");
    // No count on a node with an NVLink label: the default GPUs per node.
    const auto c = read_ok(text, 4);
    CHECK(domain_names(c.topo) == names{"dom-a", "dom-b", "dom-c"});
    REQUIRE(c.topo.levels().size() == 2);
    // Leaf: the first node's (a1: leaf-1, not a2's leaf-9); dom-c has none,
    // so it is a group of its own.
    CHECK(c.topo.levels()[0].group_of_domain == std::vector<group_id>{0, 0, 1});
    CHECK(c.topo.levels()[1].group_of_domain == std::vector<group_id>{0, 0, 0});
    // The clique label wins over the accelerator label whatever the order.
    const auto both = read_ok(header + row("n1", "Ready", "network.topology.nvidia.com/accelerator=x,nvidia.com/gpu.clique=y") +
                              row("n2", "Ready", "nvidia.com/gpu.clique=y,network.topology.nvidia.com/accelerator=z"));
    CHECK(domain_names(both.topo) == names{"y"});
}

TEST_CASE("k8s nodes: a lone node named like a clique keeps both apart") {
    const auto c = read_ok(header + row("n1", "Ready", "nvidia.com/gpu.clique=n9,nvidia.com/gpu.count=4") +
                           row("n9", "Ready", "nvidia.com/gpu.count=8"));
    CHECK(domain_names(c.topo) == names{"n9", "node:n9"});
}

TEST_CASE("k8s nodes: errors name the line") {
    expect_error("", 0, "no header line");
    expect_error("gb-01 Ready nvidia.com/gpu.count=4\n", 1, "expected the header");
    expect_error(header + "gb-01 Ready <none> 9d\n", 2, "expected 6 columns");
    expect_error(header + row("gb-01", "Ready", "nvidia.com/gpu.count=four"), 2, "'four' is not a GPU count");
    expect_error(header + row("gb-01", "Ready", "nvidia.com/gpu.count=4,,x=y"), 2, "empty label key");
    expect_error(header + row("gb-01", "Ready", "x=1"), 0, "no GPU node");
    expect_error(header + row("gb-01", "Ready", "nvidia.com/gpu.clique=c,nvidia.com/gpu.count=4") +
                     row("gb-02", "Ready", "nvidia.com/gpu.clique=c,nvidia.com/gpu.count=8"),
                 0, "node 'gb-02' has 8 GPUs, node 'gb-01' 4");
    expect_error(header + row("gb-01", "Ready", "nvidia.com/gpu.count=4") + row("gb-01", "Ready", "nvidia.com/gpu.count=4"), 0,
                 "duplicate");
    // Columns are found from the header, whatever its order; CRLF and a
    // byte order mark are fine.
    const auto c = read_ok("\xEF\xBB\xBF" "STATUS NAME LABELS\r\nReady gb-01 nvidia.com/gpu.count=4\r\n");
    CHECK(domain_names(c.topo) == names{"gb-01"});
}

TEST_CASE("fuzz: mutated kubectl listings never crash") {
    const std::string base = header + row("gb-01", "Ready", "nvidia.com/gpu.clique=8a1f-c3.1,nvidia.com/gpu.count=4") +
                             row("gb-02", "NotReady", "nvidia.com/gpu.clique=8a1f-c3.1,nvidia.com/gpu.count=4,"
                                                      "network.topology.nvidia.com/leaf=l1");
    std::uint64_t state = 12345;
    const auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
    const std::string alphabet = " ,=\n\r.<>/0123456789abcNAMESTULB\t";
    for (int round = 0; round < 3000; ++round) {
        std::string text = base;
        for (int edits = 1 + static_cast<int>(next() % 4); edits > 0; --edits) {
            const std::size_t at = static_cast<std::size_t>(next() % (text.size() + 1));
            switch (next() % 3) {
                case 0: text.insert(at, 1, alphabet[next() % alphabet.size()]); break;
                case 1: if (at < text.size()) text.erase(at, 1); break;
                default: if (at < text.size()) text[at] = alphabet[next() % alphabet.size()]; break;
            }
        }
        const auto read = io::read_k8s_nodes(text);
        if (read) CHECK(read->health.size() == read->topo.node_count());
    }
}

TEST_CASE("k8s nodes: node names must be DNS subdomain names, so hostlists of them read back") {
    const std::string gpu = "nvidia.com/gpu.count=4";
    // The review's names: printed in a hostlist, "a,b" read back as nodes a
    // and b, "c[1-2]" as c1 and c2.
    const auto check = [&](std::string_view name, std::uint32_t column, std::string_view fragment) {
        auto read = io::read_k8s_nodes(header + row("gb-01", "Ready", gpu) + row(name, "Ready", gpu));
        REQUIRE_FALSE(read.has_value());
        CAPTURE(read.error().to_string());
        CHECK(read.error().line == 3);
        CHECK(read.error().column == column);
        CHECK(read.error().message.find(fragment) != std::string::npos);
    };
    const std::string not_k8s = "is not a Kubernetes node name";
    check("a,b", 2, "node name 'a,b' " + not_k8s);
    check("c[1-2]", 2, "node name 'c[1-2]' " + not_k8s);
    check("Gb-01", 1, not_k8s);
    check("-gb", 1, not_k8s);
    check("gb-", 3, not_k8s);
    check("gb..01", 4, not_k8s);
    check("gb.-01", 4, not_k8s);
    check("gb-.01", 4, not_k8s);
    check("gb.", 3, not_k8s);
    check("g\x1b[2Jb", 2, "node name 'g\\x1b[2Jb' " + not_k8s);
    check("g\xc3\xa9", 2, "node name 'g\\xc3\\xa9' " + not_k8s);
    check(std::string(254, 'a'), 254, "node name '" + std::string(32, 'a') + "...' is longer than 253 characters");
    // A huge name: the message stays short.
    auto huge = io::read_k8s_nodes(header + row(std::string(1'000'000, 'x') + "_", "Ready", gpu));
    REQUIRE_FALSE(huge.has_value());
    CHECK(huge.error().message.size() < 200);
    // Valid: dots, repeated dashes, digits first, 253 characters.
    for (const std::string& name : names{"gb-01.rack-2.example.com", "a--b", "0gb", "a", std::string(253, 'z')}) {
        CAPTURE(name);
        const auto c = read_ok(header + row(name, "Ready", gpu));
        CHECK(c.topo.node(0).name == name);
        CHECK(io::expand_hostlist(io::compress_hostlist(names{name})).value() == names{name});
    }
}

TEST_CASE("k8s nodes: the label values that name domains and groups must be Kubernetes label values") {
    const auto error_of = [](std::string_view labels) {
        auto read = io::read_k8s_nodes(header + row("gb-01", "Ready", labels));
        REQUIRE_FALSE(read.has_value());
        CHECK(read.error().line == 2);
        return read.error();
    };
    const std::string clique = "nvidia.com/gpu.count=4,nvidia.com/gpu.clique=";
    // Column of the first bad character: LABELS starts at column 41.
    const std::size_t value_at = 41 + clique.size();
    auto e = error_of(clique + "a\x1b[2Jb");
    CHECK(e.column == value_at + 1);
    CHECK(e.message == "node 'gb-01': nvidia.com/gpu.clique value 'a\\x1b[2Jb' is not a Kubernetes label value (at "
                       "most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit)");
    CHECK(error_of(clique + "-a").column == value_at);
    CHECK(error_of(clique + std::string(64, 'a')).column == value_at + 63);
    CHECK(error_of("network.topology.nvidia.com/leaf=l!1,nvidia.com/gpu.count=4").message.find("not a Kubernetes "
                                                                                                "label value") !=
          std::string::npos);
    // A huge value is quoted short.
    CHECK(error_of(clique + std::string(1'000'000, 'x') + "!").message.size() < 300);
    // Valid values, and labels read for nothing, are accepted as they are.
    const auto c = read_ok(header + row("gb-01", "Ready", clique + "8a1f-C3_x.1,other=a!b"));
    CHECK(domain_names(c.topo) == names{"8a1f-C3_x.1"});
}

}  // namespace test_io_k8s_nodes
