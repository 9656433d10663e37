# valgrind memcheck over the test suite, as CI runs it after the test preset:
#   cmake -P cmake/memcheck.cmake
# Runs build/test/tests/topoblock_tests under
# `valgrind --error-exitcode=1 --leak-check=full`, leaving out the long
# randomized, lockstep, mutation and exhaustive walks (they run under
# ASan+UBSan in the sanitize preset, and valgrind slows them some
# thirtyfold), in two processes at once: the parsers' tests
# and the rest. Installs valgrind when apt-get can; skips, saying so, when it
# cannot. -DTESTS=DIR picks another build's tests directory.
cmake_minimum_required(VERSION 3.25)
get_filename_component(_source_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT DEFINED TESTS)
  set(TESTS "${_source_dir}/build/test/tests")
endif()
set(_binary "${TESTS}/topoblock_tests")
if(NOT EXISTS "${_binary}")
  message(FATAL_ERROR "memcheck: ${_binary} is not built (run cmake -P cmake/test.cmake first)")
endif()
find_program(_valgrind valgrind)
if(NOT _valgrind)
  find_program(_apt apt-get)
  if(_apt)
    execute_process(COMMAND apt-get install -y -q valgrind RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      execute_process(COMMAND apt-get update -q)
      execute_process(COMMAND apt-get install -y -q valgrind)
    endif()
    find_program(_valgrind valgrind)
  endif()
  if(NOT _valgrind)
    message(STATUS "memcheck: skipped: valgrind is not installed and cannot be installed here")
    return()
  endif()
endif()

# Test cases left out, by doctest name pattern.
set(_excluded
  "differential:*"
  "exhaustive:*"
  "replays the shared*"
  "fuzz:*"
  "*decide identically*"
  "*decides as its reference*"
  "the conformance harness: * pass*")
list(JOIN _excluded "," _exclude)
# The two halves, by source file.
set(_half_one "*/tests/io/*,*/tests/request/*,*/tests/support/*")
# The test binary replaces operator new and delete with counting ones over
# malloc and free (tests/policy/warm_decisions.cpp): valgrind must leave the
# binary's own replacements in place (or the counting tests count nothing),
# and the library's nothrow new, which valgrind still intercepts, then pairs
# with the replaced delete's free (std::stable_sort's temporary buffer): not
# a mismatch in the code under test.
set(_replaced_new --soname-synonyms=somalloc=nouserintercepts --show-mismatched-frees=no)
set(_logs "${TESTS}/memcheck")
file(MAKE_DIRECTORY "${_logs}")

# One half (this script runs itself with -DHALF=one|two for each, both at
# once): its output goes to memcheck/<half>.log, its exit code to <half>.rc.
if(DEFINED HALF)
  if(HALF STREQUAL "one")
    set(_files "--source-file=${_half_one}")
  else()
    set(_files "--source-file-exclude=${_half_one}")
  endif()
  execute_process(
    COMMAND "${_valgrind}" --error-exitcode=1 --leak-check=full --quiet ${_replaced_new}
            "${_binary}" "--test-case-exclude=${_exclude}" "${_files}" --no-intro=true
    WORKING_DIRECTORY "${TESTS}"
    OUTPUT_FILE "${_logs}/${HALF}.log" ERROR_FILE "${_logs}/${HALF}.log" RESULT_VARIABLE _rc)
  file(WRITE "${_logs}/${HALF}.rc" "${_rc}")
  return()
endif()

string(TIMESTAMP _start "%s")
file(REMOVE "${_logs}/one.rc" "${_logs}/two.rc")
# execute_process runs its commands at once (as a pipeline; neither writes to
# standard output).
execute_process(
  COMMAND "${CMAKE_COMMAND}" -DHALF=one "-DTESTS=${TESTS}" -P "${CMAKE_CURRENT_LIST_FILE}"
  COMMAND "${CMAKE_COMMAND}" -DHALF=two "-DTESTS=${TESTS}" -P "${CMAKE_CURRENT_LIST_FILE}")
string(TIMESTAMP _end "%s")
math(EXPR _seconds "${_end} - ${_start}")
set(_failed "")
foreach(_half one two)
  set(_rc "none")
  if(EXISTS "${_logs}/${_half}.rc")
    file(READ "${_logs}/${_half}.rc" _rc)
  endif()
  if(NOT _rc STREQUAL "0")
    file(READ "${_logs}/${_half}.log" _log)
    message("${_log}")
    list(APPEND _failed "${_half} (exit ${_rc})")
  endif()
endforeach()
if(_failed)
  message(FATAL_ERROR "memcheck: failed: ${_failed} after ${_seconds} s; logs in ${_logs}")
endif()
message(STATUS "memcheck: no errors, no leaks (${_seconds} s)")
