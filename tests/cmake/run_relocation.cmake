# Relocatable output: builds tests/cmake/consumer and tests/cmake/models from two
# "checkouts" at different absolute paths (each with its build directory
# inside), against this build of Weave installed into a fresh prefix. Every
# generated .weave.h/.weave.cpp must be byte-identical between the two and
# contain neither checkout's path.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(checkouts "${WORK_DIR}/first" "${WORK_DIR}/elsewhere/second-checkout")

include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")

run(${CMAKE_COMMAND} --install "${WEAVE_BUILD_DIR}" --prefix "${prefix}")
foreach(checkout IN LISTS checkouts)
  foreach(project consumer models)
    file(COPY "${PROJECTS_DIR}/${project}/" DESTINATION "${checkout}/${project}")
    run(${CMAKE_COMMAND} -S "${checkout}/${project}" -B "${checkout}/build/${project}"
        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0)
    run(${CMAKE_COMMAND} --build "${checkout}/build/${project}" -j 2)
  endforeach()
endforeach()

list(GET checkouts 0 first)
list(GET checkouts 1 second)
file(GLOB_RECURSE generated RELATIVE "${first}/build" "${first}/build/*.weave.h" "${first}/build/*.weave.cpp")
file(GLOB_RECURSE generated2 RELATIVE "${second}/build" "${second}/build/*.weave.h" "${second}/build/*.weave.cpp")
list(SORT generated)
list(SORT generated2)
list(LENGTH generated n)
if(NOT generated STREQUAL generated2 OR n LESS 6)
  message(FATAL_ERROR "generated files differ or are missing:\n${generated}\nvs.\n${generated2}")
endif()
foreach(f IN LISTS generated)
  file(READ "${first}/build/${f}" a)
  file(READ "${second}/build/${f}" b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${f} differs between the checkouts:\n--- ${first}\n${a}\n--- ${second}\n${b}")
  endif()
  foreach(path IN LISTS checkouts WORK_DIR)
    string(FIND "${a}" "${path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} contains the absolute path ${path}:\n${a}")
    endif()
  endforeach()
endforeach()
message(STATUS "${n} generated files, identical in both checkouts:\n${generated}")
