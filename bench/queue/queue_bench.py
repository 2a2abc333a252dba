#!/usr/bin/python3
"""Delay-queue benchmark: runs every available runner (BullMQ, Weave, any --runner)
on the same scenarios against one private redis-server (a free 127.0.0.1 port, no persistence),
counts what each sends to Redis, prints a table and writes bench/results/queue-<date>.json + .md.
Runner protocol: bench/queue/README.md. Python 3 standard library only. Called by run.sh."""
import argparse
import datetime
import json
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REDIS_SERVER = "/usr/bin/redis-server"
HARNESS_CMDS = {"info", "client|list", "client|info", "monitor", "echo", "config|resetstat"}  # ours, never the runner's

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--quick", action="store_true", help="under a minute: fewer messages, lateness 1.5 s of offers with delays 100 ms..2 s, idle 5 s, no idle-delayed")
ap.add_argument("--repeats", type=int, default=1, help="runs per runner and case, alternating runners A/B/A/B (default 1)")
ap.add_argument("--messages", type=int, help="offer / deliver messages (default 100000, quick 5000)")
ap.add_argument("--concurrency", default="1,16", help="deliver: consumer concurrency values (comma list)")
ap.add_argument("--inflight", type=int, default=64, help="offer: unanswered adds allowed at once in the windowed case (the other case is 1)")
ap.add_argument("--batch", type=int, default=1000, help="offer-bulk: messages per bulk call")
ap.add_argument("--take-batch", type=int, default=16, help="deliver-batch: messages per take (Weave's take_many; BullMQ's open edition has no batch consumer)")
ap.add_argument("--rates", default="1000,10000", help="lateness: offered rates, messages/s (comma list)")
ap.add_argument("--lateness-seconds", type=float, help="lateness: seconds of offering per rate (default 5, quick 1.5)")
ap.add_argument("--lateness-concurrency", type=int, default=16)
ap.add_argument("--lateness-inflight", type=int, default=256, help="lateness: unanswered adds allowed at once while pacing")
ap.add_argument("--min-delay-ms", type=int, default=100)
ap.add_argument("--max-delay-ms", type=int, help="lateness: delays uniform in [min, max] (default 10000, quick 2000)")
ap.add_argument("--idle-seconds", type=float, help="idle: window in which an idle consumer is watched (default 10, quick 5)")
ap.add_argument("--idle-delayed-ms", type=int, default=3600000, help="idle-delayed: the one waiting job's delay (default 1 h)")
ap.add_argument("--redis-hz", type=int, help="start redis-server with --hz N (default: its own default, 10; blocking-command timeouts are checked at this rate)")
ap.add_argument("--monitor-messages", type=int, help="deliver under MONITOR, to count requests per connection (default 2000, quick 1000; 0 = skip)")
ap.add_argument("--scenarios", default="offer,offer-bulk,deliver,deliver-batch,lateness,idle,idle-delayed,monitor", help="subset to run (quick: idle-delayed left out)")
ap.add_argument("--only", default="", help="comma list of runners (default: every available one)")
ap.add_argument("--weave-bin", default=os.path.join(ROOT, "build", "bench", "queue", "bench_queue_weave"))
ap.add_argument("--runner", action="append", default=[], metavar="NAME=COMMAND", help="extra runner (command split like a shell)")
ap.add_argument("--timeout-s", type=float, default=120, help="per run, on top of its expected length")
ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
ap.add_argument("--no-write", action="store_true", help="print the table only")
args = ap.parse_args()
Q = args.quick
MESSAGES = args.messages or (5000 if Q else 100000)
LAT_SECS = args.lateness_seconds or (1.5 if Q else 5.0)
MAX_DELAY = args.max_delay_ms or (2000 if Q else 10000)
IDLE_SECS = args.idle_seconds or (5.0 if Q else 10.0)
MON_MSGS = args.monitor_messages if args.monitor_messages is not None else (1000 if Q else 2000)


def say(*a):
    print(*a, file=sys.stderr, flush=True)


# ---- a small RESP client ------------------------------------------------------------------------
class Resp:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.s.makefile("rb")

    def send(self, *parts):
        out = [b"*%d\r\n" % len(parts)]
        for p in parts:
            p = p if isinstance(p, bytes) else str(p).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(p), p))
        self.s.sendall(b"".join(out))

    def read(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("redis closed the connection")
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data.decode(errors="replace")
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError(f"bad reply {line!r}")

    def cmd(self, *parts):
        self.send(*parts)
        return self.read()

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def info(r, section):
    out = {}
    for line in r.cmd("INFO", section).splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def commandstats(r):
    calls = {}
    for k, v in info(r, "commandstats").items():
        if k.startswith("cmdstat_"):
            calls[k[8:]] = int(v.split(",")[0].split("=")[1])
    return calls


def redis_cpu(r):
    i = info(r, "cpu")
    return float(i["used_cpu_user"]) + float(i["used_cpu_sys"])


def client_names(r):
    names = {}
    for line in r.cmd("CLIENT", "LIST").splitlines():
        f = dict(x.split("=", 1) for x in line.split() if "=" in x)
        names[f["addr"]] = f.get("name") or f["addr"]
    return names


# ---- the server under test ----------------------------------------------------------------------
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
            self.dir = tempfile.mkdtemp(prefix="qbench-redis-")
            self.proc = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", self.dir, "--loglevel", "warning"] + (["--hz", str(args.redis_hz)] if args.redis_hz else []),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if self.proc.poll() is not None:
                    break
                try:
                    self.r = Resp(self.port)
                    if self.r.cmd("PING") == "PONG":
                        self.addr = self.r.cmd("CLIENT", "INFO").split("addr=")[1].split()[0]
                        return
                except OSError:
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("could not start redis-server")

    def reset(self):
        self.r.cmd("FLUSHALL")
        self.r.cmd("SCRIPT", "FLUSH")
        self.r.cmd("CONFIG", "RESETSTAT")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()


class Monitor:
    """MONITOR between two ECHO sentinels sent on the harness connection: counts the top-level
    commands of each client address, and the commands run inside scripts ('lua')."""

    def __init__(self, srv):
        self.srv, self.tag = srv, f"qbench-{time.monotonic_ns()}"
        self.m = Resp(srv.port)
        self.m.s.settimeout(None)
        assert self.m.cmd("MONITOR") == "OK"
        self.per_addr, self.lua, self.events = {}, 0, []
        self.on, self.done = False, threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()
        srv.r.cmd("ECHO", self.tag + "-begin")

    def loop(self):
        try:
            while True:
                line = self.m.read()
                ts, _, rest = line.partition(" [")
                where, _, cmd = rest.partition("] ")
                addr = where.split(" ", 1)[1] if " " in where else where
                if addr == self.srv.addr:
                    if self.tag + "-begin" in cmd:
                        self.t0, self.on = float(ts), True
                    elif self.tag + "-end" in cmd:
                        return
                    continue
                if not self.on:
                    continue
                if addr == "lua":
                    self.lua += 1
                    continue
                self.per_addr[addr] = self.per_addr.get(addr, 0) + 1
                name = cmd.split(" ", 1)[0].strip('"').lower()
                if len(self.events) < 5000:
                    self.events.append((round(float(ts) - self.t0, 3), addr, name))
        finally:
            self.done.set()

    def stop(self):
        self.srv.r.cmd("ECHO", self.tag + "-end")
        self.done.wait(30)
        self.m.close()


# ---- runners ------------------------------------------------------------------------------------
def runners():
    found, skipped = {}, []
    found["bullmq"] = ["node", os.path.join(HERE, "peer_bullmq.mjs")]
    if not os.path.isdir(os.path.join(HERE, "node_modules", "bullmq")):
        del found["bullmq"]
        skipped.append("bullmq: skipped (no bench/queue/node_modules; run `npm ci` in bench/queue or use run.sh)")
    if os.access("/usr/bin/redis-benchmark", os.X_OK):  # the round-trip floor (offer, deliver)
        found["floor"] = ["/usr/bin/python3", os.path.join(HERE, "floor_ping.py")]
    else:
        skipped.append("floor: skipped (no /usr/bin/redis-benchmark; apt install redis-tools)")
    if os.access(args.weave_bin, os.X_OK):
        found["weave"] = [args.weave_bin]
    else:
        skipped.append(f"weave: skipped (no binary at {os.path.relpath(args.weave_bin, ROOT)}; build it or pass --weave-bin)")
    for spec in args.runner:
        name, _, cmd = spec.partition("=")
        found[name] = shlex.split(cmd)
    if args.only:
        keep = args.only.split(",")
        found = {k: v for k, v in found.items() if k in keep}
    return found, skipped


def cases():
    """(case id, scenario, runner flags, expected seconds, extras) in run order."""
    want = set(args.scenarios.split(","))
    out = []
    if "offer" in want:
        out.append(("offer add x1", "offer", ["--messages", MESSAGES, "--inflight", 1], 10, {}))
        out.append((f"offer add x{args.inflight}", "offer", ["--messages", MESSAGES, "--inflight", args.inflight], 10, {}))
    if "offer-bulk" in want:
        out.append((f"offer-bulk {args.batch}", "offer-bulk", ["--messages", MESSAGES, "--batch", args.batch], 10, {}))
    if "deliver" in want:
        for c in map(int, args.concurrency.split(",")):
            out.append((f"deliver c={c}", "deliver", ["--messages", MESSAGES, "--concurrency", c], 20, {}))
    if "deliver-batch" in want:
        for c in map(int, args.concurrency.split(",")):
            out.append((f"deliver c={c}, batches of {args.take_batch}", "deliver",
                        ["--messages", MESSAGES, "--concurrency", c, "--take-batch", args.take_batch], 20, {"only": ["weave"]}))
    if "lateness" in want:
        for rate in map(int, args.rates.split(",")):
            n = int(rate * LAT_SECS)
            out.append((f"lateness {rate}/s", "lateness",
                        ["--messages", n, "--rate", rate, "--concurrency", args.lateness_concurrency, "--inflight", args.lateness_inflight,
                         "--min-delay-ms", args.min_delay_ms, "--max-delay-ms", MAX_DELAY], LAT_SECS + MAX_DELAY / 1000 + 10, {}))
    if "idle" in want:
        out.append((f"idle {IDLE_SECS:g} s", "idle", ["--seconds", IDLE_SECS, "--concurrency", 1], IDLE_SECS + 10, {"monitor": True}))
    if "idle-delayed" in want and not (Q and args.scenarios == ap.get_default("scenarios")):
        out.append((f"idle {IDLE_SECS:g} s, 1 delayed", "idle", ["--seconds", IDLE_SECS, "--concurrency", 1, "--idle-delayed-ms", args.idle_delayed_ms],
                    IDLE_SECS + 10, {"monitor": True}))
    if "monitor" in want and MON_MSGS:
        c = max(map(int, args.concurrency.split(",")))
        out.append((f"deliver c={c} MONITOR", "deliver", ["--messages", MON_MSGS, "--concurrency", c], 20, {"monitor": True}))
    return out


def run_one(srv, name, argv0, scenario, flags, expect_s, monitor):
    srv.reset()
    cmd = argv0 + ["--redis-url", f"redis://127.0.0.1:{srv.port}", "--scenario", scenario, "--marks"] + [str(x) for x in flags]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, start_new_session=True)
    killed = []

    def kill():
        killed.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the runner's own process group (it may have forked)
        except ProcessLookupError:
            pass

    watchdog = threading.Timer(expect_s + args.timeout_s, kill)
    watchdog.start()
    res, m, mon = None, {}, None
    try:
        for line in p.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            o = json.loads(line)
            if o.get("mark") == "begin":
                m["names"] = client_names(srv.r)
                if monitor:
                    mon = Monitor(srv)
                m["calls0"], m["cpu0"], m["t0"] = commandstats(srv.r), redis_cpu(srv.r), time.monotonic()
                p.stdin.write("go\n")
                p.stdin.flush()
            elif o.get("mark") == "end":
                m["t1"] = time.monotonic()
                m["calls1"], m["cpu1"] = commandstats(srv.r), redis_cpu(srv.r)
                if mon:
                    mon.stop()
                m["names"].update(client_names(srv.r))
                p.stdin.write("go\n")
                p.stdin.flush()
            else:
                res = o
        p.wait()
    finally:
        watchdog.cancel()
        if p.poll() is None:
            kill()
            p.wait()
    if killed:
        return {"failed": f"timed out after {expect_s + args.timeout_s:.0f} s"}
    if p.returncode != 0 or res is None:
        return {"failed": f"exit {p.returncode}" + ("" if res else ", no result line")}
    if res.get("unsupported"):
        return res
    if "calls1" in m:
        d = {k: v - m["calls0"].get(k, 0) for k, v in m["calls1"].items() if k not in HARNESS_CMDS}
        d = {k: v for k, v in d.items() if v}
        total = sum(d.values())
        per = res.get("completed") or res.get("messages") or 0
        res["redis"] = {
            "calls": total, "calls_per_msg": total / per if per else None,
            "by_command": dict(sorted(d.items(), key=lambda kv: -kv[1])),
            "cpu_s": round(m["cpu1"] - m["cpu0"], 4), "window_s": round(m["t1"] - m["t0"], 4),
        }
    if mon:
        names = m["names"]
        per_conn = {}
        for addr, n in mon.per_addr.items():
            per_conn[names.get(addr, addr)] = per_conn.get(names.get(addr, addr), 0) + n
        top = sum(n for k, n in per_conn.items() if not k.startswith("qbench-producer"))
        per = res.get("completed") or 0
        res["monitor"] = {"requests_by_connection": per_conn, "consumer_requests": top, "inside_scripts": mon.lua,
                          "consumer_requests_per_msg": top / per if per else None,
                          "inside_scripts_per_msg": mon.lua / per if per else None}
        if scenario == "idle":
            res["monitor"]["events"] = [(t, names.get(a, a), c) for t, a, c in mon.events][:200]
    return res


# ---- report -------------------------------------------------------------------------------------
def med(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    h = len(xs) // 2
    return xs[h] if len(xs) % 2 else (xs[h - 1] + xs[h]) / 2


def fmt(xs, f="{:,.0f}"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    s = f.format(med(xs))
    return s if len(xs) == 1 else f"{s} ({f.format(min(xs))}..{f.format(max(xs))})"


def row(case, runner, rs):
    ok = [r for r in rs if "failed" not in r and not r.get("unsupported")]
    if not ok:
        return [case, runner] + ["n/a" if rs and rs[0].get("unsupported") else (rs[0].get("failed") if rs else "-")] + [""] * 7
    g = lambda *path: [_get(r, path) for r in ok]
    scen = ok[0]["scenario"]
    rate = "-"
    if scen in ("offer", "offer-bulk"):
        rate = fmt(g("offers_per_s")) + " offers/s"
    elif scen == "deliver":
        rate = fmt(g("deliveries_per_s")) + " deliveries/s"
    elif scen == "lateness":
        rate = fmt(g("offers_per_s")) + " offered/s"
    lat = "-"
    if scen == "lateness":
        lat = " / ".join(fmt(g("lateness_ms", k), "{:,.1f}") for k in ("p50", "p99", "max"))
    per = fmt(g("redis", "calls_per_msg"), "{:.1f}")
    if scen == "idle":
        per = fmt(g("redis", "calls")) + f" calls in {IDLE_SECS:g} s"
    mon = "-"
    if ok[0].get("monitor"):
        if scen == "idle":
            mon = fmt(g("monitor", "consumer_requests")) + f" requests, {fmt(g('monitor', 'inside_scripts'))} in scripts"
        else:
            mon = fmt(g("monitor", "consumer_requests_per_msg"), "{:.2f}") + " req + " + fmt(g("monitor", "inside_scripts_per_msg"), "{:.1f}") + " in scripts"
    per_msg = lambda path: fmt([c * 1e6 / k if c is not None and k else None
                                for c, k in ((_get(r, path), r.get("completed") or r.get("messages")) for r in ok)], "{:.1f}")
    cpu, ccpu = per_msg(("redis", "cpu_s")), per_msg(("client_cpu_s",))
    if scen == "idle":
        cpu = fmt([_get(r, ("redis", "cpu_s")) for r in ok], "{:.3f}") + " s"
        ccpu = fmt([_get(r, ("client_cpu_s",)) for r in ok], "{:.3f}") + " s"
    errors = sum(r.get("errors", 0) for r in ok)
    return [case, runner, rate, lat, per, mon, cpu, ccpu, str(errors), str(len(ok))]


def _get(o, path):
    for k in path:
        if not isinstance(o, dict):
            return None
        o = o.get(k)
    return o


HEAD = ["case", "runner", "throughput", "lateness ms p50 / p99 / max", "Redis calls per msg", "consumer requests per msg (MONITOR)",
        "Redis CPU us per msg", "client CPU us per msg", "errors", "runs"]


def table(results, order):
    rows = [HEAD, ["---"] * len(HEAD)]
    for case in order:
        for runner, rs in results[case].items():
            rows.append(row(case, runner, rs))
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def versions(found, hz):
    v = {"redis-server": subprocess.run([REDIS_SERVER, "--version"], capture_output=True, text=True).stdout.split()[2].replace("v=", ""), "redis hz": hz}
    try:
        v["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    pj = os.path.join(HERE, "node_modules", "bullmq", "package.json")
    if "bullmq" in found and os.path.exists(pj):
        with open(pj) as f:
            v["bullmq"] = json.load(f)["version"]
    v["git"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return v


def main():
    found, skipped = runners()
    for s in skipped:
        say(s)
    if not found:
        say("no runner to run")
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    plan = cases()
    srv = Server()
    hz = srv.r.cmd("CONFIG", "GET", "hz")[1]
    say(f"redis-server on 127.0.0.1:{srv.port}; runners: {', '.join(found)}; {len(plan)} cases x {args.repeats} repeats")
    results, runs = {c[0]: {n: [] for n in found} for c in plan}, []
    load0 = os.getloadavg()
    try:
        for case, scen, flags, expect_s, extra in plan:
            for rep in range(args.repeats):
                for name, argv0 in found.items():  # A/B/A/B
                    if name not in extra.get("only", found):
                        results[case][name].append({"unsupported": True})
                        continue
                    say(f"  {case:24s} {name} #{rep + 1} ...")
                    t = time.monotonic()
                    r = run_one(srv, name, argv0, scen, flags, expect_s, extra.get("monitor", False))
                    r["case"], r["repeat"], r["wall_s"] = case, rep + 1, round(time.monotonic() - t, 2)
                    if "failed" in r:
                        say(f"    {name}: {r['failed']}")
                    results[case][name].append(r)
                    runs.append({"runner": name, **r})
    finally:
        srv.stop()
    took = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    t = table(results, [c[0] for c in plan])
    v = versions(found, hz)
    head = (f"Delay-queue bench {started.strftime('%Y-%m-%d %H:%M UTC')} ({took:.0f} s): `queue_bench.py {' '.join(sys.argv[1:])}`; "
            + ", ".join(f"{k} {val}" for k, val in v.items()) + f"; {os.cpu_count()} CPUs (shared), load {load0[0]:.2f} -> {os.getloadavg()[0]:.2f}. "
            f"Lateness: delays uniform {args.min_delay_ms}..{MAX_DELAY} ms, {LAT_SECS:g} s of offers per rate, consumer concurrency "
            f"{args.lateness_concurrency}. Redis calls = INFO commandstats delta (incl. commands inside scripts) over the measured phase; "
            "medians (min..max) over repeats.")
    print(head + "\n\n" + t)
    if not args.no_write:
        os.makedirs(args.out, exist_ok=True)
        stem = os.path.join(args.out, "queue-" + started.strftime("%Y-%m-%d") + ("-quick" if Q else ""))
        meta = {"started": started.isoformat(), "seconds": round(took, 1), "argv": sys.argv[1:], "versions": v,
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}", "loadavg": [load0, os.getloadavg()],
                "skipped": skipped, "settings": {"messages": MESSAGES, "lateness_seconds": LAT_SECS, "min_delay_ms": args.min_delay_ms,
                                                 "max_delay_ms": MAX_DELAY, "idle_seconds": IDLE_SECS, "monitor_messages": MON_MSGS}}
        with open(stem + ".json", "w") as f:
            json.dump({"meta": meta, "runs": runs}, f, indent=1)
        with open(stem + ".md", "w") as f:
            f.write("# " + head + "\n\n" + t + "\n" + "".join("\n" + s + "\n" for s in skipped))
        say(stem + ".json")
    return 1 if any("failed" in r for r in runs) else 0


sys.exit(main())
