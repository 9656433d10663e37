# The README's first command:   cmake -P cmake/run.cmake
# Builds the topoblock program (release preset) and runs its default
# comparison: every placement policy on 16 GB200 NVL72 racks, a Helios-like
# job mix at 85% offered load, EASY backfill. Prints the table and writes
# topoblock-comparison.svg next to this project's README.
# Needs only cmake, a C++20 compiler (g++ >= 12) and make (or ninja).
# -DARGS="--workload philly --load 0.9" passes options to `topoblock simulate`,
# written before or after -P (cmake reads -D only before -P; the script reads
# it from its own arguments when it comes after).
cmake_minimum_required(VERSION 3.25)
get_filename_component(_source_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
include("${CMAKE_CURRENT_LIST_DIR}/run_args.cmake")
topoblock_run_args(ARGS)
if(TOPOBLOCK_RUN_PRINT_ARGS)
  # For the test of the argument forms: print what would be passed, build nothing.
  message("topoblock simulate arguments: [${ARGS}]")
  return()
endif()

find_program(_make make)
find_program(_ninja ninja)
if(NOT _make AND NOT _ninja)
  # Debian's cmake only recommends make; a minimal install may lack it.
  find_program(_apt apt-get)
  if(NOT _apt)
    message(FATAL_ERROR "topoblock needs make (or ninja) to build; install it")
  endif()
  message(STATUS "Installing make with apt-get")
  execute_process(COMMAND apt-get install -y -q make RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    execute_process(COMMAND apt-get update -q)
    execute_process(COMMAND apt-get install -y -q make COMMAND_ERROR_IS_FATAL ANY)
  endif()
endif()

message(STATUS "Building the topoblock program (release preset, about a minute the first time)")
execute_process(COMMAND "${CMAKE_COMMAND}" --preset release
  WORKING_DIRECTORY "${_source_dir}" OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build --preset release --target topoblock_cli
  WORKING_DIRECTORY "${_source_dir}" OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)

set(_program "${_source_dir}/build/release/examples/topoblock")
if(NOT EXISTS "${_program}")
  message(FATAL_ERROR "the build did not produce ${_program}")
endif()
separate_arguments(_args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${_program}" simulate --svg "${_source_dir}/topoblock-comparison.svg" ${_args}
  WORKING_DIRECTORY "${_source_dir}"
  COMMAND_ERROR_IS_FATAL ANY)
