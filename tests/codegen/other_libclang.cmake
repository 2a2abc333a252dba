# weavegen linked with another libclang writes what this build's weavegen
# wrote. Configures a tree of its own that builds only weavegen (with
# WEAVE_LIBCLANG_VERSION=<VERSION>), reruns every weavegen_test_generate() of
# tests/codegen (the realworld corpus among them) into a mirror of the build
# tree, and fails on any output that is not byte-identical: the suite
# compiles, runs and syntax-checks this build's outputs, so equal outputs
# carry those results over to the other version.
#   cmake -DSOURCE_DIR=<weave> -DBINARY_DIR=<build> -DWORK_DIR=<dir> -DVERSION=<N>
#         -DRUNS=<runs file> -DGENERATOR=<g> -DCXX=<c++> [-DLAUNCHER=<ccache>] -P other_libclang.cmake
cmake_minimum_required(VERSION 3.20)
foreach(var SOURCE_DIR BINARY_DIR WORK_DIR VERSION RUNS GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "other_libclang.cmake: -D${var}=... is missing")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${out}")
  endif()
endfunction()

# Only weavegen: no tests, samples, benchmarks or CLI; not optimized (the
# parsing is libclang's), which halves its compile time.
set(tree "${WORK_DIR}/build")
set(launcher "")
if(LAUNCHER)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
run("configuring weavegen with libclang ${VERSION}"
  ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${tree}" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=None
    "-DCMAKE_CXX_COMPILER=${CXX}" ${launcher} -DWEAVE_LIBCLANG_VERSION=${VERSION}
    -DWEAVE_BUILD_TESTS=OFF -DWEAVE_BUILD_SAMPLES=OFF -DWEAVE_BUILD_BENCH=OFF -DWEAVE_BUILD_CLI=OFF)
run("building weavegen with libclang ${VERSION}"
  ${CMAKE_COMMAND} --build "${tree}" --target weavegen --parallel 2)

# RUNS sets WEAVEGEN_RUNS: one entry per run, "<header out>|<source out>|<arguments>"
# with ',' for ';' in the arguments.
include("${RUNS}")
set(differ "")
foreach(entry IN LISTS WEAVEGEN_RUNS)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 out_h)
  list(GET parts 1 out_cpp)
  list(GET parts 2 args)
  string(REPLACE "," ";" args "${args}")
  foreach(out IN ITEMS "${out_h}" "${out_cpp}")
    if(NOT EXISTS "${out}")
      message(FATAL_ERROR "${out} is missing: build the codegen tests first (cmake --build ${BINARY_DIR})")
    endif()
  endforeach()
  file(RELATIVE_PATH rel_h "${BINARY_DIR}" "${out_h}")
  file(RELATIVE_PATH rel_cpp "${BINARY_DIR}" "${out_cpp}")
  set(mine_h "${WORK_DIR}/out/${rel_h}")
  set(mine_cpp "${WORK_DIR}/out/${rel_cpp}")
  get_filename_component(dir "${mine_h}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  run("weavegen (libclang ${VERSION}) on ${rel_h}"
    "${tree}/codegen/weavegen" --output-header "${mine_h}" --output-source "${mine_cpp}" ${args})
  foreach(pair IN ITEMS "${out_h}|${mine_h}" "${out_cpp}|${mine_cpp}")
    string(REPLACE "|" ";" pair "${pair}")
    list(GET pair 0 theirs)
    list(GET pair 1 mine)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${theirs}" "${mine}" RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      execute_process(COMMAND diff -u "${theirs}" "${mine}" OUTPUT_VARIABLE d)
      string(APPEND differ "${d}\n")
    endif()
  endforeach()
endforeach()
list(LENGTH WEAVEGEN_RUNS n)
if(differ)
  message(FATAL_ERROR "weavegen with libclang ${VERSION} writes other proxies than this build's:\n${differ}")
endif()
message(STATUS "weavegen with libclang ${VERSION}: ${n} headers, every output byte-identical to this build's")
