"""`tl.average_linkage` and the command line's board (`--methods average_linkage` on a
similarity matrix) run one function, the core crate's `search::scipy_average_linkage`, and
build SciPy's tree: the clusters of `linkage(squareform(max(S) - S), "average")`, on 0/1
graphs whose mean similarities tie at almost every merge (Zachary's karate club, where the
first-tied-pair rule Python used before gave Dasgupta cost 855 against the command line's 999,
and random graphs of 5 to 150 vertices)."""

import subprocess

import numpy as np
import networkx as nx
import pyarrow.parquet as pq
import pytest
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import squareform

import trellis_lab as tl
from test_scipy_linkage import binary, linkage_clusters, newick_clusters


def karate():
    return nx.to_numpy_array(nx.karate_club_graph(), weight=None)


def random_graphs():
    """(name, 0/1 adjacency) of random graphs: dense and sparse, small and above 64 vertices."""
    rng = np.random.default_rng(11)
    out = []
    for n in [5, 8, 13, 21, 34, 50, 64, 100, 150]:
        for p in [0.1, 0.3, 0.6]:
            a = np.triu(rng.random((n, n)) < p, 1).astype(float)
            out.append((f"g{n}_{int(p * 10)}", a + a.T))
    return out


def scipy_linkage(s):
    """SciPy's average linkage of the similarities `s` (diagonal 0): of max(s) - s."""
    d = s.max() - s
    np.fill_diagonal(d, 0)
    return linkage(squareform(d), "average")


def scipys(s):
    return linkage_clusters(scipy_linkage(s))


def tree_clusters(t):
    return {frozenset(c) for c in t.clusters()}


def test_karate_club_is_scipys_tree():
    s = karate()
    assert s.shape == (34, 34) and s.sum() == 2 * 78
    t = tl.average_linkage(s)
    assert tree_clusters(t) == scipys(s)
    assert t.dasgupta_cost(s) == 999


def test_random_graphs_are_scipys_trees():
    ties = 0
    for name, s in random_graphs():
        t = tl.average_linkage(s)
        want = scipys(s)
        assert tree_clusters(t) == want, (name, len(tree_clusters(t) ^ want))
        # The node heights are SciPy's merge heights.
        z = scipy_linkage(s)
        np.testing.assert_allclose(np.sort(t.to_linkage()[:, 2]), np.sort(z[:, 2]), atol=1e-12)
        ties += len(z) - len(np.unique(z[:, 2]))
    # Tied merge heights, where a tie rule decides: most merges of a 0/1 graph.
    assert ties > 900, ties


def matrix_file(folder, name, s):
    """`s` as the command line's similarity-matrix CSV: a header naming the points, n rows."""
    path = folder / f"{name}.csv"
    header = ",".join(f"v{i}" for i in range(len(s)))
    np.savetxt(path, s, delimiter=",", header=header, comments="", fmt="%g")
    return path


def board_tables(folder):
    """{dataset: trees.parquet row} and {dataset: Dasgupta cost} of a board results folder."""
    trees = {r["dataset"]: r for r in pq.read_table(folder / "trees.parquet").to_pylist()}
    cost = {
        r["dataset"]: r["value"]
        for r in pq.read_table(folder / "board.parquet").to_pylist()
        if r["metric"] == "dasgupta_cost"
    }
    return trees, cost


def same_as_the_board(name, s, trees, cost):
    t = tl.average_linkage(s)
    assert trees[name]["status"] == "ran", name
    assert trees[name]["newick"] == t.newick(), name
    assert newick_clusters(trees[name]["newick"]) == scipys(s), name
    assert cost[name] == t.dasgupta_cost(s), name


def test_cluster_similarity_builds_the_same_tree_on_the_karate_club(tmp_path):
    path = matrix_file(tmp_path, "karate", karate())
    command = [str(binary()), "cluster", str(path), "--similarity", "--methods",
               "average_linkage", "--output-dir", str(tmp_path / "out")]
    subprocess.run(command, check=True, capture_output=True, text=True)
    trees, cost = board_tables(tmp_path / "out" / "karate")
    same_as_the_board("karate", karate(), trees, cost)
    assert cost["karate"] == 999


def test_the_board_builds_the_same_trees_on_random_graphs(tmp_path):
    graphs = [(n, s) for n, s in random_graphs() if len(s) <= 64]
    text = (
        '[experiment]\nkind = "board"\nname = "ties"\nseed = 1\noutput_dir = "out"\n'
        '[board]\nmethods = ["average_linkage"]\n'
    )
    for name, s in graphs:
        path = matrix_file(tmp_path, name, s)
        text += f'[[board.datasets]]\nname = "{name}"\nsource = "similarity_matrix"\npath = "{path}"\n'
    cfg = tmp_path / "ties.toml"
    cfg.write_text(text)
    subprocess.run([str(binary()), "run", str(cfg)], check=True, capture_output=True, text=True)
    trees, cost = board_tables(tmp_path / "out" / "ties")
    assert sorted(trees) == sorted(name for name, _ in graphs)
    for name, s in graphs:
        same_as_the_board(name, s, trees, cost)


def test_any_size_and_one_line_errors():
    s = random_graphs()[-1][1]
    assert tl.average_linkage(s).n_leaves == 150
    assert tl.average_linkage(np.zeros((1, 1))).newick() == "0;"
    for bad, needle in [
        (np.zeros((3, 4)), "square"),
        (np.array([[0, 1], [2, 0.0]]), "not symmetric"),
        (np.array([[0, np.nan], [np.nan, 0]]), "not a finite number"),
        (np.zeros((0, 0)), "no leaves"),
    ]:
        with pytest.raises(ValueError) as e:
            tl.average_linkage(bad)
        assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)
