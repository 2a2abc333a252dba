# The Debian package (`cpack -G DEB` in a build tree: weave_<version>_<arch>.deb)
# and weave.pc for pkg-config users. The package holds what `cmake --install`
# installs: libraries, headers, the CMake package, weavegen, weave, the
# annotations; it installs under /usr.

# weave.pc, relocatable: its prefix is found from where the file lies.
file(RELATIVE_PATH WEAVE_PC_PREFIX_FROM_PCDIR "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
# Libs: libweave.so alone when shared (it links hiredis and libuuid
# itself); when static, every archive after the -u options that keep the
# registering objects (src/CMakeLists.txt, weave_component), and what the
# archives link.
if(TARGET weave_shared)
  set(WEAVE_PC_LIBS "-lweave")
  set(WEAVE_PC_REQUIRES "Requires.private: hiredis uuid")
else()
  get_property(anchors GLOBAL PROPERTY WEAVE_LINK_ANCHORS)
  list(TRANSFORM anchors PREPEND "-Wl,-u,")
  set(archives resilience_redis quota_redis queue_redis dedupe_redis cache_redis lock_redis quota resilience schedule queue dedupe cache
               lock store core)
  if(TARGET weave_asio)
    list(INSERT archives 6 asio store_asio)
  endif()
  list(TRANSFORM archives PREPEND "-lweave_")
  string(JOIN " " WEAVE_PC_LIBS ${anchors} ${archives} -lcctz)  # (cctz has no .pc: named here)
  set(WEAVE_PC_REQUIRES "Requires: hiredis uuid")
endif()
set(WEAVE_PC_CFLAGS "")
if(TARGET weave_asio AND WEAVE_ASIO STREQUAL "standalone")  # weave/asio.h's choice, as the CMake targets carry it
  set(WEAVE_PC_CFLAGS " -DWEAVE_ASIO_STANDALONE")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/weave.pc.in" "${PROJECT_BINARY_DIR}/weave.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/weave.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weave)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Declarative method interception for C++20: locks, caches, duplicate guards and delay queues on Redis")
set(CPACK_PACKAGE_CONTACT "Weave developers <weave@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# What a consumer's build needs beside the package (the static libraries link
# hiredis and libuuid; the headers include nlohmann/json; weavegen runs the
# libclang it was built with).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libhiredis-dev, uuid-dev, nlohmann-json3-dev, libstdc++6, pkg-config")
if(WEAVEGEN_LIBCLANG_VERSION)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libclang1-${WEAVEGEN_LIBCLANG_VERSION}")
endif()
# Weave::schedule's time zones are cctz's: a shared build's libweave.so loads
# libcctz.so.2, a static build's consumers link libcctz (libcctz-dev);
# weavegen loads it too, checking a [[scheduled]] time zone (codegen/CMakeLists.txt).
if(TARGET weave_shared)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libcctz2")
else()
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libcctz-dev")
endif()
include(CPack)
