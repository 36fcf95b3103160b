"""The Ginkgo rate fitted from Python, and a tree's exact rank.

- `fit_lambda`: the maximum of its own objective (`lambda_curve` on a fine grid), within the
  bounds, the same bits as a second call; the committed Pythia jets load and fit; truth trees
  from the jets or given; one-line errors for bad arguments.
- `Trellis.rank(tree)`: 1 + the number of trees scoring above it, equal to enumeration of every
  tree; capped counts say so.
"""

import math
import pathlib

import numpy as np
import pytest

import trellis_lab as tl

from test_posterior_arrays import all_trees

ROOT = pathlib.Path(__file__).resolve().parents[2]
PARTON = ROOT / "data" / "pythia" / "pythia_parton.json"


def small_jets():
    return tl.generate_jets(6, min_leaves=4, max_leaves=6, seed=11)


def test_rank_equals_enumeration_of_every_tree():
    jet = tl.generate_jets(1, min_leaves=6, max_leaves=6, seed=3)[0]
    t = tl.exact_trellis(jet)
    trees = [tl.Tree.from_newick(s + ";") for s in all_trees(list(range(6)))]
    assert len(trees) == 945
    logl = np.array([u.log_likelihood(jet) for u in trees])
    for u, l in list(zip(trees, logl))[::37]:
        rank, capped = t.rank(u)
        assert not capped
        if math.isinf(l):
            want = 1 + int(np.isfinite(logl).sum())
        else:
            want = 1 + int((logl > l + 1e-9 * max(1.0, abs(l))).sum())
        assert rank == want
    # The MAP tree ranks first; a cap stops the count and says so.
    assert t.rank(t.map_tree) == (1, False)
    worst = trees[int(np.argmin(np.where(np.isfinite(logl), logl, np.inf)))]
    rank, capped = t.rank(worst, cap=10)
    assert capped and rank == 11


def test_fit_lambda_is_the_maximum_of_its_objective():
    jets = small_jets()
    for by in ["evidence", "truth"]:
        fit = tl.fit_lambda(jets, by=by, lo=0.05, hi=20.0)
        assert fit == tl.fit_lambda(jets, by=by, lo=0.05, hi=20.0)
        assert 0.05 <= fit["lam"] <= 20.0
        assert fit["jets_used"] + fit["jets_left_out"] == len(jets)
        grid = np.exp(np.linspace(math.log(0.05), math.log(20.0), 801))
        curve = tl.lambda_curve(jets, grid, by=by)
        assert curve.shape == grid.shape
        assert fit["objective"] >= curve.max() - 1e-9 * abs(curve.max())
        at = tl.lambda_curve(jets, [fit["lam"]], by=by)[0]
        assert at == pytest.approx(fit["objective"], rel=1e-12)


def test_truth_trees_from_the_jets_or_given():
    jets = small_jets()
    a = tl.fit_lambda(jets, by="truth", likelihood="generator", lo=0.1, hi=10.0)
    b = tl.fit_lambda(
        jets, by="truth", likelihood="generator", trees=[j.truth for j in jets], lo=0.1, hi=10.0
    )
    assert a == b


def test_the_committed_pythia_jets_load_and_fit():
    jets = tl.load_jets(PARTON)
    assert len(jets) == 360
    assert all(j.truth is not None for j in jets)
    few = [j for j in jets if j.n_leaves <= 8][:20]
    fit = tl.fit_lambda(few, lo=0.05, hi=50.0)
    assert math.isfinite(fit["objective"]) and fit["jets_used"] == len(few)
    truth = tl.fit_lambda(few, by="truth", lo=0.05, hi=50.0)
    assert truth["jets_used"] + truth["jets_left_out"] == len(few)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"by": "map"}, "by = \"map\" is not known"),
        ({"likelihood": "eq5"}, "likelihood = \"eq5\" is not known"),
        ({"lo": 2.0, "hi": 1.0}, "0 < lo < hi"),
        ({"max_leaves": 1}, "max_leaves = 1"),
    ],
)
def test_bad_arguments_are_one_line_errors(kwargs, message):
    with pytest.raises(ValueError, match=message) as e:
        tl.fit_lambda(small_jets(), **kwargs)
    assert "\n" not in str(e.value)


def test_a_jet_without_truth_is_named():
    jets = tl.load_jets(ROOT / "data" / "pythia" / "pythia_hadron.json")[:3]
    with pytest.raises(ValueError, match="has no truth tree"):
        tl.fit_lambda(jets, by="truth")


def test_ee_kt_equals_fastjets_trees():
    """kt(form="ee") against FastJet's ee_genkt trees of the committed reference (internal
    clusters as leaf bit masks)."""
    import json

    ref = json.loads((ROOT / "data" / "pythia" / "ee_kt_reference.json").read_text())
    files = sorted({r["file"] for r in ref["trees"]})
    jets = {
        (f, j.name): j for f in files for j in tl.load_jets(ROOT / "data" / "pythia" / f)
    }
    # FastJet's ee_genkt trees (p = 1, 0, -1) of 120 jets; its Durham (ee_kt) trees are the
    # core's tests' (crates/trellis-core/tests/core/ee_kt.rs).
    genkt = [r for r in ref["trees"] if r["algorithm"] == "ee_genkt"]
    assert len(genkt) == 360 and len(ref["trees"]) == 480
    for r in genkt:
        tree = tl.kt(jets[(r["file"], r["jet"])], p=r["p"], form="ee")
        masks = sorted(sum(1 << i for i in c) for c in tree.clusters() if len(c) > 1)
        assert masks == sorted(r["clusters"]), (r["jet"], r["p"])
    with pytest.raises(ValueError, match="form = \"x\" is not known"):
        tl.kt(jets[(genkt[0]["file"], genkt[0]["jet"])], form="x")
