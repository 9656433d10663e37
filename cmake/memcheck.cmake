# valgrind memcheck over the test suite, as CI runs it after the test preset:
#   cmake -P cmake/memcheck.cmake
# Runs build/test/tests/topoblock_tests under
# `valgrind --error-exitcode=1 --leak-check=full`, leaving out the long
# randomized and exhaustive walks (they run under ASan+UBSan in the sanitize
# preset, and valgrind slows them some thirtyfold). Installs valgrind when
# apt-get can; skips, saying so, when it cannot. -DTESTS=DIR picks another
# build's tests directory.
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
  "replays the shared*")
list(JOIN _excluded "," _exclude)
# The test binary replaces operator new and delete with counting ones over
# malloc and free (tests/policy/warm_decisions.cpp): valgrind must leave the
# binary's own replacements in place (or the counting tests count nothing),
# and the library's nothrow new, which valgrind still intercepts, then pairs
# with the replaced delete's free (std::stable_sort's temporary buffer): not
# a mismatch in the code under test.
set(_replaced_new --soname-synonyms=somalloc=nouserintercepts --show-mismatched-frees=no)
string(TIMESTAMP _start "%s")
execute_process(
  COMMAND "${_valgrind}" --error-exitcode=1 --leak-check=full --quiet ${_replaced_new}
          "${_binary}" "--test-case-exclude=${_exclude}" --no-intro=true
  WORKING_DIRECTORY "${TESTS}"
  RESULT_VARIABLE _rc)
string(TIMESTAMP _end "%s")
math(EXPR _seconds "${_end} - ${_start}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "memcheck: failed (exit ${_rc}) after ${_seconds} s")
endif()
message(STATUS "memcheck: no errors, no leaks (${_seconds} s)")
