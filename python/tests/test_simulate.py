"""The simulator: built-in mixes, traces and Python jobs, against `topoblock simulate`."""

import csv
import os
import subprocess

import pytest

import topoblock as tb


def test_python_jobs_exact_outcomes():
    # One HGX server: two 8-GPU jobs run one after the other; a 16-GPU job
    # can never run.
    jobs = [{"submit_s": 0, "gpus": 8, "duration_s": 100},
            {"submit_s": 10, "gpus": 8, "duration_s": 50},
            (20, 16, 5)]
    r = tb.simulate("hgx8:1", jobs, policies=["first-fit", "best-fit"], comm_share=0)
    assert [s["policy"] for s in r["summary"]] == ["first-fit", "best-fit"]
    for s in r["summary"]:
        assert (s["jobs"], s["completed"], s["unplaceable"], s["conserved"]) == (3, 2, 1, True)
        assert s["makespan_s"] == 150
    records = [j for j in r["jobs"] if j["policy"] == "best-fit"]
    assert [j["job"] for j in records] == [0, 1, 2]
    assert [j["state"] for j in records] == ["completed", "completed", "unplaceable"]
    assert records[1]["start_s"] == 100 and records[1]["wait_s"] == 90 and records[1]["end_s"] == 150
    assert records[2]["reason"] == "exceeds_cluster" and records[2]["start_s"] == -1
    # Every record has the same keys: a DataFrame without holes.
    assert len({tuple(j) for j in r["jobs"]}) == 1
    assert r["timeline"] == []
    assert len(tb.simulate("hgx8:1", jobs, policies="best-fit", timeline=True)["timeline"]) > 0
    # Any iterable of jobs, any iterable of policy names.
    again = tb.simulate("hgx8:1", (j for j in jobs), policies=("first-fit", "best-fit"), comm_share=0)
    assert again["summary"] == r["summary"] and again["jobs"] == r["jobs"]


def test_bad_jobs_are_errors():
    for jobs in ([{"submit_s": 0, "gpus": 0, "duration_s": 1}], [{"submit_s": -1, "gpus": 1, "duration_s": 1}],
                 [{"submit_s": 0, "gpus": 1}], [(0, 1)], [{"submit_s": "soon", "gpus": 1, "duration_s": 1}],
                 [{"submit_s": 0, "gpus": 1, "duration_s": float("nan")}]):
        with pytest.raises(tb.Error) as e:
            tb.simulate("hgx8:1", jobs)
        assert e.value.code == "invalid_argument"
        assert "job 0" in e.value.message


def test_bad_settings_are_errors():
    for kwargs in (dict(policies="worst-fit"), dict(policies=[]), dict(queue="lifo"), dict(load=0),
                   dict(locality="near"), dict(jobs=0), dict(node_mtbf_hours=-1), dict(node_mtbf_hours=0.5),
                   dict(comm_share=2), dict(until=float("nan")), dict(policies="contiguous-block", block_gpus=100)):
        with pytest.raises(tb.Error) as e:
            tb.simulate("nvl72:1", "helios", **kwargs)
        assert e.value.code == "invalid_argument", kwargs
    with pytest.raises(tb.Error) as e:
        tb.simulate(42)
    assert e.value.code == "invalid_argument"
    for workload in (42, [42], ["abc"], [None], [{"submit_s": 0, "gpus": 2**33, "duration_s": 1}]):
        with pytest.raises(tb.Error) as e:
            tb.simulate("nvl72:1", workload)
        assert e.value.code == "invalid_argument", workload
    with pytest.raises(tb.Error) as e:
        tb.simulate("nvl72:1", "/no/such/trace.csv")
    assert e.value.code == "parse_error" and "trace.csv" in e.value.message


def test_trace_file_with_a_bad_row(tmp_path):
    trace = tmp_path / "tiny.csv"
    trace.write_text("submit_time_s,gpus,duration_s\n0,4,60\n5,x,60\n10,72,30\n")
    r = tb.simulate(tb.Topology("nvl72:1"), trace, policies="best-fit")
    assert r["workload"] == "tiny trace, 2 jobs"
    assert len(r["bad_rows"]) == 1 and "line 3" in r["bad_rows"][0]
    s = r["summary"][0]
    assert s["jobs"] == 2 and s["completed"] == 2


def test_deterministic_for_a_seed():
    a = tb.simulate("nvl72:2", "philly", jobs=300, seed=3, policies="best-fit,first-fit")
    b = tb.simulate("nvl72:2", "philly", jobs=300, seed=3, policies="best-fit,first-fit")
    c = tb.simulate("nvl72:2", "philly", jobs=300, seed=4, policies="best-fit,first-fit")
    assert a == b
    assert a["jobs"] != c["jobs"]


CLI = os.environ.get("TOPOBLOCK_CLI")


@pytest.mark.skipif(not CLI, reason="TOPOBLOCK_CLI names the topoblock program (ctest sets it)")
@pytest.mark.parametrize("workload,queue", [("helios", "easy"), ("llm", "fifo")])
def test_matches_the_program(tmp_path, workload, queue):
    out = tmp_path / "cli.csv"
    printed = subprocess.run([CLI, "simulate", "--topology", "nvl72:4@2", "--workload", workload, "--jobs", "1500",
                    "--seed", "7", "--queue", queue, "--node-mtbf-hours", "2000", "--csv", str(out), "--svg", "-"],
                   check=True, capture_output=True, text=True).stdout
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    r = tb.simulate(tb.Topology("nvl72:4@2"), workload, jobs=1500, seed=7, queue=queue, node_mtbf_hours=2000)
    assert len(rows) == len(r["summary"]) == len(tb.policy_names)
    for row, s in zip(rows, r["summary"]):
        assert row.keys() == s.keys()
        for key, text in row.items():
            value = s[key]
            if isinstance(value, bool):
                assert text == ("true" if value else "false"), key
            elif isinstance(value, (int, float)):
                assert float(text) == value, (s["policy"], key)
            else:
                assert text == value, key
    assert sum(s["requeues"] for s in r["summary"]) > 0
    # The table as the program prints it, title and all.
    assert printed.startswith(r["table"])
    assert "1500 jobs at 85%" in r["table"]


def write_trace(path, jobs):
    path.write_text("submit_time_s,gpus,duration_s\n" + "".join(f"{s},{g},{d}\n" for s, g, d in jobs))
    return path


@pytest.mark.skipif(not CLI, reason="TOPOBLOCK_CLI names the topoblock program (ctest sets it)")
@pytest.mark.parametrize("load", [None, 1.5])
def test_trace_matches_the_program(tmp_path, load):
    # The same trace, rescaled to a load or replayed as recorded, gives the
    # same jobs and the same results in both.
    trace = write_trace(tmp_path / "mixed.csv", [(i * 37 % 900 + i, 1 + i * 7 % 72, 60 + i * 53 % 3000) for i in range(400)])
    out = tmp_path / "cli.csv"
    args = [CLI, "simulate", "--topology", "nvl72:2", "--workload", str(trace), "--csv", str(out), "--svg", "-"]
    if load is not None:
        args += ["--load", str(load)]
    printed = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    r = tb.simulate("nvl72:2", trace, load=load)
    assert len(rows) == len(r["summary"]) == len(tb.policy_names)
    for row, s in zip(rows, r["summary"]):
        for key in ("policy", "completed", "wait_p95_s", "makespan_s", "utilization"):
            value = s[key]
            assert (float(row[key]) == value) if isinstance(value, (int, float)) else (row[key] == value), key
    assert printed.startswith(r["table"])
    assert ("at 150% offered load" in r["table"]) == (load == 1.5)


def test_load_of_a_trace_submitted_at_one_moment_is_refused(tmp_path):
    trace = write_trace(tmp_path / "burst.csv", [(0, 8, 60), (0, 8, 60)])
    assert tb.simulate("nvl72:1", trace, policies="best-fit")["summary"][0]["completed"] == 2
    with pytest.raises(tb.Error) as e:
        tb.simulate("nvl72:1", trace, policies="best-fit", load=0.5)
    assert "load does not apply" in e.value.message
