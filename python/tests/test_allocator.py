"""The allocator of each built-in policy, its refusals and its metrics."""

import pytest

import topoblock as tb


@pytest.fixture
def nvl72x2():
    return tb.Topology("nvl72:2")


def test_policy_names():
    assert tb.policy_names == ("first-fit", "best-fit", "contiguous-block", "buddy-split", "slurm-block", "frag-aware")


def test_error_is_an_exception_with_a_code():
    assert issubclass(tb.Error, Exception)
    assert "insufficient_free" in tb.error_codes and "parse_error" in tb.error_codes


def test_placement_pieces(nvl72x2):
    a = tb.Allocator(nvl72x2, "best-fit")
    i = a.allocate(16)
    r = a.find(i)
    assert r["held_gpus"] == 16 and r["requested_gpus"] == 16 and r["domains"] == 1
    assert r["unit"] == "gpus" and r["count"] == 16 and not r["hit_by_failure"]
    assert r["pieces"] == [{"node": "gb%02d" % (n + 1), "node_id": n, "domain": "rack01", "domain_id": 0,
                            "gpus": [0, 1, 2, 3]} for n in range(4)]
    assert [x["id"] for x in a.allocations()] == [i]


@pytest.mark.parametrize("policy", tb.policy_names)
def test_every_policy_keeps_a_rack_job_in_one_domain(nvl72x2, policy):
    a = tb.Allocator(nvl72x2, policy)
    assert a.policy == policy
    first = a.find(a.allocate(nodes=18))
    second = a.find(a.allocate(nodes=18))
    assert len(first["pieces"]) == 18 and len({p["domain"] for p in first["pieces"]}) == 1
    assert {p["domain"] for p in first["pieces"]} != {p["domain"] for p in second["pieces"]}
    with pytest.raises(tb.Error) as e:
        a.allocate(1)
    assert e.value.code == "insufficient_free"


def test_refusals_change_nothing(nvl72x2):
    a = tb.Allocator(nvl72x2, "best-fit")
    a.allocate(70)
    a.allocate(70)
    # Two GPUs free in each rack.
    cases = [
        (dict(gpus=0), "invalid_request"),
        (dict(gpus=145), "exceeds_cluster"),
        (dict(gpus=140, segment=70, locality="require"), "insufficient_free"),
        (dict(gpus=146, segment=73), "exceeds_cluster"),
        (dict(gpus=144, segment=7), "invalid_request"),
        (dict(gpus=8), "insufficient_free"),
        (dict(gpus=4), "fragmented"),
        (dict(nodes=1), "fragmented"),
    ]
    before = (a.metrics(), a.allocations())
    for kwargs, code in cases:
        with pytest.raises(tb.Error) as e:
            a.allocate(**kwargs)
        assert e.value.code == code, kwargs
        assert e.value.message in str(e.value)
        assert a.try_allocate(**kwargs) == (None, code)
    assert (a.metrics(), a.allocations()) == before


def test_segments_exceeding_a_domain():
    a = tb.Allocator(tb.Topology("nvl72:4"), "best-fit")
    with pytest.raises(tb.Error) as e:
        a.allocate(160, segment=80)
    assert e.value.code == "exceeds_domain"
    r = a.find(a.allocate(144, segment=72))
    assert r["domains"] == 2


def test_release_and_unknown_allocation(nvl72x2):
    a = tb.Allocator(nvl72x2)
    i = a.allocate(8)
    a.release(i)
    with pytest.raises(tb.Error) as e:
        a.release(i)
    assert e.value.code == "unknown_allocation"
    with pytest.raises(tb.Error) as e:
        a.find(i)
    assert e.value.code == "unknown_allocation"
    assert a.metrics()["held_gpus"] == 0


def test_bad_arguments(nvl72x2):
    a = tb.Allocator(nvl72x2)
    for call in (lambda: a.allocate(4, nodes=1), lambda: a.allocate(), lambda: a.allocate(-1),
                 lambda: a.allocate(2**40), lambda: a.allocate(4, locality="nearby"),
                 lambda: a.set_health(0, "sick"), lambda: tb.Allocator(nvl72x2, "worst-fit"),
                 lambda: tb.Allocator(nvl72x2, "contiguous-block", block_gpus=0)):
        with pytest.raises(tb.Error) as e:
            call()
        assert e.value.code == "invalid_argument"
    for node in (144, -1, 2**70):
        with pytest.raises(tb.Error) as e:
            a.set_health(node, "down")
        assert e.value.code == "node_out_of_range"
    for node in (1.5, None, [0]):
        with pytest.raises(tb.Error) as e:
            a.health(node)
        assert e.value.code == "invalid_argument"
    for sizes in ("8", [8, "x"], {8: "heavy"}, [0]):
        with pytest.raises(tb.Error) as e:
            a.metrics(sizes)
        assert e.value.code == "invalid_argument", sizes
    with pytest.raises(tb.Error) as e:
        a.set_health("gb999", "down")
    assert e.value.code == "unknown_node"
    with pytest.raises(tb.Error) as e:
        tb.Allocator(tb.Topology("hgx8:4"), "contiguous-block", block_gpus=16)
    assert e.value.code == "invalid_argument"


def test_health_hits_the_allocation(nvl72x2):
    a = tb.Allocator(nvl72x2, "best-fit")
    i = a.allocate(8)
    node = a.find(i)["pieces"][0]["node"]
    assert a.set_health(node, "down") == [i]
    assert a.health(node) == "down" and a.find(i)["hit_by_failure"]
    m = a.metrics()
    assert m["up_nodes"] == 35 and m["healthy_gpus"] == 140
    assert a.set_health(node, "up") == []
    assert a.health(a.find(i)["pieces"][0]["node_id"]) == "up"


def test_whole_nodes_and_plan(nvl72x2):
    a = tb.Allocator(nvl72x2, "best-fit")
    planned = a.plan(6, whole_nodes=True)
    assert a.metrics()["held_gpus"] == 0
    i = a.allocate(6, whole_nodes=True)
    r = a.find(i)
    assert r["pieces"] == planned and r["held_gpus"] == 8 and r["requested_gpus"] == 6
    m = a.metrics()
    assert m["idle_held_gpus"] == 2 and m["internal_fragmentation"] == pytest.approx(0.25)


def test_exclusive_domain_closes_it(nvl72x2):
    a = tb.Allocator(nvl72x2, "best-fit")
    i = a.allocate(4, exclusive_domain=True)
    mine = a.find(i)["pieces"][0]["domain"]
    j = a.allocate(4)
    assert a.find(j)["pieces"][0]["domain"] != mine


def test_metrics(nvl72x2):
    a = tb.Allocator(nvl72x2, "first-fit")
    m = a.metrics()
    assert m["utilization"] == 0.0 and m["free_gpus"] == 144 and m["external_fragmentation"] is None
    assert m["largest_placeable_gpus"] == 144
    a.allocate(72)
    a.allocate(68)
    m = a.metrics([8])
    assert m["utilization"] == pytest.approx(140 / 144)
    assert m["free_gpus"] == 4 and m["allocations"] == 2 and m["mean_domains"] == 1.0
    # 4 free GPUs cannot hold an 8-GPU job: all of them are fragmented for it.
    assert m["external_fragmentation"] == 1.0
    assert a.metrics({4: 1.0, 8: 1.0})["external_fragmentation"] == pytest.approx(0.5)
    assert a.metrics((8,)) == m


def test_request_objects(nvl72x2):
    a = tb.Allocator(nvl72x2, "best-fit")
    r = tb.Request(nodes=2, segment=1, spread_segments=True)
    assert (r.count, r.unit, r.segment, r.spread_segments, r.locality) == (2, "nodes", 1, True, "require")
    assert r == tb.Request(nodes=2, segment=1, spread_segments=True) and r != tb.Request(nodes=2)
    assert (r == 2) is False
    planned = a.plan(r)
    i = a.allocate(r)
    pieces = a.find(i)["pieces"]
    assert pieces == planned and len({p["domain"] for p in pieces}) == 2
    assert a.find(i)["unit"] == "nodes"
    # The same placement as the keyword form on a fresh allocator.
    b = tb.Allocator(nvl72x2, "best-fit")
    assert b.find(b.allocate(nodes=2, segment=1, spread_segments=True))["pieces"] == pieces
    assert a.try_allocate(tb.Request(200)) == (None, "exceeds_cluster")
    with pytest.raises(tb.Error) as e:
        tb.Request(gpus=4, nodes=1)
    assert e.value.code == "invalid_argument"
