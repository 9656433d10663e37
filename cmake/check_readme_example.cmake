# Fails when README (README.md, docs/python.md) does not contain EXAMPLE verbatim,
# so that the code a reader copies is the code CI compiles and runs.
file(READ "${README}" readme)
file(READ "${EXAMPLE}" example)
string(FIND "${readme}" "${example}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${README} no longer contains ${EXAMPLE} verbatim; update one from the other")
endif()
