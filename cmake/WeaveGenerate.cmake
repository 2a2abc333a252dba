# weave_generate(<target> HEADERS <h>... [ANNOTATIONS <file.json|dir>...] [OUTPUT_DIR <dir>])
#
# Runs weavegen on each annotated header at build time and adds the generated
# proxies (<stem>.weave.h / <stem>.weave.cpp) to <target>. Include them as
#   #include "order_service.weave.h"
# weavegen sees the target's include directories and compile definitions. It
# reruns only when the header, anything it includes, a vocabulary file or
# weavegen itself changed (weavegen writes a depfile, like a compiler).
#
# The compiler's own warnings about attributes it does not know ([[lock]]) are
# turned off for <target> and its users; weavegen reports unknown or misspelt
# annotations instead.
include_guard(GLOBAL)

function(weave_generate target)
  cmake_parse_arguments(WG "" "OUTPUT_DIR" "HEADERS;ANNOTATIONS" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "weave_generate: '${target}' is not a target")
  endif()
  if(NOT WG_HEADERS)
    message(FATAL_ERROR "weave_generate(${target}): HEADERS is required")
  endif()
  if(NOT TARGET Weave::weavegen)
    message(FATAL_ERROR "weave_generate: weavegen is not available (build Weave with WEAVE_BUILD_CODEGEN=ON)")
  endif()
  if(NOT WG_OUTPUT_DIR)
    set(WG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/weave_generated/${target}")
  endif()
  file(MAKE_DIRECTORY "${WG_OUTPUT_DIR}")

  set(vocab_args --annotations "${WEAVE_ANNOTATIONS_DIR}")
  file(GLOB vocab_deps CONFIGURE_DEPENDS "${WEAVE_ANNOTATIONS_DIR}/*.json")
  foreach(extra IN LISTS WG_ANNOTATIONS)
    get_filename_component(extra "${extra}" ABSOLUTE)
    list(APPEND vocab_args --annotations "${extra}")
    if(IS_DIRECTORY "${extra}")
      file(GLOB extra_files CONFIGURE_DEPENDS "${extra}/*.json")
      list(APPEND vocab_deps ${extra_files})
    else()
      list(APPEND vocab_deps "${extra}")
    endif()
  endforeach()

  set(incs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")

  foreach(header IN LISTS WG_HEADERS)
    get_filename_component(header_abs "${header}" ABSOLUTE)
    get_filename_component(stem "${header}" NAME_WLE)
    set(out_h "${WG_OUTPUT_DIR}/${stem}.weave.h")
    set(out_cpp "${WG_OUTPUT_DIR}/${stem}.weave.cpp")
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${header_abs}")
    add_custom_command(
      OUTPUT "${out_h}" "${out_cpp}"
      COMMAND Weave::weavegen ${vocab_args}
              --output-header "${out_h}" --output-source "${out_cpp}"
              --depfile "${out_h}.d" --include-as "${header_abs}"
              "${header_abs}" --
              # Quoted so the ';' survives until the generator expression is
              # evaluated; COMMAND_EXPAND_LISTS then splits it into arguments.
              "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>"
              "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>"
      DEPENDS "${header_abs}" Weave::weavegen ${vocab_deps}
      DEPFILE "${out_h}.d"
      COMMENT "weavegen ${shown}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    target_sources(${target} PRIVATE "${out_h}" "${out_cpp}")
  endforeach()

  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${WG_OUTPUT_DIR}>")
  target_link_libraries(${target} PUBLIC Weave::weave)
  target_compile_options(${target} PUBLIC
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-attributes>"
    "$<$<COMPILE_LANG_AND_ID:CXX,Clang,AppleClang>:-Wno-unknown-attributes>")
endfunction()
