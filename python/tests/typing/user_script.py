"""A user's script that passes every input form the package documents (NumPy arrays of any
real dtype, nested lists and tuples, pandas DataFrames, NumPy scalars for ints and floats,
paths as str or pathlib.Path), type-checked by `mypy --strict` in test_typing_and_docs.py. It
is also run, so that every form the stubs accept is one the runtime accepts."""

from __future__ import annotations

import collections
import pathlib
import sys
import tempfile
from typing import Any, Literal, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[3]


def similarity(n: int) -> npt.NDArray[np.float64]:
    s = np.random.default_rng(n).random((n, n))
    return (s + s.T) / 2


def jets_and_trees() -> list[tl.Tree]:
    jets = tl.load_jets(ROOT / "data" / "ginkgo_jets" / "truth_5.json")
    jets += tl.load_jets(str(ROOT / "data" / "ginkgo_jets" / "truth_5.json"))
    jet = jets[2]
    # Four-momenta as an array, nested lists, tuples, a DataFrame, an int array.
    forms: list[npt.ArrayLike] = [
        jet.leaves,
        jet.leaves.tolist(),
        tuple(tuple(r) for r in jet.leaves.tolist()),
        pd.DataFrame(jet.leaves, columns=["E", "px", "py", "pz"]),
    ]
    for leaves in forms:
        same = tl.Jet(leaves, t_cut=jet.t_cut, lam=np.float64(jet.lam), lam_root=None, name="j")
        assert same.n_leaves == jet.n_leaves
    tl.Jet(np.array([[100, 50, 0, 0], [90, 0, 40, 0], [80, 0, 0, 30]]), t_cut=16, lam_root=1.5)
    t = tl.exact_trellis(jet, max_leaves=np.int64(10), cancel=tl.CancelToken(timeout=60))
    print(t, t.log_z, t.map_log_likelihood, t.n_trees, t.entropy, t.n_map_trees, t.n_leaves)
    samples = t.sample(np.int64(20), seed=np.uint64(3))
    counts: collections.Counter[tl.Tree] = collections.Counter(t.sample(50, seed=1))
    assert sum(counts.values()) == 50
    t.cluster_marginal([0, 1])
    t.cluster_marginal((0, 1))
    t.cluster_marginal(np.array([0, 1]))
    t.log_probability(t.map_tree)
    rows: npt.NDArray[np.int64] = t.sample_parents(np.int64(20), seed=np.uint64(3))
    assert tl.Tree.from_parents(jet.n_leaves, rows[0]) == samples[0]
    co: npt.NDArray[np.float64] = t.coclustering(cancel=tl.CancelToken(timeout=60))
    assert co.shape == (jet.n_leaves + 1, jet.n_leaves, jet.n_leaves)
    print(t.expected_lca_size(), t.sibling_probabilities())
    z = t.map_tree.to_linkage("cost", jet=jet)
    assert tl.Tree.from_linkage(z) == tl.Tree.from_linkage(z.tolist(), collapse=True)
    print(t.map_tree.with_heights("size").newick(branch_lengths=True))
    dedup: Literal["clusters", "equal_total"] = "equal_total"
    tree, ll = tl.beam(jet, beam_size=np.int32(4), dedup=dedup, merge_score="revenue")
    tl.greedy(jet, merge_score="potential")
    tl.kt(jet, p=-1, r=np.float64(0.4))
    tl.map_trellis(jet, max_leaves=12)
    sp = tl.sparse_trellis(jet, trees=(tree, t.map_tree), seed_trees=None)
    sp = tl.sparse_trellis(jet, trees=samples, seed_trees=5)
    print(sp.log_z, sp.map_tree, sp.n_trees, sp.n_vertices, sp.sparsity_index, sp.sample(3))
    print(sp.sample_parents(3, seed=1))
    with tempfile.TemporaryDirectory() as d:
        tl.save_jets((jet,), pathlib.Path(d) / "j.json", source="typed")
        tl.save_jets([jet], d + "/k.json")
    generated = tl.generate_jets(np.int64(2), 5, 6, seed=1, jet_type="w", root_scale=None)
    return [tree, tl.Tree.from_newick("((0,1),2);"), generated[0].truth or tree]


def similarity_forms() -> None:
    s = similarity(6)
    energy: Literal["dasgupta", "correlation"] = "correlation"
    forms: list[npt.ArrayLike] = [s, s.tolist(), tuple(map(tuple, s.tolist())), pd.DataFrame(s)]
    for f in forms:
        tl.exact_trellis(similarity=f, energy=energy, beta=2)
        tl.map_trellis(similarity=f, energy="dasgupta", beta=np.float32(0.5))
        tl.beam(similarity=f, merge_score="revenue")
        tl.greedy(similarity=f)
        tl.sparse_trellis(similarity=f, energy="dasgupta", seed_trees=4)
        tl.average_linkage(f)
        flat = tl.flat_trellis(f, beta=1)
        labels: npt.NDArray[np.int64] = flat.map_labels()
        m: npt.NDArray[np.float64] = flat.pairwise_marginals()
        print(flat, flat.log_z, flat.map_log_energy, labels, m.shape)


def tree_forms(trees: list[tl.Tree]) -> None:
    tree = trees[0]
    n = tree.n_leaves
    again = tl.Tree.from_parents(n, tree.parents, tree.heights)
    assert again == tree and hash(again) == hash(tree)
    tl.Tree.from_parents(3, [3, 3, 4, 4, -1], (0.0, 0.0, 0.0, 1, 2))
    tl.Tree.from_parents(np.int64(3), tuple(int(p) for p in [3, 3, 4, 4, -1]))
    labels_forms: list[npt.ArrayLike] = [
        ["a"] * 2 + ["b"] * (n - 2),
        np.arange(n) % 2,
        pd.Series(np.arange(n) % 2),
    ]
    for labels in labels_forms:
        tree.dendrogram_purity(labels)
        tree.subtree_score(labels)
        tree.ari_auc(labels)
    tree.dasgupta_cost(similarity(n))
    tree.dasgupta_cost(pd.DataFrame(similarity(n)))
    z: npt.NDArray[np.float64] = tree.to_linkage()
    clusters: Sequence[list[int]] = tree.clusters()
    lazy: tl.Clusters = tree.clusters()
    first: list[int] = lazy[0]
    every: list[list[int]] = lazy.tolist()
    assert every == list(clusters) and first in lazy and lazy.total_size >= len(first)
    print(tree.newick(), tree.is_binary, z.shape, clusters, lazy[1:], lazy.index(first))


def points_forms() -> None:
    x = np.random.default_rng(1).normal(size=(8, 2))
    forms: list[npt.ArrayLike] = [x, x.tolist(), pd.DataFrame(x, columns=["a", "b"])]
    for data in forms:
        z = tl.standardize(data)
        fit = tl.coalescent(z, "mgreedy", particles=np.int64(5), seed=2, sigma2=1)
        fit = tl.coalescent(data, method="mpost2", particles=5, phi=np.eye(2).tolist())
        weight_mode: Optional[Literal["exact", "paper_faithful"]] = fit.weight_mode
        print(fit, fit.method, fit.tree, len(fit.trees), fit.weights, fit.log_evidence)
        print(weight_mode, fit.resamples, fit.log_joint)
        dt = tl.pydt_map(data, ddt=False, iterations=np.int64(2), learn=("c", "sigma2"))
        params: dict[str, float] = dt.params
        print(dt, dt.model, dt.tree, dt.objective, dt.log_joint, dt.em_runs, params, dt.trace)
        ch = tl.pydt_mcmc(data, 3, ddt=True, sample=["c"], rule="likelihood", thin=np.int8(1))
        traces: dict[str, npt.NDArray[np.float64]] = ch.params
        print(ch, ch.model, ch.moves, ch.trees, ch.log_joint, ch.log_likelihood, traces)


def results_forms(folder: Optional[str]) -> None:
    """The command line's results, read and run (given a results folder to read)."""
    if folder is None:
        return
    res: tl.Results = tl.read_results(folder)
    frame: Any = res.tables["jets"]
    print(res, frame.shape, res.manifest["seed"], res.checks, res.path, res.kind)
    print(tl.read_results(pathlib.Path(folder), as_="arrow")["jets"].num_rows)
    try:
        tl.run(pathlib.Path(folder) / "no_such.toml", force=True, shard=(0, 2), quiet=True)
    except FileNotFoundError as e:
        print(e)
    try:
        tl.check(folder, executable="/no/such/trellis-lab")
    except (FileNotFoundError, tl.CommandError) as e:
        print(e)


def main() -> None:
    trees = jets_and_trees()
    similarity_forms()
    tree_forms(trees)
    points_forms()
    token = tl.CancelToken()
    token.cancel()
    assert token.cancelled and not token.timed_out and token.timeout is None
    try:
        tl.exact_trellis(similarity=similarity(5), cancel=token)
    except tl.CancelledError:
        pass
    results_forms(sys.argv[1] if len(sys.argv) > 1 else None)
    print(tl.__version__)


if __name__ == "__main__":
    main()
