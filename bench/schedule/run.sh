#!/usr/bin/env bash
# One command: install the pinned BullMQ (npm ci from package-lock.json), build the Weave worker,
# then run schedule_bench.py (both runners, every case) against a private redis-server and write
# bench/results/schedule-<date>.json + .md. Extra args go to schedule_bench.py, e.g.
#   bench/schedule/run.sh --quick         # ~2 min
#   bench/schedule/run.sh --repeats 2     # A/B/A/B
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
need=()
[ -x /usr/bin/redis-server ] || need+=(redis-server)
for p in node:nodejs npm:npm; do command -v "${p%%:*}" >/dev/null || need+=("${p#*:}"); done
# (python3-munkres: as bench/queue/run.sh says, matplotlib's fonttools then needs no scipy)
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib python3-munkres)  # the chart
if ((${#need[@]})); then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y "${need[@]}"
fi
(cd "$HERE" && npm ci --no-audit --no-fund --silent)
if [ "${SKIP_WEAVE_BUILD:-0}" != 1 ]; then
  ROOT=$(cd "$HERE/../.." && pwd)
  BUILD_DIR=${BUILD_DIR:-$ROOT/build}
  cmake -S "$ROOT" -B "$BUILD_DIR" >/dev/null
  cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target bench_schedule_weave
  set -- --weave-bin "$BUILD_DIR/bench/schedule/bench_schedule_weave" "$@"
fi
/usr/bin/python3 "$HERE/schedule_bench.py" "$@"
latest=$(ls -t "$HERE/../results"/schedule-*.json 2>/dev/null | head -1)
if [ -n "$latest" ]; then /usr/bin/python3 "$HERE/plot.py" "$latest" --out "${latest%.json}.png"; fi
