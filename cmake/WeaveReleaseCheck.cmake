# weave_release_check(<target>): a target that compiles what CI's Release
# build must prove (scripts/dev test). -O3 warns where -O2 does not, and a
# warning breaks only a target built with -Werror; so <target> builds all that
# Weave ships (libraries, weavegen, samples, benchmarks) and every test target
# compiled with -Werror, and skips the rest of the test suite, which the
# RelWithDebInfo build has already compiled and CTest runs.

function(_weave_targets_below dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _weave_targets_below("${sub}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(weave_release_check name)
  _weave_targets_below("${PROJECT_SOURCE_DIR}" targets)
  set(picked "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    get_target_property(excluded ${t} EXCLUDE_FROM_ALL)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY" OR excluded)
      continue()
    endif()
    get_target_property(dir ${t} SOURCE_DIR)
    if(dir MATCHES "^${PROJECT_SOURCE_DIR}/tests(/|$)")
      get_target_property(options ${t} COMPILE_OPTIONS)
      if(NOT "-Werror" IN_LIST options)
        continue()
      endif()
    endif()
    list(APPEND picked ${t})
  endforeach()
  add_custom_target(${name})
  add_dependencies(${name} ${picked})
endfunction()
