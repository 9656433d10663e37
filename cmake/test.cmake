# The README's test command:   cmake -P cmake/test.cmake
# Installs the Debian packages the tests need when they are missing (doctest,
# Google Benchmark, make), then configures, builds and runs the suite through
# a workflow preset. -DPRESET=clang|sanitize picks another preset; -DPRESET=fuzz
# (clang++ and libFuzzer) configures and builds the fuzz targets, which
# cmake/fuzz.cmake then runs.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED PRESET)
  set(PRESET test)
endif()
get_filename_component(_source_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(_missing "")
find_file(_doctest_header doctest/doctest.h PATHS /usr/include /usr/local/include NO_CACHE)
if(NOT _doctest_header)
  list(APPEND _missing doctest-dev)
endif()
find_file(_benchmark_header benchmark/benchmark.h PATHS /usr/include /usr/local/include NO_CACHE)
if(NOT _benchmark_header)
  list(APPEND _missing libbenchmark-dev)
endif()
find_program(_make make)
find_program(_ninja ninja)
if(NOT _make AND NOT _ninja)
  list(APPEND _missing make)
endif()
# The consumer test that reads topoblock.pc (tests/consumers).
find_program(_pkg_config pkg-config)
if(NOT _pkg_config AND NOT PRESET STREQUAL "sanitize")
  list(APPEND _missing pkgconf)
endif()
if(PRESET STREQUAL "clang" OR PRESET STREQUAL "fuzz")
  find_program(_clang clang++)
  if(NOT _clang)
    list(APPEND _missing clang)
  endif()
endif()
# libFuzzer's runtime, for the fuzz preset (cmake/fuzz.cmake).
if(PRESET STREQUAL "fuzz")
  file(GLOB _libfuzzer /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a)
  if(NOT _libfuzzer)
    list(APPEND _missing libfuzzer-14-dev)
  endif()
endif()

if(_missing)
  find_program(_apt apt-get)
  if(NOT _apt)
    message(FATAL_ERROR "topoblock tests need: ${_missing}; install them (no apt-get here)")
  endif()
  message(STATUS "Installing missing Debian packages: ${_missing}")
  execute_process(COMMAND apt-get install -y -q ${_missing} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    execute_process(COMMAND apt-get update -q)
    execute_process(COMMAND apt-get install -y -q ${_missing} COMMAND_ERROR_IS_FATAL ANY)
  endif()
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" --workflow --preset ${PRESET}
  WORKING_DIRECTORY "${_source_dir}"
  COMMAND_ERROR_IS_FATAL ANY)
