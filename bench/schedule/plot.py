#!/usr/bin/python3
"""The chart of a bench/schedule run: lateness p50 / p99 / max per case and runner (log scale),
with each case's missed ticks and runs per tick under it.
  bench/schedule/plot.py bench/results/schedule-<date>.json [--out file.png]"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("json")
ap.add_argument("--out")
args = ap.parse_args()
with open(args.json) as f:
    data = json.load(f)
results = data["results"]
cases = []
for r in results:
    if r["case"] not in cases:
        cases.append(r["case"])
runners = sorted({r["runner"] for r in results}, key=lambda n: (n != "weave", n))
fig, ax = plt.subplots(figsize=(9, 4.5))
width = 0.8 / len(runners)
colors = {"weave": "#1f77b4", "bullmq": "#d62728"}
labels = []
for ci, case in enumerate(cases):
    label = case
    for ri, runner in enumerate(runners):
        rs = [r for r in results if r["case"] == case and r["runner"] == runner and r.get("lateness_ms")]
        if not rs:
            continue
        r = rs[0]
        lat = r["lateness_ms"]
        x = ci + (ri - (len(runners) - 1) / 2) * width
        ax.bar(x, lat["p99"], width * 0.9, color=colors.get(runner, "gray"), alpha=0.35)
        ax.bar(x, lat["p50"], width * 0.9, color=colors.get(runner, "gray"), label=runner if ci == 0 else None)
        ax.plot([x], [lat["max"]], marker="_", markersize=14, color=colors.get(runner, "gray"))
        label += "\n%s: %s missed, %.3g runs/tick" % (runner, r.get("missed"), r.get("runs_per_tick") or 0)
    labels.append(label)
ax.set_xticks(range(len(cases)))
ax.set_xticklabels(labels, fontsize=8)
ax.set_yscale("log")
ax.set_ylabel("lateness, ms (bar: p50, light: p99, tick: max)")
ax.set_title("every=100ms, worker processes on one redis-server (kill: one SIGKILLed every %s s): start - tick time"
             % data["meta"].get("kill_every_s", "?"), fontsize=9)
ax.legend()
fig.tight_layout()
out = args.out or args.json.replace(".json", ".png")
fig.savefig(out, dpi=110)
print(out)
