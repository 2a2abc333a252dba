# Shared by the run_*.cmake scripts: run(<command>...) fails the test with the
# command's output when it exits non-zero; its stdout is left in last_output.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
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
