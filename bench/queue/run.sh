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
if ((${#need[@]})); then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y "${need[@]}"
fi
(cd "$HERE" && npm ci --no-audit --no-fund --silent)

exec /usr/bin/python3 "$HERE/queue_bench.py" "$@"
