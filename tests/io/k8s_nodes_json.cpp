// `kubectl get nodes -o json` (io/k8s_nodes.hpp, read_k8s_nodes_json).

#include <topoblock/io/k8s_nodes.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace test_io_k8s_nodes_json {

using namespace topoblock;
using names = std::vector<std::string>;

namespace {

// One item as kubectl prints it (trimmed of the fields nothing reads).
std::string node(std::string_view name, std::string_view labels, std::string_view capacity_gpus, bool ready = true,
                 bool unschedulable = false) {
    std::string out = "    {\n      \"apiVersion\": \"v1\",\n      \"kind\": \"Node\",\n      \"metadata\": {\n";
    out += "        \"creationTimestamp\": \"2026-11-26T09:14:02Z\",\n";
    out += "        \"labels\": {\n          \"kubernetes.io/arch\": \"arm64\",\n          \"kubernetes.io/hostname\": \"" +
           std::string(name) + "\"" + std::string(labels) + "\n        },\n";
    out += "        \"name\": \"" + std::string(name) + "\",\n        \"resourceVersion\": \"81234\"\n      },\n";
    out += "      \"spec\": {\"podCIDR\": \"10.244.3.0/24\"" + std::string(unschedulable ? ", \"unschedulable\": true" : "") +
           "},\n";
    out += "      \"status\": {\n        \"capacity\": {\"cpu\": \"144\", \"memory\": \"877621516Ki\"";
    if (!capacity_gpus.empty()) out += ", \"nvidia.com/gpu\": \"" + std::string(capacity_gpus) + "\"";
    out += "},\n        \"conditions\": [\n";
    out += "          {\"type\": \"MemoryPressure\", \"status\": \"False\"},\n";
    out += "          {\"type\": \"Ready\", \"status\": \"" + std::string(ready ? "True" : "False") + "\"}\n";
    out += "        ]\n      }\n    }";
    return out;
}

std::string listing(const std::vector<std::string>& items) {
    std::string out = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n";
    for (std::size_t i = 0; i < items.size(); ++i) out += items[i] + (i + 1 < items.size() ? ",\n" : "\n");
    return out + "  ],\n  \"kind\": \"List\",\n  \"metadata\": {\"resourceVersion\": \"\"}\n}\n";
}

std::string clique(std::string_view id) { return ",\n          \"nvidia.com/gpu.clique\": \"" + std::string(id) + "\""; }

io::k8s_cluster read_ok(std::string_view text, std::uint32_t gpus = 4) {
    auto read = io::read_k8s_nodes_json(text, gpus);
    REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
    return std::move(*read);
}

error read_error(std::string_view text) {
    auto read = io::read_k8s_nodes_json(text);
    REQUIRE_FALSE(read.has_value());
    return read.error();
}

names domain_names(const topology& t) {
    names out;
    for (const auto& d : t.domains()) out.push_back(d.name);
    return out;
}

}  // namespace

TEST_CASE("k8s nodes json: cliques are NVLink domains, GPUs from status.capacity") {
    const std::string text = listing({
        node("cpu-01", "", ""),                                 // no GPU: left out
        node("gb-01", clique("8a1f-c3.1"), "4"),
        node("gb-02", clique("8a1f-c3.1"), "4", true, true),    // cordoned
        node("gb-19", clique("77d0-e1.1"), "4", false),         // NotReady
        node("gb-03", clique("8a1f-c3.1"), "4"),
        node("hgx-01", "", "8"),                                // a domain of its own
        node("gpu-off", clique("99aa-00.1"), "0"),              // 0 GPUs: left out
    });
    REQUIRE(io::looks_like_json(text));
    CHECK_FALSE(io::looks_like_kubectl_nodes(text));
    const auto c = read_ok(text);
    CHECK(domain_names(c.topo) == names{"8a1f-c3.1", "77d0-e1.1", "hgx-01"});
    CHECK(c.topo.node_count() == 5);
    CHECK(c.topo.gpu_count() == 4 * 4 + 8);
    CHECK(c.topo.node(*c.topo.find_node("gb-03")).domain == 0);
    CHECK(c.topo.domain(2).gpus_per_node == 8);
    CHECK(c.health[*c.topo.find_node("gb-01")] == node_health::up);
    CHECK(c.health[*c.topo.find_node("gb-02")] == node_health::drain);
    CHECK(c.health[*c.topo.find_node("gb-19")] == node_health::down);
    CHECK(c.health[*c.topo.find_node("hgx-01")] == node_health::up);
}

TEST_CASE("k8s nodes json: the same cluster as the label listing") {
    const std::string labels =
        "NAME STATUS LABELS\n"
        "gb-01 Ready nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4,network.topology.nvidia.com/leaf=s1\n"
        "gb-02 Ready nvidia.com/gpu.clique=u2.1,nvidia.com/gpu.count=4,network.topology.nvidia.com/leaf=s1\n"
        "gb-03 Ready nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4,network.topology.nvidia.com/leaf=s1\n";
    const std::string leaf = ",\n          \"network.topology.nvidia.com/leaf\": \"s1\"";
    const std::string json = listing({node("gb-01", clique("u1.1") + leaf, "4"), node("gb-02", clique("u2.1") + leaf, "4"),
                                      node("gb-03", clique("u1.1") + leaf, "4")});
    const auto a = io::read_k8s_nodes(labels);
    const auto b = read_ok(json);
    REQUIRE(a.has_value());
    CHECK(domain_names(a->topo) == domain_names(b.topo));
    CHECK(a->topo.node_count() == b.topo.node_count());
    REQUIRE(b.topo.levels().size() == 1);
    CHECK(b.topo.levels()[0].name == "leaf");
}

TEST_CASE("k8s nodes json: a node without capacity takes its count label or the default") {
    const std::string count = ",\n          \"nvidia.com/gpu.count\": \"8\"";
    const auto c = read_ok(listing({node("a-1", clique("c1") + count, ""), node("b-1", clique("c2"), "")}), 2);
    CHECK(c.topo.domain(0).gpus_per_node == 8);
    CHECK(c.topo.domain(1).gpus_per_node == 2);
    // One Node object, as `kubectl get node NAME -o json` prints it.
    const auto one = read_ok(node("gb-07", clique("c9"), "4"));
    CHECK(one.topo.node_count() == 1);
    CHECK(one.topo.node(0).name == "gb-07");
}

TEST_CASE("k8s nodes json: bad documents name the line, the column and what was wrong") {
    // Malformed JSON.
    const error cut = read_error("{\n  \"items\": [\n    {\"metadata\": }\n");
    CHECK(cut.line == 3);
    CHECK(cut.column == 18);
    CHECK(cut.message.find("expected a value") != std::string::npos);
    // Not a node listing.
    CHECK(read_error("[1]").message.find("expected a JSON object") != std::string::npos);
    CHECK(read_error("{\"kind\": \"List\"}").message.find("\"items\" array") != std::string::npos);
    CHECK(read_error("{\"items\": [{\"kind\": \"Pod\"}]}").message.find("kind Node, found 'Pod'") != std::string::npos);
    CHECK(read_error("{\"items\": [{\"kind\": \"Node\"}]}").message.find("without metadata") != std::string::npos);
    CHECK(read_error("{\"items\": [{\"metadata\": {\"name\": 7}}]}").message.find("metadata.name is a number") !=
          std::string::npos);
    // A node name Kubernetes would not accept: the column points into it.
    const error name = read_error("{\"items\": [{\"metadata\": {\"name\": \"GB_1\"}}]}");
    CHECK(name.column == 35);  // the G
    CHECK(name.message.find("not a Kubernetes node name") != std::string::npos);
    // A bad clique value and a bad capacity, at the value.
    const error bad_clique = read_error(listing({node("gb-01", clique("a b"), "4")}));
    CHECK(bad_clique.message.find("nvidia.com/gpu.clique value 'a b' is not a Kubernetes label value") != std::string::npos);
    CHECK(bad_clique.line == 12);
    CHECK(bad_clique.column == 38);  // the blank
    const error bad_count = read_error(listing({node("gb-01", clique("c1"), "4k")}));
    CHECK(bad_count.message.find("node 'gb-01': status.capacity nvidia.com/gpu '4k' is not a GPU count") != std::string::npos);
    CHECK(bad_count.line > 0);
    CHECK(read_error("{\"items\": [{\"metadata\": {\"name\": \"a\", \"labels\": {\"x\": 1}}}]}").message.find(
              "label 'x' is a number") != std::string::npos);
    CHECK(read_error("{\"items\": [{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"unschedulable\": \"yes\"}}]}")
              .message.find("spec.unschedulable is a string, expected a boolean") != std::string::npos);
    // Only non-GPU nodes.
    CHECK(read_error(listing({node("cpu-01", "", "")})).message.find("no GPU node") != std::string::npos);
    // Mixed GPU counts in one clique.
    CHECK(read_error(listing({node("a-1", clique("c1"), "4"), node("a-2", clique("c1"), "8")})).message.find("has 8 GPUs") !=
          std::string::npos);
}

}  // namespace test_io_k8s_nodes_json
