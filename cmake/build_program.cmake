# topoblock_build_program(<var>): builds the topoblock program with the
# release preset (about a minute the first time, nothing when it is up to
# date) and sets <var> to its path. Needs cmake, a C++20 compiler and make
# (or ninja; make is installed with apt-get when neither is there). Used by
# cmake/run.cmake and cmake/evaluate.cmake.
function(topoblock_build_program out)
  get_filename_component(_source_dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/.." ABSOLUTE)
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
  set(${out} "${_program}" PARENT_SCOPE)
endfunction()
