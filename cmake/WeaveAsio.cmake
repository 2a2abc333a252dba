# Which Asio the async component (Weave::asio) is built on, for Weave's build
# and for its installed package alike (weave/asio.h names it weave::net):
#   weave_find_asio()             Boost.Asio >= 1.81 when Boost is found (the
#                                 default), else standalone Asio >= 1.22.
#                                 Sets WEAVE_ASIO to "boost", "standalone" or
#                                 "" (neither) and WEAVE_ASIO_TARGET to the
#                                 target the async libraries link.
#   weave_find_standalone_asio()  standalone Asio alone (Debian's libasio-dev):
#                                 asio/version.hpp's ASIO_VERSION >= 102200
#                                 gives Weave::standalone_asio, its headers and
#                                 WEAVE_ASIO_STANDALONE, the macro weave/asio.h
#                                 chooses by (every target linking Weave::asio
#                                 gets it through this target).
# -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON builds on standalone Asio where Boost
# 1.81 is installed too.
set(WEAVE_STANDALONE_ASIO_MIN 102200)

function(weave_find_standalone_asio)
  if(TARGET Weave::standalone_asio)
    return()
  endif()
  find_path(WEAVE_STANDALONE_ASIO_INCLUDE_DIR asio/version.hpp)
  if(NOT WEAVE_STANDALONE_ASIO_INCLUDE_DIR)
    return()
  endif()
  file(STRINGS "${WEAVE_STANDALONE_ASIO_INCLUDE_DIR}/asio/version.hpp" line REGEX "^#define ASIO_VERSION [0-9]+")
  string(REGEX REPLACE "^#define ASIO_VERSION ([0-9]+).*" "\\1" version "${line}")
  if(NOT version OR version LESS WEAVE_STANDALONE_ASIO_MIN)
    message(STATUS "Weave: standalone Asio ${version} in ${WEAVE_STANDALONE_ASIO_INCLUDE_DIR} is older than "
      "${WEAVE_STANDALONE_ASIO_MIN} (1.22)")
    return()
  endif()
  add_library(Weave::standalone_asio INTERFACE IMPORTED)
  set_target_properties(Weave::standalone_asio PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${WEAVE_STANDALONE_ASIO_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS WEAVE_ASIO_STANDALONE)
  math(EXPR major "${version} / 100000")
  math(EXPR minor "${version} / 100 % 1000")
  math(EXPR patch "${version} % 100")
  set(WEAVE_STANDALONE_ASIO_VERSION "${major}.${minor}.${patch}" PARENT_SCOPE)
endfunction()

macro(weave_find_asio)
  set(WEAVE_ASIO "")
  set(WEAVE_ASIO_TARGET "")
  find_package(Boost 1.81 CONFIG QUIET)
  if(Boost_FOUND)
    set(WEAVE_ASIO boost)
    set(WEAVE_ASIO_TARGET Boost::headers)
    message(STATUS "Weave: the async component is built on Boost.Asio ${Boost_VERSION}")
  else()
    weave_find_standalone_asio()
    if(TARGET Weave::standalone_asio)
      set(WEAVE_ASIO standalone)
      set(WEAVE_ASIO_TARGET Weave::standalone_asio)
      message(STATUS "Weave: Boost >= 1.81 not found: the async component is built on standalone Asio "
        "${WEAVE_STANDALONE_ASIO_VERSION}")
    endif()
  endif()
endmacro()
