# lint.thread_safety: every translation unit of src/ that sees the
# thread-safety annotations (core/thread_annotations.h, included directly or
# through any chain of src/ headers) compiles under clang's -Wthread-safety
# -Werror, syntax only. Kept cheap: the standard library headers most units
# include are parsed once into a precompiled header, and JOBS units are
# checked at a time.
#   cmake -DSRC_DIR=src -DCLANGXX=clang++-14 "-DINCLUDES=dir1|dir2" -DWORK_DIR=dir [-DJOBS=n] [-DDEFINES=A;B]
#         -P lint_thread_safety.cmake
cmake_minimum_required(VERSION 3.20)  # (IN_LIST, ZIP_LISTS)
file(GLOB_RECURSE files RELATIVE "${SRC_DIR}" "${SRC_DIR}/*.h" "${SRC_DIR}/*.cpp")
set(root "core/thread_annotations.h")

# The src/ files `file` includes (relative to SRC_DIR), as the variable includes_<file>.
foreach(f IN LISTS files)
  file(STRINGS "${SRC_DIR}/${f}" lines REGEX "^#include \"")
  get_filename_component(dir "${f}" DIRECTORY)
  set(found "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${line}")
    if(dir AND EXISTS "${SRC_DIR}/${dir}/${inc}")
      list(APPEND found "${dir}/${inc}")
    elseif(EXISTS "${SRC_DIR}/${inc}")
      list(APPEND found "${inc}")
    endif()
  endforeach()
  set("includes_${f}" "${found}")
endforeach()

# Those that see the annotations: the root, then whatever includes one of
# them, until nothing more is added.
set(sees "${root}")
set(grew TRUE)
while(grew)
  set(grew FALSE)
  foreach(f IN LISTS files)
    if(f IN_LIST sees)
      continue()
    endif()
    foreach(inc IN LISTS "includes_${f}")
      if(inc IN_LIST sees)
        list(APPEND sees "${f}")
        set(grew TRUE)
        break()
      endif()
    endforeach()
  endforeach()
endwhile()
set(units "")
foreach(f IN LISTS sees)
  if(f MATCHES "\\.cpp$")
    list(APPEND units "${f}")
  endif()
endforeach()
list(LENGTH units count)
if(count LESS 10)
  message(FATAL_ERROR "only ${count} units of ${SRC_DIR} see ${root}: the lint would check next to nothing")
endif()

set(flags -std=c++20 -fsyntax-only -Wthread-safety -Werror)
string(REPLACE "|" ";" include_dirs "${INCLUDES}")
foreach(dir IN LISTS include_dirs)
  list(APPEND flags "-I${dir}")
endforeach()
foreach(definition IN LISTS DEFINES)  # (weave/asio.h's choice of Asio)
  list(APPEND flags "-D${definition}")
endforeach()

# The precompiled standard headers (the same language flags as the units).
set(prefix "${WORK_DIR}/lint_thread_safety_std.h")
set(prefix_text "")
foreach(h algorithm array atomic chrono condition_variable cstdint deque exception functional map memory mutex
          optional set shared_mutex span stop_token string string_view thread unordered_map unordered_set utility
          vector)
  string(APPEND prefix_text "#include <${h}>\n")
endforeach()
file(WRITE "${prefix}" "${prefix_text}")
execute_process(COMMAND "${CLANGXX}" -std=c++20 -x c++-header "${prefix}" -o "${prefix}.pch"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot precompile the standard headers:\n${err}")
endif()
list(APPEND flags -include-pch "${prefix}.pch")

if(NOT JOBS)
  cmake_host_system_information(RESULT JOBS QUERY NUMBER_OF_LOGICAL_CORES)
endif()
# JOBS units at once: the COMMANDs of one execute_process run side by side
# (a pipeline; -fsyntax-only reads no input and writes no output).
set(failed "")
macro(check_batch)
  if(batch)
    execute_process(${commands} RESULTS_VARIABLE results ERROR_QUIET OUTPUT_QUIET)
    foreach(unit rc IN ZIP_LISTS batch results)
      if(NOT rc EQUAL 0)
        list(APPEND failed "${unit}")
      endif()
    endforeach()
  endif()
  set(batch "")
  set(commands "")
endmacro()
set(batch "")
set(commands "")
foreach(u IN LISTS units)
  list(APPEND batch "${u}")
  list(APPEND commands COMMAND "${CLANGXX}" ${flags} "${SRC_DIR}/${u}")
  list(LENGTH batch n)
  if(NOT n LESS JOBS)
    check_batch()
  endif()
endforeach()
check_batch()

if(failed)
  # Again one at a time, for messages not interleaved with another unit's.
  set(report "")
  foreach(u IN LISTS failed)
    execute_process(COMMAND "${CLANGXX}" ${flags} "${SRC_DIR}/${u}" ERROR_VARIABLE err OUTPUT_VARIABLE out)
    string(APPEND report "${u}:\n${err}${out}\n")
  endforeach()
  message(FATAL_ERROR "-Wthread-safety finds state touched without its lock:\n${report}")
endif()
message(STATUS "${count} translation units clean under -Wthread-safety (${JOBS} at a time)")
