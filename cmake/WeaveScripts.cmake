# weave_embed_scripts(<header> <namespace> <folder>)
#
# Writes <header> with one `inline constexpr char <name>[]` per <folder>/<name>.lua
# in namespace weave::<namespace> (files named _*.lua are helpers: a script
# pulls one in with a `--@include _name.lua` line, found in <folder>, else in
# src/store/scripts, the helpers every feature's scripts share: the server's
# clock, key lifetimes, fencing counters). Runs when CMake configures
# and again whenever a file in the folder changes; the header is rewritten only
# when its text changes, so nothing rebuilds for nothing. The store layer loads
# the scripts by SHA; a script is identified by the address of its string.
include(${CMAKE_CURRENT_LIST_DIR}/WeaveWriteIfChanged.cmake)
function(weave_embed_scripts header namespace folder)
  file(GLOB scripts CONFIGURE_DEPENDS "${folder}/*.lua")
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${folder}")
  set(out "// Generated from ${rel}/*.lua by cmake/WeaveScripts.cmake: edit the .lua files.\n")
  string(APPEND out "#pragma once\n\n#include \"weave/abi.h\"\n\nnamespace WEAVE_NAMESPACE::${namespace} {\n")
  foreach(file IN LISTS scripts)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    get_filename_component(name "${file}" NAME_WE)
    if(name MATCHES "^_")
      continue()
    endif()
    file(READ "${file}" body)
    string(REGEX MATCHALL "--@include [A-Za-z0-9_]+\\.lua\n" includes "${body}")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "--@include ([A-Za-z0-9_]+\\.lua)\n" "\\1" helper "${line}")
      set(shared "${PROJECT_SOURCE_DIR}/src/store/scripts")
      if(EXISTS "${folder}/${helper}")
        set(helper_file "${folder}/${helper}")
      elseif(EXISTS "${shared}/${helper}")
        set(helper_file "${shared}/${helper}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${helper_file}")
      else()
        message(FATAL_ERROR "${file}: --@include ${helper}: no such file in ${folder} or ${shared}")
      endif()
      file(READ "${helper_file}" helper_text)
      string(REPLACE "${line}" "${helper_text}" body "${body}")
    endforeach()
    if(body MATCHES "\\)weave_lua\"")
      message(FATAL_ERROR "${file} contains the raw-string delimiter )weave_lua\"")
    endif()
    string(APPEND out "\ninline constexpr char ${name}[] = R\"weave_lua(\n${body})weave_lua\";\n")
  endforeach()
  string(APPEND out "\n}  // namespace weave::${namespace}\n")
  weave_write_if_changed("${header}" "${out}")
endfunction()
