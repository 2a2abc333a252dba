# Builds tests/cmake/models against this build of Weave, installed into a fresh
# prefix: a/model.h and b/model.h (different classes, same file name) in one
# target get a/model.weave.h and b/model.weave.h, and both proxies work. Then
# checks that two headers mapping to one output stop the configure, naming both.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
build_against_install("${MODELS_SOURCE_DIR}")
foreach(out a/model.weave.h a/model.weave.cpp b/model.weave.h b/model.weave.cpp)
  if(NOT EXISTS "${build}/weave_generated/models/${out}")
    message(FATAL_ERROR "missing ${build}/weave_generated/models/${out}")
  endif()
endforeach()
run("${build}/models")
if(NOT last_output MATCHES "^a locked a:x, b locked b:y, 2\n$")
  message(FATAL_ERROR "models printed unexpected output:\n${last_output}")
endif()
message(STATUS "models output: ${last_output}")

execute_process(COMMAND ${CMAKE_COMMAND} -S "${MODELS_SOURCE_DIR}" -B "${WORK_DIR}/clash"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DWEAVE_TEST_CLASH=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE "\n" " " err_line "${err}")  # CMake wraps long messages
string(REGEX REPLACE " +" " " err_line "${err_line}")
if(rc EQUAL 0 OR NOT err_line MATCHES "one/model.h" OR NOT err_line MATCHES "two/model.h")
  message(FATAL_ERROR "configure with two headers generating model.weave.h: exit ${rc}, "
    "expected an error naming both:\n${out}\n${err}")
endif()
message(STATUS "clash reported: ${err}")
