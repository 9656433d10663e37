# `topoblock place` restarted from a saved state: the stream run whole, and
# split before every line, the first part saving its state (--save-state,
# or a `save` event), the second starting from it (--load-state). The
# decisions printed must match the whole run's byte for byte.
include("${CMAKE_CURRENT_LIST_DIR}/run_program.cmake")

set(eight "${WORK}/eight.conf")
file(WRITE "${eight}" "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n")
set(state "${WORK}/state.snapshot")

set(events
  "alloc j1 nodes=2" "alloc j2 gpus=3" "alloc j3 nodes=3" "hold h1 node8" "alloc j4 gpus=2" "drain node4"
  "release j2" "alloc j5 gpus=5" "down node6" "alloc j6 nodes=1" "release j1" "alloc j12 gpus=2" "up node6"
  "release j3" "release j12" "alloc j1 gpus=4" "up node4" "alloc j7 nodes=4 segment=2" "release h1" "release j4"
  "alloc j8 nodes=3")

# check_restarts(<by_event> <event list> <program arguments...>)
function(check_restarts by_event lines)
  set(args ${ARGN})
  set(whole "")
  foreach(line IN LISTS ${lines})
    string(APPEND whole "${line}\n")
  endforeach()
  topoblock_run(NAME "whole stream" ARGS place ${args} INPUT "${whole}" STATUS 0 ERR "")
  set(expected "${_out}")
  if(expected STREQUAL "")
    message(FATAL_ERROR "the whole stream placed nothing: the comparison below could not fail")
  endif()
  list(LENGTH ${lines} count)
  foreach(cut RANGE 0 ${count})
    set(first "")
    set(second "")
    set(i 0)
    foreach(line IN LISTS ${lines})
      if(i LESS cut)
        string(APPEND first "${line}\n")
      else()
        string(APPEND second "${line}\n")
      endif()
      math(EXPR i "${i} + 1")
    endforeach()
    file(REMOVE "${state}")
    if(by_event)
      string(APPEND first "save ${state}   # mid-stream\n")
      topoblock_run(NAME "first ${cut} lines" ARGS place ${args} INPUT "${first}" STATUS 0 ERR "")
    else()
      topoblock_run(NAME "first ${cut} lines" ARGS place ${args} --save-state "${state}" INPUT "${first}" STATUS 0 ERR "")
    endif()
    set(before "${_out}")
    topoblock_run(NAME "the rest after ${cut} lines" ARGS place ${args} --load-state "${state}" INPUT "${second}"
      STATUS 0 ERR "")
    if(NOT "${before}${_out}" STREQUAL expected)
      message(FATAL_ERROR "split after ${cut} lines (${args}): got\n${before}${_out}\nexpected\n${expected}")
    endif()
  endforeach()
endfunction()

check_restarts(FALSE events --topology "${eight}")
check_restarts(TRUE events --topology "${eight}" --policy best-fit)
# The same events on three racks, their node names mapped.
set(racks "")
foreach(line IN LISTS events)
  string(REPLACE "node8" "gb17" line "${line}")
  string(REPLACE "node4" "gb04" line "${line}")
  string(REPLACE "node6" "gb40" line "${line}")
  list(APPEND racks "${line}")
endforeach()
check_restarts(TRUE racks --topology nvl72:3 --policy contiguous-block)
