#!/usr/bin/env bash
# A compiler launcher for a second build of Weave's libraries from the same
# sources, with the same compiler and flags: instead of compiling again, it
# takes the object (and its dependency file) the first build made at the
# same place in its tree, and compiles only when there is none.
#   reuse_object.sh <first build dir> <this build dir> <compiler> <args>...
set -euo pipefail
from=$1 this=$2
shift 2
object="" depfile="" prev=""
for arg in "$@"; do
  case $prev in
    -o) object=$arg ;;
    -MF) depfile=$arg ;;
  esac
  prev=$arg
done
here=${PWD#"$this"}
if [ "$here" != "$PWD" ] && [ -n "$object" ] && [ -f "$from$here/$object" ]; then
  cp "$from$here/$object" "$object"
  if [ -n "$depfile" ]; then
    if [ -f "$from$here/$depfile" ]; then cp "$from$here/$depfile" "$depfile"; else : > "$depfile"; fi
  fi
  exit 0
fi
exec "$@"
