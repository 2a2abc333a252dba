#!/usr/bin/env bash
# weavegen on the sample header vs. `clang++ -fsyntax-only` on the same header,
# best of N runs each, and the ratio.   bench/codegen_time.sh <build-dir> [runs]
set -euo pipefail
build=${1:-build}; runs=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
header="$root/samples/orders/order_service.h"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
best() {  # best wall time in ms of running "$@" $runs times
  local b=999999
  for _ in $(seq "$runs"); do
    local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    b=$(( (e - s) / 1000000 < b ? (e - s) / 1000000 : b ))
  done
  echo "$b"
}
gen=$(best "$build/codegen/weavegen" --annotations "$root/annotations" \
  --output-header "$out/o.weave.h" --output-source "$out/o.weave.cpp" "$header" -- -I"$root/include")
syn=$(best clang++-14 -std=c++20 -fsyntax-only -Wno-unknown-attributes -I"$root/include" -xc++ "$header")
echo "weavegen:              $gen ms"
echo "clang++ -fsyntax-only: $syn ms"
awk -v g="$gen" -v s="$syn" 'BEGIN { printf "ratio weavegen / syntax-only: %.2f\n", g / s }'
