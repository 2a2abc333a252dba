# The async component on standalone Asio: Weave configured in a tree of its own
# with -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON (as where Boost 1.81 is absent)
# builds Weave::asio on standalone Asio >= 1.22 (WEAVE_ASIO_STANDALONE,
# weave/asio.h), and the asynchronous lock suite on mem:// (a ledger of
# asio::awaitable methods woven by weavegen) passes on it. Only that program
# is built: the libraries that include no Asio are this build's objects
# (reuse_object.sh), weavegen is this build's, and what includes Asio or
# links the async component is compiled here.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
set(tree "${WORK_DIR}/weave")
second_build_settings("${tree}" main_settings UNLESS -DWEAVE_ASIO_STANDALONE)
run(${CMAKE_COMMAND} -S "${WEAVE_SOURCE_DIR}" -B "${tree}" ${main_settings} -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DWEAVE_WITH_ASYNC=ON
    -DWEAVE_BUILD_CODEGEN=OFF "-DWEAVE_WEAVEGEN_EXECUTABLE=${WEAVE_BUILD_DIR}/codegen/weavegen"
    -DWEAVE_BUILD_SAMPLES=OFF -DWEAVE_BUILD_BENCH=OFF)
if(NOT last_output MATCHES "built on standalone Asio")
  message(FATAL_ERROR "the async component was not built on standalone Asio:\n${last_output}")
endif()
run(${CMAKE_COMMAND} --build "${tree}" -j 2 --target test_mem_async_lock)

# What the async component's objects included: standalone Asio, no Boost.
file(GLOB_RECURSE depfiles "${tree}/src/CMakeFiles/weave_asio_objects.dir/*.d" "${tree}/src/CMakeFiles/weave_store_asio_objects.dir/*.d")
if(NOT depfiles)
  message(FATAL_ERROR "no dependency files of weave_asio: cannot tell what it included")
endif()
foreach(depfile IN LISTS depfiles)
  file(READ "${depfile}" deps)
  if(deps MATCHES "[/ ]boost/" OR NOT deps MATCHES "/asio/")
    message(FATAL_ERROR "${depfile}: not built on standalone Asio alone:\n${deps}")
  endif()
endforeach()

string(TIMESTAMP started "%s")
run("${tree}/tests/lock/test_mem_async_lock")
string(TIMESTAMP ended "%s")
math(EXPR seconds "${ended} - ${started}")
string(REGEX MATCH "All tests passed[^\n]*" passed "${last_output}")
if(NOT passed)
  message(FATAL_ERROR "test_mem_async_lock on standalone Asio:\n${last_output}")
endif()
message(STATUS "test_mem_async_lock on standalone Asio: ${passed} (${seconds} s)")
