# weave_write_if_changed(<file> <text>): writes <text> to <file> only when it
# differs from what is there, so a header made at configure time rebuilds
# nothing when it comes out the same.
function(weave_write_if_changed file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()
