# Builds the Python module and installs it, offline:
#   cmake -P cmake/install_python.cmake
# into the user's site-packages of `python3` (on its path without further
# setup). Options, given before -P:
#   -DPYTHON=/path/to/python3   the interpreter to build for (default: python3 on PATH)
#   -DSITE=/some/dir            install there instead (a virtual environment's
#                               site-packages, a directory on PYTHONPATH)
#   -DBUILD_DIR=/some/dir       build tree (default: build/python)
#   -DCHECK=ON                  then import the installed module from SITE
# Needs cmake, a C++20 compiler, make (or ninja), pybind11 and Python 3's
# headers (Debian: pybind11-dev python3-dev). No network.
cmake_minimum_required(VERSION 3.25)
get_filename_component(_source_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT PYTHON)
  find_program(PYTHON NAMES python3 python REQUIRED)
endif()
if(NOT SITE)
  execute_process(COMMAND "${PYTHON}" -c "import site; print(site.getusersitepackages())"
    OUTPUT_VARIABLE SITE OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
endif()
if(NOT BUILD_DIR)
  set(BUILD_DIR "${_source_dir}/build/python")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" -S "${_source_dir}" -B "${BUILD_DIR}"
    -DCMAKE_BUILD_TYPE=Release -DTOPOBLOCK_PYTHON=ON
    -DTOPOBLOCK_BUILD_TESTS=OFF -DTOPOBLOCK_BUILD_EXAMPLES=OFF -DTOPOBLOCK_BUILD_BENCHMARKS=OFF
    -DTOPOBLOCK_VERIFY_HEADERS=OFF -DTOPOBLOCK_TEST_CONSUMERS=OFF
    "-DPython3_EXECUTABLE=${PYTHON}" "-DTOPOBLOCK_PYTHON_INSTALL_DIR=${SITE}"
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "Building the topoblock Python module (a minute or two)")
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target topoblock_python
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --component python
  COMMAND_ERROR_IS_FATAL ANY)

if(CHECK)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${SITE}" PYTHONDONTWRITEBYTECODE=1
      "${PYTHON}" -c "import topoblock; print(topoblock.__file__, topoblock.Topology('nvl72:2'))"
    # Not from the caller's directory, which Python searches first.
    WORKING_DIRECTORY "${BUILD_DIR}"
    OUTPUT_VARIABLE _imported COMMAND_ERROR_IS_FATAL ANY)
  string(FIND "${_imported}" "${SITE}" _at)
  if(NOT _at EQUAL 0)
    message(FATAL_ERROR "python imported topoblock from elsewhere than ${SITE}: ${_imported}")
  endif()
  message(STATUS "imported ${_imported}")
endif()
