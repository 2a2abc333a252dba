#!/usr/bin/env bash
# samples/rates driven by curl: the rate is loaded once and then served from
# the cache; concurrent conversions of one account never overlap (the lock).
#   rates_curl.sh <path to the rates binary>
set -euo pipefail
bin=$1
out=$(mktemp)
"$bin" > "$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$out" && break
  sleep 0.05
done
url=$(sed -n 's/^listening on \(127\.0\.0\.1:[0-9]*\)$/http:\/\/\1/p' "$out")
[ -n "$url" ] || { echo "the server did not start:"; cat "$out"; exit 1; }

get() { curl -sS --fail --max-time 10 "$url$1"; }

first=$(get /rate/EUR)
second=$(get /rate/EUR)
echo "rate: $first, again: $second"
[ "$first" = '{"ccy":"EUR","rate":1.08}' ] && [ "$second" = "$first" ] || { echo "wrong rate answers"; exit 1; }
stats=$(get /stats)
echo "after two rate requests: $stats"
[[ "$stats" == *'"rate_loads":1,'* ]] || { echo "the second request was not served from the cache"; exit 1; }

# Eight conversions of one account at once: each holds the account's lock
# across a 50 ms suspension, so they run one at a time.
pids=()
for i in $(seq 8); do
  get /convert/acct-1/EUR/100 > "$out.$i" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for i in $(seq 8); do
  [ "$(cat "$out.$i")" = '{"account":"acct-1","EUR":108}' ] || { echo "conversion $i answered: $(cat "$out.$i")"; exit 1; }
  rm -f "$out.$i"
done
stats=$(get /stats)
echo "after eight concurrent conversions: $stats"
[[ "$stats" == *'"most_inside":1}'* ]] || { echo "conversions of one account overlapped"; exit 1; }
[[ "$stats" == *'"rate_loads":1,'* ]] || { echo "the nested rate calls were not served from the cache"; exit 1; }
echo "cached once, locked per account: ok"
