# Builds tests/cmake/cache_only against this build of Weave (installed into a
# fresh prefix): a program using only [[cache]] caches on the embedded store
# and links neither the lock runtime (its leases are core's) nor libuuid nor
# hiredis.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
build_against_install("${SOURCE_DIR}")
run("${build}/cache_only")
set(program_output "${last_output}")
if(NOT program_output MATCHES "cached lamp -> 4, 4 after 1 load")
  message(FATAL_ERROR "cache_only printed unexpected output:\n${program_output}")
endif()
check_not_linked("${build}/cache_only" LIBRARIES hiredis libuuid
                 SYMBOLS "weave_link_lock" "weave::v[0-9]+::LockClient" "LeaseState" "redisConnect")
message(STATUS "cache_only: ${program_output}")
