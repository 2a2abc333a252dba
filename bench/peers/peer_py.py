#!/usr/bin/python3
"""redis-py peer driver: redis.lock.Lock via Redis.lock(), the library's defaults
(sleep=0.1 s between blocked attempts, thread_local=True) unless noted.
redis-py has no auto-renewal: for "holders" one thread calls reacquire() on
every lock each renew period (what its docs point to: extend()/reacquire()).
Usage: peer_py.py workload=... ports=P ...   Prints JSON lines."""
import json
import resource
import sys
import threading
import time

import redis

a = dict(x.split("=", 1) for x in sys.argv[1:] if "=" in x)
wl = a["workload"]
port = int(a["ports"].split(",")[0])
r = redis.Redis(host="127.0.0.1", port=port)


def ns():
    return time.monotonic_ns()  # CLOCK_MONOTONIC, same clock as the other drivers


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def commands():  # (all calls except INFO, EVAL/EVALSHA/FCALL calls = requests)
    st = r.info("commandstats")
    return (sum(v["calls"] for k, v in st.items() if k != "cmdstat_info"),
            sum(v["calls"] for k, v in st.items() if k.startswith(("cmdstat_eval", "cmdstat_fcall"))))


def emit(**kw):
    print(json.dumps({"contender": "redis-py", "workload": wl, **kw}), flush=True)


if wl == "uncontended":
    n, base = int(a.get("n", 5000)), int(a.get("base", 0))
    for i in range(200):
        lk = r.lock(f"peers:py:{base - 1 - i}", timeout=10)
        lk.acquire()
        lk.release()
    lat = []
    t0 = ns()
    for i in range(n):
        s = ns()
        lk = r.lock(f"peers:py:{base + i}", timeout=10)
        lk.acquire()
        lk.release()
        lat.append(ns() - s)
    emit(n=n, secs=(ns() - t0) / 1e9, lat_ns=lat)
elif wl == "contended":
    until = ns() + int(a.get("ms", 3000)) * 1_000_000
    hold = int(a.get("hold_us", 1000)) / 1e6
    iv = []
    lk = r.lock("peers:py:hot", timeout=10)
    while ns() < until:
        asked = ns()
        lk.acquire()  # blocking, polls every `sleep` (0.1 s default)
        t = ns()
        time.sleep(hold)
        iv.append([t, ns(), asked])
        lk.release()
    emit(worker=int(a.get("worker", 0)), intervals=iv)
elif wl == "holders":
    leases, lease_s, renew_s = int(a.get("leases", 1000)), int(a.get("lease_ms", 3000)) / 1e3, int(a.get("renew_ms", 1000)) / 1e3
    secs = int(a.get("ms", 10000)) / 1e3
    locks = [r.lock(f"peers:py:hold:{i}", timeout=lease_s, thread_local=False) for i in range(leases)]
    for lk in locks:
        lk.acquire(blocking=False)
    stop = threading.Event()

    def renewer():
        while not stop.wait(renew_s):
            for lk in locks:
                lk.reacquire()

    c0, cpu0 = commands(), cpu()
    th = threading.Thread(target=renewer)
    th.start()
    time.sleep(secs)
    stop.set()
    th.join()
    used, c1 = cpu() - cpu0, commands()
    for lk in locks:
        lk.release()
    emit(leases=leases, secs=secs, commands=c1[0] - c0[0], scripts=c1[1] - c0[1], cpu_s=used)
else:
    sys.exit(2)
