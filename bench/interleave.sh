#!/usr/bin/env bash
# Times two or more benchmark binaries side by side: each round runs every
# binary once, each in a process of its own, so that a slow phase of the
# machine (on a shared VM whole processes run fast or slow at random,
# docs/performance.md) falls on all of them alike. Prints, per benchmark
# and binary, the fastest and the median CPU time per iteration (ns) over
# every round and repetition. COUNTER=NAME reads that counter (in ns, such as
# multi_domain_size's place_ns) instead of the CPU time.
#
#   bench/interleave.sh FILTER ROUNDS BINARY BINARY...
#   MIN_TIME=0.2 REPETITIONS=3 bench/interleave.sh '^alloc_release/best-fit/2000$' 6 old/topoblock_bench new/topoblock_bench
#   COUNTER=place_ns bench/interleave.sh '^multi_domain_size/best-fit/1152/2000$' 6 old/topoblock_bench new/topoblock_bench
#
# Keep benchmarks whose iterations differ in kind (alloc_release and
# multi_domain, say) in separate calls: the medians then mean one thing.
set -euo pipefail

if [ "$#" -lt 3 ]; then
    echo "usage: $0 FILTER ROUNDS BINARY BINARY... (env: MIN_TIME, default 0.2; REPETITIONS, default 3; COUNTER)" >&2
    exit 2
fi
filter=$1
rounds=$2
shift 2
case $rounds in
    '' | *[!0-9]* | 0)
        echo "$0: ROUNDS must be a positive whole number, not '$rounds'" >&2
        exit 2
        ;;
esac
for binary in "$@"; do
    if [ ! -x "$binary" ]; then
        echo "$0: '$binary' is not an executable benchmark binary" >&2
        exit 2
    fi
done

results=$(mktemp)
run=$(mktemp)
trap 'rm -f "$results" "$run"' EXIT
for ((round = 1; round <= rounds; ++round)); do
    index=0
    for binary in "$@"; do
        index=$((index + 1))
        if ! "$binary" --benchmark_filter="$filter" --benchmark_min_time="${MIN_TIME:-0.2}" \
            --benchmark_repetitions="${REPETITIONS:-3}" --benchmark_format=csv >"$run" 2>&1; then
            echo "$0: '$binary' failed in round $round:" >&2
            tail -n 5 "$run" >&2
            exit 1
        fi
        # CSV columns: name,iterations,real_time,cpu_time,time_unit,...,
        # then the counters by name; aggregates (_mean, _median, ...) are
        # left out.
        if ! awk -F, -v binary="$index" -v counter="${COUNTER:-}" '
                /^name,/ {
                    column = 0
                    for (i = 1; i <= NF; ++i) { field = $i; gsub(/"/, "", field); if (field == counter) column = i }
                    if (counter != "" && column == 0) { print "no counter named " counter > "/dev/stderr"; exit 1 }
                }
                /^"/ {
                    name = $1; gsub(/"/, "", name)
                    if (name ~ /_(mean|median|stddev|cv)$/) next
                    if (column) { printf "%s %d %.6f\n", name, binary, $column; next }
                    scale = $5 == "us" ? 1e3 : $5 == "ms" ? 1e6 : $5 == "s" ? 1e9 : 1
                    printf "%s %d %.6f\n", name, binary, $4 * scale
                }' "$run" >>"$results"; then
            echo "$0: '$binary' printed no counter '${COUNTER}' for '$filter'" >&2
            exit 1
        fi
    done
done

if [ ! -s "$results" ]; then
    echo "$0: no benchmark matched '$filter'" >&2
    exit 1
fi

echo "binaries: $*"
# Sorted by name, binary and time: each name's times per binary arrive in
# order, so the fastest is the first and the median the middle one.
sort -k1,1 -k2,2n -k3,3g "$results" | awk -v binaries="$#" '
    function flush(   i, line, m) {
        if (name == "") return
        line = name
        for (i = 1; i <= binaries; ++i) {
            if (count[i] == 0) { line = line sprintf("  %d: -", i); continue }
            m = times[i, int((count[i] + 1) / 2)]
            line = line sprintf("  %d: %.1f / %.1f", i, times[i, 1], m)
        }
        print line
        split("", count); split("", times)
    }
    {
        if ($1 != name) { flush(); name = $1 }
        times[$2, ++count[$2]] = $3
    }
    END { flush() }'
echo "(per binary: fastest / median ns of ${COUNTER:-CPU time} per iteration)"
