# Configures, builds and runs tests/consumers/project one way:
#   cmake -DMODE=find_package|add_subdirectory|fetchcontent|pkgconfig
#         -DSOURCE=<topoblock source> -DWORK=<scratch dir> [-DPREFIX=<install prefix>]
#         -DCXX=<compiler> -P run_consumer.cmake
cmake_minimum_required(VERSION 3.25)
foreach(_var MODE SOURCE WORK CXX)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "run_consumer.cmake needs -D${_var}=...")
  endif()
endforeach()
set(_build "${WORK}/${MODE}")
file(REMOVE_RECURSE "${_build}")
set(_configure "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/project" -B "${_build}"
  -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
  -DTOPOBLOCK_CONSUME=${MODE} -DTOPOBLOCK_SOURCE=${SOURCE})
if(MODE STREQUAL "find_package")
  list(APPEND _configure "-DCMAKE_PREFIX_PATH=${PREFIX}")
elseif(MODE STREQUAL "pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "${PREFIX}/share/pkgconfig")
endif()
execute_process(COMMAND ${_configure} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${_build}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${_build}/consumer" COMMAND_ERROR_IS_FATAL ANY)
