# Builds Weave's runtime libraries with BUILD_SHARED_LIBS=ON, then runs the
# consumer test against them: the installed package works as shared
# libraries, the consumer needs each libweave_*.so it uses, and the lock
# interceptor and Redis schemes, registered from their own libraries into one
# registry in libweave_core.so, are found. The libraries are compiled with
# the same compiler and flags whether static or shared (position-independent,
# hidden visibility: src/CMakeLists.txt), so this build takes the build
# type and flags of the build under test and reuses its objects
# (reuse_object.sh): what is tested here is the configuration, the link, the
# install and the exported symbols, and compiling every library a second time
# took a quarter of the test suite's CPU. weavegen is not built again
# (WEAVE_BUILD_CODEGEN=OFF): the consumer runs this build's, through
# WEAVE_WEAVEGEN_EXECUTABLE, as a cross build would.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
set(weave_build "${WORK_DIR}/weave")
second_build_settings("${weave_build}" main_settings)
run(${CMAKE_COMMAND} -S "${WEAVE_SOURCE_DIR}" -B "${weave_build}" ${main_settings}
    -DBUILD_SHARED_LIBS=ON -DWEAVE_BUILD_TESTS=OFF -DWEAVE_BUILD_SAMPLES=OFF -DWEAVE_BUILD_BENCH=OFF -DWEAVE_BUILD_CLI=OFF
    -DWEAVE_BUILD_CODEGEN=OFF -DCMAKE_CXX_COMPILER=${CXX})
run(${CMAKE_COMMAND} --build "${weave_build}" -j 2)
set(CONSUMER_WEAVEGEN "${WEAVE_BUILD_DIR}/codegen/weavegen")
set(WEAVE_BUILD_DIR "${weave_build}")
set(WORK_DIR "${WORK_DIR}/consumer")
include("${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake")
run(readelf -d "${build}/consumer")
foreach(lib core lock lock_redis)
  if(NOT last_output MATCHES "libweave_${lib}\\.so")
    message(FATAL_ERROR "the consumer does not need libweave_${lib}.so:\n${last_output}")
  endif()
endforeach()
# Symbol visibility: every exported Weave name is in the versioned namespace,
# and what a library uses only inside itself stays hidden.
foreach(lib core lock store lock_redis cache cache_redis dedupe dedupe_redis queue queue_redis)
  file(GLOB so "${weave_build}/src/libweave_${lib}.so")
  run(nm -DC --defined-only ${so})
  string(REGEX MATCHALL "[^\n]*weave::[^\n]*" exported "${last_output}")
  foreach(sym IN LISTS exported)
    if(NOT sym MATCHES "weave::v[0-9]+::")
      message(FATAL_ERROR "libweave_${lib}.so exports a name outside the versioned namespace: ${sym}")
    endif()
  endforeach()
  # lock_redis's requests are used only inside it: without hidden visibility they would leave it.
  if(lib STREQUAL "lock_redis" AND last_output MATCHES "AcquireRequest")
    message(FATAL_ERROR "libweave_${lib}.so exports its internals:\n${last_output}")
  endif()
endforeach()
