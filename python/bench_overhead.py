"""Per-call overhead of allocate + release from Python (docs/python.md).

Reports what it measures; it asserts only that every allocation was
released, never a time (a loaded machine must not fail the suite).
Run: PYTHONPATH=<dir of the built module> python3 python/bench_overhead.py [calls]
"""

import sys
import time

import topoblock as tb


def best_of(rounds, calls, body):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        body(calls)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    alloc = tb.Allocator(tb.Topology("nvl72:16"), policy="best-fit")
    allocate, release = alloc.allocate, alloc.release
    held = [allocate(8) for _ in range(100)]  # a cluster with some work on it
    request = tb.Request(8)

    def positional(n):
        for _ in range(n):
            release(allocate(8))

    def request_object(n):
        for _ in range(n):
            release(allocate(request))

    def keywords(n):
        for _ in range(n):
            release(allocate(gpus=8, locality="require"))

    # The same loop with a Python function of the same shape: what any call
    # from Python costs, whatever it does.
    def nothing(gpus):
        return gpus

    def empty(n):
        for _ in range(n):
            nothing(nothing(8))

    figures = {name: best_of(5, calls, body) for name, body in
               (("allocate(8)", positional), ("allocate(Request)", request_object),
                ("allocate(gpus=8, locality=...)", keywords), ("two empty Python calls", empty))}
    for i in held:
        release(i)
    assert alloc.metrics()["allocations"] == 0
    print(f"per pair with release, best of 5 x {calls}:")
    for name, seconds in figures.items():
        print(f"  {name:32} {seconds * 1e9:6.0f} ns")


if __name__ == "__main__":
    main()
