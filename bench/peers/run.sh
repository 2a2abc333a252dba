#!/usr/bin/env bash
# One command: install the peers, build the Weave drivers, run every contender
# on every workload against private redis-servers, write
# bench/results/peers-<date>.md + .png. Extra args go to peers.py, e.g.
#   bench/peers/run.sh --holders-ms 10000 --contended-ms 10000
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-peers}
JOBS=${JOBS:-2}

need=()
for p in redis-server:redis-server node:nodejs npm:npm; do command -v "${p%%:*}" >/dev/null || need+=("${p#*:}"); done
/usr/bin/python3 -c 'import redis' 2>/dev/null || need+=(python3-redis)
# (python3-munkres: matplotlib's fonttools then needs no scipy, whose pythran pulls Boost 1.74, which conflicts with
# the libboost1.81-dev scripts/dev installs)
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib python3-munkres)
pkg-config --exists hiredis || need+=(libhiredis-dev)
if ((${#need[@]})); then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y "${need[@]}"
fi
(cd "$HERE" && npm ci --no-audit --no-fund --silent)

cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target peer_weave peer_raw

exec /usr/bin/python3 "$HERE/peers.py" --build "$BUILD_DIR" "$@"
