# Shared by the run_*.cmake scripts: run(<command>...) fails the test with the
# command's output when it exits non-zero; its stdout is left in last_output.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# second_build_settings(<tree> <out var> [UNLESS <compiler argument>]): the
# -D settings for a second build of Weave's sources at <tree>: the build type
# and flags of the build under test (WEAVE_BUILD_DIR), and a compiler launcher
# (reuse_object.sh) that takes that build's object at the same place instead
# of compiling again, except for a command holding the UNLESS argument.
function(second_build_settings tree out)
  cmake_parse_arguments(S "" "UNLESS" "" ${ARGN})
  set(forwarded CMAKE_BUILD_TYPE CMAKE_CXX_FLAGS CMAKE_CXX_FLAGS_DEBUG CMAKE_CXX_FLAGS_RELEASE
                CMAKE_CXX_FLAGS_RELWITHDEBINFO CMAKE_CXX_FLAGS_MINSIZEREL WEAVE_WITH_ASYNC)
  load_cache("${WEAVE_BUILD_DIR}" READ_WITH_PREFIX main_ ${forwarded})
  set(settings "")
  foreach(variable IN LISTS forwarded)
    list(APPEND settings "-D${variable}=${main_${variable}}")
  endforeach()
  set(unless "")
  if(S_UNLESS)
    set(unless "WEAVE_REUSE_UNLESS=${S_UNLESS} ")
  endif()
  set(launcher "${WORK_DIR}/reuse_object")
  file(WRITE "${launcher}" "#!/bin/sh\n${unless}exec bash '${CMAKE_CURRENT_FUNCTION_LIST_DIR}/reuse_object.sh' "
       "'${WEAVE_BUILD_DIR}' '${tree}' \"$@\"\n")
  file(CHMOD "${launcher}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  list(APPEND settings "-DCMAKE_CXX_COMPILER_LAUNCHER=${launcher}")
  set(${out} "${settings}" PARENT_SCOPE)
endfunction()

# Installs this build of Weave (WEAVE_BUILD_DIR) into ${WORK_DIR}/prefix, then
# configures and builds <source_dir> against it in ${WORK_DIR}/build; leaves
# `prefix` and `build` set for the caller.
macro(build_against_install source_dir)
  set(prefix "${WORK_DIR}/prefix")
  set(build "${WORK_DIR}/build")
  run(${CMAKE_COMMAND} --install "${WEAVE_BUILD_DIR}" --prefix "${prefix}")
  run(${CMAKE_COMMAND} -S "${source_dir}" -B "${build}"
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0)
  run(${CMAKE_COMMAND} --build "${build}" -j 2)
endmacro()

# Fails unless the built program <program> needs none of the shared libraries
# matching <libraries> (ldd) and holds none of the symbols matching <symbols>
# (nm -C): what a program using one part of Weave must not pull in.
function(check_not_linked program)
  cmake_parse_arguments(C "" "" "LIBRARIES;SYMBOLS" ${ARGN})
  run(ldd "${program}")
  set(libraries "${last_output}")
  run(nm -C "${program}")
  set(symbols "${last_output}")
  foreach(unwanted IN LISTS C_LIBRARIES)
    if(libraries MATCHES "${unwanted}")
      message(FATAL_ERROR "${program} needs ${unwanted}:\n${libraries}")
    endif()
  endforeach()
  foreach(unwanted IN LISTS C_SYMBOLS)
    if(symbols MATCHES "${unwanted}")
      message(FATAL_ERROR "${program} holds '${unwanted}'")
    endif()
  endforeach()
endfunction()
