import topoblock as tb

# Four GB200 NVL72 racks, grouped two to a row.
cluster = tb.Topology("nvl72:4@2")
print(cluster.domain_count, "domains,", cluster.gpu_count, "GPUs")

# Place jobs under best-fit and look at where they went.
alloc = tb.Allocator(cluster, policy="best-fit")
job = alloc.allocate(16)
print([(p["node"], p["gpus"]) for p in alloc.find(job)["pieces"]])
big = alloc.allocate(nodes=36, segment=18)      # two whole racks, one part in each
print(alloc.find(big)["domains"], "domains")

# A refusal is an exception with a code; nothing changed.
try:
    alloc.allocate(200)
except tb.Error as e:
    print("refused:", e.code)
alloc.release(job)
print(alloc.metrics()["utilization"])

# Replay a synthetic Helios-like mix under two policies; the lists of dicts
# load straight into pandas: pandas.DataFrame(result["jobs"]).
result = tb.simulate(cluster, "helios", jobs=2000, seed=1, policies=["best-fit", "first-fit"])
for row in result["summary"]:
    print(f'{row["policy"]:10} util {row["utilization"]:.1%}  split jobs {row["split_jobs"]:.1%}')
waits = [j["wait_s"] for j in result["jobs"] if j["policy"] == "best-fit" and j["state"] == "completed"]
print(len(waits), "jobs completed under best-fit")
assert all(row["conserved"] for row in result["summary"])
