# Builds tests/cmake/lock_only against this build of Weave (installed into a
# fresh prefix) with find_package(Weave CONFIG REQUIRED COMPONENTS lock) and
# -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON: a program using only [[lock]]
# configures, builds and runs where Boost cannot be found, includes no Boost
# header and links no Boost, hiredis or store code. Then: an unknown component
# is an error naming it, and the asio component is the one that needs Boost
# (when built on it; on standalone Asio it needs none). Last, no installed
# library but the async component's holds a Boost symbol.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
run(${CMAKE_COMMAND} --install "${WEAVE_BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${build}" -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON)
run(${CMAKE_COMMAND} --build "${build}" -j 2)
run(${CMAKE_COMMAND} -E env --unset=WEAVE_URL --unset=WEAVE_LOCK_URL "${build}/lock_only")
set(program_output "${last_output}")
if(NOT program_output STREQUAL "locked stock:lamp -> 2\n")
  message(FATAL_ERROR "lock_only printed unexpected output:\n${program_output}")
endif()
check_not_linked("${build}/lock_only" LIBRARIES hiredis libuuid
                 SYMBOLS "boost::" "weave::store::" "redisConnect" "weave_link_lock_redis")
# The compiler's dependency files: what each source included.
file(GLOB_RECURSE depfiles "${build}/CMakeFiles/*.d")
if(NOT depfiles)
  message(FATAL_ERROR "no dependency files under ${build}/CMakeFiles: cannot tell what was included")
endif()
foreach(depfile IN LISTS depfiles)
  file(READ "${depfile}" deps)
  if(deps MATCHES "[/ ]boost/")
    message(FATAL_ERROR "${depfile}: a Boost header was included:\n${deps}")
  endif()
endforeach()
message(STATUS "lock_only: ${program_output}")

# find_package_fails(<name> <components> <expected regex> [cmake args...]):
# the configure stops and its error matches.
function(find_package_fails name components expected)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/${name}"
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} "-DWEAVE_TEST_FIND=${components}" ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \n]+" " " err_line "${err}")  # CMake wraps long messages
  if(rc EQUAL 0 OR NOT err_line MATCHES "${expected}")
    message(FATAL_ERROR "find_package(Weave COMPONENTS ${components}): exit ${rc}, expected an error "
      "matching '${expected}':\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "not required: Weave_FOUND=(0|FALSE)")
    message(FATAL_ERROR "find_package(Weave COMPONENTS ${components}) without REQUIRED found Weave:\n${out}")
  endif()
  message(STATUS "${components}: ${err}")
endfunction()
find_package_fails(unknown "lock;sparkle" "Weave has no component 'sparkle'")
set(on_boost FALSE)  # the async component built on Boost.Asio (not standalone Asio)
if(EXISTS "${prefix}/lib/cmake/Weave/Weave_asioTargets.cmake")
  file(READ "${prefix}/lib/cmake/Weave/Weave_asioTargets.cmake" asio_targets)
  if(NOT asio_targets MATCHES "Weave::standalone_asio")
    set(on_boost TRUE)
  endif()
endif()
if(on_boost)
  find_package_fails(asio_without_boost "asio" "Boost" -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON)
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/asio" -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_CXX_COMPILER=${CXX} -DWEAVE_TEST_FIND=asio)
elseif(DEFINED asio_targets)
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/asio" -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_CXX_COMPILER=${CXX} -DWEAVE_TEST_FIND=asio -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON)
else()
  find_package_fails(asio_not_built "asio" "built without its component 'asio'")
endif()

# The libraries themselves: Boost only in the async component's.
file(GLOB libraries "${prefix}/lib/libweave_*")
set(checked "")
foreach(library IN LISTS libraries)
  get_filename_component(name "${library}" NAME)
  run(nm -C "${library}")
  string(FIND "${last_output}" "boost::" at)
  if(name MATCHES "^libweave_(store_)?asio\\." AND NOT on_boost)
    string(FIND "${last_output}" "asio::" standalone_at)
    if(NOT at EQUAL -1 OR standalone_at EQUAL -1)
      message(FATAL_ERROR "${name}: built on standalone Asio, yet it holds a Boost symbol or no asio:: one")
    endif()
  elseif(name MATCHES "^libweave_(store_)?asio\\.")
    if(at EQUAL -1)
      message(FATAL_ERROR "${name} holds no Boost symbol: the check below could not fail")
    endif()
  elseif(NOT at EQUAL -1)
    string(REGEX MATCHALL "[^\n]*boost::[^\n]*" found "${last_output}")
    list(SUBLIST found 0 5 found)
    message(FATAL_ERROR "${name} holds Boost symbols:\n${found}")
  else()
    list(APPEND checked "${name}")
  endif()
endforeach()
foreach(needed core store lock lock_redis dedupe_redis)
  if(NOT checked MATCHES "libweave_${needed}\\.")
    message(FATAL_ERROR "libweave_${needed} was not checked: ${checked}")
  endif()
endforeach()
message(STATUS "no Boost symbol in ${checked}")
