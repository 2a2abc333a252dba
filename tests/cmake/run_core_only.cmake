# Builds tests/cmake/core_only against this build of Weave (installed into a
# fresh prefix): a program linking Weave::core alone runs its own annotation
# and depends on none of hiredis, libuuid or the lock runtime. The consumer of
# Weave::weave built by cmake.find_package_consumer does (the check can fail).
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
build_against_install("${SOURCE_DIR}")
run("${build}/core_only")
set(program_output "${last_output}")
if(NOT program_output MATCHES "timed quote:lamp -> 4")
  message(FATAL_ERROR "core_only printed unexpected output:\n${program_output}")
endif()
check_not_linked("${build}/core_only" LIBRARIES hiredis libuuid
                 SYMBOLS "weave_link_lock" "weave::v[0-9]+::LockClient" "redisConnect" "nlohmann")
message(STATUS "core_only: ${program_output}")
