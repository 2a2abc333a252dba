#!/usr/bin/env bash
# A compiler launcher for a second build of Weave's libraries from the same
# sources, with the same compiler and flags: instead of compiling again, it
# takes the object (and its dependency file) the first build made at the
# same place in its tree, and compiles only when there is none, or when the
# command holds the argument WEAVE_REUSE_UNLESS names (a flag the first build
# did not compile with: -DWEAVE_ASIO_STANDALONE, say).
#   [WEAVE_REUSE_UNLESS=<arg>] reuse_object.sh <first build dir> <this build dir> <compiler> <args>...
set -euo pipefail
from=$1 this=$2
shift 2
object="" depfile="" prev="" differs=""
for arg in "$@"; do
  case $prev in
    -o) object=$arg ;;
    -MF) depfile=$arg ;;
  esac
  [ -n "${WEAVE_REUSE_UNLESS:-}" ] && [ "$arg" = "$WEAVE_REUSE_UNLESS" ] && differs=1
  prev=$arg
done
here=${PWD#"$this"}
if [ -z "$differs" ] && [ "$here" != "$PWD" ] && [ -n "$object" ] && [ -f "$from$here/$object" ]; then
  cp "$from$here/$object" "$object"
  if [ -n "$depfile" ]; then
    if [ -f "$from$here/$depfile" ]; then cp "$from$here/$depfile" "$depfile"; else : > "$depfile"; fi
  fi
  exit 0
fi
exec "$@"
