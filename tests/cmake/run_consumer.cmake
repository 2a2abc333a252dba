# Installs this build of Weave into a fresh prefix, then configures, builds and
# runs tests/cmake/consumer against it with find_package(Weave CONFIG).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${WEAVE_BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${build}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug)
run(${CMAKE_COMMAND} --build "${build}" -j 2)
run("${build}/consumer")
if(NOT last_output MATCHES "locked greet:world")
  message(FATAL_ERROR "consumer printed unexpected output:\n${last_output}")
endif()
message(STATUS "consumer output: ${last_output}")
