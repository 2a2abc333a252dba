#!/usr/bin/env python3
"""Runs metrics_workload and reads its exposition text with the Prometheus
client's own parser (Debian's python3-prometheus-client): every family must
parse, histograms must be whole (cumulative buckets ending in +Inf = _count),
and each expected sample must hold its value. "sum:<name>" expects the sum
of that name's samples over all label sets.

  check_metrics.py <metrics_workload binary>
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from prometheus_client.parser import text_string_to_metric_families


def main():
    with tempfile.TemporaryDirectory() as d:
        text_path, expected_path = os.path.join(d, "metrics.txt"), os.path.join(d, "expected.json")
        subprocess.run([sys.argv[1], text_path, expected_path], check=True)
        text = open(text_path).read()
        expected = json.load(open(expected_path))

    samples = {}  # (name, frozenset(labels)) -> value
    families = 0
    for family in text_string_to_metric_families(text):
        families += 1
        assert family.documentation, f"{family.name}: no HELP text"
        assert family.type in ("counter", "gauge", "histogram"), f"{family.name}: type {family.type}"
        for s in family.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in samples, f"sample written twice: {s.name} {s.labels}"
            samples[key] = s.value
        if family.type == "histogram":
            check_histograms(family)
    assert families > 20, f"only {families} families"

    failures = []
    for e in expected:
        name, labels, value = e["name"], e["labels"], e["value"]
        if name.startswith("sum:"):
            got = sum(v for (n, _), v in samples.items() if n == name[4:])
        else:
            got = samples.get((name, frozenset(labels.items())))
        if got is None or not math.isclose(got, value, abs_tol=1e-9):
            failures.append(f"{name}{labels}: expected {value}, exposition says {got}")
    for f in failures:
        print("FAIL", f)
    print(f"{families} families, {len(samples)} samples, {len(expected)} expectations, {len(failures)} failed")
    return 1 if failures else 0


def check_histograms(family):
    by_labels = {}
    for s in family.samples:
        labels = {k: v for k, v in s.labels.items() if k != "le"}
        h = by_labels.setdefault(frozenset(labels.items()), {"buckets": [], "count": None, "sum": None})
        if s.name.endswith("_bucket"):
            h["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            h["count"] = s.value
        elif s.name.endswith("_sum"):
            h["sum"] = s.value
    for labels, h in by_labels.items():
        where = f"{family.name}{dict(labels)}"
        les = [le for le, _ in h["buckets"]]
        counts = [c for _, c in h["buckets"]]
        assert les == sorted(les) and les[-1] == math.inf, f"{where}: buckets {les}"
        assert counts == sorted(counts), f"{where}: buckets not cumulative {counts}"
        assert counts[-1] == h["count"], f"{where}: +Inf {counts[-1]} != _count {h['count']}"
        assert h["sum"] is not None and h["sum"] >= 0, f"{where}: _sum {h['sum']}"


if __name__ == "__main__":
    sys.exit(main())
