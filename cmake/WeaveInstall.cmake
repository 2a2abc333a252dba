# `cmake --install` layout and the find_package(Weave CONFIG) package:
#   lib/libweave_<name>.a (static) or lib/libweave.so (shared), bin/weavegen, include/weave/*.h, share/weave/annotations/*.json,
#   lib/cmake/Weave/{WeaveConfig,WeaveConfigVersion,WeaveGenerate,WeaveAsio}.cmake and
#   Weave_<set>Targets.cmake: one export set per component, so that a component
#   loads only its own targets and needs only its own dependencies
#   (cmake/WeaveConfig.cmake.in: which sets each component loads).
include(CMakePackageConfigHelpers)

set(WEAVE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Weave")
set(WEAVE_INSTALL_ANNOTATIONSDIR "${CMAKE_INSTALL_DATADIR}/weave/annotations")

# Every target a consumer can link, by export name (Weave::<name>; weave is Weave::weave).
set(weave_export_sets core store lock lock_redis cache cache_redis dedupe dedupe_redis queue queue_redis quota quota_redis
                      resilience resilience_redis schedule redis)
# The components WeaveConfig.cmake offers (asio only when built).
set(WEAVE_INSTALLED_COMPONENTS core lock cache dedupe queue quota resilience schedule lock_redis cache_redis dedupe_redis queue_redis
                               quota_redis resilience_redis redis)
if(TARGET weave_asio)
  list(APPEND weave_export_sets store_asio asio)
  list(APPEND WEAVE_INSTALLED_COMPONENTS asio)
endif()
list(APPEND weave_export_sets weave)
foreach(set IN LISTS weave_export_sets)
  set(target weave_${set})
  if(set STREQUAL "weave")
    set(target weave)
  endif()
  # A shared build's libweave.so goes with core, which every component needs.
  if(set STREQUAL "core" AND TARGET weave_shared)
    list(APPEND target weave_shared)
  endif()
  install(TARGETS ${target} EXPORT Weave_${set}Targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT Weave_${set}Targets NAMESPACE Weave:: DESTINATION ${WEAVE_INSTALL_CMAKEDIR})
endforeach()
if(TARGET weavegen)
  install(TARGETS weavegen EXPORT Weave_weavegenTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT Weave_weavegenTargets NAMESPACE Weave:: DESTINATION ${WEAVE_INSTALL_CMAKEDIR})
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/weave" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/annotations/" DESTINATION ${WEAVE_INSTALL_ANNOTATIONSDIR}
  FILES_MATCHING PATTERN "*.json")

set(WEAVE_PACKAGE_SHARED FALSE)
if(TARGET weave_shared)
  set(WEAVE_PACKAGE_SHARED TRUE)
endif()
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/WeaveConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/WeaveConfig.cmake"
  INSTALL_DESTINATION ${WEAVE_INSTALL_CMAKEDIR}
  PATH_VARS WEAVE_INSTALL_ANNOTATIONSDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/WeaveConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/WeaveConfig.cmake" "${PROJECT_BINARY_DIR}/WeaveConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/WeaveGenerate.cmake" "${PROJECT_SOURCE_DIR}/cmake/WeaveAsio.cmake"
  DESTINATION ${WEAVE_INSTALL_CMAKEDIR})
