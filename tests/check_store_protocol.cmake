# lint.store_protocol: src/store/ is the one place that speaks Redis. A file
# elsewhere under src/ that names hiredis or reads a redisReply fails the test
# (features read replies through store::ReplyView, src/store/reply.h).
file(GLOB_RECURSE sources "${SRC_DIR}/*.h" "${SRC_DIR}/*.cpp")
set(bad "")
foreach(f IN LISTS sources)
  file(RELATIVE_PATH rel "${SRC_DIR}" "${f}")
  if(rel MATCHES "^store/")
    continue()
  endif()
  file(STRINGS "${f}" hits REGEX "redisReply|REDIS_REPLY_|hiredis")
  foreach(h IN LISTS hits)
    string(APPEND bad "  src/${rel}: ${h}\n")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "Redis protocol outside src/store/ (read replies through store::ReplyView):\n${bad}")
endif()
message(STATUS "no Redis protocol outside src/store/")
