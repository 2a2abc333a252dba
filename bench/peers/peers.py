#!/usr/bin/python3
"""Runs every peer driver on the same workloads against private redis-servers
(free 127.0.0.1 ports), collects their JSON lines and writes
bench/results/peers-<date>.md + .png. Called by bench/peers/run.sh."""
import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(ROOT, "build-peers"))
ap.add_argument("--n", type=int, default=5000, help="uncontended / redlock acquisitions per contender")
ap.add_argument("--clients", type=int, default=8, help="contended: processes on one key")
ap.add_argument("--contended-ms", type=int, default=3000)
ap.add_argument("--hold-us", type=int, default=1000)
ap.add_argument("--leases", type=int, default=1000)
ap.add_argument("--holders-ms", type=int, default=60000, help="many holders: hold duration")
ap.add_argument("--lease-ms", type=int, default=3000)
ap.add_argument("--renew-ms", type=int, default=1000)
ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
ap.add_argument("--only", default="", help="comma list of contenders (default all)")
ap.add_argument("--workloads", default="", help="comma list of workloads (default all: uncontended,contended,holders,redlock)")
ap.add_argument("--tag", default="", help="report name suffix: bench/results/peers-<date>-<tag>.md (e.g. for a one-workload run)")
ap.add_argument("--repeats", type=int, default=1, help="contended: runs per contender, alternating contenders (medians reported)")
args = ap.parse_args()

PY = "/usr/bin/python3"
DRIVERS = {
    "raw": [os.path.join(args.build, "bench/peers/peer_raw")],
    "weave": [os.path.join(args.build, "bench/peers/peer_weave")],
    "redis-py": [PY, os.path.join(HERE, "peer_py.py")],
    "redis-semaphore": ["node", os.path.join(HERE, "peer_node.js"), "lib=semaphore"],
    "redlock": ["node", os.path.join(HERE, "peer_node.js"), "lib=redlock"],
}
WORKLOADS = {  # contender lists per workload (redlock npm: only the RedLock workload)
    "uncontended": ["raw", "weave", "redis-py", "redis-semaphore"],
    "contended": ["raw", "weave", "redis-py", "redis-semaphore"],
    "holders": ["raw", "weave", "redis-py", "redis-semaphore", "redlock"],
    "redlock": ["raw", "weave", "redis-semaphore", "redlock"],
}
if args.only:
    keep = set(args.only.split(","))
    WORKLOADS = {w: [c for c in cs if c in keep] for w, cs in WORKLOADS.items()}
if args.workloads:
    WORKLOADS = {w: cs for w, cs in WORKLOADS.items() if w in args.workloads.split(",")}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self):
        for _ in range(20):
            self.port = free_port()
            self.dir = tempfile.mkdtemp(prefix="peers-redis-")
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", self.dir, "--loglevel", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.r = redis.Redis(host="127.0.0.1", port=self.port)
            for _ in range(100):
                if self.proc.poll() is not None:
                    break
                try:
                    if self.r.ping():
                        return
                except redis.ConnectionError:
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("could not start redis-server")

    def reset(self):
        self.r.flushall()
        self.r.script_flush()
        self.r.config_resetstat()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def run(contender, workload, ports, extra, clients=1):
    base = DRIVERS[contender] + [f"workload={workload}", "ports=" + ",".join(map(str, ports))] + extra
    procs = [subprocess.Popen(base + [f"worker={i}"], stdout=subprocess.PIPE, text=True) for i in range(clients)]
    out = []
    for p in procs:
        o, _ = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"{contender} {workload} exited {p.returncode}")
        out += [json.loads(line) for line in o.splitlines() if line.startswith("{")]
    return out


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def ping_rtt(srv, n=2000):
    c = redis.Redis(host="127.0.0.1", port=srv.port)
    lat = []
    for _ in range(n):
        s = time.monotonic_ns()
        c.ping()
        lat.append(time.monotonic_ns() - s)
    return pct(lat, 0.5) / 1e3, pct(lat, 0.99) / 1e3


def latency_row(lines):
    lat = [x for l in lines for x in l["lat_ns"]]
    n = sum(l["n"] for l in lines)
    secs = sum(l["secs"] for l in lines)
    return {"ops_s": n / secs, "p50_us": pct(lat, 0.5) / 1e3, "p99_us": pct(lat, 0.99) / 1e3}


def contended_row(lines):
    # All acquisitions of all workers in time order; the first and last 10 % of
    # the span are dropped (process start-up, workers finishing). Hand-off
    # latency counts only passes to another process (a holder that re-takes
    # the lock right after releasing it hands nothing off); "self" = share of
    # acquisitions that were such re-takes. Wait = acquired - asked (the
    # call's start): how long a caller waited for its turn.
    iv = sorted((x[0], x[1], w, x[2] if len(x) > 2 else None) for w, l in enumerate(lines) for x in l["intervals"])
    span = iv[-1][1] - iv[0][0]
    lo, hi = iv[0][0] + span // 10, iv[-1][1] - span // 10
    iv = [x for x in iv if lo <= x[0] and x[1] <= hi]
    pairs = list(zip(iv, iv[1:]))
    hand = [b[0] - a[1] for a, b in pairs if a[2] != b[2]]
    retakes = sum(1 for a, b in pairs if a[2] == b[2])
    per = [sum(1 for x in iv if x[2] == w) for w in range(len(lines))]
    waits = [x[0] - x[3] for x in iv if x[3] is not None]
    mean = sum(per) / len(per)
    return {"ops_s": len(iv) / ((hi - lo) / 1e9), "p50_us": pct(hand, 0.5) / 1e3, "p99_us": pct(hand, 0.99) / 1e3,
            "overlaps": sum(1 for a, b in pairs if b[0] < a[1]), "n": len(iv), "per_worker": f"{min(per)}..{max(per)}",
            "least_share": min(per) / mean if mean else float("nan"),
            "wait_p50_ms": pct(waits, 0.5) / 1e6 if waits else float("nan"),
            "wait_p99_ms": pct(waits, 0.99) / 1e6 if waits else float("nan"),
            "wait_max_ms": max(waits) / 1e6 if waits else float("nan"),
            "per": per, "self": f"{100 * retakes / max(1, len(pairs)):.0f} %"}


def contended_runs(rows):
    # Repeats of one contender: the median run by acquisitions/s, with the
    # worst least-lucky share and the longest wait of all runs.
    rows = sorted(rows, key=lambda r: r["ops_s"])
    out = dict(rows[len(rows) // 2])
    out["least_share"] = min(r["least_share"] for r in rows)
    out["wait_max_ms"] = max(r["wait_max_ms"] for r in rows)
    out["runs"] = len(rows)
    return out


def holders_row(lines):
    l = lines[0]
    return {"cmds_s": l["commands"] / l["secs"], "scripts_s": l["scripts"] / l["secs"], "cpu_ms_s": 1e3 * l["cpu_s"] / l["secs"], "leases": l["leases"]}


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    one = Server()
    three = [Server() for _ in range(3)]
    results, rtt, runs = {}, {}, {}
    try:
        one.reset()
        rtt["ping"] = ping_rtt(one)
        for workload, contenders in WORKLOADS.items():
            repeats = args.repeats if workload == "contended" else 1
            for c in [c for _ in range(repeats) for c in contenders]:  # A/B/A/B
                servers = three if workload == "redlock" else [one]
                for s in servers:
                    s.reset()
                ports = [s.port for s in servers]
                print(f"  {workload:12s} {c} ...", file=sys.stderr, flush=True)
                if workload in ("uncontended", "redlock"):
                    results[workload, c] = latency_row(run(c, workload, ports, [f"n={args.n}"]))
                elif workload == "contended":
                    runs.setdefault(c, []).append(
                        contended_row(run(c, workload, ports, [f"ms={args.contended_ms}", f"hold_us={args.hold_us}"], args.clients)))
                    results[workload, c] = contended_runs(runs[c])
                else:
                    extra = [f"leases={args.leases}", f"ms={args.holders_ms}", f"lease_ms={args.lease_ms}", f"renew_ms={args.renew_ms}",
                             f"threshold_ms={args.lease_ms - args.renew_ms}"]
                    results[workload, c] = holders_row(run(c, workload, ports, extra))
    finally:
        for s in [one] + three:
            s.stop()
    render(started, results, rtt)


def versions():
    v = {"redis-server": subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()[2].replace("v=", ""),
         "redis-py": redis.__version__, "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()}
    for pkg in ("ioredis", "redis-semaphore", "@sesamecare-oss/redlock"):
        try:
            with open(os.path.join(HERE, "node_modules", pkg, "package.json")) as f:
                v[pkg] = json.load(f)["version"]
        except FileNotFoundError:
            v[pkg] = "not installed"
    v["git"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return v


def ratio(x, floor):
    return f"{x / floor:.2f}x" if floor and floor == floor else "-"


def render(started, res, rtt):
    os.makedirs(args.out, exist_ok=True)
    name = "peers-" + started.strftime("%Y-%m-%d") + (f"-{args.tag}" if args.tag else "")
    stem = os.path.join(args.out, name)
    v = versions()
    L = [f"# Weave vs. other Redis lock libraries ({started.strftime('%Y-%m-%d %H:%M UTC')})", "",
         f"Generated by `bench/peers/run.sh` (`peers.py {' '.join(sys.argv[1:])}`). Machine: {platform.machine()}, "
         f"{os.cpu_count()} CPUs (shared), {platform.platform()}. Weave git {v['git']}.", "",
         "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if k != "git") + ".", "",
         f"PING RTT (redis-py, 2,000 pings, same server): p50 {rtt['ping'][0]:.1f} us, p99 {rtt['ping'][1]:.1f} us.", "",
         "Every ratio is against the raw hiredis floor of the same run (`peer_raw`: the same acquire/release/renew "
         "scripts Weave sends, blocking hiredis, no library). For latency, higher = slower; for ops/s, lower = slower.", ""]
    floor_of = lambda w, k: res.get((w, "raw"), {}).get(k)

    def table(w, title, cols):
        rows = [(c, r) for (ww, c), r in res.items() if ww == w]
        if not rows:
            return
        L.extend([f"## {title}", "", "| contender | " + " | ".join(h for h, *_ in cols) + " |",
                  "|---|" + "---:|" * len(cols)])
        for c, r in rows:
            cells = []
            for h, (k, fmt, *flag) in cols:
                ratioed = not flag
                f = floor_of(w, k)
                cells.append(fmt.format(r[k]) + ("" if c == "raw" or f is None or not ratioed else f" ({ratio(r[k], f)})"))
            L.append(f"| {c} | " + " | ".join(cells) + " |")
        L.append("")

    table("uncontended", f"1. Uncontended: one client, acquire + release on a fresh key ({args.n:,} times)",
          [("ops/s", ("ops_s", "{:,.0f}")), ("p50 us", ("p50_us", "{:.1f}")), ("p99 us", ("p99_us", "{:.1f}"))])
    table("contended", f"2. Contended: {args.clients} OS processes on one key, each holding {args.hold_us} us, {args.contended_ms} ms",
          [("acquisitions/s", ("ops_s", "{:,.0f}")), ("hand-off p50 us", ("p50_us", "{:.1f}")),
           ("hand-off p99 us", ("p99_us", "{:.1f}")), ("acquisitions", ("n", "{:,}", 0)),
           ("per process (min..max)", ("per_worker", "{}", 0)), ("least / mean", ("least_share", "{:.2f}", 0)),
           ("wait p50 ms", ("wait_p50_ms", "{:.1f}", 0)), ("wait p99 ms", ("wait_p99_ms", "{:.1f}", 0)),
           ("wait max ms", ("wait_max_ms", "{:.1f}", 0)), ("self re-takes", ("self", "{}", 0)), ("overlaps", ("overlaps", "{}", 0))])
    table("holders", f"3. Many holders: {args.leases:,} leases held at once for {args.holders_ms / 1000:g} s, "
          f"lease {args.lease_ms} ms renewed every {args.renew_ms} ms",
          [("script calls/s (requests)", ("scripts_s", "{:,.1f}")), ("commands/s incl. inside scripts", ("cmds_s", "{:,.1f}")), ("client CPU ms/s", ("cpu_ms_s", "{:.1f}"))])
    table("redlock", f"4. RedLock over 3 masters: one client, acquire + release on a fresh key ({args.n:,} times)",
          [("ops/s", ("ops_s", "{:,.0f}")), ("p50 us", ("p50_us", "{:.1f}")), ("p99 us", ("p99_us", "{:.1f}"))])
    with open(os.path.join(HERE, "SETTINGS.md")) as f:
        L.append(f.read().strip())
    L.append("")
    L.append(f"![chart]({name}.png)")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(L) + "\n")
    chart(stem + ".png", res)
    print(stem + ".md")


def chart(path, res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [("uncontended", "p50_us", "1. uncontended p50 (x floor)"),
              ("contended", "ops_s", "2. contended acquisitions/s (x floor)"),
              ("contended", "p50_us", "2. hand-off p50 (x floor)"), ("contended", "per", "2. acquisitions per process / mean"),
              ("holders", "cpu_ms_s", "3. renewal client CPU (x floor)"), ("redlock", "p50_us", "4. RedLock p50 (x floor)")]
    panels = [p for p in panels if any(w == p[0] for (w, _) in res)]  # the workloads that ran
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 4), squeeze=False)
    for ax, (w, k, title) in zip(axes[0], panels):
        ax.set_title(title)
        if k == "per":
            # How evenly the contended lock went round: each process's
            # acquisitions over the mean, least lucky first (1.0 = even).
            for c, r in [(c, r) for (ww, c), r in res.items() if ww == w]:
                mean = sum(r["per"]) / len(r["per"])
                ax.plot(range(1, len(r["per"]) + 1), [x / mean for x in sorted(r["per"])], marker="o",
                        label=f"{c} (wait p99 {r['wait_p99_ms']:.0f}, max {r['wait_max_ms']:.0f} ms)")
            ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
            ax.set_xlabel("process, least lucky first")
            ax.legend(fontsize=7)
            continue
        rows = [(c, r[k]) for (ww, c), r in res.items() if ww == w]
        floor = res.get((w, "raw"), {}).get(k) or 1
        ax.bar([c for c, _ in rows], [x / floor for _, x in rows], color="tab:blue")
        ax.set_yscale("log")
        ax.tick_params(axis="x", rotation=30)
        for i, (_, x) in enumerate(rows):
            ax.annotate(f"{x / floor:.2f}x", (i, x / floor), ha="center", va="bottom", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


main()
