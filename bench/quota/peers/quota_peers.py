#!/usr/bin/python3
"""Weave's rate limiter and semaphore beside Node peers (rate-limiter-flexible,
redis-semaphore) on one private redis-server: runs each driver per workload,
contenders alternated, and writes bench/results/quota-peers-<date>.md + .png.
Called by bench/quota/peers/run.sh; flags: --help, bench/quota/peers/README.md.
Python 3 standard library, plus matplotlib for the chart."""
import argparse
import collections
import datetime
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--build", default=os.path.join(ROOT, "build-quota-peers"), help="build dir holding the Weave driver")
ap.add_argument("--repeats", type=int, default=3, help="runs per contender and workload, contenders alternated (medians reported)")
ap.add_argument("--seconds", type=float, default=10, help="rate-accuracy and sem-handoff: seconds per run")
ap.add_argument("--n", type=int, default=5000, help="rate-latency and sem-cycle: timed calls per contender and repeat")
ap.add_argument("--slices", type=int, default=5, help="rate-latency and sem-cycle: each repeat's calls in this many runs, contenders taking turns")
ap.add_argument("--clients", type=int, default=8, help="rate-accuracy and sem-handoff: OS processes per contender")
ap.add_argument("--rate", type=int, default=200, help="rate-accuracy: permits a second")
ap.add_argument("--burst", type=int, default=20, help="rate-accuracy: Weave's burst (rate-limiter-flexible has none)")
ap.add_argument("--overload", type=float, default=10, help="rate-accuracy: calls offered, as a multiple of the rate")
ap.add_argument("--permits", type=int, default=2, help="sem-handoff: permits of the key")
ap.add_argument("--hold-ms", type=float, default=2, help="sem-handoff: how long each grant is held")
ap.add_argument("--workloads", default="", help="comma list (default all: rate-latency,rate-accuracy,sem-cycle,sem-handoff)")
ap.add_argument("--quick", action="store_true", help="a look in about a minute: --n 1000 --seconds 3 --repeats 1, report tagged quick")
ap.add_argument("--tag", default="", help="report name suffix: quota-peers-<date>-<tag>.md")
ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
ap.add_argument("--from-json", default="", help="no runs: the report and chart again from a run's saved quota-peers-<date>.json")


def parse(argv):
    a = ap.parse_args(argv)
    if a.quick:
        a.n, a.seconds, a.repeats, a.tag = 1000, 3, 1, a.tag or "quick"
    a.argv = argv
    return a


args = parse(sys.argv[1:])

WEAVE = os.path.join(args.build, "bench", "quota", "peers", "peer_quota_weave")
NODE = ["node", os.path.join(HERE, "peer_quota.mjs")]
DRIVERS = {"floor": [WEAVE], "weave": [WEAVE], "ioredis-floor": NODE, "rate-limiter-flexible": NODE, "redis-semaphore": NODE}
WORKLOADS = {  # contenders, in the order they take turns
    "rate-latency": ["floor", "weave", "rate-limiter-flexible", "ioredis-floor"],
    "rate-accuracy": ["weave", "rate-limiter-flexible"],
    "sem-cycle": ["floor", "weave", "redis-semaphore", "ioredis-floor"],
    "sem-handoff": ["floor", "weave", "redis-semaphore"],  # floor: the round trip the hand-offs are counted in
}
if args.workloads:
    unknown = set(args.workloads.split(",")) - set(WORKLOADS)
    if unknown:
        ap.error("unknown workload(s): " + ", ".join(sorted(unknown)))
    WORKLOADS = {w: cs for w, cs in WORKLOADS.items() if w in args.workloads.split(",")}

# Every process started here (redis-server, drivers): stopped on the way out,
# whatever the way out is (an error, Ctrl-C, SIGTERM, SIGHUP).
LIVE = set()


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    LIVE.add(p)
    return p


def reap(p, timeout=5):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    LIVE.discard(p)


def stop_all():
    for p in list(LIVE):
        reap(p)


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


for s in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, on_signal)
signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background, which ignores it


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Resp:
    """Just enough of a Redis client for PING and FLUSHALL (standard library only)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.f = self.sock.makefile("rb")

    def call(self, *words):
        out = b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w.encode()) for w in words)
        self.sock.sendall(out)
        line = self.f.readline()
        if line[:1] == b"-":
            raise RuntimeError(line.decode().strip())
        return line.decode().strip()

    def close(self):
        self.f.close()
        self.sock.close()


def answering(port, proc, tries=100):
    """A connection to the redis-server on `port` once it answers PING; None if it exits or never does."""
    for _ in range(tries):
        if proc.poll() is not None:
            return None
        try:
            conn = Resp(port)
            if conn.call("PING") == "+PONG":
                return conn
            conn.close()
        except OSError:
            time.sleep(0.05)
    return None


class Server:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="quota-peers-redis-")
        for _ in range(10):  # a free port can be taken between the probe and the bind
            self.port = free_port()
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   "--dir", self.dir, "--loglevel", "warning"]
            self.proc = spawn(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.resp = answering(self.port, self.proc)
            if self.resp:
                return
            reap(self.proc)
        raise RuntimeError("could not start redis-server")

    def flush(self):
        self.resp.call("FLUSHALL")

    def stop(self):
        self.resp.close()
        reap(self.proc)
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)


def run_drivers(contender, workload, extra, clients=1, timeout=None):
    """Starts `clients` drivers; with more than one, each says "ready" once warmed
    up and all are handed one start time (CLOCK_MONOTONIC ns) on stdin. Returns
    their JSON lines."""
    cmd = DRIVERS[contender] + [f"workload={workload}"] + extra
    if clients > 1:
        cmd.append("start=stdin")
    procs = [spawn(cmd + [f"worker={i}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for i in range(clients)]
    timeout = timeout or (args.seconds + 120)
    watchdog = threading.Timer(timeout, lambda: [p.kill() for p in procs])  # a driver that hangs
    watchdog.start()
    try:
        if clients > 1:
            for p in procs:
                if p.stdout.readline().strip() != "ready":
                    raise RuntimeError(f"{contender} {workload}: a worker did not get ready (exit {p.wait()})")
            start = time.monotonic_ns() + 200_000_000  # CLOCK_MONOTONIC, as the drivers read it
            for p in procs:
                p.stdin.write(f"{start}\n")
                p.stdin.flush()  # communicate() closes it
        outs = [p.communicate()[0] for p in procs]
        failed = [p.returncode for p in procs if p.returncode]
        if failed:
            raise RuntimeError(f"{contender} {workload}: driver(s) exited {failed}")
        lines = [json.loads(x) for out in outs for x in out.splitlines() if x.startswith("{")]
        if len(lines) != clients:
            raise RuntimeError(f"{contender} {workload}: {len(lines)} result lines from {clients} drivers")
        return lines
    finally:
        watchdog.cancel()
        for p in procs:
            reap(p)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def latency(lines):
    """One repeat of a latency workload: its slices' calls pooled."""
    lat = [x for l in lines for x in l["lat_ns"]]
    row = {"p50_us": pct(lat, 0.5) / 1e3, "p99_us": pct(lat, 0.99) / 1e3,
           "ops_s": sum(l["n"] for l in lines) / sum(l["secs"] for l in lines), "refused": sum(l.get("refused", 0) for l in lines)}
    if all("acquire_ns" in l for l in lines):  # sem-cycle: the cycle's two halves
        acq = [x for l in lines for x in l["acquire_ns"]]
        rel = [c - a for l in lines for c, a in zip(l["lat_ns"], l["acquire_ns"])]
        row["acquire_p50_us"], row["release_p50_us"] = pct(acq, 0.5) / 1e3, pct(rel, 0.5) / 1e3
    return row


def worst_window(calls, width_ns):
    """The most admissions certainly decided inside one window [t, t + width):
    an admitted call counts when both its start and its end lie in the window
    (the server decided somewhere in between). Windows start at each call's
    start; a count can only come out low, so an excess it shows is real."""
    best = 0
    for i, (t, _) in enumerate(calls):
        inside, j = 0, i
        while j < len(calls) and calls[j][0] < t + width_ns:
            inside += calls[j][1] < t + width_ns
            j += 1
        best = max(best, inside)
    return best


def accuracy(lines):
    flat = [l["admitted_ns"] for l in lines]  # start, end, start, end, ... of each admitted call
    times = sorted((f[k], f[k + 1]) for f in flat for k in range(0, len(f), 2))
    t0, t1 = min(l["start_ns"] for l in lines), max(l["end_ns"] for l in lines)
    elapsed = (t1 - t0) / 1e9
    per = [len(l["admitted_ns"]) // 2 for l in lines]
    worst_1s, worst_100ms = worst_window(times, 1_000_000_000), worst_window(times, 100_000_000)
    bound_1s, bound_100ms = args.rate + args.burst, args.rate * 0.1 + args.burst
    return {"offered_s": sum(l["calls"] for l in lines) / elapsed, "admitted_s": len(times) / elapsed,
            "worst_1s": worst_1s, "over_1s": max(0, worst_1s - bound_1s), "bound_1s": bound_1s,
            "worst_100ms": worst_100ms, "bound_100ms": bound_100ms,
            "quota_used": len(times) / (args.rate * elapsed + args.burst), "elapsed_s": elapsed,
            "per_min": min(per), "per_max": max(per),
            "start_spread_ms": (max(l["start_ns"] for l in lines) - t0) / 1e6}


def handoff(lines, rtt_us):
    """Hand-offs of a semaphore under contention. Every grant is an interval
    [acquired, releasing] of one worker (and when its release call returned). Releases and grants are paired in time
    order (the oldest pending release goes to the next grant): a pair across
    two workers is a hand-off (release start -> the other's grant returned), a
    pair within one worker a self re-take. Rates, fairness and hand-offs count
    the middle 80 % of the run (start-up and finish dropped); holders at once
    count the whole run."""
    iv = sorted((f[k], f[k + 1], w, f[k + 2], f[k + 3]) for w, f in enumerate(l["intervals"] for l in lines)
                for k in range(0, len(f), 4))  # acquired, releasing, worker, asked, released
    span = max(x[1] for x in iv) - iv[0][0]
    lo, hi = iv[0][0] + span // 10, iv[0][0] + span - span // 10
    # (time, 0 release / 1 grant, worker, the release's end): at a tie the release first
    events = sorted([(x[0], 1, x[2], 0) for x in iv] + [(x[1], 0, x[2], x[4]) for x in iv])
    holders = peak = over = 0
    pending = collections.deque()
    hand, after_release, retakes = [], [], 0
    for t, is_grant, w, released in events:
        if not is_grant:
            holders -= 1
            pending.append((t, w, released))
            continue
        holders += 1
        peak = max(peak, holders)
        over += holders > args.permits
        if pending:
            r, rw, rend = pending.popleft()
            if lo <= t <= hi:
                if rw != w:
                    hand.append(t - r)
                    after_release.append(t - rend)  # negative: granted before the release call returned
                else:
                    retakes += 1
    mid = [x for x in iv if lo <= x[0] <= hi]
    per = [sum(1 for x in mid if x[2] == w) for w in range(len(lines))]
    mean = sum(per) / len(per)
    waits = [x[0] - x[3] for x in mid]
    holds = [x[1] - x[0] for x in mid]
    release_calls = [x[4] - x[1] for x in mid]
    return {"grants_s": len(mid) / ((hi - lo) / 1e9), "handoff_p50_us": pct(hand, 0.5) / 1e3, "handoff_p99_us": pct(hand, 0.99) / 1e3,
            "handoff_p50_rt": pct(hand, 0.5) / 1e3 / rtt_us, "handoff_p99_rt": pct(hand, 0.99) / 1e3 / rtt_us,
            "max_holders": peak, "violations": over, "per_min": min(per), "per_max": max(per),
            "least_share": min(per) / mean if mean else float("nan"),
            "retakes_pct": 100 * retakes / max(1, retakes + len(hand)),
            "wait_p50_ms": pct(waits, 0.5) / 1e6, "wait_p99_ms": pct(waits, 0.99) / 1e6, "wait_max_ms": max(waits) / 1e6,
            "hold_p50_ms": pct(holds, 0.5) / 1e6, "grants": len(mid), "rtt_us": rtt_us,
            "release_p50_us": pct(release_calls, 0.5) / 1e3, "after_release_p50_us": pct(after_release, 0.5) / 1e3}


# How the repeats of one contender combine: the median, except where the
# worst run is what matters.
WORST = {"worst_1s": max, "over_1s": max, "worst_100ms": max, "max_holders": max, "violations": sum, "least_share": min,
         "wait_max_ms": max, "start_spread_ms": max}


def combine(runs):
    out = {}
    for k in runs[0]:
        vals = [r[k] for r in runs]
        out[k] = WORST[k](vals) if k in WORST else statistics.median(vals)
    out["runs"] = len(runs)
    return out


LATENCY = ("rate-latency", "sem-cycle")


def slices(workload):
    """Latency workloads run in slices, the contenders taking turns within a
    repeat too, so that a load that comes and goes on the machine falls on
    all of them alike; their calls are pooled per repeat."""
    return args.slices if workload in LATENCY else 1


def driver_args(workload, c, port, rep, sl):
    """The driver's workload, its arguments and how many processes run it."""
    base = [f"port={port}", f"key=qp:{workload}:{rep}:{sl}:{c}"]
    n = f"n={max(1, args.n // slices(workload))}" if workload in LATENCY else "n=2000"
    if c.endswith("floor"):  # in sem-handoff, just the unit of the hand-offs
        return "floor", base + [n, f"calls={2 if workload == 'sem-cycle' else 1}"], 1
    if workload in LATENCY:
        return workload, base + [n], 1
    ms = f"ms={int(args.seconds * 1000)}"
    if workload == "rate-accuracy":
        interval_us = round(1e6 * args.clients / (args.rate * args.overload))
        return workload, base + [ms, f"rate={args.rate}", f"burst={args.burst}", f"interval_us={interval_us}"], args.clients
    return workload, base + [ms, f"permits={args.permits}", f"hold_us={int(args.hold_ms * 1000)}"], args.clients


def measure():
    """Every run's JSON lines: [{workload, contender, repeat, lines}, ...]."""
    raw = []
    server = Server()
    try:
        for workload, contenders in WORKLOADS.items():
            for rep in range(args.repeats):
                for sl in range(slices(workload)):
                    for c in contenders:  # A/B/A/B: every contender once per repeat (slice)
                        server.flush()
                        print(f"  {workload:13s} {rep + 1}/{args.repeats} {c}" + (f" {sl + 1}/{slices(workload)}" if sl else ""),
                              file=sys.stderr, flush=True)
                        wl, extra, clients = driver_args(workload, c, server.port, rep, sl)
                        raw.append({"workload": workload, "contender": c, "repeat": rep, "lines": run_drivers(c, wl, extra, clients)})
    finally:
        server.stop()
        stop_all()
    return raw


def analyse(raw):
    """(workload, contender) -> the combined row of its runs."""
    runs = collections.defaultdict(list)
    repeats = collections.defaultdict(list)  # (workload, contender, repeat) -> the lines of its slices
    for r in raw:
        repeats[r["workload"], r["contender"], r["repeat"]] += r["lines"]
    floors = {(w, rep): latency(lines) for (w, c, rep), lines in repeats.items() if c == "floor"}
    for (w, c, rep), lines in repeats.items():
        floor = floors.get((w, rep))
        if w in LATENCY or c == "floor":
            row = latency(lines)
            row["x50"], row["x99"] = row["p50_us"] / floor["p50_us"], row["p99_us"] / floor["p99_us"]
        elif w == "rate-accuracy":
            row = accuracy(lines)
        else:
            row = handoff(lines, floor["p50_us"])
        runs[w, c].append(row)
    return {k: combine(v) for k, v in runs.items()}


def main():
    global args
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        started, loads, raw = datetime.datetime.fromisoformat(saved["started"]), saved["loads"], saved["runs"]
        out, src = args.out, args.from_json
        args = parse(saved["argv"])  # the titles say what that run did
        args.out, args.from_json = out, src
    else:
        started = datetime.datetime.now(datetime.timezone.utc)
        load0 = os.getloadavg()
        raw = measure()
        loads = [load0[0], os.getloadavg()[0]]
    stem = os.path.join(args.out, "quota-peers-" + started.strftime("%Y-%m-%d") + (f"-{args.tag}" if args.tag else ""))
    os.makedirs(args.out, exist_ok=True)
    if not args.from_json:  # the raw runs stay local (bench/results/*.json is ignored by git)
        with open(stem + ".json", "w") as f:
            json.dump({"started": started.isoformat(), "argv": args.argv, "loads": loads, "runs": raw}, f)
    render(started, stem, analyse(raw), loads)


def versions():
    def out(*cmd):
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()

    def installed(pkg):  # what npm ci put in node_modules
        meta = os.path.join(HERE, "node_modules", pkg, "package.json")
        if not os.path.exists(meta):
            return "not installed"
        with open(meta) as f:
            return json.load(f)["version"]

    dirty = out("git", "-C", ROOT, "status", "--porcelain", "--", "src", "include")
    return {"redis-server": out("redis-server", "--version").split("v=")[1].split()[0], "node": out("node", "--version"),
            **{pkg: installed(pkg) for pkg in ("ioredis", "rate-limiter-flexible", "redis-semaphore")},
            "git": out("git", "-C", ROOT, "rev-parse", "--short", "HEAD") + (" (src/ or include/ changed since)" if dirty else "")}


def render(started, stem, res, loads):
    name = os.path.basename(stem)
    v = versions()
    rel = os.path.relpath(__file__, ROOT)
    L = [f"# Weave's rate limiter and semaphore beside Node peers ({started.strftime('%Y-%m-%d %H:%M UTC')})", "",
         f"Generated by `bench/quota/peers/run.sh` (`{rel} {' '.join(args.argv)}`). Machine: {platform.machine()}, "
         f"{os.cpu_count()} CPUs (shared), {platform.platform()}; load average {loads[0]:.1f} at the start, {loads[1]:.1f} at the end. "
         f"Weave git {v['git']}.", "",
         "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if k != "git") + ".", "",
         f"All contenders on one redis-server on 127.0.0.1; {args.repeats} repeat(s) per contender and workload, contenders "
         f"taking turns (A/B/A/B; the latency workloads in {args.slices} slices per repeat, taking turns slice by slice); each "
         "cell is the median of the repeats, except the worst-case columns (worst window, over-admission, most holders at "
         "once, least lucky share, longest wait: the worst repeat; violations: the sum). Ratios are per repeat against the "
         "floor of the same repeat (`floor`: a raw hiredis `EVALSHA` of `return 1` from C++, no library), then the median "
         "of those ratios. `ioredis-floor` is the same call from Node through ioredis: what the runtime and the client "
         "cost before any library.", ""]

    def table(w, title, cols, skip=()):
        # cols: (header, a function of the row that returns the cell)
        rows = [(c, r) for (ww, c), r in res.items() if ww == w and c not in skip]
        if not rows:
            return
        L.extend([f"## {title}", "", "| contender | " + " | ".join(h for h, _ in cols) + " |", "|---|" + "---:|" * len(cols)])
        L.extend(f"| {c} | " + " | ".join(cell(r) for _, cell in cols) + " |" for c, r in rows)
        L.append("")

    table("rate-latency", f"1. rate-latency: {args.n:,} sequential decisions on one fresh key, all admitted",
          [("p50 us", lambda r: f"{r['p50_us']:.1f}"), ("p99 us", lambda r: f"{r['p99_us']:.1f}"),
           ("p50 / floor", lambda r: f"{r['x50']:.2f}x"), ("p99 / floor", lambda r: f"{r['x99']:.2f}x"),
           ("calls/s", lambda r: f"{r['ops_s']:,.0f}"), ("refused", lambda r: f"{r['refused']:.0f}")])
    interval_ms = args.clients / (args.rate * args.overload) * 1e3
    table("rate-accuracy", f"2. rate-accuracy: {args.clients} OS processes on one key, {args.rate}/s (Weave: burst {args.burst}), "
          f"offered {args.overload:g}x the rate (each process one call per {interval_ms:g} ms on average, Poisson), {args.seconds:g} s",
          [("offered/s", lambda r: f"{r['offered_s']:,.0f}"), ("admitted/s", lambda r: f"{r['admitted_s']:,.1f}"),
           (f"worst 1 s window (bound {args.rate + args.burst})", lambda r: f"{r['worst_1s']:.0f}"),
           ("over-admission", lambda r: f"{r['over_1s']:.0f}"),
           (f"worst 100 ms window (bound {args.rate * 0.1 + args.burst:g})", lambda r: f"{r['worst_100ms']:.0f}"),
           ("quota used", lambda r: f"{100 * r['quota_used']:.1f} %"),
           ("admitted per process (min..max)", lambda r: f"{r['per_min']:.0f}..{r['per_max']:.0f}"),
           ("start spread ms", lambda r: f"{r['start_spread_ms']:.1f}")])
    table("sem-cycle", f"3. sem-cycle: {args.n:,} sequential acquire + release of one permit on a fresh key (floors: two calls)",
          [("p50 us", lambda r: f"{r['p50_us']:.1f}"), ("p99 us", lambda r: f"{r['p99_us']:.1f}"),
           ("p50 / 2 floor calls", lambda r: f"{r['x50']:.2f}x"), ("p99 / 2 floor calls", lambda r: f"{r['x99']:.2f}x"),
           ("cycles/s", lambda r: f"{r['ops_s']:,.0f}"),
           ("acquire p50 us", lambda r: f"{r['acquire_p50_us']:.1f}" if "acquire_p50_us" in r else "-"),
           ("release p50 us", lambda r: f"{r['release_p50_us']:.1f}" if "release_p50_us" in r else "-")])
    table("sem-handoff", f"4. sem-handoff: {args.clients} OS processes on one key of {args.permits} permits, each holding "
          f"{args.hold_ms:g} ms, {args.seconds:g} s",
          [("grants/s", lambda r: f"{r['grants_s']:,.0f}"), ("hand-off p50 us", lambda r: f"{r['handoff_p50_us']:.1f}"),
           ("hand-off p99 us", lambda r: f"{r['handoff_p99_us']:.1f}"), ("p50 / floor", lambda r: f"{r['handoff_p50_rt']:.2f}x"),
           ("p99 / floor", lambda r: f"{r['handoff_p99_rt']:.2f}x"), ("most holders at once", lambda r: f"{r['max_holders']}"),
           ("violations", lambda r: f"{r['violations']}"), ("per process (min..max)", lambda r: f"{r['per_min']:.0f}..{r['per_max']:.0f}"),
           ("least / mean", lambda r: f"{r['least_share']:.2f}"), ("self re-takes", lambda r: f"{r['retakes_pct']:.0f} %"),
           ("wait p50 ms", lambda r: f"{r['wait_p50_ms']:.1f}"), ("wait p99 ms", lambda r: f"{r['wait_p99_ms']:.1f}"),
           ("wait max ms", lambda r: f"{r['wait_max_ms']:.1f}"), ("hold p50 ms", lambda r: f"{r['hold_p50_ms']:.2f}"),
           ("release call p50 us", lambda r: f"{r['release_p50_us']:.1f}"),
           ("release returned to next grant p50 us", lambda r: f"{r['after_release_p50_us']:.1f}")],
          skip=("floor",))
    fl = res.get(("sem-handoff", "floor"))
    if fl:
        L.extend([f"The floor of these runs (a raw `EVALSHA`, the unit of the ratios): p50 {fl['p50_us']:.1f} us.", ""])
    with open(os.path.join(HERE, "SETTINGS.md")) as f:
        L.append(f.read().strip())
    L.extend(["", f"![chart]({name}.png)"])
    with open(stem + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    chart(stem + ".png", res, started)
    print(stem + ".md")


def chart(path, res, started):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [w for w in WORKLOADS if any(ww == w for ww, _ in res)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.6), squeeze=False)
    colors = {"floor": "#9e9e9e", "weave": "#1f77b4", "rate-limiter-flexible": "#d62728", "redis-semaphore": "#d62728",
              "ioredis-floor": "#bdbdbd"}

    def bars(ax, names, pairs, labels, ylabel, ticks=None):
        # Two bars per contender (p50 solid, p99 hatched), value on top.
        for i, c in enumerate(names):
            for j, (val, hatch) in enumerate(zip(pairs[i], ("", "//"))):
                x = i + (j - 0.5) * 0.38
                ax.bar(x, val, 0.36, color=colors.get(c, "#555555"), hatch=hatch, edgecolor="white")
                ax.annotate(f"{val:.2f}", (x, val), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(ticks or names, rotation=0 if ticks else 20, ha="center" if ticks else "right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.text(0.02, 0.97, labels, transform=ax.transAxes, va="top", fontsize=7)

    for ax, w in zip(axes[0], panels):
        rows = [(c, r) for (ww, c), r in res.items() if ww == w]
        if w in ("rate-latency", "sem-cycle"):
            rows = [(c, r) for c, r in rows if c != "floor"]
            bars(ax, [c for c, _ in rows], [(r["x50"], r["x99"]) for _, r in rows], "solid: p50, hatched: p99",
                 "latency / floor of the same run" + (" (2 calls)" if w == "sem-cycle" else ""))
            ax.axhline(1, color="grey", linestyle=":", linewidth=1)
            ax.set_title("rate-latency: one decision" if w == "rate-latency" else "sem-cycle: acquire + release")
        elif w == "rate-accuracy":
            bars(ax, [c for c, _ in rows], [(r["worst_1s"] / r["bound_1s"], r["worst_100ms"] / r["bound_100ms"]) for _, r in rows],
                 f"solid: worst 1 s window / {args.rate + args.burst}\nhatched: worst 100 ms window / {args.rate * 0.1 + args.burst:g}",
                 "admitted in the worst window / bound",
                 [f"{c}\n{r['admitted_s']:.0f}/s admitted of {r['offered_s']:.0f}/s" for c, r in rows])
            ax.axhline(1, color="grey", linestyle=":", linewidth=1)
            ax.set_title(f"rate-accuracy: {args.rate}/s, {args.overload:g}x offered")
        else:
            rows = [(c, r) for c, r in rows if c != "floor"]
            bars(ax, [c for c, _ in rows], [(r["handoff_p50_rt"], r["handoff_p99_rt"]) for _, r in rows], "solid: p50, hatched: p99",
                 "release -> next grant, in floor round trips",
                 [f"{c}\n{r['grants_s']:.0f} grants/s, most holders {r['max_holders']}" for c, r in rows])
            ax.set_yscale("log")
            ax.set_ylim(bottom=1)
            ax.set_title(f"sem-handoff: {args.clients} processes, {args.permits} permits")
    fig.suptitle(f"bench/quota/peers {started.strftime('%Y-%m-%d')}: Weave and Node peers on one redis-server (medians of {args.repeats} repeats)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        stop_all()
