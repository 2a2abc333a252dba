# The Debian package of this build (cpack -G DEB): its files and dependencies,
# a CMake project built against it extracted into a clean prefix
# (find_package(Weave CONFIG), weavegen from the package), and a plain
# Makefile project built with pkg-config (weave.pc).
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")

run(cpack -G DEB -B "${WORK_DIR}" --config "${WEAVE_BUILD_DIR}/CPackConfig.cmake")
file(GLOB deb "${WORK_DIR}/weave_*.deb")
if(NOT deb)
  message(FATAL_ERROR "cpack made no weave_*.deb in ${WORK_DIR}")
endif()
run(dpkg-deb -f "${deb}" Package Depends)
if(NOT last_output MATCHES "Package: weave" OR NOT last_output MATCHES "libhiredis-dev")
  message(FATAL_ERROR "unexpected control fields:\n${last_output}")
endif()
set(root "${WORK_DIR}/root")
run(dpkg-deb -x "${deb}" "${root}")
foreach(file usr/bin/weave usr/bin/weavegen usr/include/weave/lock.h usr/include/weave/metrics.h
             usr/lib/cmake/Weave/WeaveConfig.cmake usr/lib/pkgconfig/weave.pc usr/share/weave/annotations/lock.json)
  if(NOT EXISTS "${root}/${file}")
    message(FATAL_ERROR "the package has no ${file}")
  endif()
endforeach()
run("${root}/usr/bin/weave" --help)

# CMake: the consumer project against the extracted package.
set(source "${WORK_DIR}/consumer")
file(COPY "${CONSUMER_SOURCE_DIR}/" DESTINATION "${source}")
run(${CMAKE_COMMAND} -S "${source}" -B "${WORK_DIR}/consumer-build" -DCMAKE_PREFIX_PATH=${root}/usr
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/consumer-build" -j 2)
run("${WORK_DIR}/consumer-build/consumer")

# pkg-config: a Makefile project.
file(COPY "${PROJECTS_DIR}/pkgconfig_consumer/" DESTINATION "${WORK_DIR}/make")
run(${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${root}/usr/lib/pkgconfig" "CXX=${CXX}"
    make -C "${WORK_DIR}/make")
run("${WORK_DIR}/make/consumer")
if(NOT last_output STREQUAL "ok\n")
  message(FATAL_ERROR "the pkg-config consumer printed: ${last_output}")
endif()
