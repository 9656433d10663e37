"""Topologies: spec strings, presets, Slurm files and Kubernetes listings."""

import pytest

import topoblock as tb


def test_spec_summary():
    t = tb.Topology("nvl72:4")
    assert (t.domain_count, t.node_count, t.gpu_count) == (4, 72, 288)
    assert t.domain_names == ["rack01", "rack02", "rack03", "rack04"]
    assert t.node_names[:2] == ["gb01", "gb02"] and t.node_names[-1] == "gb72"
    assert t.max_domain_gpus == 72 and t.max_domain_nodes == 18
    assert t.levels == []
    assert t.domains[1] == {"id": 1, "name": "rack02", "first_node": 18, "nodes": 18, "gpus_per_node": 4, "gpus": 72}
    assert t.nodes[18] == {"id": 18, "name": "gb19", "domain": "rack02", "domain_id": 1, "gpus": 4,
                           "first_gpu": 72, "health": "up"}
    assert t.find_node("gb19") == 18 and t.find_node("nope") is None
    assert t.find_domain("rack03") == 2 and t.find_domain("nope") is None
    assert "4 domains, 72 nodes, 288 GPUs" in repr(t)


def test_mixed_spec_and_groups():
    t = tb.Topology.from_spec("nvl72:2+hgx8:2@2")
    assert t.domain_count == 4 and t.gpu_count == 2 * 72 + 2 * 8
    assert t.levels == [{"name": "group", "groups": ["group01", "group02"],
                         "domains": [t.domain_names[0:2], t.domain_names[2:4]]}]


def test_preset_is_the_spec():
    a = tb.Topology.preset("hgx8", 6, per_group=3)
    b = tb.Topology("hgx8:6@3")
    assert a.node_names == b.node_names and a.levels == b.levels
    assert a.domain_count == 6 and a.gpu_count == 48


def test_bad_spec_names_the_place():
    with pytest.raises(tb.Error) as e:
        tb.Topology("nvl72:x")
    assert e.value.code == "parse_error"
    assert "column 7" in e.value.message and "'x'" in e.value.message
    with pytest.raises(tb.Error) as e:
        tb.Topology.preset("nvl72", 0)
    assert e.value.code == "invalid_argument"


CONF = """\
# two NVLink domains of four nodes
BlockName=b1 Nodes=n[1-4]
BlockName=b2 Nodes=n[5-8]
"""


def test_topology_conf():
    t = tb.Topology.read(CONF, gpus_per_node=8)
    assert t.domain_names == ["b1", "b2"]
    assert t.gpu_count == 64 and t.has_slurm_blocks
    assert t.nodes[4]["name"] == "n5" and t.nodes[4]["domain"] == "b2"
    a = tb.Allocator(t, "slurm-block")
    assert a.policy == "slurm-block"
    pieces = a.find(a.allocate(nodes=4))["pieces"]
    assert {p["domain"] for p in pieces} == {"b1"} or {p["domain"] for p in pieces} == {"b2"}


def test_slurm_version():
    # Blocks n[1-4] and n[5-8], an empty cluster: a one-node job takes the
    # first free node from Slurm 26.05 (the default), the later of two tied
    # blocks up to 25.11.
    t = tb.Topology.read(CONF + "BlockSizes=4,8\n", gpus_per_node=4)
    for version, first in ((None, "n1"), ("26.05", "n1"), ("25.11", "n5")):
        a = tb.Allocator(t, "slurm-block") if version is None else tb.Allocator(t, "slurm-block", slurm_version=version)
        assert a.find(a.allocate(nodes=1))["pieces"][0]["node"] == first
    with pytest.raises(tb.Error) as e:
        tb.Allocator(t, "slurm-block", slurm_version="24.05")
    assert e.value.code == "invalid_argument"
    assert "accepted: 25.11, 26.05" in e.value.message


def test_topology_conf_error_has_line():
    with pytest.raises(tb.Error) as e:
        tb.Topology.read("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodez=n[5-8]\n")
    assert e.value.code == "parse_error"
    assert "line 2" in e.value.message


YAML = """\
- topology: nvl
  cluster_default: true
  block:
    block_sizes: [2]
    blocks:
      - block: r1
        nodes: g[01-02]
      - block: r2
        nodes: g[03-04]
"""


def test_topology_yaml():
    t = tb.Topology.read(YAML, gpus_per_node=4)
    assert t.domain_names == ["r1", "r2"] and t.node_count == 4 and t.gpu_count == 16


def test_topology_yaml_error():
    with pytest.raises(tb.Error) as e:
        tb.Topology.read("- topology: x\n  block: [\n", name="topology.yaml")
    assert e.value.code == "parse_error"


K8S = """\
NAME    STATUS                     ROLES    AGE   VERSION   LABELS
gb-01   Ready                      <none>   9d    v1.31.2   nvidia.com/gpu.clique=c1.1,nvidia.com/gpu.count=4
gb-02   NotReady                   <none>   9d    v1.31.2   nvidia.com/gpu.clique=c1.1,nvidia.com/gpu.count=4
gb-03   Ready,SchedulingDisabled   <none>   9d    v1.31.2   nvidia.com/gpu.clique=c1.2,nvidia.com/gpu.count=4
"""


def test_k8s_nodes_and_their_health():
    t = tb.Topology.read(K8S)
    assert t.domain_names == ["c1.1", "c1.2"]
    assert [n["health"] for n in t.nodes] == ["up", "down", "drain"]
    a = tb.Allocator(t, "first-fit")
    assert [a.health(n) for n in ("gb-01", "gb-02", "gb-03")] == ["up", "down", "drain"]
    assert a.metrics()["free_gpus"] == 4
    with pytest.raises(tb.Error) as e:
        a.allocate(8)
    assert e.value.code == "exceeds_healthy"


def test_k8s_error():
    with pytest.raises(tb.Error) as e:
        tb.Topology.read("NAME STATUS LABELS\nx Ready\n")
    assert e.value.code == "parse_error"


K8S_JSON = """\
{"kind": "List", "items": [
 {"metadata": {"name": "gb-01", "labels": {"nvidia.com/gpu.clique": "c1.1", "nvidia.com/gpu.count": "4"}},
  "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
 {"metadata": {"name": "gb-02", "labels": {"nvidia.com/gpu.clique": "c1.2", "nvidia.com/gpu.count": "4"}},
  "spec": {"unschedulable": true}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
]}
"""


def test_k8s_json():
    t = tb.Topology.read(K8S_JSON)
    assert t.domain_names == ["c1.1", "c1.2"] and t.gpu_count == 8
    assert [n["health"] for n in t.nodes] == ["up", "drain"]


def test_read_names_the_text_in_errors():
    with pytest.raises(tb.Error) as e:
        tb.Topology.read("{", name="nodes.json")
    assert e.value.code == "parse_error" and "nodes.json" in e.value.message


def test_load_from_a_file_of_every_kind(tmp_path):
    for name, text, domains in [("spec.txt", "# two racks\nnvl72:2\n", 2), ("topology.conf", CONF, 2),
                                ("topology.yaml", YAML, 2), ("nodes.txt", K8S, 2), ("nodes.json", K8S_JSON, 2)]:
        path = tmp_path / name
        path.write_text(text)
        from_path = tb.Topology.load(path, gpus_per_node=8)
        from_str = tb.Topology.load(str(path), gpus_per_node=8)
        assert from_path.domain_count == domains and from_path.source == str(path)
        assert from_path.nodes == from_str.nodes
        assert from_path.nodes == tb.Topology.read(text, name=name, gpus_per_node=8).nodes


def test_load_takes_a_spec_when_no_file_has_the_name():
    assert tb.Topology.load("nvl72:3").gpu_count == 216


def test_load_refuses_what_is_neither_file_nor_spec(tmp_path):
    with pytest.raises(tb.Error) as e:
        tb.Topology.load(str(tmp_path / "missing.conf"))
    assert e.value.code == "parse_error" and "neither a readable file nor a topology spec" in e.value.message
    with pytest.raises(tb.Error) as e:
        tb.Topology.load(tmp_path)  # a directory
    assert e.value.code == "parse_error"


def test_node_order_only_for_slurm_files():
    t = tb.Topology.read(CONF, gpus_per_node=8, nodes="n[1-8],spare1")
    assert t.node_names[-1] == "spare1" and t.node_count == 9
    with pytest.raises(tb.Error) as e:
        tb.Topology.read(K8S, nodes="gb-[01-03]")
    assert "node order" in e.value.message
    with pytest.raises(tb.Error) as e:
        tb.Topology.read(CONF, gpus_per_node=0)
    assert e.value.code == "invalid_argument"
