# Installs this build of Weave into a fresh prefix, then configures, builds and
# runs tests/cmake/consumer against it with find_package(Weave CONFIG).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
# Work on a copy: the test touches a header to check regeneration.
set(source "${WORK_DIR}/src")
file(COPY "${CONSUMER_SOURCE_DIR}/" DESTINATION "${source}")

include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")

run(${CMAKE_COMMAND} --install "${WEAVE_BUILD_DIR}" --prefix "${prefix}")
set(weavegen_arg "")
if(CONSUMER_WEAVEGEN)  # a package without weavegen: this one goes beside it, named by WEAVE_WEAVEGEN_EXECUTABLE
  file(COPY "${CONSUMER_WEAVEGEN}" DESTINATION "${prefix}/bin")
  set(weavegen_arg "-DWEAVE_WEAVEGEN_EXECUTABLE=${prefix}/bin/weavegen")
endif()
run(${CMAKE_COMMAND} -S "${source}" -B "${build}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0
    ${weavegen_arg})
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

# Attribute flags: only where the annotated header is included directly
# (greeter.cpp, the woven target's own source), never on the target that
# only includes greeter.weave.h (main.cpp) and still builds with -Werror.
file(READ "${build}/compile_commands.json" commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(checked "")
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  string(JSON command GET "${commands}" ${i} command)
  get_filename_component(name "${file}" NAME)
  if(name STREQUAL "main.cpp" AND command MATCHES "-Wno-(unknown-)?attributes")
    message(FATAL_ERROR "a target including only the .weave.h got an attribute flag:\n${command}")
  elseif(name STREQUAL "greeter.cpp" AND NOT command MATCHES "-Wno-(unknown-)?attributes")
    message(FATAL_ERROR "the woven target's own source got no attribute flag:\n${command}")
  endif()
  list(APPEND checked "${name}")
endforeach()
list(FIND checked "main.cpp" main_at)
list(FIND checked "greeter.cpp" greeter_at)
if(main_at EQUAL -1 OR greeter_at EQUAL -1)
  message(FATAL_ERROR "compile_commands.json lacks main.cpp or greeter.cpp: ${checked}")
endif()

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
