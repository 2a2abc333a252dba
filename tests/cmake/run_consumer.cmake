# Installs this build of Weave into a fresh prefix, then configures, builds and
# runs tests/cmake/consumer against it with find_package(Weave CONFIG).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
# Work on a copy: the test touches a header to check regeneration.
set(source "${WORK_DIR}/src")
file(COPY "${CONSUMER_SOURCE_DIR}/" DESTINATION "${source}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${WEAVE_BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${source}" -B "${build}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug)
# Builds the consumer and checks whether weavegen ran: `expected` is YES or NO.
function(build_expecting_weavegen expected why)
  run(${CMAKE_COMMAND} --build "${build}" -j 2)
  if(last_output MATCHES "weavegen greeter.h")
    set(ran YES)
  else()
    set(ran NO)
  endif()
  if(NOT ran STREQUAL expected)
    message(FATAL_ERROR "weavegen ran: ${ran}, expected ${expected} (${why}):\n${last_output}")
  endif()
endfunction()

build_expecting_weavegen(YES "first build")
build_expecting_weavegen(NO "nothing changed (AUTOMOC-like)")
file(TOUCH "${source}/greeting.h")
build_expecting_weavegen(YES "a header the annotated header includes changed (depfile)")
file(TOUCH "${source}/greeter.h")
build_expecting_weavegen(YES "the annotated header changed")
file(TOUCH "${prefix}/bin/weavegen")
build_expecting_weavegen(YES "weavegen itself changed (a newer install)")
build_expecting_weavegen(NO "nothing changed again")

run("${build}/consumer")
if(NOT last_output MATCHES "locked greet:world")
  message(FATAL_ERROR "consumer printed unexpected output:\n${last_output}")
endif()
message(STATUS "consumer output: ${last_output}")
