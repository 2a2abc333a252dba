#!/usr/bin/python3
"""The round-trip floor, a runner of queue_bench.py (protocol: bench/queue/README.md).

No queue can answer one call at a time faster than Redis answers a bare PING,
nor W calls in flight faster than W connections of PINGs from one event loop
(redis-benchmark, C). The harness runs it beside BullMQ and Weave, so every
run shows how close each comes to what this machine and this Redis allow:
  offer    --inflight W     PING over W connections, one outstanding each
  deliver  --concurrency C  the same over C connections (a delivery needs at
                            least one round trip)
Other scenarios: unsupported. Python 3 standard library only."""
import argparse
import json
import os
import resource
import subprocess
import sys
import urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--redis-url", required=True)
ap.add_argument("--scenario", required=True)
ap.add_argument("--marks", action="store_true")
ap.add_argument("--messages", type=int, default=100000)
ap.add_argument("--inflight", type=int, default=1)
ap.add_argument("--concurrency", type=int, default=1)
args, _ = ap.parse_known_args()  # the harness passes every flag; the floor needs few


def mark(name):
    if args.marks:
        print(json.dumps({"mark": name}), flush=True)
        sys.stdin.readline()


def result(**kv):
    print(json.dumps({"runner": "floor", "scenario": args.scenario, **kv}), flush=True)


if args.scenario not in ("offer", "deliver"):
    result(unsupported=True)
    sys.exit(0)

url = urllib.parse.urlparse(args.redis_url)
clients = args.inflight if args.scenario == "offer" else args.concurrency
cmd = ["redis-benchmark", "-h", url.hostname, "-p", str(url.port), "-c", str(clients), "-n", str(args.messages),
       "-P", "1", "--csv", "PING"]
mark("begin")
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run(cmd, capture_output=True, text=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
mark("end")
if out.returncode != 0:
    sys.stderr.write(out.stderr)
    sys.exit(1)
# "test","rps","avg_latency_ms",... then "PING","12345.68",...
rows = [line.split(",") for line in out.stdout.strip().splitlines()]
rps = float(rows[-1][1].strip('"'))
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
per_s = {"offers_per_s": rps if args.scenario == "offer" else None,
         "deliveries_per_s": rps if args.scenario == "deliver" else None}
result(messages=args.messages, completed=args.messages, errors=0, lateness_ms=None, client_cpu_s=round(cpu, 4),
       api=f"redis-benchmark -c {clients} -P 1 PING", **per_s)
