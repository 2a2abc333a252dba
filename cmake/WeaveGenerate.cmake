# weave_generate(<target> HEADERS <h>... [ANNOTATIONS <file.json|dir>...] [OUTPUT_DIR <dir>]
#                [ANNOTATION_SPELLING any|scoped] [ALLOW_UNKNOWN_ATTRIBUTES] [WARNINGS_AS_ERRORS]
#                [LINK <weave targets>...])
#
# Runs weavegen on each annotated header at build time and adds the generated
# proxies (<stem>.weave.h / <stem>.weave.cpp) to <target>. Their paths below
# OUTPUT_DIR mirror the header's path relative to CMAKE_CURRENT_SOURCE_DIR
# (a/model.h -> a/model.weave.h; a header outside it keeps its file name).
# Include them as
#   #include "order_service.weave.h"
# weavegen sees the target's include directories and compile definitions. It
# reruns only when the header, anything it includes, a vocabulary file or
# weavegen itself changed (weavegen writes a depfile, like a compiler). The
# outputs hold no absolute path (see docs/weavegen.md), so builds relocate.
#
# A generated .weave.h silences the compiler's unknown-attribute warnings
# around its #include of the annotated header: files including it need no
# flag. <target>'s own sources may include the annotated header directly, so
# <target> (PRIVATE) gets: clang -Wno-unknown-attributes; g++ -Wno-attributes
# (ANNOTATION_SPELLING any, the default) or only -Wno-attributes=weave::
# (scoped: every annotation is spelt [[weave::lock]], needs g++ 12).
# weavegen reports unknown or misspelt annotations instead: an unscoped
# attribute that is neither standard nor an annotation is an error (a typo
# would leave the method unwoven); ALLOW_UNKNOWN_ATTRIBUTES makes it a warning.
# WARNINGS_AS_ERRORS fails the build on any weavegen warning.
# A Weave package built without weavegen (WEAVE_BUILD_CODEGEN=OFF, a cross
# build) runs the weavegen that WEAVE_WEAVEGEN_EXECUTABLE names.
#
# <target> links LINK; by default the components find_package(Weave) was
# asked for (find_package(Weave CONFIG REQUIRED COMPONENTS lock): Weave::lock),
# Weave::weave (everything) when it named none. Weave::core alone
# serves your own annotations without locks, Redis, libuuid or JSON; add
# Weave::lock for [[lock]] on mem://, Weave::redis for the Redis URLs.
include_guard(GLOBAL)

function(weave_generate target)
  cmake_parse_arguments(WG "ALLOW_UNKNOWN_ATTRIBUTES;WARNINGS_AS_ERRORS" "OUTPUT_DIR;ANNOTATION_SPELLING"
    "HEADERS;ANNOTATIONS;LINK" ${ARGN})
  if(WG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "weave_generate(${target}): unknown arguments: ${WG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "weave_generate: '${target}' is not a target")
  endif()
  if(NOT WG_HEADERS)
    message(FATAL_ERROR "weave_generate(${target}): HEADERS is required")
  endif()
  if(NOT WG_ANNOTATION_SPELLING)
    set(WG_ANNOTATION_SPELLING any)
  endif()
  if(WG_ANNOTATION_SPELLING STREQUAL "any")
    set(gnu_flag "-Wno-attributes")
  elseif(WG_ANNOTATION_SPELLING STREQUAL "scoped")
    set(gnu_flag "-Wno-attributes=weave::")
  else()
    message(FATAL_ERROR "weave_generate(${target}): ANNOTATION_SPELLING must be 'any' or 'scoped', "
      "not '${WG_ANNOTATION_SPELLING}'")
  endif()
  if(NOT TARGET Weave::weavegen)
    message(FATAL_ERROR "weave_generate: weavegen is not available (build Weave with WEAVE_BUILD_CODEGEN=ON, "
      "or set WEAVE_WEAVEGEN_EXECUTABLE to a weavegen of this machine)")
  endif()
  if(NOT WG_OUTPUT_DIR)
    set(WG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/weave_generated/${target}")
  endif()
  file(MAKE_DIRECTORY "${WG_OUTPUT_DIR}")

  set(weavegen_args --annotations "${WEAVE_ANNOTATIONS_DIR}")
  if(WG_ALLOW_UNKNOWN_ATTRIBUTES)
    list(APPEND weavegen_args --allow-unknown-attributes)
  endif()
  if(WG_WARNINGS_AS_ERRORS)
    list(APPEND weavegen_args --warnings-as-errors)
  endif()
  file(GLOB vocab_deps CONFIGURE_DEPENDS "${WEAVE_ANNOTATIONS_DIR}/*.json")
  foreach(extra IN LISTS WG_ANNOTATIONS)
    get_filename_component(extra "${extra}" ABSOLUTE)
    list(APPEND weavegen_args --annotations "${extra}")
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
    # a/model.h -> <OUTPUT_DIR>/a/model.weave.h: same-named headers in
    # different folders do not collide.
    set(out_stem "${stem}")
    cmake_path(IS_PREFIX CMAKE_CURRENT_SOURCE_DIR "${header_abs}" NORMALIZE inside)
    if(inside)
      file(RELATIVE_PATH rel "${CMAKE_CURRENT_SOURCE_DIR}" "${header_abs}")
      get_filename_component(rel_dir "${rel}" DIRECTORY)
      if(rel_dir)
        set(out_stem "${rel_dir}/${stem}")
      endif()
    endif()
    set(out_h "${WG_OUTPUT_DIR}/${out_stem}.weave.h")
    set(out_cpp "${WG_OUTPUT_DIR}/${out_stem}.weave.cpp")
    get_property(earlier GLOBAL PROPERTY "_weave_generated_from:${out_h}")
    if(earlier)
      message(FATAL_ERROR "weave_generate(${target}): '${earlier}' and '${header_abs}' "
        "would both generate '${out_h}' (rename one, or use another OUTPUT_DIR)")
    endif()
    set_property(GLOBAL PROPERTY "_weave_generated_from:${out_h}" "${header_abs}")
    get_filename_component(out_h_dir "${out_h}" DIRECTORY)
    file(MAKE_DIRECTORY "${out_h_dir}")
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${header_abs}")
    add_custom_command(
      OUTPUT "${out_h}" "${out_cpp}"
      COMMAND Weave::weavegen ${weavegen_args}
              --output-header "${out_h}" --output-source "${out_cpp}"
              --depfile "${out_h}.d" --source-root "${PROJECT_SOURCE_DIR}"
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
  if(NOT WG_LINK)
    set(WG_LINK Weave::weave)
    if(WEAVE_GENERATE_DEFAULT_LINK)  # (WeaveConfig.cmake)
      set(WG_LINK ${WEAVE_GENERATE_DEFAULT_LINK})
    endif()
  endif()
  target_link_libraries(${target} PUBLIC ${WG_LINK})
  # Only for <target>'s own sources (they may include the annotated header
  # directly); whoever includes a .weave.h needs nothing (its pragmas).
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU>:${gnu_flag}>"
    "$<$<COMPILE_LANG_AND_ID:CXX,Clang,AppleClang>:-Wno-unknown-attributes>")
endfunction()
