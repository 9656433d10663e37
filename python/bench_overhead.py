"""Per-call overhead of allocate + release from Python (docs/python.md).

Reports what it measures; it asserts only that every allocation was
released, never a time (a loaded machine must not fail the suite).
Run: PYTHONPATH=<dir of the built module> python3 python/bench_overhead.py [calls]
"""

import sys
import time

import topoblock as tb


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    alloc = tb.Allocator(tb.Topology("nvl72:16"), policy="best-fit")
    allocate, release = alloc.allocate, alloc.release
    held = [allocate(8) for _ in range(100)]  # a cluster with some work on it
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            release(allocate(8))
        best = min(best, (time.perf_counter() - start) / calls)
    # The same loop with a Python function of the same shape: what any call
    # from Python costs, whatever it does.
    def nothing(gpus):
        return gpus
    floor = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            nothing(nothing(8))
        floor = min(floor, (time.perf_counter() - start) / calls)
    for i in held:
        release(i)
    assert alloc.metrics()["allocations"] == 0
    print(f"allocate(8) + release: {best * 1e9:.0f} ns per pair from Python "
          f"(two empty Python calls: {floor * 1e9:.0f} ns), best of 5 x {calls} pairs")


if __name__ == "__main__":
    main()
