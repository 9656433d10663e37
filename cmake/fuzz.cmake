# Bounded fuzzing, as CI runs it:   cmake -P cmake/fuzz.cmake
# Builds the libFuzzer programs of tests/fuzz/ (the fuzz preset: clang++,
# -fsanitize=fuzzer,address,undefined; cmake/test.cmake installs clang and
# libFuzzer when missing) and runs each for FUZZ_SECONDS (default 30), two at
# a time, each on a scratch copy of its seed corpus under build/fuzz/runs/
# (the repository is not modified), with -rss_limit_mb=2048 -timeout=10.
# Prints one line per target (executions, seconds) and, for a crash, the
# input that caused it; fails when any target crashed. Skips, saying so,
# where clang++ or libFuzzer is absent and cannot be installed.
#   -DFUZZ_SECONDS=N   time per target      -DFUZZ_TARGETS=a;b   only these
cmake_minimum_required(VERSION 3.25)
get_filename_component(_source_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_build_dir "${_source_dir}/build/fuzz")
if(NOT DEFINED FUZZ_SECONDS)
  set(FUZZ_SECONDS 30)
endif()

# One target (this script runs itself with -DRUN_ONE=name for each, two at a
# time): its output goes to runs/<name>/log, its exit code to runs/<name>/rc.
if(DEFINED RUN_ONE)
  set(_work "${_build_dir}/runs/${RUN_ONE}")
  file(REMOVE_RECURSE "${_work}")
  file(MAKE_DIRECTORY "${_work}/corpus" "${_work}/crashes")
  if(IS_DIRECTORY "${_source_dir}/tests/fuzz/corpus/${RUN_ONE}")
    file(GLOB _seeds "${_source_dir}/tests/fuzz/corpus/${RUN_ONE}/*")
    if(_seeds)
      file(COPY ${_seeds} DESTINATION "${_work}/corpus")
    endif()
  endif()
  execute_process(
    COMMAND "${_build_dir}/tests/fuzz/fuzz_${RUN_ONE}" -max_total_time=${FUZZ_SECONDS} -rss_limit_mb=2048
            -timeout=10 -print_final_stats=1 "-artifact_prefix=${_work}/crashes/" "${_work}/corpus"
    WORKING_DIRECTORY "${_work}"
    OUTPUT_FILE "${_work}/log" ERROR_FILE "${_work}/log" RESULT_VARIABLE _rc)
  file(WRITE "${_work}/rc" "${_rc}")
  return()
endif()

# clang++ with libFuzzer: a one-line fuzz target must build.
function(libfuzzer_works out)
  set(_probe "${_build_dir}/probe")
  file(MAKE_DIRECTORY "${_probe}")
  file(WRITE "${_probe}/probe.cpp"
    "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  find_program(_clangxx clang++ NO_CACHE)
  set(${out} FALSE PARENT_SCOPE)
  if(_clangxx)
    execute_process(COMMAND "${_clangxx}" -fsanitize=fuzzer "${_probe}/probe.cpp" -o "${_probe}/probe"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(${out} TRUE PARENT_SCOPE)
    endif()
  endif()
endfunction()

string(TIMESTAMP _start "%s")
libfuzzer_works(_have_libfuzzer)
find_program(_apt apt-get)
if(NOT _have_libfuzzer AND NOT _apt)
  message(STATUS "fuzz: skipped: clang++ with libFuzzer (-fsanitize=fuzzer) is not available and cannot be installed here")
  return()
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -DPRESET=fuzz -P "${_source_dir}/cmake/test.cmake" RESULT_VARIABLE _built)
if(NOT _built EQUAL 0)
  libfuzzer_works(_have_libfuzzer)
  if(NOT _have_libfuzzer)
    message(STATUS "fuzz: skipped: clang++ with libFuzzer (-fsanitize=fuzzer) could not be installed")
    return()
  endif()
  message(FATAL_ERROR "fuzz: building the fuzz targets failed")
endif()
string(TIMESTAMP _built_at "%s")
math(EXPR _build_seconds "${_built_at} - ${_start}")
message(STATUS "fuzz: targets built in ${_build_seconds} s")

if(NOT DEFINED FUZZ_TARGETS)
  file(GLOB _programs RELATIVE "${_build_dir}/tests/fuzz" "${_build_dir}/tests/fuzz/fuzz_*")
  set(FUZZ_TARGETS "")
  foreach(_p IN LISTS _programs)
    if(NOT _p MATCHES "^fuzz_replay_" AND NOT IS_DIRECTORY "${_build_dir}/tests/fuzz/${_p}")
      string(REGEX REPLACE "^fuzz_" "" _name "${_p}")
      list(APPEND FUZZ_TARGETS "${_name}")
    endif()
  endforeach()
endif()
if(NOT FUZZ_TARGETS)
  message(FATAL_ERROR "fuzz: no fuzz targets were built in ${_build_dir}/tests/fuzz")
endif()

# Two at a time: execute_process runs its commands concurrently (as a
# pipeline; neither writes to standard output).
list(LENGTH FUZZ_TARGETS _count)
set(_i 0)
while(_i LESS _count)
  list(GET FUZZ_TARGETS ${_i} _first)
  set(_commands COMMAND "${CMAKE_COMMAND}" -DRUN_ONE=${_first} -DFUZZ_SECONDS=${FUZZ_SECONDS} -P "${CMAKE_CURRENT_LIST_FILE}")
  math(EXPR _i "${_i} + 1")
  if(_i LESS _count)
    list(GET FUZZ_TARGETS ${_i} _second)
    list(APPEND _commands
      COMMAND "${CMAKE_COMMAND}" -DRUN_ONE=${_second} -DFUZZ_SECONDS=${FUZZ_SECONDS} -P "${CMAKE_CURRENT_LIST_FILE}")
    math(EXPR _i "${_i} + 1")
  endif()
  execute_process(${_commands})
endwhile()

set(_failed "")
foreach(_name IN LISTS FUZZ_TARGETS)
  set(_work "${_build_dir}/runs/${_name}")
  set(_rc "none")
  if(EXISTS "${_work}/rc")
    file(READ "${_work}/rc" _rc)
  endif()
  set(_log "")
  if(EXISTS "${_work}/log")
    file(READ "${_work}/log" _log)
  endif()
  string(REGEX MATCH "stat::number_of_executed_units: *([0-9]+)" _ "${_log}")
  set(_runs "${CMAKE_MATCH_1}")
  string(REGEX MATCH "Done [0-9]+ runs in ([0-9]+) second" _ "${_log}")
  set(_seconds "${CMAKE_MATCH_1}")
  if(_rc STREQUAL "0")
    message(STATUS "fuzz: ${_name}: ok, ${_runs} executions in ${_seconds} s")
  else()
    string(REGEX MATCH "Test unit written to ([^\n]*)" _ "${_log}")
    set(_input "${CMAKE_MATCH_1}")
    string(REGEX MATCH "(property violated: [^\n]*|SUMMARY: [^\n]*|ERROR: [^\n]*)" _why "${_log}")
    message(STATUS "fuzz: ${_name}: FAILED (exit ${_rc}) after ${_runs} executions: ${_why}")
    message(STATUS "fuzz: ${_name}: input: ${_input}; log: ${_work}/log")
    list(APPEND _failed "${_name}")
  endif()
endforeach()
string(TIMESTAMP _end "%s")
math(EXPR _total "${_end} - ${_start}")
message(STATUS "fuzz: the whole leg took ${_total} s")
if(_failed)
  message(FATAL_ERROR "fuzz: crashes in: ${_failed}")
endif()
