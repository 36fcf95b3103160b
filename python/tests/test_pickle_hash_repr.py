"""Shaped like the Python stack: Tree, Jet and the fit results pickle (through a real
multiprocessing pool), Tree is hashable, the trellises have reprs, and the package has a
version."""

import collections
import importlib.metadata
import multiprocessing
import pathlib
import pickle

import numpy as np
import pytest

import pool_work
import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]
JETS = ROOT / "data" / "ginkgo_jets"


def same_jet(a, b):
    assert (a.name, a.n_leaves, a.t_cut, a.lam, a.lam_root) == (
        b.name,
        b.n_leaves,
        b.t_cut,
        b.lam,
        b.lam_root,
    )
    assert a.leaves.tobytes() == b.leaves.tobytes()
    assert a.truth == b.truth


def same_tree(a, b):
    assert a == b and a.newick() == b.newick()
    assert a.parents.tolist() == b.parents.tolist()
    assert a.heights.tobytes() == b.heights.tobytes()


def test_trees_and_jets_pickle_bit_for_bit():
    jets = tl.load_jets(JETS / "truth_9.json")
    x = np.random.default_rng(0).normal(size=(12, 2))
    trees = [
        tl.Tree.from_newick("((0,1,2):1,(3,4):2);"),
        tl.exact_trellis(jets[0]).map_tree,
        tl.coalescent(x).tree,
        tl.pydt_map(x, iterations=2).tree,
    ]
    for t in trees:
        same_tree(pickle.loads(pickle.dumps(t)), t)
    for jet in jets + [tl.Jet(jets[0].leaves, t_cut=9.0, lam=2.0, name="from an array")]:
        again = pickle.loads(pickle.dumps(jet))
        same_jet(again, jet)
        assert tl.exact_trellis(again).log_z == tl.exact_trellis(jet).log_z


def test_fit_results_pickle_bit_for_bit():
    x = np.random.default_rng(1).normal(size=(10, 2))
    for fit in (tl.coalescent(x, particles=7, seed=2), tl.coalescent(x, "mgreedy")):
        again = pickle.loads(pickle.dumps(fit))
        for a in ("method", "log_evidence", "weight_mode", "resamples", "log_joint"):
            assert getattr(again, a) == getattr(fit, a), a
        same_tree(again.tree, fit.tree)
        assert again.weights.tobytes() == fit.weights.tobytes()
        assert len(again.trees) == len(fit.trees)
        for a, b in zip(again.trees, fit.trees):
            same_tree(a, b)
        assert repr(again) == repr(fit)
    m = tl.pydt_map(x, iterations=3, learn=["c"])
    again = pickle.loads(pickle.dumps(m))
    for a in ("model", "objective", "log_joint", "em_runs", "params"):
        assert getattr(again, a) == getattr(m, a), a
    same_tree(again.tree, m.tree)
    assert again.trace.tobytes() == m.trace.tobytes()
    s = tl.pydt_mcmc(x, 4, ddt=True)
    again = pickle.loads(pickle.dumps(s))
    assert (again.model, again.moves) == (s.model, s.moves)
    assert len(again.trees) == len(s.trees)
    for a, b in zip(again.trees, s.trees):
        same_tree(a, b)
    for a in ("log_joint", "log_likelihood"):
        assert getattr(again, a).tobytes() == getattr(s, a).tobytes()
    assert all(again.params[k].tobytes() == s.params[k].tobytes() for k in s.params)


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_a_multiprocessing_pool_maps_over_jets_and_fits(method):
    jets = tl.load_jets(JETS / "truth_9.json")[:6]
    # The parent has run the trellis (and its thread pool) before the pool starts.
    serial = [pool_work.exact(j) for j in jets]
    x = np.random.default_rng(2).normal(size=(9, 2))
    wait = 120  # seconds; a worker whose thread pool did not survive a fork would hang
    with multiprocessing.get_context(method).Pool(2) as pool:
        parallel = pool.map_async(pool_work.exact, jets).get(wait)
        back = pool.map_async(pool_work.the_jet, jets).get(wait)
        fits = pool.starmap_async(pool_work.coalescent, [(x, 1), (x, 2)]).get(wait)
        pydt_map, pydt_mcmc = pool.apply_async(pool_work.pydt, (x,)).get(wait)
    assert parallel == serial
    assert len(back) == len(jets)
    for a, b in zip(back, jets):
        same_jet(a, b)
    for fit, seed in zip(fits, (1, 2)):
        here = pool_work.coalescent(x, seed)
        assert fit.log_evidence == here.log_evidence
        same_tree(fit.tree, here.tree)
    assert pydt_map.objective == tl.pydt_map(x, iterations=2).objective
    assert pydt_mcmc.log_joint.tobytes() == tl.pydt_mcmc(x, 3, thin=1).log_joint.tobytes()


def test_trees_hash_by_their_clusters_and_count_in_a_counter():
    a = tl.Tree.from_newick("((0,1),(2,3));")
    b = tl.Tree.from_newick("((3,2),(1,0));")
    c = tl.Tree.from_newick("(((0,1),2),3);")
    assert a == b and hash(a) == hash(b) and a != c
    assert len({a, b, c}) == 2
    # Heights aside, as equality.
    assert hash(tl.Tree.from_newick("((0:1,1:1):1,(2:1,3:1):1);")) == hash(a)
    jet = tl.load_jets(JETS / "truth_5.json")[2]
    t = tl.exact_trellis(jet)
    counts = collections.Counter(t.sample(20000, seed=5))
    assert sum(counts.values()) == 20000 and len(counts) <= t.n_trees
    # The counts follow the exact probabilities.
    for tree, k in counts.most_common(5):
        p = np.exp(t.log_probability(tree))
        assert abs(k / 20000 - p) < 5 * np.sqrt(p * (1 - p) / 20000), (tree, k, p)


def test_trellises_and_tokens_have_reprs():
    jet = tl.load_jets(JETS / "truth_5.json")[2]
    t = tl.exact_trellis(jet)
    r = repr(t)
    assert r.startswith("Trellis(n_leaves=5, energy='ginkgo'") and f"n_trees={t.n_trees}" in r
    assert f"log_z={t.log_z!r}" in r and t.n_leaves == 5
    s = np.ones((4, 4)) - np.eye(4)
    assert repr(tl.exact_trellis(similarity=s, energy="correlation")).startswith(
        "Trellis(n_leaves=4, energy='correlation'"
    )
    sp = tl.sparse_trellis(jet)
    r = repr(sp)
    assert r.startswith("SparseTrellis(n_leaves=5, energy='ginkgo'")
    assert f"n_vertices={sp.n_vertices}" in r and f"log_z={sp.log_z!r}" in r
    f = tl.flat_trellis(s - 0.5)
    assert repr(f) == f"FlatTrellis(n_points=4, log_z={f.log_z!r}, map_log_energy={f.map_log_energy!r})"
    assert repr(tl.CancelToken()) == "CancelToken(timeout=None, cancelled=False)"


def test_the_package_has_its_version():
    assert tl.__version__ == importlib.metadata.version("trellis-lab")
    assert tl.__version__.count(".") == 2
