# A compile-error case that needs weavegen first: generates the proxy of
# HEADER, compiles the generated source, and passes when the compile fails
# with output containing EXPECTED (and NAMED, e.g. the offending type).
#   cmake -DWEAVEGEN=<exe> -DCXX=<compiler> -DSOURCE_DIR=<weave source> -DHEADER=<h>
#         -DWORK_DIR=<dir> -DEXPECTED=<text> -DNAMED=<text> -P weave_then_compile.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
get_filename_component(stem "${HEADER}" NAME_WLE)
get_filename_component(header_dir "${HEADER}" DIRECTORY)
execute_process(
  COMMAND "${WEAVEGEN}" --annotations "${SOURCE_DIR}/annotations"
          --output-header "${WORK_DIR}/${stem}.weave.h" --output-source "${WORK_DIR}/${stem}.weave.cpp"
          "${HEADER}" -- "-I${SOURCE_DIR}/include"
  RESULT_VARIABLE gen_rc OUTPUT_VARIABLE gen_out ERROR_VARIABLE gen_out)
if(NOT gen_rc EQUAL 0)
  message(FATAL_ERROR "weavegen failed (${gen_rc}); the case needs a header it accepts:\n${gen_out}")
endif()
execute_process(
  COMMAND "${CXX}" -std=c++20 -fsyntax-only "-I${SOURCE_DIR}/include" "-I${header_dir}" "-I${WORK_DIR}"
          "${WORK_DIR}/${stem}.weave.cpp"
  RESULT_VARIABLE cxx_rc OUTPUT_VARIABLE cxx_out ERROR_VARIABLE cxx_out)
message("${cxx_out}")
if(cxx_rc EQUAL 0)
  message(FATAL_ERROR "the generated source compiled; it must not")
endif()
string(FIND "${cxx_out}" "${EXPECTED}" at_expected)
string(FIND "${cxx_out}" "${NAMED}" at_named)
if(at_expected EQUAL -1)
  message(FATAL_ERROR "the compiler's output lacks: ${EXPECTED}")
endif()
if(at_named EQUAL -1)
  message(FATAL_ERROR "the compiler's output does not name: ${NAMED}")
endif()
message(STATUS "failed as expected, saying: ${EXPECTED}")
