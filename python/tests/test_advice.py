"""Allocator.explain, Allocator.advise and Allocator.drain_plan (advice/*.hpp)."""

import itertools
import random

import pytest

import topoblock as tb

# 2 domains (d01: n01 n02, d02: n03 n04) of 2 nodes of 4 GPUs.
TINY = "grid:2:2:4"


def scattered(policy="best-fit"):
    """Eight 2-GPU jobs fill the cluster; the second of each domain ends:
    2 GPUs free in each domain, 4 in all."""
    a = tb.Allocator(tb.Topology(TINY), policy)
    jobs = [a.allocate(2) for _ in range(8)]
    a.release(jobs[1])
    a.release(jobs[5])
    return a, jobs


def pieces_of(a, job):
    return [(p["node"], p["gpus"]) for p in a.find(job)["pieces"]]


def test_the_scattered_state():
    a, j = scattered()
    assert pieces_of(a, j[0]) == [("n01", [0, 1])]
    assert pieces_of(a, j[4]) == [("n03", [0, 1])]
    assert pieces_of(a, j[6]) == [("n04", [0, 1])]
    assert a.metrics()["free_gpus"] == 4


# ---------------------------------------------------------------- explain

def test_explain_a_fragmented_request_names_the_binding_and_numbers():
    a, _ = scattered()
    e = a.explain(4)
    assert e["code"] == "fragmented" and e["binding"] == "scattered"
    assert e["policy"] == "best-fit" and e["unit"] == "gpus"
    assert (e["asked"], e["part"], e["parts"]) == (4, 4, 1)
    assert (e["total"], e["up"], e["free"], e["free_gpus"], e["closed_free_gpus"]) == (16, 16, 4, 4, 0)
    assert (e["largest_domain"], e["domains_needed"], e["idle_domains"]) == (8, 1, 0)
    v = e["view"]
    assert (v["unit"], v["unit_gpus"], v["scope"]) == ("GPUs", 0, "NVLink domain")
    assert (v["need"], v["free"], v["most"]) == (4, 4, 2)
    assert (v["holding_now"], v["holding_if_emptied"], v["wholly_free"], v["scopes"]) == (0, 2, 0, 2)
    assert e["sentence"] == ("4 GPUs free, but the most in one NVLink domain is 2 (needs 4); "
                             "2 NVLink domains would hold it if their jobs ended")
    # The same through a Request and through keywords.
    assert a.explain(tb.Request(4)) == e == a.explain(gpus=4)


def test_explain_placeable_and_permanent_refusals_have_no_view():
    a, _ = scattered()
    e = a.explain(2)
    assert (e["code"], e["binding"], e["sentence"], e["view"]) == ("ok", "none", "placeable now", None)
    e = a.explain(gpus=17)
    assert (e["code"], e["binding"], e["view"]) == ("exceeds_cluster", "cluster_size", None)
    assert e["sentence"] == "asks 17 GPUs, the whole cluster has 16"
    e = a.explain(gpus=6)
    assert (e["code"], e["binding"]) == ("insufficient_free", "insufficient_free")
    assert e["sentence"] == "asks 6 GPUs, 4 free" and e["view"]["free"] == 4


def test_explain_counts_nodes_for_a_node_request():
    a, _ = scattered()
    e = a.explain(nodes=1)
    # No node is wholly free, though 4 GPUs are.
    assert e["unit"] == "nodes" and e["asked"] == 1 and (e["total"], e["up"], e["free"], e["free_gpus"]) == (4, 4, 0, 4)
    assert (e["code"], e["binding"], e["largest_domain"]) == ("fragmented", "scattered", 2)
    v = e["view"]
    assert (v["unit"], v["need"], v["free"], v["most"], v["holding_now"], v["holding_if_emptied"]) == (
        "whole nodes", 1, 0, 0, 0, 2)
    assert e["sentence"].endswith("2 NVLink domains would hold it if their jobs ended (4 GPUs free in all)")


def test_explain_agrees_with_try_allocate_on_random_states():
    rng = random.Random(7)
    for policy in tb.policy_names:
        a = tb.Allocator(tb.Topology(TINY), policy)
        live = []
        for _ in range(60):
            if live and rng.random() < 0.4:
                a.release(live.pop(rng.randrange(len(live))))
                continue
            r = tb.Request(rng.choice([1, 2, 3, 4, 5, 8, 12]))
            code = a.explain(r)["code"]
            got, answer = a.try_allocate(r)
            assert code == answer, (policy, r.count)
            if got is not None:
                live.append(got)


# ---------------------------------------------------------------- advise

def test_advise_stops_the_cheapest_and_then_allocate_succeeds():
    a, j = scattered()
    adv = a.advise(4)
    # One 2-GPU job in either domain makes room; the smallest id wins the tie.
    assert adv == {"kind": "stop", "stop": [j[0]], "cost": 2, "reason": "ok", "exact": True}
    assert a.advise(tb.Request(4)) == adv
    before = a.allocations()
    for i in adv["stop"]:
        a.release(i)
    placed = a.allocate(4)
    assert [p["node"] for p in a.find(placed)["pieces"]] == ["n01"]
    assert len(a.allocations()) == len(before)


def test_advise_leaves_the_allocator_as_it_was():
    a, _ = scattered()
    before = a.allocations()
    a.advise(4)
    a.advise(gpus=8)
    assert a.allocations() == before and a.metrics()["free_gpus"] == 4


def test_protect_changes_the_answer():
    a, j = scattered()
    assert a.advise(4, protect=[j[0]])["stop"] == [j[2]]
    assert a.advise(4, protect=(j[0], j[2]))["stop"] == [j[3]]
    # Unknown ids are ignored.
    assert a.advise(4, protect=[12345])["stop"] == [j[0]]
    every = [x["id"] for x in a.allocations()]
    adv = a.advise(4, protect=every)
    assert adv["kind"] == "impossible" and adv["reason"] == "fragmented" and adv["stop"] == []


def test_a_cost_callable_changes_the_answer():
    a, j = scattered()
    asked = []

    def cost(i):
        asked.append(i)
        return 1 if i == j[6] else 5

    adv = a.advise(4, cost=cost)
    assert adv["kind"] == "stop" and adv["stop"] == [j[6]] and adv["cost"] == 1 and adv["exact"]
    # Asked at most once for each allocation.
    assert len(asked) == len(set(asked)) and j[6] in asked
    # Any integer type (an object with __index__, as NumPy's) will do, for
    # costs and protected ids alike.
    class Integer:
        def __init__(self, n):
            self.n = n

        def __index__(self):
            return self.n

    assert a.advise(4, cost=lambda i: Integer(1 if i == j[6] else 5)) == adv
    assert a.advise(4, protect=[Integer(j[0])])["stop"] == [j[2]]
    # A callable that reads the allocator gives the default cost.
    assert a.advise(4, cost=lambda i: a.find(i)["held_gpus"]) == a.advise(4)


def test_a_raising_cost_callable_raises_and_changes_nothing():
    a, _ = scattered()
    before = a.allocations()

    def cost(i):
        raise KeyError(i)

    with pytest.raises(KeyError):
        a.advise(4, cost=cost)
    assert a.allocations() == before
    assert a.advise(4)["kind"] == "stop"


@pytest.mark.parametrize("value", ["2", 2.0, -1, 2**32, 2**70, None, True])
def test_a_bad_cost_is_an_invalid_argument(value):
    a, _ = scattered()
    with pytest.raises(tb.Error) as e:
        a.advise(4, cost=lambda i: value)
    assert e.value.code == "invalid_argument" and "cost(" in e.value.message
    assert e.value.message.endswith(str(value) if type(value) is int else "a value of type " + type(value).__name__)
    assert a.advise(4)["kind"] == "stop"


def test_a_cost_callable_cannot_change_the_allocator():
    a, j = scattered()
    before = a.allocations()
    with pytest.raises(tb.Error) as e:
        a.advise(4, cost=lambda i: a.release(i) or 1)
    assert e.value.code == "invalid_argument" and "being advised" in e.value.message
    with pytest.raises(tb.Error):
        a.advise(4, cost=lambda i: a.allocate(1))
    with pytest.raises(tb.Error):
        a.advise(4, cost=lambda i: len(a.advise(2)["stop"]))
    assert a.allocations() == before
    a.release(j[0])  # free to change again


def test_advise_bad_arguments():
    a, _ = scattered()
    for protect in ([-1], ["x"], [2**64], [True], [1.0], "abc", 3):
        with pytest.raises(tb.Error) as e:
            a.advise(4, protect=protect)
        assert e.value.code == "invalid_argument"
    with pytest.raises(tb.Error) as e:
        a.advise(4, cost=5)
    assert e.value.code == "invalid_argument"
    with pytest.raises(tb.Error) as e:
        a.advise()
    assert e.value.code == "invalid_argument"


def test_advise_none_and_impossible():
    a, _ = scattered()
    assert a.advise(2) == {"kind": "none", "stop": [], "cost": 0, "reason": "ok", "exact": False}
    assert a.advise(17)["kind"] == "impossible" and a.advise(17)["reason"] == "exceeds_cluster"
    assert a.advise(gpus=0)["reason"] == "invalid_request"


def test_advise_a_job_larger_than_a_domain_is_a_bound():
    a, j = scattered()
    adv = a.advise(12)
    assert adv["kind"] == "stop" and not adv["exact"]
    for i in adv["stop"]:
        a.release(i)
    a.allocate(12)


def rebuilt(policy, seed):
    """The same random history again: the same ids, the same placements."""
    rng = random.Random(seed)
    a = tb.Allocator(tb.Topology(TINY), policy)
    live = []
    for _ in range(14):
        got, _ = a.try_allocate(rng.choice([1, 2, 2, 3, 4]))
        if got is not None:
            live.append(got)
        if live and rng.random() < 0.3:
            a.release(live.pop(rng.randrange(len(live))))
    return a


def brute_force(policy, seed, request, cost):
    """The least (cost, count, ids) over every set whose release places the
    request, each tried on a fresh copy of the history."""
    ids = [x["id"] for x in rebuilt(policy, seed).allocations()]
    best = None
    for k in range(len(ids) + 1):
        for subset in itertools.combinations(sorted(ids), k):
            a = rebuilt(policy, seed)
            for i in subset:
                a.release(i)
            if a.try_allocate(request)[1] != "ok":
                continue
            key = (sum(cost(i) for i in subset), k, list(subset))
            if best is None or key < best:
                best = key
    return best


# Every built-in policy but first-fit keeps a one-domain request in one
# domain, where advise's answer is the least overall.
@pytest.mark.parametrize("policy", [p for p in tb.policy_names if p != "first-fit"])
def test_advise_against_brute_force(policy):
    stops = 0
    for seed in range(6):
        base = rebuilt(policy, seed)
        held = {x["id"]: x["held_gpus"] for x in base.allocations()}
        weights = {i: (i * 7919 + seed) % 5 + 1 for i in held}
        for gpus in (3, 4, 6, 8):
            request = tb.Request(gpus)
            for cost, callable_ in ((held.get, None), (weights.get, weights.get)):
                adv = base.advise(request, cost=callable_)
                best = brute_force(policy, seed, request, cost)
                if adv["kind"] == "none":
                    assert best == (0, 0, [])
                elif adv["kind"] == "impossible":
                    assert best is None, (policy, seed, gpus)
                else:
                    assert adv["exact"]
                    assert (adv["cost"], len(adv["stop"]), adv["stop"]) == best, (policy, seed, gpus)
                    stops += 1
    assert stops >= 10  # the histories leave requests to advise on


def test_first_fit_advice_places():
    # first-fit may spread a job over domains: its answer is a valid set.
    for seed in range(6):
        for gpus in (3, 4, 6, 8, 12):
            adv = rebuilt("first-fit", seed).advise(gpus)
            a = rebuilt("first-fit", seed)
            for i in adv["stop"]:
                a.release(i)
            assert (a.try_allocate(gpus)[1] == "ok") == (adv["kind"] != "impossible")


# ---------------------------------------------------------------- drain_plan

def test_drain_plan_moves_off_the_drained_nodes():
    a, j = scattered()
    # n01 holds j0 alone; the only free GPUs off n01 are n03's 2 and 3.
    plan = a.drain_plan("n01")
    assert plan == [{"id": j[0], "result": "ok", "pieces": [
        {"node": "n03", "node_id": 2, "domain": "d02", "domain_id": 1, "gpus": [2, 3]}]}]
    assert a.drain_plan(0) == plan == a.drain_plan(["n01"])
    # With n03 drained too, nothing is free elsewhere.
    plan = a.drain_plan([0, "n03"])
    assert [(m["id"], m["result"], m["pieces"]) for m in plan] == [
        (j[0], "insufficient_free", None), (j[4], "insufficient_free", None)]
    # Nothing changed: the nodes are still up, the plan was on a copy.
    assert a.health("n01") == "up" and a.metrics()["free_gpus"] == 4


def test_drain_plan_of_an_empty_node_and_bad_nodes():
    a = tb.Allocator(tb.Topology(TINY), "best-fit")
    assert a.drain_plan([0, 1, 2, 3]) == []
    with pytest.raises(tb.Error) as e:
        a.drain_plan([0, "n01"])
    assert e.value.code == "invalid_argument" and "named twice" in e.value.message
    with pytest.raises(tb.Error) as e:
        a.drain_plan("nope")
    assert e.value.code == "unknown_node"
    with pytest.raises(tb.Error) as e:
        a.drain_plan([4])
    assert e.value.code == "node_out_of_range"
    with pytest.raises(tb.Error) as e:
        a.drain_plan(None)
    assert e.value.code == "invalid_argument"


def test_drain_plan_each_answer_places():
    rng = random.Random(3)
    for policy in tb.policy_names:
        a = rebuilt(policy, rng.randrange(100))
        for node in range(4):
            for move in a.drain_plan(node):
                held = {(p["node_id"], g) for x in a.allocations() for p in x["pieces"] for g in p["gpus"]}
                if move["result"] == "ok":
                    spots = {(p["node_id"], g) for p in move["pieces"] for g in p["gpus"]}
                    assert not spots & held and all(n != node for n, _ in spots)
                else:
                    assert move["pieces"] is None
