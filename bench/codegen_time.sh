#!/usr/bin/env bash
# weavegen vs. `clang++ -fsyntax-only` on the same header, best of N runs each,
# and the ratio, for the sample header and the real-world corpus headers
# (tests/codegen/realworld).          bench/codegen_time.sh <build-dir> [runs]
set -euo pipefail
build=${1:-build}; runs=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
rw="$root/tests/codegen/realworld/include"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
best() {  # best wall time in ms of running "$@" $runs times
  local b=999999
  for _ in $(seq "$runs"); do
    local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    b=$(( (e - s) / 1000000 < b ? (e - s) / 1000000 : b ))
  done
  echo "$b"
}
printf "%-28s %9s %9s %6s\n" header weavegen syntax ratio
total_gen=0; total_syn=0
for header in "$root/samples/orders/order_service.h" \
              "$rw/mydb/db.h" "$rw/myabsl/quota/quota_tracker.h" "$rw/plat/file_cache.h" \
              "$rw/mystrings/string_builder.h" "$rw/users/v1/user_service.grpc.pb.h" \
              "$rw/handlers/admin_handlers.h"; do
  flags=(-I"$root/include" -I"$rw")
  gen=$(best "$build/codegen/weavegen" --annotations "$root/annotations" \
    --annotations "$root/tests/codegen/vocab" \
    --output-header "$out/o.weave.h" --output-source "$out/o.weave.cpp" "$header" -- "${flags[@]}")
  syn=$(best clang++-14 -std=c++20 -fsyntax-only -Wno-unknown-attributes -Wno-pragma-once-outside-header "${flags[@]}" -xc++ "$header")
  total_gen=$((total_gen + gen)); total_syn=$((total_syn + syn))
  awk -v h="${header##*/}" -v g="$gen" -v s="$syn" \
    'BEGIN { printf "%-28s %6d ms %6d ms %6.2f\n", h, g, s, g / s }'
done
awk -v g="$total_gen" -v s="$total_syn" \
  'BEGIN { printf "%-28s %6d ms %6d ms %6.2f\n", "all", g, s, g / s }'
