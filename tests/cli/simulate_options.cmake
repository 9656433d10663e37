# `topoblock simulate`'s command line: every value a replay cannot use is
# refused (exit status 2) before anything runs, naming the option, its range
# and the value; options that do not apply are refused, not ignored.
include("${CMAKE_CURRENT_LIST_DIR}/run_program.cmake")

# Values in range are taken: parsing stops at --help, which prints the
# options, after every earlier option was read.
topoblock_run(NAME "values in range" ARGS simulate --jobs 100000000 --load 0.5 --until 2d --block-gpus 4294967295
  --node-mtbf-hours 1 --repair-hours 0 --node-mtbf-hours 0 --help STATUS 0 OUT_HAS "usage: topoblock simulate")
topoblock_run(NAME "the edges of each range" ARGS simulate --seed 18446744073709551615 --load 1000 --comm-share 1
  --nvlink-gbps 1e6 --ib-gbps 0.001 --node-mtbf-hours 1e9 --repair-hours 1e9 --max-requeues 4294967295 --until 0
  --load=0.5 --jobs=7 --svg=- --small-share 1 --small-share=0 --help STATUS 0)

# (option, a value just past its range)
set(options --jobs 100000001 --seed 18446744073709551616 --load 1001 --small-share 1.5 --until 1e308d --snapshot 1e308d
  --block-gpus 4294967296 --comm-share 1.5 --nvlink-gbps 1e7 --ib-gbps 1e7 --node-mtbf-hours 2e9 --repair-hours 2e9
  --max-requeues 4294967296)
while(options)
  list(POP_FRONT options flag too_large)
  topoblock_run(NAME "${flag} too large" ARGS simulate "${flag}=${too_large}" STATUS 2
    ERR_HAS "topoblock simulate: ${flag} takes " "got '${too_large}', which is too large\n")
  # (--flag=value: CMake drops an empty word from a list.)
  foreach(value -1 nan inf -inf 5x "5 " " 5" 0x10 "")
    topoblock_run(NAME "${flag} '${value}'" ARGS simulate "${flag}=${value}" STATUS 2
      ERR_HAS "topoblock simulate: ${flag} takes " "got '${value}'")
  endforeach()
endwhile()
# Sizes that would exhaust memory or wrap, numbers below their range.
topoblock_run(NAME "--jobs 2^64-1" ARGS simulate --jobs 18446744073709551615 STATUS 2 ERR_HAS "which is too large")
topoblock_run(NAME "--node-mtbf-hours below an hour" ARGS simulate --node-mtbf-hours 0.5 STATUS 2
  ERR_HAS "0 (no failures) or hours from 1 to 1e9, got '0.5', which is too small")
topoblock_run(NAME "--node-mtbf-hours 1e-9" ARGS simulate --node-mtbf-hours 1e-9 STATUS 2 ERR_HAS "too small")
foreach(flag --ib-gbps --load --jobs)
  topoblock_run(NAME "${flag} 0" ARGS simulate ${flag} 0 STATUS 2 ERR_HAS "got '0', which is too small")
endforeach()
topoblock_run(NAME "--until nan" ARGS simulate --until nan STATUS 2 ERR_HAS "--until takes")

# Stray words, flags missing their value, unknown options wherever they stand.
topoblock_run(NAME "a stray word" ARGS simulate extra STATUS 2 ERR_HAS "unexpected argument 'extra'")
topoblock_run(NAME "--load without a value" ARGS simulate --load STATUS 2 ERR_HAS "option --load needs a value")
topoblock_run(NAME "unknown option last" ARGS simulate --bogus STATUS 2 ERR_HAS "unknown option '--bogus'")
topoblock_run(NAME "unknown option with a value" ARGS simulate --bogus=1 --jobs 5 STATUS 2 ERR_HAS "unknown option '--bogus'")
topoblock_run(NAME "--no-stretch takes no value" ARGS simulate --no-stretch=1 STATUS 2 ERR_HAS "--no-stretch takes no value")

# Options that do not apply.
file(WRITE "${WORK}/t.csv" "submit_time_s,gpus,duration_s\n0,8,100\n10,16,50\n")
file(WRITE "${WORK}/once.csv" "submit_time_s,gpus,duration_s\n0,8,100\n0,16,50\n")
set(run --topology nvl72:1 --svg - --policy best-fit)
topoblock_run(NAME "--jobs with a trace" ARGS simulate ${run} --workload "${WORK}/t.csv" --jobs 5 STATUS 2
  ERR_HAS "--jobs applies to synthetic workloads")
topoblock_run(NAME "--seed with a trace and no failures" ARGS simulate ${run} --workload "${WORK}/t.csv" --seed 3 STATUS 2
  ERR_HAS "--seed applies to synthetic workloads and to failures")
topoblock_run(NAME "--seed with a trace and failures" ARGS simulate ${run} --workload "${WORK}/t.csv" --seed 3
  --node-mtbf-hours 100 STATUS 0)
topoblock_run(NAME "--repair-hours without failures" ARGS simulate ${run} --jobs 5 --repair-hours 3 STATUS 2
  ERR_HAS "--repair-hours applies only with failures")
topoblock_run(NAME "--max-requeues without failures" ARGS simulate ${run} --jobs 5 --max-requeues 3 STATUS 2
  ERR_HAS "--max-requeues applies only with failures")
topoblock_run(NAME "--nvlink-gbps without communication" ARGS simulate ${run} --jobs 5 --comm-share 0 --nvlink-gbps 100
  STATUS 2 ERR_HAS "--nvlink-gbps does not apply with --comm-share 0")
topoblock_run(NAME "--block-gpus without contiguous-block" ARGS simulate ${run} --jobs 5 --block-gpus 4 STATUS 2
  ERR_HAS "--block-gpus applies to contiguous-block")
topoblock_run(NAME "--slurm-version without slurm-block" ARGS simulate ${run} --jobs 5 --slurm-version 25.11 STATUS 2
  ERR_HAS "--slurm-version applies to slurm-block")
topoblock_run(NAME "an unknown Slurm version" ARGS simulate ${run} --jobs 5 --slurm-version 26.11 STATUS 2
  ERR_HAS "--slurm-version takes one of 25.11, 26.05, got '26.11'")
topoblock_run(NAME "slurm-block as Slurm 25.11" ARGS simulate --topology nvl72:1 --svg - --policy slurm-block --jobs 20
  --slurm-version 25.11 STATUS 0)
topoblock_run(NAME "--snapshot without a picture" ARGS simulate ${run} --jobs 5 --snapshot 1h STATUS 2
  ERR_HAS "--snapshot sets the picture's moment")
topoblock_run(NAME "--load on a trace submitted at one moment" ARGS simulate ${run} --workload "${WORK}/once.csv" --load 0.5
  STATUS 2 ERR_HAS "--load does not apply: every job is submitted at the same moment")
topoblock_run(NAME "--small-share with a trace" ARGS simulate ${run} --workload "${WORK}/t.csv" --small-share 0.3 STATUS 2
  ERR_HAS "--small-share applies to synthetic workloads")
topoblock_run(NAME "--small-share on a mix" ARGS simulate ${run} --workload llm --jobs 50 --small-share 0.3 STATUS 0
  OUT_HAS "llm-like synthetic mix, 50 jobs, 30% under 8 GPUs")
topoblock_run(NAME "--small-share 1 on a mix of large jobs" ARGS simulate ${run} --workload llm --jobs 50 --small-share 1 STATUS 0)
topoblock_run(NAME "--load on a trace" ARGS simulate ${run} --workload "${WORK}/t.csv" --load 0.5 STATUS 0
  OUT_HAS "at 50% offered load")
# A policy named twice runs once, and the program says so.
topoblock_run(NAME "a policy named twice" ARGS simulate --topology nvl72:1 --svg - --jobs 20 --policy best-fit,first-fit,best-fit
  STATUS 0 ERR_HAS "--policy names 'best-fit' more than once: it runs once" OUT_HAS "first-fit")
string(REGEX MATCHALL "\nbest-fit " rows "${_out}")
list(LENGTH rows n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "best-fit ran ${n} times:\n${_out}")
endif()

# Regression: `--policy contiguous-block --block-gpus 4294967293` divided
# by zero inside the policy. The size is refused before any policy runs,
# with the policy's message.
foreach(size 4294967293 4294967225 73)
  foreach(policy contiguous-block all)
    topoblock_run(NAME "--block-gpus ${size} under ${policy}" ARGS simulate --topology nvl72:2 --policy ${policy}
      --block-gpus ${size} --jobs 5 --svg - STATUS 2 ERR_HAS "contiguous-block: a sub-block of ${size} GPUs is larger than every domain")
  endforeach()
endforeach()

# --topology FILE: a spec in a file, a kubectl listing, and a Slurm file
# named as one.
file(WRITE "${WORK}/racks.conf" "BlockName=b1 Nodes=n[1-18]\nBlockName=b2 Nodes=n[19-36]\n")
topoblock_run(NAME "a Slurm topology file" ARGS simulate ${run} --jobs 5 --topology "${WORK}/racks.conf" STATUS 0
  OUT_HAS "(144 GPUs in 2 NVLink domains)")
string(ASCII 239 187 191 bom)
file(WRITE "${WORK}/cluster.spec" "${bom}# two racks\nnvl72:2\n")
topoblock_run(NAME "a spec in a file, with a BOM" ARGS simulate ${run} --jobs 5 --topology "${WORK}/cluster.spec" STATUS 0
  OUT_HAS "(144 GPUs in 2 NVLink domains)")
# A bad spec in a file: the file, then the spec quoted (its column counts
# in the spec, not the file).
file(WRITE "${WORK}/bad.spec" "# c\n\n# d\nnvl72:x\n")
topoblock_run(NAME "a bad spec in a file" ARGS simulate ${run} --jobs 5 --topology "${WORK}/bad.spec" STATUS 2
  ERR_HAS "${WORK}/bad.spec: spec 'nvl72:x' (column 7): ")
# A huge word in a file is quoted short, its control bytes escaped (a
# control byte is no spec character: the file reads as topology.conf).
string(ASCII 27 esc)
string(REPEAT "9" 1000000 nines)
string(REPEAT "9" 25 nines25)
file(WRITE "${WORK}/huge.spec" "nvl72:${esc}${nines}\n")
topoblock_run(NAME "a huge spec in a file" ARGS simulate ${run} --jobs 5 --topology "${WORK}/huge.spec" STATUS 2
  ERR_HAS "huge.spec, line 1, column 1: " "'nvl72:\\x1b${nines25}...'" ERR_LACKS "${esc}")
string(LENGTH "${_err}" n)
if(n GREATER 400)
  message(FATAL_ERROR "the huge spec's message is ${n} bytes")
endif()
file(WRITE "${WORK}/nodes.txt" "NAME STATUS LABELS\n"
  "gb-01 Ready nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
  "gb-02 NotReady nvidia.com/gpu.clique=u1.1,nvidia.com/gpu.count=4\n"
  "hgx-1 Ready nvidia.com/gpu.count=8\n")
topoblock_run(NAME "a kubectl listing" ARGS simulate --topology "${WORK}/nodes.txt" --jobs 5 --svg - --policy best-fit
  STATUS 0 OUT_HAS "(16 GPUs in 2 NVLink domains)")

# --samples-csv: the figures over time, a row per policy per sample moment
# (50 by default), the run's columns as --csv writes them.
topoblock_run(NAME "--help lists --samples-csv" ARGS simulate --help STATUS 0 OUT_HAS "\n  --samples-csv FILE ")
topoblock_run(NAME "--samples-csv writes its file" ARGS simulate --topology nvl72:1 --svg - --jobs 50 --policy best-fit,first-fit
  --csv "${WORK}/per-policy.csv" --samples-csv "${WORK}/samples.csv" STATUS 0 OUT_HAS "\nwrote ${WORK}/samples.csv\n")
file(STRINGS "${WORK}/samples.csv" lines)
list(POP_FRONT lines header)
set(columns "policy,queue,workload,topology,offered_load,seed,locality,comm_share,node_mtbf_hours,repair_hours")
if(NOT header MATCHES "^${columns},t_s,external_fragmentation,occupied_domains,fewest_domains,jobs_1gpu,jobs_2gpu,"
   OR NOT header MATCHES ",jobs_72gpu,jobs_1node,jobs_2node,[a-z0-9_,]*,jobs_18node$")
  message(FATAL_ERROR "--samples-csv header:\n${header}")
endif()
string(REGEX MATCHALL "," commas "${header}")
list(LENGTH commas header_commas)
# Each policy's rows carry the settings fields of its --csv row.
# (CMake's expressions have no {10}.)
string(REPEAT "[^,]*," 10 ten_fields)
foreach(policy best-fit first-fit)
  file(STRINGS "${WORK}/per-policy.csv" per_policy REGEX "^${policy},")
  string(REGEX MATCH "^${ten_fields}" settings "${per_policy}")
  set(rows ${lines})
  list(FILTER rows INCLUDE REGEX "^${policy},")
  list(LENGTH rows n)
  if(NOT n EQUAL 50 OR settings STREQUAL "")
    message(FATAL_ERROR "${policy}: ${n} sample rows (expected 50), settings '${settings}'")
  endif()
  foreach(row IN LISTS rows)
    string(REGEX MATCHALL "," commas "${row}")
    list(LENGTH commas row_commas)
    string(FIND "${row}" "${settings}" at)
    if(NOT row_commas EQUAL header_commas OR NOT at EQUAL 0)
      message(FATAL_ERROR "${policy}: a row of ${row_commas} commas (header ${header_commas}) or without '${settings}':\n${row}")
    endif()
  endforeach()
endforeach()
list(LENGTH lines n)
if(NOT n EQUAL 100)
  message(FATAL_ERROR "--samples-csv: ${n} rows for 2 policies x 50 samples")
endif()
# A file that cannot be written: the option, the file and why; exit status 1.
topoblock_run(NAME "--samples-csv into a missing directory" ARGS simulate --topology nvl72:1 --svg - --jobs 20 --policy best-fit
  --samples-csv "${WORK}/no/such/dir/samples.csv" STATUS 1
  ERR_HAS "topoblock simulate: --samples-csv: cannot write '${WORK}/no/such/dir/samples.csv': ")
topoblock_run(NAME "--samples-csv -" ARGS simulate --samples-csv - STATUS 2
  ERR_HAS "--samples-csv takes a file name (standard output holds the table), got '-'")
# Every job submitted at one moment: no sample moment, the header alone, and
# a note saying why.
topoblock_run(NAME "--samples-csv without an arrival window" ARGS simulate ${run} --workload "${WORK}/once.csv"
  --samples-csv "${WORK}/none.csv" STATUS 0 ERR_HAS "--samples-csv: no sample moment fell in the replay")
file(STRINGS "${WORK}/none.csv" lines)
list(LENGTH lines n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "--samples-csv without samples: ${n} lines")
endif()
