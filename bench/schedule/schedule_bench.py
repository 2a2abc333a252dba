#!/usr/bin/python3
"""Scheduled-method benchmark: Weave's [[scheduled]] (bench_schedule_weave) and BullMQ's job
schedulers (peer_bullmq_scheduler.mjs) run the same every-100 ms schedule against one private
redis-server (a free 127.0.0.1 port, no persistence), each in worker processes that log every
run (tick, start). Cases, each runner in turn (A/B with --repeats):
  kill     W workers for S seconds, one SIGKILLed (and a new one started) every K seconds
  calm-N   N workers, no fault, L seconds (lateness with one worker and with many)
Reported per case: ticks in the window (its first 3 s and last 0.5 s left out), runs per tick
(starts / ticks run), ticks started more than once, missed ticks (slots with no run), lateness
(start - tick, ms) p50 / p99 / max. Python 3 standard library only. Called by run.sh."""
import argparse
import datetime
import json
import os
import platform
import random
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REDIS_SERVER = "/usr/bin/redis-server"
EVERY_MS = 100  # bench_schedule.h and the BullMQ scheduler

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--quick", action="store_true", help="kill: 40 s, a kill every 10 s; calm: 10 s")
ap.add_argument("--repeats", type=int, default=1, help="runs per runner and case, runners alternating")
ap.add_argument("--workers", type=int, default=3, help="kill: worker processes")
ap.add_argument("--seconds", type=float, help="kill: length (default 300)")
ap.add_argument("--kill-every", type=float, help="kill: seconds between SIGKILLs (default 30)")
ap.add_argument("--calm", default="1,8", help="calm cases: worker counts (comma list)")
ap.add_argument("--calm-seconds", type=float, help="calm: length (default 30)")
ap.add_argument("--only", default="", help="comma list of runners (weave, bullmq)")
ap.add_argument("--weave-bin", default=os.path.join(ROOT, "build", "bench", "schedule", "bench_schedule_weave"))
ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
ap.add_argument("--no-write", action="store_true")
args = ap.parse_args()
Q = args.quick
KILL_SECS = args.seconds or (40.0 if Q else 300.0)
KILL_EVERY = args.kill_every or (10.0 if Q else 30.0)
CALM_SECS = args.calm_seconds or (10.0 if Q else 30.0)


def say(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_cmd(port, *words):
    with socket.create_connection(("127.0.0.1", port)) as s:
        req = "*%d\r\n" % len(words) + "".join("$%d\r\n%s\r\n" % (len(w), w) for w in words)
        s.sendall(req.encode())
        return s.recv(65536).decode(errors="replace")


def start_redis():
    port = free_port()
    p = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            if "PONG" in redis_cmd(port, "PING"):
                return p, port
        except OSError:
            time.sleep(0.02)
    raise SystemExit("redis-server did not start")


def runners():
    out = {}
    if os.access(args.weave_bin, os.X_OK):
        out["weave"] = lambda url, log: [args.weave_bin, "--redis-url", url, "--log", log]
    else:
        say("weave: skipped (no %s: run.sh builds it)" % args.weave_bin)
    if os.path.isdir(os.path.join(HERE, "node_modules", "bullmq")):
        out["bullmq"] = lambda url, log: ["node", os.path.join(HERE, "peer_bullmq_scheduler.mjs"), "--redis-url", url,
                                          "--log", log, "--every-ms", str(EVERY_MS)]
    else:
        say("bullmq: skipped (npm ci in bench/schedule: run.sh does)")
    only = [r for r in args.only.split(",") if r]
    return {k: v for k, v in out.items() if not only or k in only}


def run_case(make, port, workers, seconds, kill_every):
    """Runs `workers` processes for `seconds` (SIGKILLing one every `kill_every` s, if set); returns the runs logged
    and the wall-clock window to judge."""
    redis_cmd(port, "FLUSHALL")
    url = "redis://127.0.0.1:%d" % port
    logdir = tempfile.mkdtemp(prefix="sbench-")
    procs, n = [], 0

    def spawn():
        nonlocal n
        n += 1
        log = os.path.join(logdir, "w%d.log" % n)
        return subprocess.Popen(make(url, log), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    t0 = time.time()
    procs = [spawn() for _ in range(workers)]
    kills = 0
    rng = random.Random(7)
    next_kill = t0 + kill_every if kill_every else None
    while time.time() < t0 + seconds:
        time.sleep(0.05)
        if next_kill and time.time() >= next_kill:
            victim = rng.randrange(len(procs))
            procs[victim].send_signal(signal.SIGKILL)
            procs[victim].wait()
            procs[victim] = spawn()
            kills += 1
            next_kill += kill_every
    t1 = time.time()
    for p in procs:
        p.send_signal(signal.SIGKILL)
        p.wait()
    runs = []
    for f in os.listdir(logdir):
        with open(os.path.join(logdir, f)) as fh:
            for line in fh:
                w = line.split()
                if len(w) == 4:
                    runs.append((int(w[0]), float(w[1]), int(w[2]), int(w[3])))
        os.remove(os.path.join(logdir, f))
    os.rmdir(logdir)
    return runs, (t0 + 3.0) * 1000, (t1 - 0.5) * 1000, kills


def pct(v, q):
    if not v:
        return None
    v = sorted(v)
    return round(v[min(len(v) - 1, int(q * len(v)))], 2)


def judge(runs, lo, hi):
    inside = [r for r in runs if lo <= r[0] <= hi]
    starts = {}
    for tick, start, pid, attempt in inside:
        starts.setdefault(tick, []).append(start)
    if not starts:
        return {"ticks_run": 0}
    offset = min(starts) % EVERY_MS  # the runner's own grid of ticks
    first = lo + ((offset - lo) % EVERY_MS)
    slots = list(range(int(first), int(hi) + 1, EVERY_MS))
    lateness = [min(s) - t for t, s in starts.items()]
    return {
        "slots": len(slots),
        "ticks_run": len(starts),
        "runs_per_tick": round(sum(len(s) for s in starts.values()) / len(starts), 4),
        "ticks_run_twice_or_more": sum(1 for s in starts.values() if len(s) > 1),
        "missed": sum(1 for t in slots if t not in starts),
        "lateness_ms": {"p50": pct(lateness, 0.5), "p99": pct(lateness, 0.99), "max": round(max(lateness), 2)},
    }


def main():
    rs = runners()
    if not rs:
        raise SystemExit("no runner")
    redis, port = start_redis()
    cases = [("kill", args.workers, KILL_SECS, KILL_EVERY)] + [("calm-%s" % n, int(n), CALM_SECS, None)
                                                              for n in args.calm.split(",") if n]
    results = []
    try:
        for name, workers, secs, kill_every in cases:
            for rep in range(args.repeats):
                for runner, make in rs.items():
                    say("%s %s (%d workers, %.0f s) repeat %d..." % (runner, name, workers, secs, rep + 1))
                    runs, lo, hi, kills = run_case(make, port, workers, secs, kill_every)
                    r = {"runner": runner, "case": name, "workers": workers, "seconds": secs, "kills": kills,
                         "repeat": rep + 1}
                    r.update(judge(runs, lo, hi))
                    say("  " + json.dumps(r))
                    results.append(r)
    finally:
        redis.send_signal(signal.SIGTERM)
        redis.wait()
    rows = ["| case | runner | ticks | runs per tick | ticks run twice+ | missed | lateness p50 / p99 / max (ms) |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        lat = r.get("lateness_ms") or {}
        rows.append("| %s (%d workers%s) | %s | %s | %s | %s | %s | %s / %s / %s |" % (
            r["case"], r["workers"], ", %d kills" % r["kills"] if r["kills"] else "", r["runner"], r.get("slots"),
            r.get("runs_per_tick"), r.get("ticks_run_twice_or_more"), r.get("missed"), lat.get("p50"), lat.get("p99"),
            lat.get("max")))
    table = "\n".join(rows)
    print(table)
    if not args.no_write:
        os.makedirs(args.out, exist_ok=True)
        stem = os.path.join(args.out, "schedule-%s%s" % (datetime.date.today().isoformat(), "-quick" if Q else ""))
        meta = {"machine": platform.machine(), "cpus": os.cpu_count(), "kernel": platform.release(),
                "command": " ".join(shlex.quote(a) for a in sys.argv), "every_ms": EVERY_MS,
                "kill_every_s": KILL_EVERY}
        with open(stem + ".json", "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        with open(stem + ".md", "w") as f:
            f.write(table + "\n")
        say("wrote %s.json and .md" % stem)


main()
