"""The board's `average_euclidean` and `ward` methods build SciPy's trees: on every row of the
four tables of data/labelled/ (iris, wine, breast cancer, digits) and on the stratified
subsamples the labelled-benchmark smoke config draws, the clusters of each tree the command
line wrote to trees.parquet are the clusters of `scipy.cluster.hierarchy.linkage(X, method)` on
the rows the board wrote to data_<dataset>.csv (the raw features, as a user passing X to SciPy
gets them)."""

import collections
import csv
import os
import pathlib
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.cluster.hierarchy import linkage

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLES = ["iris", "wine", "breast_cancer", "digits"]
METHODS = {"average_euclidean": "average", "ward": "ward"}


def binary():
    exe = pathlib.Path(os.environ.get("TRELLIS_LAB", ROOT / "target" / "release" / "trellis-lab"))
    if not exe.is_file():
        pytest.fail(f"no trellis-lab binary at {exe}: cargo build --release, or set TRELLIS_LAB")
    return exe


def run(cfg):
    subprocess.run([str(binary()), "run", str(cfg)], check=True, capture_output=True, text=True)
    (folder,) = [p for p in (cfg.parent / "out").iterdir() if p.is_dir()]
    return folder


def newick_clusters(text):
    """The leaf sets of the internal nodes of a Newick tree over integer leaves."""
    out, stack, number = [], [], ""
    for ch in text.strip().rstrip(";"):
        if ch.isdigit():
            number += ch
            continue
        if number:
            stack[-1].append(frozenset([int(number)]))
            number = ""
        if ch == "(":
            stack.append([])
        elif ch == ")":
            node = frozenset().union(*stack.pop())
            out.append(node)
            if stack:
                stack[-1].append(node)
    assert not stack and not number, text
    return set(out)


def scipy_clusters(x, method):
    return linkage_clusters(linkage(x, method))


def linkage_clusters(z):
    """The leaf sets of the merges of a SciPy linkage matrix."""
    n = len(z) + 1
    members = [frozenset([i]) for i in range(n)]
    for a, b, _, size in z:
        members.append(members[int(a)] | members[int(b)])
        assert len(members[-1]) == int(size)
    return set(members[n:])


def rows_by_instance(folder, dataset):
    """Instance -> its rows (points in order) from data_<dataset>.csv."""
    rows = collections.defaultdict(list)
    with open(folder / f"data_{dataset}.csv", newline="") as f:
        r = csv.reader(f)
        header = next(r)
        assert header[:3] == ["instance", "point", "label"]
        for cells in r:
            assert int(cells[1]) == len(rows[cells[0]])
            rows[cells[0]].append([float(v) for v in cells[3:]])
    return {k: np.array(v) for k, v in rows.items()}


def compare(folder):
    """Every average_euclidean and ward tree of the run against SciPy's; returns how many."""
    trees = pq.read_table(folder / "trees.parquet").to_pylist()
    data = {}
    compared = 0
    for t in trees:
        if t["method"] not in METHODS:
            continue
        assert t["status"] == "ran", t
        if t["dataset"] not in data:
            data[t["dataset"]] = rows_by_instance(folder, t["dataset"])
        x = data[t["dataset"]][t["instance"]]
        want = scipy_clusters(x, METHODS[t["method"]])
        got = newick_clusters(t["newick"])
        assert got == want, (t["dataset"], t["instance"], t["method"], len(got ^ want))
        compared += 1
    return compared


def test_every_row_of_the_tables_gives_scipys_trees(tmp_path):
    text = (
        '[experiment]\nkind = "board"\nname = "tables"\nseed = 1\noutput_dir = "out"\n'
        '[board]\nmethods = ["average_euclidean", "ward"]\n'
    )
    for name in TABLES:
        text += (
            f'[[board.datasets]]\nname = "{name}"\nsource = "file"\n'
            f'path = "{ROOT}/data/labelled/{name}.csv"\nlabel_column = "class"\n'
        )
    cfg = tmp_path / "tables.toml"
    cfg.write_text(text)
    folder = run(cfg)
    sizes = {}
    for name in TABLES:
        # The board ran on the committed rows, in order, to the bit.
        ran = rows_by_instance(folder, name)["all"]
        with open(ROOT / "data" / "labelled" / f"{name}.csv", newline="") as f:
            committed = np.array([[float(v) for v in row[:-1]] for row in list(csv.reader(f))[1:]])
        assert np.array_equal(ran, committed), name
        sizes[name] = len(ran)
    # Every row, the duplicate pair of iris included.
    assert sizes == {"iris": 150, "wine": 178, "breast_cancer": 569, "digits": 1797}
    assert compare(folder) == 2 * len(TABLES)


def test_the_smoke_configs_subsamples_give_scipys_trees(tmp_path):
    text = (ROOT / "configs" / "labelled_smoke.toml").read_text()
    text = text.replace('output_dir = "../results"', 'output_dir = "out"')
    text = text.replace('"../data/', f'"{ROOT}/data/')
    cfg = tmp_path / "labelled_smoke.toml"
    cfg.write_text(text)
    folder = run(cfg)
    # 2 instances of each table and the whole iris and wine tables, each by both methods.
    assert compare(folder) == 2 * (2 * len(TABLES) + 2)
