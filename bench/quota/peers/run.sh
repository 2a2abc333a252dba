#!/usr/bin/env bash
# One command: install what is missing (apt; npm ci from the pinned
# package-lock.json), build the Weave driver, run every contender on every
# workload against a private redis-server and write
# bench/results/quota-peers-<date>.md + .png. Extra args go to quota_peers.py:
#   bench/quota/peers/run.sh                 # 3 runs per contender, 10 s each for the multi-process workloads
#   bench/quota/peers/run.sh --quick         # about a minute, report tagged -quick
#   bench/quota/peers/run.sh --repeats 5 --seconds 20 --workloads rate-accuracy
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-quota-peers}
JOBS=${JOBS:-2}

# Debian packages, each installed only when its probe fails. python3-munkres
# comes with matplotlib so that its fonttools needs no scipy (whose pythran
# pulls Boost 1.74, which conflicts with the libboost1.81-dev of scripts/dev).
missing=()
probe() { eval "$1" >/dev/null 2>&1 || missing+=("${@:2}"); }
probe 'test -x /usr/bin/redis-server' redis-server
probe 'command -v node' nodejs
probe 'command -v npm' npm
probe '/usr/bin/python3 -c "import matplotlib"' python3-matplotlib python3-munkres
probe 'pkg-config --exists hiredis' libhiredis-dev
if ((${#missing[@]})); then
  as_root=; [ "$(id -u)" = 0 ] || as_root=sudo
  $as_root apt-get install -y "${missing[@]}"
fi
(cd "$HERE" && npm ci --no-audit --no-fund --silent)

cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target peer_quota_weave

exec /usr/bin/python3 "$HERE/quota_peers.py" --build "$BUILD_DIR" "$@"
