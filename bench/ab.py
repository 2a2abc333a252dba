#!/usr/bin/env python3
"""Alternating A/B runs of one Google Benchmark program built twice (before and
after a change), so both see the same machine load: A, B, A, B, ... Prints,
per benchmark, the median time of each side (wall time for UseRealTime()
benchmarks, else CPU time) and B/A.

  bench/ab.py --a /tmp/base/bench_proxy --b build/bench/bench_proxy --runs 4 \
      -- --benchmark_filter='empty_chain|mem_lock_watchdog' --benchmark_min_time=0.2

With --counter NAME, the medians (and the range) of that user counter
instead of the times, e.g. bench_proxy's ratios in turns with std::mutex:

  bench/ab.py --a /tmp/base/bench_proxy --b build/bench/bench_proxy --runs 10 --counter x_std_mutex \
      -- --benchmark_filter=per_mutex --benchmark_min_time=0.3
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile


def run(binary, extra, counter=None):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        # --benchmark_out: the programs' own reports still go to stdout (discarded)
        subprocess.run([binary, f"--benchmark_out={f.name}", "--benchmark_out_format=json", *extra], check=True,
                       stdout=subprocess.DEVNULL)
        data = json.load(open(f.name))
    times = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        if counter:
            if counter in b:
                times.setdefault(b["name"], []).append(float(b[counter]))
            continue
        # UseRealTime() benchmarks (threads, round trips) are read by wall time, the others by CPU time.
        t = b["real_time"] if "/real_time" in b["name"] else b["cpu_time"]
        times.setdefault(b["name"], []).append(t * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]])
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="the baseline binary")
    p.add_argument("--b", required=True, help="the changed binary")
    p.add_argument("--runs", type=int, default=4, help="runs of each, alternated (default 4)")
    p.add_argument("--counter", help="compare this user counter of each benchmark, not its time")
    p.add_argument("extra", nargs="*", help="arguments for both binaries (after --)")
    args = p.parse_args()
    a, b = {}, {}
    for i in range(args.runs):
        for side, binary in ((a, args.a), (b, args.b)):
            for name, t in run(binary, args.extra, args.counter).items():
                side.setdefault(name, []).extend(t)
        print(f"run {i + 1}/{args.runs} done", file=sys.stderr)
    unit = args.counter or "ns"
    print(f"{'benchmark':48} {'A ' + unit:>12} {'B ' + unit:>12} {'B/A':>7}   range A | range B")
    for name in a:
        if name not in b:
            continue
        ma, mb = statistics.median(a[name]), statistics.median(b[name])
        print(f"{name:48} {ma:12.2f} {mb:12.2f} {mb / ma:7.3f}   "
              f"{min(a[name]):.2f}-{max(a[name]):.2f} | {min(b[name]):.2f}-{max(b[name]):.2f}")


if __name__ == "__main__":
    main()
