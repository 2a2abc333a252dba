#!/usr/bin/python3
"""Chart of one fault soak run: acquisitions per second over time, with the
nemesis' faults, overlaps, refused stale accesses and lost-lease signals.

    tests/soak/plot.py <log dir printed by the soak> <out.png> [title]

Needs python3-matplotlib (apt). Reads the workers' *.log files and faults.txt (tests/soak/test_fault_soak.cpp).
"""
import collections
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    logs = pathlib.Path(sys.argv[1])
    out = sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else logs.name
    events = []
    for f in logs.glob("*.log"):
        for line in f.read_text().splitlines():
            parts = line.split(" ")
            if len(parts) == 7:
                events.append((int(parts[0]), parts[2], parts[3], parts[6]))
    faults = []
    faults_file = logs / "faults.txt"
    if faults_file.exists():
        for line in faults_file.read_text().splitlines():
            t, kind, _ = line.split(" ")
            faults.append((int(t), kind))
    if not events:
        sys.exit(f"no events in {logs}")
    t0 = min(e[0] for e in events)
    sec = lambda t: (t - t0) / 1e6  # noqa: E731

    acquired = collections.Counter(int(sec(t)) for t, op, kind, _ in events if op == "acquire" and kind == "ok")
    span = max(acquired) + 1 if acquired else 1
    xs = list(range(span))
    marks = {
        "overlap (occupancy > 1)": [sec(t) for t, op, kind, d in events if op == "enter" and kind == "ok" and d != "-" and int(d) > 1],
        "stale access refused by the oracle": [sec(t) for t, op, kind, _ in events if op in ("read", "write") and kind == "failed"],
        "lost-lease signal": [sec(t) for t, op, _, _ in events if op == "lost"],
    }
    fig, ax = plt.subplots(figsize=(11, 4.8))
    ax.plot(xs, [acquired.get(x, 0) for x in xs], color="#333333", linewidth=0.9, label="acquisitions per second")
    colours = {"kill": "#d62728", "stop": "#ff7f0e", "restart": "#1f77b4", "stall": "#9467bd"}
    seen = set()
    for t, kind in faults:
        ax.axvline(sec(t), color=colours.get(kind, "grey"), alpha=0.5, linewidth=1,
                   label=None if kind in seen else f"fault: {kind}")
        seen.add(kind)
    top = max(acquired.values()) if acquired else 1
    for (label, ts), (y, style) in zip(marks.items(), [(1.04, "x"), (1.10, "v"), (1.16, "o")]):
        if ts:
            ax.scatter(ts, [top * y] * len(ts), marker=style, s=14, label=f"{label} ({len(ts)})")
    ax.set_xlabel("seconds since the first event")
    ax.set_ylabel("acquisitions per second")
    ax.set_title(title)
    ax.set_ylim(0, top * 1.25)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=7, ncol=4, frameon=False)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
