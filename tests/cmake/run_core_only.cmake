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
# What the program pulled in: shared libraries it needs, and symbols it holds.
run(ldd "${build}/core_only")
set(libraries "${last_output}")
run(nm -C "${build}/core_only")
set(symbols "${last_output}")
foreach(unwanted hiredis libuuid)
  if(libraries MATCHES "${unwanted}")
    message(FATAL_ERROR "a Weave::core program needs ${unwanted}:\n${libraries}")
  endif()
endforeach()
foreach(unwanted "weave_link_lock" "weave::LockClient" "redisConnect" "nlohmann")
  if(symbols MATCHES "${unwanted}")
    message(FATAL_ERROR "a Weave::core program holds '${unwanted}'")
  endif()
endforeach()
message(STATUS "core_only: ${program_output}")
