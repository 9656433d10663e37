# `cmake -P cmake/evaluate.cmake` end to end, small: synthetic mixes of a few
# hundred jobs, the shared traces named absent. The report must say they are
# absent, carry every policy the program runs, and show the runs' figures.
#   cmake -DTOPOBLOCK=<program> -DWORK=<dir> -P evaluate_report.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/evaluate_numbers.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" -DTOPOBLOCK=${TOPOBLOCK} -DTRACES=${WORK}/no-traces -DJOBS=300
  -DOUT=${WORK}/docs -DWORK=${WORK}/runs -P "${CMAKE_CURRENT_LIST_DIR}/../../cmake/evaluate.cmake"
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "evaluate.cmake failed (${_rc}):\n${_out}\n${_err}")
endif()
file(READ "${WORK}/docs/evaluation.md" _md)
if(NOT _md MATCHES "The shared Helios and Philly traces were not found" OR _md MATCHES "@SC@")
  message(FATAL_ERROR "the report does not say the traces are absent, or kept a placeholder:\n${_md}")
endif()
if(NOT EXISTS "${WORK}/docs/evaluation/llm-mix-85.svg")
  message(FATAL_ERROR "no picture of the llm mix")
endif()

# Every policy of a run is in the report, and its compact row shows the
# runs' useful utilization at 70%, 85% and 95%, as the CSV has it.
file(STRINGS "${WORK}/runs/llm_mix_85.csv" _rows)
list(POP_FRONT _rows _header)
string(REPLACE "," ";" _header "${_header}")
list(FIND _header useful_utilization _at)
list(LENGTH _rows _policies)
if(_policies LESS 5)
  message(FATAL_ERROR "the run holds ${_policies} policies")
endif()
foreach(_row IN LISTS _rows)
  string(REPLACE "," ";" _fields "${_row}")
  list(GET _fields 0 _policy)
  set(_expected "| ${_policy} |")
  foreach(_load 70 85 95)
    file(STRINGS "${WORK}/runs/llm_mix_${_load}.csv" _load_rows REGEX "^${_policy},")
    string(REPLACE "," ";" _load_fields "${_load_rows}")
    list(GET _load_fields ${_at} _useful)
    _micro("${_useful}" _m)
    _pct(${_m} _p)
    string(APPEND _expected " ${_p} |")
  endforeach()
  string(FIND "${_md}" "${_expected}" _found)
  if(_found EQUAL -1)
    message(FATAL_ERROR "the report lacks the row '${_expected}'")
  endif()
endforeach()
