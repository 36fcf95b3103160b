"""The command line's `--distance` against SciPy: average linkage of a distance matrix is
`scipy.cluster.hierarchy.linkage(squareform(D), "average")`, cluster for cluster, on R's road
distances between 21 European cities (`write.csv(as.matrix(eurodist))`) and on the Euclidean
distances of a 50-row table (R's USArrests), the case where distances taken as similarities
shared 1 of 49 clusters with SciPy's tree."""

import csv
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist, squareform

from test_scipy_linkage import ROOT, binary, linkage_clusters, newick_clusters

EXPORTS = ROOT / "data" / "examples" / "exports"


def read_matrix(path):
    """(names, D) of a square matrix written by R's write.csv."""
    rows = list(csv.reader(path.open()))
    names = rows[0][1:]
    d = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    return names, d


def cli_clusters(tmp_path, path, *flags):
    out = tmp_path / "out"
    subprocess.run(
        [str(binary()), "cluster", str(path), *flags, "--methods", "average_linkage",
         "--output-dir", str(out)],
        check=True, capture_output=True, text=True,
    )
    (folder,) = [p for p in out.iterdir() if p.is_dir() and p.name != "report"]
    rows = pq.read_table(folder / "trees.parquet").to_pylist()
    (newick,) = [r["newick"] for r in rows if r["method"] == "average_linkage"]
    return newick_clusters(newick)


def test_road_distances_give_scipys_average_linkage(tmp_path):
    path = EXPORTS / "eurodist_write_csv.csv"
    names, d = read_matrix(path)
    assert len(names) == 21 and np.allclose(d, d.T) and not d.diagonal().any()
    want = linkage_clusters(linkage(squareform(d), "average"))
    assert cli_clusters(tmp_path, path, "--distance") == want


def test_euclidean_distances_of_a_table_give_scipys_tree(tmp_path):
    rows = list(csv.reader((EXPORTS / "usarrests_write_csv.csv").open()))
    names = [r[0] for r in rows[1:]]
    x = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    d = squareform(pdist(x))
    path = tmp_path / "usarrests_distances.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([""] + names)
        for name, row in zip(names, d):
            w.writerow([name] + [repr(float(v)) for v in row])
    want = linkage_clusters(linkage(pdist(x), "average"))
    assert len(want) == 49
    assert cli_clusters(tmp_path, path, "--distance") == want
    # Given as similarities, the same file is refused, pointing to --distance.
    out = subprocess.run(
        [str(binary()), "cluster", str(path), "--similarity", "--output-dir",
         str(tmp_path / "refused")],
        capture_output=True, text=True,
    )
    assert out.returncode == 1 and "--distance" in out.stderr
    assert out.stderr.count("\n") == 1
    assert not (tmp_path / "refused").exists()
