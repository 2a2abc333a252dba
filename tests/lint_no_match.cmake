# A lint: fails, naming each line, when a file under DIR whose path (relative
# to DIR) matches FILES and does not start with SKIP (optional) has a line
# matching REGEX. WHY says what the rule is.
#   cmake -DDIR=<dir> -DFILES=<path regex> [-DSKIP=<prefix>] -DREGEX=<line regex> -DWHY=<text> -P lint_no_match.cmake
file(GLOB_RECURSE sources "${DIR}/*")
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
