# A ';' in a Catch test name splits its CTest entry in two (CMake lists), and
# both halves then run no test. Fails naming the offending test cases.
#   cmake -DTESTS_DIR=<tests> -P check_test_names.cmake
file(GLOB_RECURSE sources "${TESTS_DIR}/*.cpp")
set(bad "")
foreach(f IN LISTS sources)
  file(STRINGS "${f}" lines REGEX "TEST_CASE\\(\"[^\"]*;")
  foreach(l IN LISTS lines)
    string(APPEND bad "\n  ${f}: ${l}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "test names must not contain ';' (CTest would split them):${bad}")
endif()
message(STATUS "no test name contains ';'")
