#!/usr/bin/env python3
"""Compares every Parquet table of two trellis-lab results folders, exactly.

    python3 scripts/slurm/compare_tables.py RESULTS_A RESULTS_B [--ignore GLOB ...]

Each *.parquet file (searched recursively) must exist in both folders with the same column
names, types and row count, and every column must be equal: floats bit for bit (so 0.0 and
-0.0 differ) except that any NaN equals any NaN, nulls in the same rows, nested lists and
structs element by element. Columns of wall time and memory are skipped, since they differ
from run to run: by default those named seconds, peak_bytes, peak_memory_bytes, *_seconds,
seconds_* and peak_*bytes, and checks.parquet's manifest_hash (each run's manifest records its
own timings) (--ignore adds patterns). Prints one line per table and
PASS or FAIL; exits 0 on PASS, 1 on FAIL, 2 on a usage error. Needs pyarrow
(python3 -m pip install pyarrow numpy).
"""

import argparse
import fnmatch
import sys
from pathlib import Path

DEFAULT_IGNORE = ["seconds", "peak_bytes", "peak_memory_bytes", "*_seconds", "seconds_*", "peak_*bytes",
                  "manifest_hash"]

try:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
except ImportError as e:  # pragma: no cover
    print(f"compare_tables: needs pyarrow and numpy ({e}); install with: python3 -m pip install pyarrow numpy", file=sys.stderr)
    sys.exit(2)


def ignored(name, patterns):
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def first_diff(a, b):
    """The first row where the (already same-length) arrays a and b differ, and a description; None if equal."""
    if a.type != b.type:
        return 0, f"type {a.type} vs {b.type}"
    t = a.type
    if pa.types.is_dictionary(t):
        return first_diff(a.dictionary_decode(), b.dictionary_decode())
    va = np.asarray(a.is_valid(), dtype=bool)
    vb = np.asarray(b.is_valid(), dtype=bool)
    if not np.array_equal(va, vb):
        i = int(np.flatnonzero(va != vb)[0])
        return i, f"null in one only: {a[i].as_py()!r} vs {b[i].as_py()!r}"
    if pa.types.is_floating(t):
        width = {16: np.uint16, 32: np.uint32, 64: np.uint64}[t.bit_width]
        fa = a.to_numpy(zero_copy_only=False)
        fb = b.to_numpy(zero_copy_only=False)
        same = (fa.view(width) == fb.view(width)) | (np.isnan(fa) & np.isnan(fb)) | ~va
        if not same.all():
            i = int(np.flatnonzero(~same)[0])
            return i, f"{float(fa[i])!r} vs {float(fb[i])!r} (bits {fa.view(width)[i]:#x} vs {fb.view(width)[i]:#x})"
        return None
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        # Compare the lengths row by row, then the flattened values.
        la = np.asarray(pc.list_value_length(a).fill_null(0))
        lb = np.asarray(pc.list_value_length(b).fill_null(0))
        if not np.array_equal(la, lb):
            i = int(np.flatnonzero(la != lb)[0])
            return i, f"list length {la[i]} vs {lb[i]}"
        d = first_diff(a.flatten(), b.flatten())
        if d is None:
            return None
        row = int(np.searchsorted(np.cumsum(la), d[0], side="right"))
        return row, f"in the list: {d[1]}"
    if pa.types.is_struct(t):
        for k in range(t.num_fields):
            d = first_diff(a.field(k), b.field(k))
            if d is not None:
                return d[0], f"field {t.field(k).name}: {d[1]}"
        return None
    if a.equals(b):
        return None
    ne = np.asarray(pc.not_equal(a, b).fill_null(False), dtype=bool)
    i = int(np.flatnonzero(ne)[0]) if ne.any() else 0
    return i, f"{a[i].as_py()!r} vs {b[i].as_py()!r}"


def compare_table(pa_path, pb_path, patterns):
    """(ok, message, compared column count, skipped column names)."""
    ta = pq.read_table(pa_path)
    tb = pq.read_table(pb_path)
    if ta.column_names != tb.column_names:
        return False, f"columns differ: {ta.column_names} vs {tb.column_names}", 0, []
    if ta.num_rows != tb.num_rows:
        return False, f"{ta.num_rows} vs {tb.num_rows} rows", 0, []
    skipped, compared = [], 0
    for name in ta.column_names:
        if ignored(name, patterns):
            skipped.append(name)
            continue
        a = ta.column(name).combine_chunks()
        b = tb.column(name).combine_chunks()
        d = first_diff(a, b)
        if d is not None:
            return False, f"column {name!r} row {d[0]}: {d[1]}", compared, skipped
        compared += 1
    return True, f"{ta.num_rows} rows, {compared} columns equal", compared, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--ignore", action="append", default=[], metavar="GLOB",
                    help="also skip columns whose name matches GLOB")
    args = ap.parse_args()
    patterns = DEFAULT_IGNORE + args.ignore
    for d in (args.a, args.b):
        if not d.is_dir():
            print(f"compare_tables: {d} is not a folder", file=sys.stderr)
            return 2
    ta = {p.relative_to(args.a) for p in args.a.rglob("*.parquet")}
    tb = {p.relative_to(args.b) for p in args.b.rglob("*.parquet")}
    failures = 0
    skipped_all = set()
    for rel in sorted(ta | tb):
        if rel not in tb or rel not in ta:
            print(f"  FAIL {rel}: only in {args.a if rel in ta else args.b}")
            failures += 1
            continue
        try:
            ok, msg, _, skipped = compare_table(args.a / rel, args.b / rel, patterns)
        except Exception as e:  # unreadable table
            ok, msg, skipped = False, f"cannot compare: {e}", []
        skipped_all.update(skipped)
        print(f"  {'ok  ' if ok else 'FAIL'} {rel}: {msg}" + (f" (skipped {', '.join(skipped)})" if skipped else ""))
        failures += not ok
    if not ta and not tb:
        print("  FAIL: no Parquet tables in either folder")
        failures += 1
    n = len(ta | tb)
    if failures:
        print(f"FAIL: {failures} of {n} tables differ ({args.a} vs {args.b})")
        return 1
    skipped_note = f"; skipped columns: {', '.join(sorted(skipped_all))}" if skipped_all else ""
    print(f"PASS: {n} tables equal ({args.a} vs {args.b}){skipped_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
