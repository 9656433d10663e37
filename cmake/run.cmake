# The README's main job:   cmake -P cmake/run.cmake
# Builds the release preset and runs the example scheduler loop on a default
# GB200 NVL72 cluster.
cmake_minimum_required(VERSION 3.25)
get_filename_component(_source_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
execute_process(COMMAND "${CMAKE_COMMAND}" --preset release WORKING_DIRECTORY "${_source_dir}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build --preset release --target embed_scheduler
  WORKING_DIRECTORY "${_source_dir}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${_source_dir}/build/release/examples/embed_scheduler" COMMAND_ERROR_IS_FATAL ANY)
