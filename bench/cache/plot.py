#!/usr/bin/python3
"""Draws the [[cache]] figures of docs/benchmarks.md from one run's outputs.

  bench_cache --benchmark_out=cache.json --benchmark_out_format=json > cache.txt
  bench_cache_policy --benchmark_filter=hit_ratio --benchmark_out=policy.json --benchmark_out_format=json
  bench_cache_policy --benchmark_filter=_hit --benchmark_out=tier.json --benchmark_out_format=json   # optional
  bench/cache/plot.py --cache cache.json --cache-text cache.txt --policy policy.json \
      [--before before.json --before-text before.txt] [--tier tier.json [--tier-before tier0.json]] \
      --out bench/results/cache-<date>.png

Panels: hit ratio of W-TinyLFU, LRU and the oracle by Zipf exponent; local-hit
throughput by threads next to the map baselines of the same run (and the
same benchmarks of a "before" run, dashed); the invalidation delay p50 / p99
in PING round trips (the delay loop prints it, bench_cache.cpp); with --tier,
LocalTier::get alone by threads next to the same maps.
"""
import argparse
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def runs(path):
    """name -> benchmark entry; the median when the run has repetitions."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                out[name] = b
        elif name not in out:
            out[name] = b
    return out, data.get("context", {})


def throughput(benches, base):
    """threads -> M items/s of `base`/real_time/threads:N."""
    pts = {}
    for name, b in benches.items():
        m = re.fullmatch(re.escape(base) + r"/real_time/threads:(\d+)", name)
        if m and "items_per_second" in b:
            pts[int(m.group(1))] = b["items_per_second"] / 1e6
    return sorted(pts.items())


def delay(path):
    """(p50, p99) of the invalidation delay in RTT, from bench_cache's text output."""
    if not path:
        return None
    with open(path) as f:
        text = f.read()
    m = re.search(r"delay p50 [-\d.]+ us \(([-\d.]+) RTT\), p99 [-\d.]+ us \(([-\d.]+) RTT\)", text)
    return (float(m.group(1)), float(m.group(2))) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True, help="bench_cache --benchmark_out JSON")
    ap.add_argument("--cache-text", help="bench_cache's printed output (the delay loop)")
    ap.add_argument("--policy", required=True, help="bench_cache_policy --benchmark_filter=hit_ratio JSON")
    ap.add_argument("--before", help="bench_cache JSON of an earlier build, same session")
    ap.add_argument("--before-text", help="its printed output")
    ap.add_argument("--tier", help="bench_cache_policy --benchmark_filter=_hit JSON")
    ap.add_argument("--tier-before", help="the same of an earlier build")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    cache, ctx = runs(a.cache)
    policy, _ = runs(a.policy)
    panels = 4 if a.tier else 3
    fig, axes = plt.subplots(1, panels, figsize=(5.4 * panels, 4.8))
    ax1, ax2, ax3 = axes[:3]

    # 1. hit ratio by Zipf s
    for pol, label, style in (("wtinylfu", "W-TinyLFU (LocalTier)", "o-"), ("lru", "LRU", "s--"),
                              ("oracle", "oracle (best possible)", "k:")):
        pts = sorted((float(n.split("/")[2]), b["hit_ratio"] * 100) for n, b in policy.items()
                     if n.startswith("hit_ratio/" + pol + "/"))
        if pts:
            ax1.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    ax1.set(title="Hit ratio, tier at 1 % of 1M keys", xlabel="Zipf exponent s", ylabel="hit ratio (%)")
    ax1.grid(alpha=0.3)
    ax1.legend()

    # 2. local-hit throughput by threads
    series = (("local_hit", "local hit, key per thread", "o-"), ("local_hit_hot", "local hit, one hot key", "^-"),
              ("mutex_map", "std::mutex map", "s--"), ("shared_mutex_map", "std::shared_mutex map", "d--"))
    for base, label, style in series:
        pts = throughput(cache, base)
        if pts:
            ax2.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    if a.before:
        before, _ = runs(a.before)
        for base, label, style in series[:2]:
            pts = throughput(before, base)
            if pts:
                ax2.plot([p[0] for p in pts], [p[1] for p in pts], style[0] + ":", alpha=0.6,
                         label=label + " (before)")
    load = ctx.get("load_avg")
    cpus = ctx.get("num_cpus")
    ax2.set(title="Local-hit throughput" + (f" ({cpus} CPUs, load {load[0]:.1f})" if load and cpus else ""),
            xlabel="threads", ylabel="M calls/s (all threads)")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks([1, 2, 4, 8], labels=["1", "2", "4", "8"])
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)

    # 3. invalidation delay in round trips
    bars = [("after" if a.before else "this run", delay(a.cache_text))]
    if a.before:
        bars.insert(0, ("before", delay(a.before_text)))
    bars = [(n, d) for n, d in bars if d]
    width = 0.35
    for i, (n, d) in enumerate(bars):
        xs = [x + (i - (len(bars) - 1) / 2) * width for x in (0, 1)]
        ax3.bar(xs, d, width, label=n)
        for x, v in zip(xs, d):
            ax3.annotate(f"{v:.2f}", (x, v), ha="center", va="bottom", fontsize=8)
    ax3.axhline(2, color="red", ls="--", lw=1, label="target p99 ≤ 2 RTT")
    ax3.set_xticks([0, 1], labels=["p50", "p99"])
    ax3.set(title="Invalidation delay across processes", ylabel="PING round trips")
    ax3.grid(alpha=0.3, axis="y")
    ax3.legend(fontsize=8)

    # 4. LocalTier::get alone
    if a.tier:
        ax4 = axes[3]
        tier, _ = runs(a.tier)
        tseries = (("local_tier_hit", "LocalTier::get", "o-"), ("mutex_map_hit", "std::mutex map", "s--"),
                   ("shared_mutex_map_hit", "std::shared_mutex map", "d--"))
        for base, label, style in tseries:
            pts = throughput(tier, base)
            if pts:
                ax4.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        if a.tier_before:
            pts = throughput(runs(a.tier_before)[0], "local_tier_hit")
            if pts:
                ax4.plot([p[0] for p in pts], [p[1] for p in pts], "o:", alpha=0.6, label="LocalTier::get (before)")
        ax4.set(title="LocalTier::get alone, 1,000 resident keys", xlabel="threads", ylabel="M gets/s (all threads)")
        ax4.set_xscale("log", base=2)
        ax4.set_xticks([1, 2, 8], labels=["1", "2", "8"])
        ax4.grid(alpha=0.3)
        ax4.legend(fontsize=8)

    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
