# A lint: fails, naming each line, when a file under DIR (only its folders
# UNDER, '|'-separated, when given) whose path (relative to DIR) matches
# FILES and does not start with SKIP (optional; a regex) has a line matching
# REGEX. WHY says what the rule is.
#   cmake -DDIR=<dir> [-DUNDER=<folder>|<folder>] -DFILES=<path regex> [-DSKIP=<prefix>] -DREGEX=<line regex>
#         -DWHY=<text> -P lint_no_match.cmake
set(globs "${DIR}/*")
if(UNDER)
  string(REPLACE "|" ";" folders "${UNDER}")
  list(TRANSFORM folders PREPEND "${DIR}/")
  list(TRANSFORM folders APPEND "/*" OUTPUT_VARIABLE globs)
endif()
file(GLOB_RECURSE sources ${globs})
set(bad "")
foreach(f IN LISTS sources)
  file(RELATIVE_PATH rel "${DIR}" "${f}")
  if(NOT rel MATCHES "${FILES}" OR (SKIP AND rel MATCHES "^${SKIP}"))
    continue()
  endif()
  file(STRINGS "${f}" lines REGEX "${REGEX}")
  foreach(l IN LISTS lines)
    string(APPEND bad "\n  ${rel}: ${l}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "${WHY}:${bad}")
endif()
message(STATUS "ok: ${WHY}")
