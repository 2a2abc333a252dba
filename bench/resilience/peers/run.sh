#!/usr/bin/env bash
# cockatiel's and opossum's closed paths in Node on this machine, for scale
# next to bench_resilience (docs/resilience.md). Installs node and npm when
# missing (apt), the pinned packages (npm ci), then prints one JSON line per
# policy. Usage: bench/resilience/peers/run.sh [seconds per policy, default 2]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  as_root=; [ "$(id -u)" = 0 ] || as_root=sudo
  $as_root apt-get install -y "${missing[@]}"
fi
(cd "$HERE" && npm ci --no-audit --no-fund --silent)
exec node "$HERE/peer_resilience.mjs" "${1:-2}"
