#!/usr/bin/env bash
# One command: install the pinned BullMQ (npm ci from package-lock.json), then run every available
# runner (BullMQ; Weave when build/bench/queue/bench_queue_weave exists) on every scenario against a
# private redis-server, print the table and write bench/results/queue-<date>.json + .md.
# Extra args go to queue_bench.py, e.g.
#   bench/queue/run.sh --quick            # under a minute
#   bench/queue/run.sh --repeats 3        # A/B/A/B/A/B
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

need=()
[ -x /usr/bin/redis-server ] || need+=(redis-server)
for p in node:nodejs npm:npm; do command -v "${p%%:*}" >/dev/null || need+=("${p#*:}"); done
# (python3-munkres: matplotlib's fonttools then needs no scipy, whose pythran pulls Boost 1.74, which conflicts with
# the libboost1.81-dev scripts/dev installs)
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib python3-munkres)  # the chart
if ((${#need[@]})); then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y "${need[@]}"
fi
(cd "$HERE" && npm ci --no-audit --no-fund --silent)

# The Weave runner's slot: once bench_queue_weave.cpp exists (with its EXCLUDE_FROM_ALL target),
# build it like bench/peers builds its drivers (-j2 on the shared VM); until then the harness
# prints one "weave: skipped" line. SKIP_WEAVE_BUILD=1 uses whatever binary is already there.
if [ -f "$HERE/bench_queue_weave.cpp" ] && [ "${SKIP_WEAVE_BUILD:-0}" != 1 ]; then
  ROOT=$(cd "$HERE/../.." && pwd)
  BUILD_DIR=${BUILD_DIR:-$ROOT/build}
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target bench_queue_weave
  set -- --weave-bin "$BUILD_DIR/bench/queue/bench_queue_weave" "$@"
fi

/usr/bin/python3 "$HERE/queue_bench.py" "$@"
# The chart of the run just written (bench/results/queue-<date>[-quick].png).
latest=$(ls -t "$HERE/../results"/queue-*.json 2>/dev/null | head -1)
if [ -n "$latest" ]; then /usr/bin/python3 "$HERE/plot.py" "$latest" --out "${latest%.json}.png"; fi
