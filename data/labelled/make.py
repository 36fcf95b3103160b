#!/usr/bin/env python3
"""Writes the labelled tables of data/labelled/ from scikit-learn's bundled copies.

    python3 -m venv /tmp/sk && /tmp/sk/bin/pip install scikit-learn==1.9.1
    /tmp/sk/bin/python data/labelled/make.py           # writes the four CSVs and SHA256SUMS
    /tmp/sk/bin/python data/labelled/make.py --check   # rewrites nothing; fails unless the
                                                       # committed files are what it would write

The tables ship inside the scikit-learn wheel (sklearn/datasets/data/), so nothing is
downloaded. Every row of each table is written, in scikit-learn's order: features first, under
scikit-learn's feature names, then a column `class` holding the class name (`setosa`,
`class_0`, `malignant`, `0` ...). A value is written as an integer when it is one (the digits'
pixel counts) and otherwise as Python's shortest repr, which reads back as the same float64;
lines end in "\\n". With the pinned scikit-learn the files are the same bit for bit (SHA256SUMS
lists them). The script also reports each table's shape, class counts and exact duplicate rows
(data/labelled/README.md quotes them).
"""

import argparse
import hashlib
import sys
from pathlib import Path

SKLEARN_VERSION = "1.9.1"
LABEL = "class"
HERE = Path(__file__).resolve().parent


def tables():
    from sklearn import datasets

    return [
        ("iris", datasets.load_iris()),
        ("wine", datasets.load_wine()),
        ("breast_cancer", datasets.load_breast_cancer()),
        ("digits", datasets.load_digits()),
    ]


def number(v):
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def csv_text(bunch):
    header = [str(f) for f in bunch.feature_names] + [LABEL]
    for h in header:
        if "," in h or '"' in h or "\n" in h:
            raise SystemExit(f"feature name {h!r} would need quoting in a CSV")
    names = [str(n) for n in bunch.target_names]
    lines = [",".join(header)]
    for row, t in zip(bunch.data, bunch.target):
        lines.append(",".join([number(v) for v in row] + [names[int(t)]]))
    return "\n".join(lines) + "\n"


def duplicates(x):
    """Groups (as 0-based row lists) of rows equal in every feature."""
    seen = {}
    for i, row in enumerate(x):
        seen.setdefault(tuple(float(v) for v in row), []).append(i)
    return [g for g in seen.values() if len(g) > 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    args = ap.parse_args()
    import sklearn

    if sklearn.__version__ != SKLEARN_VERSION:
        sys.exit(
            f"scikit-learn {sklearn.__version__} is installed; these files come from "
            f"{SKLEARN_VERSION}: pip install scikit-learn=={SKLEARN_VERSION}"
        )
    sums = []
    failed = False
    for name, bunch in tables():
        text = csv_text(bunch)
        file = HERE / f"{name}.csv"
        data = text.encode()
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {file.name}\n")
        counts = {str(n): int((bunch.target == k).sum()) for k, n in enumerate(bunch.target_names)}
        dups = duplicates(bunch.data)
        print(
            f"{file.name}: {bunch.data.shape[0]} rows x {bunch.data.shape[1]} features, "
            f"{len(data)} bytes, classes {counts}, duplicate row groups "
            f"{[[i for i in g] for g in dups]} "
            f"(classes {[[str(bunch.target_names[bunch.target[i]]) for i in g] for g in dups]})"
        )
        if args.check:
            if not file.exists() or file.read_bytes() != data:
                print(f"  DIFFERS: {file} is not what scikit-learn {SKLEARN_VERSION} gives")
                failed = True
        else:
            file.write_bytes(data)
    sums_file = HERE / "SHA256SUMS"
    if args.check:
        if not sums_file.exists() or sums_file.read_text() != "".join(sums):
            print(f"  DIFFERS: {sums_file}")
            failed = True
        sys.exit(1 if failed else 0)
    sums_file.write_text("".join(sums))


if __name__ == "__main__":
    main()
