# topoblock_run_args(OUT): the options cmake/run.cmake passes to
# `topoblock simulate`. `cmake -DARGS="..." -P cmake/run.cmake` sets ARGS
# before the script runs; `cmake -P cmake/run.cmake -DARGS="..."` leaves the
# -D among the script's own arguments (CMAKE_ARGV<n>), where it is read here.
# The last one given wins; any other argument after the script is an error.
function(topoblock_run_args out)
  set(_args "${ARGS}")
  set(_after_script FALSE)
  math(EXPR _last "${CMAKE_ARGC} - 1")
  foreach(_i RANGE 1 ${_last})
    set(_arg "${CMAKE_ARGV${_i}}")
    if(NOT _after_script)
      if(_arg STREQUAL "-P")
        set(_after_script TRUE)
        math(EXPR _script "${_i} + 1")
      endif()
      continue()
    endif()
    if(_i EQUAL _script)
      continue()
    endif()
    if(_arg MATCHES "^-DARGS=(.*)$")
      set(_args "${CMAKE_MATCH_1}")
    elseif(_arg MATCHES "^-DARGS:STRING=(.*)$")
      set(_args "${CMAKE_MATCH_1}")
    else()
      message(FATAL_ERROR "cmake/run.cmake: unknown argument '${_arg}'; "
        "pass options to topoblock simulate as -DARGS=\"--workload philly --load 0.9\"")
    endif()
  endforeach()
  set(${out} "${_args}" PARENT_SCOPE)
endfunction()
