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

include("${CMAKE_CURRENT_LIST_DIR}/build_program.cmake")
topoblock_build_program(_program)
separate_arguments(_args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${_program}" simulate --svg "${_source_dir}/topoblock-comparison.svg" ${_args}
  WORKING_DIRECTORY "${_source_dir}"
  COMMAND_ERROR_IS_FATAL ANY)
