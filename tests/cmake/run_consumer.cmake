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
run(${CMAKE_COMMAND} --build "${build}" -j 2)
if(NOT last_output MATCHES "weavegen greeter.h")
  message(FATAL_ERROR "the first build did not run weavegen:\n${last_output}")
endif()

# Nothing changed: weavegen must not run again (AUTOMOC-like).
run(${CMAKE_COMMAND} --build "${build}" -j 2)
if(last_output MATCHES "weavegen greeter.h")
  message(FATAL_ERROR "weavegen ran again although nothing changed:\n${last_output}")
endif()

# A header the annotated header includes changed: regenerate (depfile).
file(TOUCH "${source}/greeting.h")
run(${CMAKE_COMMAND} --build "${build}" -j 2)
if(NOT last_output MATCHES "weavegen greeter.h")
  message(FATAL_ERROR "weavegen did not rerun after an included header changed:\n${last_output}")
endif()

# The annotated header itself changed: regenerate.
file(TOUCH "${source}/greeter.h")
run(${CMAKE_COMMAND} --build "${build}" -j 2)
if(NOT last_output MATCHES "weavegen greeter.h")
  message(FATAL_ERROR "weavegen did not rerun after the annotated header changed:\n${last_output}")
endif()

# weavegen itself changed (a newer install): regenerate.
file(TOUCH "${prefix}/bin/weavegen")
run(${CMAKE_COMMAND} --build "${build}" -j 2)
if(NOT last_output MATCHES "weavegen greeter.h")
  message(FATAL_ERROR "weavegen did not rerun after weavegen changed:\n${last_output}")
endif()

# And nothing changed again: no rerun.
run(${CMAKE_COMMAND} --build "${build}" -j 2)
if(last_output MATCHES "weavegen greeter.h")
  message(FATAL_ERROR "weavegen ran again although nothing changed:\n${last_output}")
endif()

run("${build}/consumer")
if(NOT last_output MATCHES "locked greet:world")
  message(FATAL_ERROR "consumer printed unexpected output:\n${last_output}")
endif()
message(STATUS "consumer output: ${last_output}")
