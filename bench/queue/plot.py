#!/usr/bin/python3
"""Charts a bench/queue results JSON: throughput per case and lateness
percentiles per rate, Weave next to BullMQ (medians over repeats).
  /usr/bin/python3 bench/queue/plot.py bench/results/queue-<date>.json --out bench/results/queue-<date>.png
Needs python3-matplotlib (Debian)."""
import argparse
import json
import statistics
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("results")
ap.add_argument("--out", required=True)
args = ap.parse_args()

runs = json.load(open(args.results))["runs"]
by = defaultdict(list)  # (case, runner) -> runs
for r in runs:
    if r.get("unsupported") or "case" not in r:
        continue
    by[(r["case"], r["runner"])].append(r)
runners = sorted({k[1] for k in by})
colors = {"weave": "#1f77b4", "bullmq": "#d62728", "floor": "#9e9e9e"}


def median(case, runner, get):
    vals = [get(r) for r in by.get((case, runner), []) if get(r) is not None]
    return statistics.median(vals) if vals else 0.0


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
tcases = [c for c in dict.fromkeys(k[0] for k in by) if c.startswith(("offer", "deliver")) and "MONITOR" not in c]
width = 0.8 / max(1, len(runners))
for i, runner in enumerate(runners):
    ys = [median(c, runner, lambda r: r.get("offers_per_s") if c.startswith("offer") else r.get("deliveries_per_s"))
          for c in tcases]
    ax1.bar([x + i * width for x in range(len(tcases))], ys, width, label=runner, color=colors.get(runner))
ax1.set_xticks([x + width * (len(runners) - 1) / 2 for x in range(len(tcases))])
ax1.set_xticklabels(tcases, rotation=20, ha="right")
ax1.set_ylabel("messages/s (higher is better)")
ax1.set_title("Throughput")
ax1.legend()

lcases = [c for c in dict.fromkeys(k[0] for k in by) if c.startswith("lateness")]
# Runners that measured lateness (the round-trip floor has none).
lrunners = [r for r in runners if any((x.get("lateness_ms") or {}).get("p50") is not None
                                      for c in lcases for x in by.get((c, r), []))]
pos = 0
for c in lcases:
    for i, runner in enumerate(lrunners):
        for j, (q, hatch) in enumerate((("p50", ""), ("p99", "//"), ("max", ".."))):
            v = median(c, runner, lambda r, q=q: (r.get("lateness_ms") or {}).get(q))
            ax2.bar(pos, max(v, 0.05), 0.8, color=colors.get(runner), hatch=hatch, edgecolor="white")
            pos += 1
        pos += 0.5
ax2.set_yscale("log")
ax2.set_ylabel("handler start - due, ms (log; lower is better)")
ax2.set_title("Lateness of delayed messages")
ax2.set_xticks([])
ax2.text(0.01, 0.97, "bars per rate: " + ", ".join(f"{r} p50/p99/max" for r in lrunners), transform=ax2.transAxes,
         va="top", fontsize=8)
for k, c in enumerate(lcases):
    ax2.annotate(c, (k * (3 * len(lrunners) + 0.5) + 1.5 * len(lrunners) - 0.5, 0), xycoords=("data", "axes fraction"),
                 xytext=(0, -14), textcoords="offset points", ha="center")
meta = json.load(open(args.results))["meta"]
fig.suptitle(f"bench/queue {meta['started'][:10]}: Weave and BullMQ on one redis-server {meta['versions']['redis-server']}")
fig.tight_layout()
fig.savefig(args.out, dpi=110)
print(args.out)
