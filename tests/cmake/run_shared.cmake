# Builds Weave's runtime with BUILD_SHARED_LIBS=ON, one libweave.so, then
# builds programs against its install: the consumer test (find_package,
# weave_generate: the lock interceptor is registered), a lock-only program
# where Boost cannot be found, and the pkg-config consumer (the Redis
# schemes are registered); each needs libweave.so.<abi> (its SONAME). Last, what libweave.so
# exports: every Weave name in its dynamic symbol table is in the versioned
# namespace and declared in include/weave/ (no internal name leaves it).
# The library is compiled with the same compiler and flags whether static or
# shared (position-independent, hidden visibility: src/CMakeLists.txt), so
# this build takes the build type and flags of the build under test and
# reuses its objects (reuse_object.sh): what is tested here is the
# configuration, the link, the install and the exported symbols, and
# compiling the runtime a second time took a quarter of the test suite's CPU.
# weavegen is not built again (WEAVE_BUILD_CODEGEN=OFF): the consumers run
# this build's, through WEAVE_WEAVEGEN_EXECUTABLE, as a cross build would.
cmake_minimum_required(VERSION 3.20)  # IN_LIST
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/run_common.cmake")
set(weave_build "${WORK_DIR}/weave")
# The SONAME's version: the ABI version the headers declare.
file(STRINGS "${WEAVE_SOURCE_DIR}/include/weave/abi.h" abi_line REGEX "^#define WEAVE_ABI_VERSION [0-9]+$")
string(REGEX REPLACE ".* " "" abi_version "${abi_line}")
second_build_settings("${weave_build}" main_settings)
# WEAVE_BUILD_TESTS is left to its default, which a shared build turns off
# (the tests call internals libweave.so does not export).
run(${CMAKE_COMMAND} -S "${WEAVE_SOURCE_DIR}" -B "${weave_build}" ${main_settings}
    -DBUILD_SHARED_LIBS=ON -DWEAVE_BUILD_SAMPLES=OFF -DWEAVE_BUILD_BENCH=OFF -DWEAVE_BUILD_CLI=OFF
    -DWEAVE_BUILD_CODEGEN=OFF -DCMAKE_CXX_COMPILER=${CXX})
run(${CMAKE_COMMAND} --build "${weave_build}" -j 2)
file(GLOB per_component "${weave_build}/src/libweave_*")
if(per_component)
  message(FATAL_ERROR "a shared build made libraries per component: ${per_component}")
endif()

# needs_libweave(<program>): the program loads libweave.so, no other Weave library.
function(needs_libweave program)
  run(readelf -d "${program}")
  if(NOT last_output MATCHES "Shared library: \\[libweave\\.so\\.${abi_version}\\]")
    message(FATAL_ERROR "${program} does not need libweave.so:\n${last_output}")
  endif()
  if(last_output MATCHES "libweave_")
    message(FATAL_ERROR "${program} needs a per-component Weave library:\n${last_output}")
  endif()
endfunction()

# The consumer: prints "locked greet:world" only when the lock interceptor
# registered itself from libweave.so.
set(CONSUMER_WEAVEGEN "${WEAVE_BUILD_DIR}/codegen/weavegen")
set(WEAVE_BUILD_DIR "${weave_build}")
set(WORK_DIR "${WORK_DIR}/consumer")
include("${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake")
needs_libweave("${build}/consumer")

# COMPONENTS lock where Boost cannot be found: the component's interface
# target over libweave.so carries no Boost, although libweave.so holds the
# async component.
set(lock_only "${WORK_DIR}/lock_only")
run(${CMAKE_COMMAND} -S "${PROJECTS_DIR}/lock_only" -B "${lock_only}" -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0
    -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DWEAVE_WEAVEGEN_EXECUTABLE=${prefix}/bin/weavegen)
run(${CMAKE_COMMAND} --build "${lock_only}" -j 2)
run(${CMAKE_COMMAND} -E env --unset=WEAVE_URL --unset=WEAVE_LOCK_URL "${lock_only}/lock_only")
needs_libweave("${lock_only}/lock_only")

# pkg-config (weave.pc of a shared build: -lweave): prints "ok" only when the
# redis:// scheme registered itself.
set(make_dir "${WORK_DIR}/make")
file(COPY "${PROJECTS_DIR}/pkgconfig_consumer/" DESTINATION "${make_dir}")
run(${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${prefix}/lib/pkgconfig" "CXX=${CXX}" make -C "${make_dir}")
run(${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${prefix}/lib" "${make_dir}/consumer")
if(NOT last_output STREQUAL "ok\n")
  message(FATAL_ERROR "the pkg-config consumer printed: ${last_output}")
endif()
needs_libweave("${make_dir}/consumer")

# Exported names. The public headers' own words, comments dropped: each
# part of a Weave name the library exports (namespace, class, member) must
# be declared there.
file(GLOB_RECURSE public_headers "${prefix}/include/weave/*.h")
set(public_words "")
foreach(header IN LISTS public_headers)
  file(READ "${header}" text)
  string(REGEX REPLACE "//[^\n]*" "" text "${text}")
  string(REGEX MATCHALL "[A-Za-z_][A-Za-z_0-9]*" words "${text}")
  list(APPEND public_words ${words})
endforeach()
list(REMOVE_DUPLICATES public_words)

# unexported_internals(<nm -D output> <nm -DC output> <out var>): the lines
# of the demangled output (in the same order: nm --no-sort) that name
# Weave's internals.
function(unexported_internals mangled demangled out)
  set(bad "")
  foreach(text IN ITEMS mangled demangled)
    string(REPLACE ";" "," ${text} "${${text}}")
    string(REPLACE "\n" ";" ${text} "${${text}}")
  endforeach()
  list(LENGTH mangled count)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET mangled ${i} symbol)
    list(GET demangled ${i} line)
    if(symbol MATCHES " weave_")  # an extern "C" name: the static link's anchors are internal
      list(APPEND bad "${line}")
      continue()
    endif()
    # Boost's own entities (their typeinfo, a function template, its local
    # static) are exported over any template argument, Weave's internal
    # executor too: Asio's headers give its templates default visibility
    # (#pragma GCC visibility push(default), boost/asio/detail/push_options.hpp),
    # which g++ keeps over a hidden argument. Those names are Boost's (or
    # standalone Asio's).
    if(symbol MATCHES " _Z(T[IVSHW]|GVZ|GV|Z)?N[KVr]*(5boost|4asio)")
      continue()
    endif()
    string(REGEX MATCHALL "weave::[A-Za-z_0-9:]*" names "${line}")
    foreach(name IN LISTS names)
      if(NOT name MATCHES "^weave::v[0-9]+::(.*)")
        list(APPEND bad "${line}")  # outside the versioned namespace
        break()
      endif()
      string(REPLACE "::" ";" parts "${CMAKE_MATCH_1}")
      list(REMOVE_ITEM parts "")  # a destructor's or operator's (~X, operator=) leaves an empty part
      if(parts STREQUAL "")
        list(APPEND bad "${line}")  # an anonymous namespace's
        break()
      endif()
      set(undeclared "")
      foreach(part IN LISTS parts)
        if(NOT part IN_LIST public_words)
          set(undeclared "${part}")
        endif()
      endforeach()
      if(NOT undeclared STREQUAL "")
        list(APPEND bad "${line}")
        break()
      endif()
    endforeach()
  endforeach()
  set(${out} "${bad}" PARENT_SCOPE)
endfunction()

# The check itself, on names libweave.so must not export (a store class,
# the static link's anchor, an internal function in detail): it can fail.
unexported_internals(
  "1000 T _ZN5weave2v05store10ConnectionC1Ev\n1000 R weave_link_lock\n1000 T _ZN5weave2v06detail28register_builtin_interceptorESt17basic_string_viewIcSt11char_traitsIcEE\n"
  "1000 T weave::v0::store::Connection::Connection()\n1000 R weave_link_lock\n1000 T weave::v0::detail::register_builtin_interceptor(std::basic_string_view<char, std::char_traits<char> >)\n"
  caught)
list(LENGTH caught caught_count)
if(NOT caught_count EQUAL 3)
  message(FATAL_ERROR "the export check let internal names through: ${caught}")
endif()

set(library "${prefix}/lib/libweave.so")
# libweave.so links to libweave.so.<abi>, which names itself so.
run(readelf -d "${library}")
if(NOT last_output MATCHES "Library soname: \\[libweave\\.so\\.${abi_version}\\]")
  message(FATAL_ERROR "libweave.so's SONAME is not libweave.so.${abi_version}:\n${last_output}")
endif()
run(nm -D --defined-only --no-sort "${library}")
set(mangled "${last_output}")
run(nm -DC --defined-only --no-sort "${library}")
set(exported "${last_output}")
unexported_internals("${mangled}" "${exported}" internals)
if(internals)
  list(LENGTH internals count)
  list(SUBLIST internals 0 20 shown)
  string(REPLACE ";" "\n" shown "${shown}")
  message(FATAL_ERROR "libweave.so exports ${count} names that include/weave/ does not declare:\n${shown}")
endif()
# What a program needs is there: the public API and what generated code calls.
foreach(needed "weave::v[0-9]+::LockClient::LockClient" "weave::v[0-9]+::detail::run_chain"
               "weave::v[0-9]+::metrics_text")
  if(NOT exported MATCHES "${needed}")
    message(FATAL_ERROR "libweave.so does not export ${needed}:\n${exported}")
  endif()
endforeach()
