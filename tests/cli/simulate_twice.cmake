# `topoblock simulate` end to end: the same seed gives the same bytes, bad
# input is refused with exit code 2. Run by CTest:
#   cmake -DTOPOBLOCK=<program> -DWORK=<dir> -DTRACE=<csv> -P simulate_twice.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(_args simulate --topology nvl72:2 --jobs 400 --seed 5 --node-mtbf-hours 300)
foreach(_run a b)
  execute_process(COMMAND "${TOPOBLOCK}" ${_args} --csv "${WORK}/${_run}.csv" --svg "${WORK}/${_run}.svg"
    --samples-csv "${WORK}/${_run}.samples.csv"
    OUTPUT_VARIABLE _out_${_run} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "run ${_run} failed (${_rc}):\n${_out_${_run}}")
  endif()
  string(REPLACE "${WORK}/${_run}" "X" _out_${_run} "${_out_${_run}}")
endforeach()
if(NOT _out_a STREQUAL _out_b)
  message(FATAL_ERROR "the table differs between two runs with one seed")
endif()
foreach(_ext csv svg samples.csv)
  file(SHA256 "${WORK}/a.${_ext}" _ha)
  file(SHA256 "${WORK}/b.${_ext}" _hb)
  if(NOT _ha STREQUAL _hb)
    message(FATAL_ERROR "the ${_ext} output differs between two runs with one seed")
  endif()
endforeach()
if(NOT _out_a MATCHES "first-fit" OR NOT _out_a MATCHES "best-fit" OR _out_a MATCHES "WARNING")
  message(FATAL_ERROR "unexpected table:\n${_out_a}")
endif()
# Another seed, other bytes (the comparison above could not fail otherwise).
execute_process(COMMAND "${TOPOBLOCK}" simulate --topology nvl72:2 --jobs 400 --seed 6 --svg - --csv "${WORK}/c.csv"
  OUTPUT_QUIET RESULT_VARIABLE _rc)
file(SHA256 "${WORK}/c.csv" _hc)
file(SHA256 "${WORK}/a.csv" _ha)
if(NOT _rc EQUAL 0 OR _hc STREQUAL _ha)
  message(FATAL_ERROR "seed 6 should give another result")
endif()

# A CSV trace with one bad row: replayed, the row reported on stderr.
file(WRITE "${WORK}/t.csv" "submit_time_s,gpus,duration_s\n0,8,100\n5,x,1\n10,200,50\n")
execute_process(COMMAND "${TOPOBLOCK}" simulate --topology nvl72:1 --workload "${WORK}/t.csv" --svg - --policy best-fit
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _err MATCHES "line 3" OR NOT _out MATCHES "best-fit")
  message(FATAL_ERROR "trace replay: rc ${_rc}\n${_out}\n${_err}")
endif()
# The 200-GPU job is larger than one rack: unplaceable, reported (the
# table's last column); the CSV has 1 completed, 1 unplaceable, and the
# run's settings on the row.
if(NOT _out MATCHES "best-fit[^\n]* 1\n")
  message(FATAL_ERROR "expected 1 unplaceable:\n${_out}")
endif()
execute_process(COMMAND "${TOPOBLOCK}" simulate --topology nvl72:1 --workload "${WORK}/t.csv" --svg - --policy best-fit
  --csv "${WORK}/t-out.csv" OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE _rc)
file(READ "${WORK}/t-out.csv" _csv)
if(NOT _rc EQUAL 0 OR NOT _csv MATCHES "\nbest-fit,easy,${WORK}/t.csv,nvl72:1,[0-9.e-]+,1,require,0.1,0,0,2,1,0,0,1,0,true,")
  message(FATAL_ERROR "trace replay CSV: rc ${_rc}\n${_csv}")
endif()

# The table, from its header line on, fits 100 columns.
string(FIND "${_out_a}" "\npolicy " _at)
string(SUBSTRING "${_out_a}" ${_at} -1 _table)
string(REPLACE "\n" ";" _lines "${_table}")
foreach(_line IN LISTS _lines)
  string(LENGTH "${_line}" _n)
  if(_n GREATER 100)
    message(FATAL_ERROR "a line of ${_n} columns:\n${_line}")
  endif()
endforeach()

foreach(_bad "--policy;no-such" "--topology;nvl99:2" "--workload;${WORK}/missing.csv" "--load;-1" "--bogus;1" "--queue;lifo")
  execute_process(COMMAND "${TOPOBLOCK}" simulate ${_bad} --svg - OUTPUT_QUIET ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 2 OR _err STREQUAL "")
    message(FATAL_ERROR "'${_bad}' should be refused with exit code 2 and a message; got ${_rc}")
  endif()
endforeach()
