# CTest's fuzz.corpora (tests/CMakeLists.txt): builds this folder's project
# (clang++-14, libFuzzer, ASan, UBSan) in BUILD_DIR and runs every target for
# SECONDS on its committed corpus. New inputs go to a scratch folder, never
# into tests/fuzz/corpus/; a finding fails the test with libFuzzer's report.
# Ten-minute runs: docs/guarantees.md, "Fuzzing".
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BUILD_DIR} -DCMAKE_CXX_COMPILER=${CXX}
                        -DCMAKE_BUILD_TYPE=
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the fuzz targets failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} -j 2 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz targets failed:\n${out}")
endif()
file(GLOB sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/fuzz_*.cpp)
list(SORT sources)
foreach(source IN LISTS sources)
  string(REGEX REPLACE "^fuzz_(.*)\\.cpp$" "\\1" name "${source}")
  set(scratch ${BUILD_DIR}/new/${name})
  file(REMOVE_RECURSE ${scratch})
  file(MAKE_DIRECTORY ${scratch})
  execute_process(COMMAND ${BUILD_DIR}/fuzz_${name} -max_total_time=${SECONDS} -rss_limit_mb=2048
                          -malloc_limit_mb=256 -print_final_stats=1 ${scratch} ${SOURCE_DIR}/corpus/${name}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" runs "${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fuzz_${name} found something (exit ${rc}):\n${out}")
  endif()
  message(STATUS "fuzz_${name}: ${SECONDS} s, ${runs}, no finding")
endforeach()
