"""The Tree class (any arity, parents and heights, SciPy linkage, metrics), the sparse trellis
and saved jets (Ctrl-C: test_safety.py)."""

import pathlib

import numpy as np
import pytest
import scipy.cluster.hierarchy as sch

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]
JETS = ROOT / "data" / "ginkgo_jets"


def test_multifurcating_newick_parents_heights_and_linkage():
    t = tl.Tree.from_newick("((0,1,2):1,(3,4):2);")
    assert t.n_leaves == 5 and not t.is_binary
    assert t.clusters() == [[0, 1, 2], [0, 1, 2, 3, 4], [3, 4]]
    p, h = t.parents, t.heights
    assert p.dtype == np.int64 and h.dtype == np.float64 and len(p) == len(h) == 8
    assert (p == -1).sum() == 1 and np.all(h[:5] == 0)
    # Leaves are at height 0, so (3,4) with length 2 sits at... the lengths of its leaves: none
    # given, so the heights are cluster sizes.
    assert sorted(h[5:].tolist()) == [2.0, 3.0, 5.0]
    again = tl.Tree.from_parents(5, p.tolist(), h.tolist())
    assert again == t and again.newick() == t.newick() == "((0,1,2),(3,4));"
    z = t.to_linkage()
    assert z.shape == (4, 4) and sch.is_valid_linkage(z)
    # A node with three children is two merges at its height.
    assert sorted(z[:, 2].tolist()) == [2.0, 3.0, 3.0, 5.0]
    assert set(sch.fcluster(z, 2, "maxclust").tolist()) == {1, 2}
    ultra = tl.Tree.from_newick("((0:1,1:1):2,2:3);")
    assert ultra.heights.tolist() == [0, 0, 0, 1, 3]
    assert ultra.to_linkage()[:, 2].tolist() == [1.0, 3.0]


def test_metrics():
    t = tl.Tree.from_newick("(((0,1),2),(3,4));")
    assert t.dendrogram_purity(["a", "a", "a", "b", "b"]) == 1.0
    assert t.subtree_score([0, 0, 0, 1, 1]) == 1.0
    assert t.dendrogram_purity([0, 1, 0, 1, 0]) < 1.0
    assert 0 < t.ari_auc([0, 0, 0, 1, 1]) <= 1
    w = np.ones((5, 5)) - np.eye(5)
    # Every pair counts the size of its lowest common ancestor: 2+3+3 + 2 + 5*6 = 40.
    assert t.dasgupta_cost(w) == 40.0
    for bad in ([0, 1], np.zeros((2, 2))):
        with pytest.raises(ValueError) as e:
            t.dendrogram_purity(bad)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="shape"):
        t.dasgupta_cost(np.ones((4, 4)))
    jet = tl.load_jets(JETS / "truth_5.json")[0]
    with pytest.raises(ValueError, match="3 children"):
        tl.Tree.from_newick("((0,1,2),(3,4));").log_likelihood(jet)


def test_sparse_trellis_between_beam_and_exact():
    for jet in tl.load_jets(JETS / "truth_9.json")[:4]:
        full = tl.exact_trellis(jet)
        beam_tree, beam_value = tl.beam(jet)
        sp = tl.sparse_trellis(jet)
        assert beam_value <= sp.map_log_likelihood <= full.map_log_likelihood
        assert sp.log_z <= full.log_z and 1 <= sp.n_trees <= full.n_trees
        assert sp.map_tree.log_likelihood(jet) == sp.map_log_likelihood
        assert 0 < sp.sparsity_index <= 1
        # Over one tree's clusters it is that tree alone.
        one = tl.sparse_trellis(jet, trees=[beam_tree])
        assert one.n_trees == 1 and one.map_tree == beam_tree
        assert one.log_z == one.map_log_likelihood == beam_value
        # Samples are encoded trees, reproducible by seed.
        s = sp.sample(20, seed=3)
        assert [x.newick() for x in s] == [x.newick() for x in sp.sample(20, seed=3)]
        assert all(x.log_likelihood(jet) <= sp.map_log_likelihood for x in s)
    # Over every tree of a small instance the sparse trellis is the exact one.
    jet = tl.load_jets(JETS / "truth_5.json")[2]
    every = tl.exact_trellis(jet).sample(3000, seed=1)
    sp = tl.sparse_trellis(jet, trees=every)
    assert sp.n_trees == 90 and abs(sp.log_z - tl.exact_trellis(jet).log_z) < 1e-12
    with pytest.raises(ValueError, match="leaves"):
        tl.sparse_trellis(jet, trees=[tl.Tree.from_newick("(0,1);")])


def test_save_jets_round_trips(tmp_path):
    jets = tl.load_jets(JETS / "truth_9.json")
    tl.save_jets(jets, tmp_path / "j.json")
    again = tl.load_jets(tmp_path / "j.json")
    assert [j.name for j in again] == [j.name for j in jets]
    for a, b in zip(again, jets):
        assert a.leaves.tolist() == b.leaves.tolist()
        assert (a.t_cut, a.lam, a.lam_root) == (b.t_cut, b.lam, b.lam_root)
        assert a.truth == b.truth
    with pytest.raises(ValueError) as e:
        tl.save_jets(jets, tmp_path / "no" / "such" / "folder" / "j.json")
    assert "\n" not in str(e.value)
