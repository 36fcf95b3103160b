#!/usr/bin/env python3
"""Prints the README's tables of the labelled-data benchmark from a run's board.parquet.

    python3 experiments/labelled/table.py results/labelled     # needs pyarrow

1. Method x dataset: mean dendrogram purity / mean ARI AUC over the instances where the method
   ran ("-" where it did not), the best purity of each column in bold.
2. Per method, against SciPy's baselines (`average_euclidean`, `ward`) on the same instances:
   on how many instances its purity (and its ARI AUC) is above the better of the two.
"""

import collections
import json
import pathlib
import sys

import pyarrow.parquet as pq

BASELINES = ("average_euclidean", "ward")
METRICS = ("dendrogram_purity", "ari_auc")


def main():
    folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "results/labelled")
    manifest = json.loads((folder / "manifest.json").read_text())
    datasets, methods = manifest["datasets"], manifest["methods"]
    # (dataset, instance, method) -> {metric: value}
    vals = collections.defaultdict(dict)
    for r in pq.read_table(folder / "board.parquet").to_pylist():
        if r["metric"] in METRICS and r["value"] is not None:
            vals[(r["dataset"], r["instance"], r["method"])][r["metric"]] = r["value"]
    ran = [m for m in methods if any(k[2] == m for k in vals)]
    shown = [d for d in datasets if any(k[0] == d for k in vals)]

    def mean(d, m, metric):
        v = [x[metric] for k, x in vals.items() if k[0] == d and k[2] == m and metric in x]
        return sum(v) / len(v) if v else None

    print("| method | " + " | ".join(shown) + " |")
    print("|---|" + "---|" * len(shown))
    best = {d: max((mean(d, m, METRICS[0]) or -1) for m in ran) for d in shown}
    for m in ran:
        cells = []
        for d in shown:
            p, a = mean(d, m, METRICS[0]), mean(d, m, METRICS[1])
            if p is None and a is None:
                cells.append("–")
                continue
            ps = "–" if p is None else f"{p:.2f}"
            if p is not None and f"{p:.2f}" == f"{best[d]:.2f}":
                ps = f"**{ps}**"
            cells.append(f"{ps} / {'–' if a is None else f'{a:.2f}'}")
        print(f"| `{m}` | " + " | ".join(cells) + " |")

    print()
    print("| method | purity above both SciPy baselines | ARI AUC above both |")
    print("|---|---|---|")
    instances = sorted({(k[0], k[1]) for k in vals})
    for m in ran:
        if m in BASELINES:
            continue
        counts = []
        for metric in METRICS:
            above = total = 0
            for d, i in instances:
                own = vals.get((d, i, m), {}).get(metric)
                base = [vals.get((d, i, b), {}).get(metric) for b in BASELINES]
                if own is None or None in base:
                    continue
                total += 1
                above += own > max(base) + 1e-12
            counts.append(f"{above} of {total}")
        print(f"| `{m}` | {counts[0]} | {counts[1]} |")


if __name__ == "__main__":
    main()
