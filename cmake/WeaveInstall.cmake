# `cmake --install` layout and the find_package(Weave CONFIG) package:
#   lib/libweave_<name>.a (or .so), bin/weavegen, include/weave/*.h, share/weave/annotations/*.json,
#   lib/cmake/Weave/{WeaveConfig,WeaveConfigVersion,WeaveTargets,WeaveGenerate}.cmake
include(CMakePackageConfigHelpers)

set(WEAVE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Weave")
set(WEAVE_INSTALL_ANNOTATIONSDIR "${CMAKE_INSTALL_DATADIR}/weave/annotations")

set(weave_install_targets weave_core weave_store weave_lock weave_lock_redis weave_cache weave_cache_redis weave_dedupe weave_dedupe_redis weave_queue weave_queue_redis weave_store_asio weave_asio weave_redis weave)
if(TARGET weavegen)
  list(APPEND weave_install_targets weavegen)
endif()
install(TARGETS ${weave_install_targets} EXPORT WeaveTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/weave" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(BUILD_SHARED_LIBS)  # the anchors a consumer of the shared libraries compiles (src/CMakeLists.txt)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/cmake/link/" DESTINATION ${CMAKE_INSTALL_DATADIR}/weave/link)
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/annotations/" DESTINATION ${WEAVE_INSTALL_ANNOTATIONSDIR}
  FILES_MATCHING PATTERN "*.json")
install(EXPORT WeaveTargets NAMESPACE Weave:: DESTINATION ${WEAVE_INSTALL_CMAKEDIR})

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/WeaveConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/WeaveConfig.cmake"
  INSTALL_DESTINATION ${WEAVE_INSTALL_CMAKEDIR}
  PATH_VARS WEAVE_INSTALL_ANNOTATIONSDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/WeaveConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/WeaveConfig.cmake" "${PROJECT_BINARY_DIR}/WeaveConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/WeaveGenerate.cmake"
  DESTINATION ${WEAVE_INSTALL_CMAKEDIR})
