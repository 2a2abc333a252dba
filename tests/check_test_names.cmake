# A ';' in a Catch test name splits its CTest entry in two (CMake lists), and
# both halves then run no test. Fails naming the offending test cases.
#   cmake -DTESTS_DIR=<tests> -P check_test_names.cmake
set(DIR "${TESTS_DIR}")
set(FILES "\\.cpp$")
set(REGEX "TEST_CASE\\(\"[^\"]*;")
set(WHY "test names must not contain ';' (CTest would split them)")
include(${CMAKE_CURRENT_LIST_DIR}/lint_no_match.cmake)
