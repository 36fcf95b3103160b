"""The coalescent and diffusion-tree bindings: trees SciPy can draw, seeds, an exact evidence,
clustered data, and one-line errors for bad input.

    python -m pytest -q python/tests/test_bayes.py
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.cluster.hierarchy as sch
from scipy import integrate

import trellis_lab._trellis_lab as tl

METHODS = [
    "prior_prior",
    "prior_post",
    "post_post",
    "smc1",
    "mpost1",
    "mpost2",
    "greedy",
    "mgreedy",
    "greedy_exact",
]
SMC = METHODS[:6]
# The spec's three points (shared/specs/bayesian_baselines.md §6.3), d = 2, Φ = I.
X3 = np.array([[0.3, -0.1], [0.9, 0.2], [-0.7, 0.4]])


def small(n=6, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def two_groups(per=6, d=3, seed=1):
    rng = np.random.default_rng(seed)
    x = np.vstack([rng.normal(0, 0.05, (per, d)), rng.normal(10, 0.05, (per, d))])
    return x, np.repeat([0, 1], per)


def check_tree(tree, n):
    assert isinstance(tree, tl.Tree) and tree.n_leaves == n
    z = tree.to_linkage()
    assert z.shape == (n - 1, 4) and sch.is_valid_linkage(z)
    assert sch.is_monotonic(z)
    d = sch.dendrogram(z, no_plot=True)
    assert sorted(d["leaves"]) == list(range(n))


def same_bits(a, b):
    assert a.tree == b.tree and np.array_equal(a.tree.heights, b.tree.heights)


def gauss(e, v, d):
    """N(a; b, v I) in d dimensions with |a - b|^2 = e."""
    return (2 * math.pi * v) ** (-d / 2) * math.exp(-e / (2 * v))


def exact_evidence_3(x):
    """p(X) of three points under the Kingman coalescent with Brownian paths, Φ = I, by
    quadrature over the two merge intervals: Δ1 ~ rate 3, Δ2 ~ rate 1, Z_k Gaussian in the pair's
    means with variance 2Δ1, then 2Δ2 + 1.5Δ1 (the merged message has variance Δ1/2 at t1)."""
    d = x.shape[1]
    total = 0.0
    for i, j, k in [(0, 1, 2), (0, 2, 1), (1, 2, 0)]:
        e1 = float(np.sum((x[i] - x[j]) ** 2))
        e2 = float(np.sum(((x[i] + x[j]) / 2 - x[k]) ** 2))

        def inner(d1):
            f = lambda d2: math.exp(-d2) * gauss(e2, 2 * d2 + 1.5 * d1, d)
            return integrate.quad(f, 0, np.inf, epsabs=0, epsrel=1e-11)[0]

        g = lambda d1: math.exp(-3 * d1) * gauss(e1, 2 * d1, d) * inner(d1)
        total += integrate.quad(g, 0, np.inf, epsabs=0, epsrel=1e-10, limit=200)[0]
    return total


def test_every_coalescent_method_gives_a_tree_scipy_draws():
    x = small()
    for m in METHODS:
        f = tl.coalescent(x, m, particles=8, seed=3)
        assert f.method == m
        check_tree(f.tree, 6)
        # Heights are merge times: leaves at 0, every merge later.
        assert np.all(f.tree.heights[:6] == 0) and np.all(f.tree.heights[6:] > 0)
        assert math.isfinite(f.log_joint)
        trees, w = f.trees, f.weights
        assert len(trees) == len(w) == (8 if m in SMC else 1)
        assert w.dtype == np.float64 and abs(w.sum() - 1) < 1e-12
        assert trees[int(np.argmax(w))] == f.tree
        for t in trees:
            check_tree(t, 6)
        if m in SMC:
            assert math.isfinite(f.log_evidence) and f.weight_mode == "exact"
        else:
            assert f.log_evidence is None and f.weight_mode is None and f.resamples == 0


def test_coalescent_seeds_give_the_same_bits_and_differ_between_seeds():
    x = small(n=8)
    for m in SMC:
        a, b = (tl.coalescent(x, m, seed=11) for _ in range(2))
        same_bits(a, b)
        assert a.log_evidence == b.log_evidence
        assert np.array_equal(a.weights, b.weights)
        c = tl.coalescent(x, m, seed=12)
        assert c.log_evidence != a.log_evidence
    # The greedy rules draw nothing: the seed does not matter.
    same_bits(tl.coalescent(x, "mgreedy", seed=1), tl.coalescent(x, "mgreedy", seed=2))


def test_the_same_bits_on_one_thread():
    # Particles and search candidates run on rayon's pool; the crate's results do not depend on
    # its size, and the bindings pass the seed through unchanged.
    code = (
        "import numpy as np, trellis_lab._trellis_lab as tl\n"
        "x = np.random.default_rng(0).normal(size=(9, 3))\n"
        "print(tl.coalescent(x, 'mpost2', seed=5).log_evidence.hex())\n"
        "print(tl.coalescent(x, 'smc1', seed=5).log_evidence.hex())\n"
        "print(tl.pydt_map(x, seed=5, iterations=5).objective.hex())\n"
        "print(tl.pydt_mcmc(x, 5, seed=5).log_joint[-1].hex())\n"
    )
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    x = np.random.default_rng(0).normal(size=(9, 3))
    assert out == [
        tl.coalescent(x, "mpost2", seed=5).log_evidence.hex(),
        tl.coalescent(x, "smc1", seed=5).log_evidence.hex(),
        tl.pydt_map(x, seed=5, iterations=5).objective.hex(),
        tl.pydt_mcmc(x, 5, seed=5).log_joint[-1].hex(),
    ]


def test_exact_weights_estimate_the_exact_evidence():
    exact = exact_evidence_3(X3)
    assert abs(exact - 0.0041896) < 1e-6  # the spec's value
    for m in SMC:
        f = tl.coalescent(X3, m, particles=20000, seed=1)
        assert f.weight_mode == "exact"
        assert abs(f.log_evidence - math.log(exact)) < 0.03, m


def test_the_weight_mode_is_reported_and_matters_only_where_the_crate_says():
    x = small(n=8)
    for m in SMC:
        e = tl.coalescent(x, m, seed=4)
        p = tl.coalescent(x, m, seed=4, weight_mode="paper_faithful")
        assert (e.weight_mode, p.weight_mode) == ("exact", "paper_faithful")
        if m in ("prior_prior", "prior_post", "post_post"):
            assert p.log_evidence == e.log_evidence
        else:
            assert p.log_evidence != e.log_evidence
    # In exact mode MPOST1 is POST-POST.
    mpost1 = tl.coalescent(x, "mpost1", seed=4)
    same_bits(mpost1, tl.coalescent(x, "post_post", seed=4))
    assert mpost1.log_evidence == tl.coalescent(x, "post_post", seed=4).log_evidence
    # Paper-faithful normalisers omit the truncation factor: not an estimate of log p(X).
    pf = tl.coalescent(X3, "mpost2", particles=20000, seed=1, weight_mode="paper_faithful")
    assert abs(pf.log_evidence - math.log(exact_evidence_3(X3))) > 1


def test_log_joint_is_the_model_density_at_the_trees_merge_times():
    for m in ["greedy", "mgreedy", "greedy_exact", "mpost2"]:
        f = tl.coalescent(X3, m, seed=0)
        (a, b) = next(c for c in f.tree.clusters() if len(c) == 2)
        t1, t2 = f.tree.heights[3], f.tree.heights[4]
        (k,) = {0, 1, 2} - {a, b}
        e1 = np.sum((X3[a] - X3[b]) ** 2)
        e2 = np.sum(((X3[a] + X3[b]) / 2 - X3[k]) ** 2)
        v1, v2 = 2 * t1, 2 * (t2 - t1) + 1.5 * t1
        joint = -3 * t1 + math.log(gauss(e1, v1, 2)) - (t2 - t1) + math.log(gauss(e2, v2, 2))
        assert abs(f.log_joint - joint) < 1e-9, m


def test_phi_sigma2_identity_is_sigma2():
    x = small()
    a = tl.coalescent(x, "mpost2", seed=2, sigma2=2.0)
    b = tl.coalescent(x, "mpost2", seed=2, phi=2.0 * np.eye(3))
    same_bits(a, b)
    assert a.log_evidence == b.log_evidence
    c = tl.coalescent(x, "mpost2", seed=2)
    assert c.log_evidence != a.log_evidence


def test_pydt_and_ddt_map_trees():
    x = small(n=8)
    for ddt in (False, True):
        f = tl.pydt_map(x, ddt=ddt, seed=3)
        assert f.model == ("ddt" if ddt else "pydt")
        check_tree(f.tree, 8)
        assert math.isfinite(f.objective) and math.isfinite(f.log_joint)
        # The search keeps its best: the trace never falls, and ends at the objective.
        assert len(f.trace) >= 31 and np.all(np.diff(f.trace) >= 0)
        assert f.trace[-1] == f.objective
        # The objective is the density at log-scale times s = -ln(1 - t) = -ln(height).
        h = f.tree.heights[8:]
        assert abs(f.log_joint + np.log(h).sum() - f.objective) < 1e-9
        if ddt:
            assert f.tree.is_binary and f.params["theta"] == f.params["alpha"] == 0
        else:
            assert f.params == {"theta": 0.5, "alpha": 0.2, "c": 1.0, "sigma2": 1.0}
        g = tl.pydt_map(x, ddt=ddt, seed=3)
        same_bits(f, g)
        assert g.objective == f.objective and np.array_equal(g.trace, f.trace)
    runs = [tl.pydt_map(x, seed=s, iterations=3).trace for s in range(4)]
    assert len({r.tobytes() for r in runs}) > 1


def test_map_learns_only_what_it_is_asked_to():
    x = small(n=8)
    f = tl.pydt_map(x, seed=1, iterations=5, learn=["c", "sigma2"])
    p = f.params
    assert (p["theta"], p["alpha"]) == (0.5, 0.2)
    assert p["c"] != 1.0 and p["sigma2"] != 1.0
    # A DDT never moves theta and alpha.
    g = tl.pydt_map(x, ddt=True, seed=1, iterations=5, learn=["theta", "alpha"])
    assert g.params == {"theta": 0.0, "alpha": 0.0, "c": 1.0, "sigma2": 1.0}


def test_well_separated_groups_are_pure_subtrees():
    x, y = two_groups()
    assert tl.pydt_map(x, seed=0).tree.dendrogram_purity(y) == 1
    assert tl.pydt_map(x, ddt=True, seed=0).tree.dendrogram_purity(y) == 1
    for m in ["mpost2", "mgreedy"]:
        assert tl.coalescent(x, m, seed=0).tree.dendrogram_purity(y) == 1


def test_mcmc_traces():
    x = small(n=8)
    for ddt in (False, True):
        s = tl.pydt_mcmc(x, 40, ddt=ddt, seed=9, thin=10)
        assert s.model == ("ddt" if ddt else "pydt")
        assert len(s.log_joint) == len(s.log_likelihood) == 40
        assert s.log_joint.dtype == np.float64
        assert np.all(np.isfinite(s.log_joint)) and np.all(np.isfinite(s.log_likelihood))
        assert len(s.trees) == 4
        for t in s.trees:
            check_tree(t, 8)
        proposed, accepted, abandoned = s.moves
        assert proposed == 40 * 8 and 0 < accepted <= proposed and abandoned <= proposed
        params = s.params
        assert set(params) == {"theta", "alpha", "c", "sigma2"}
        assert all(len(v) == 40 for v in params.values())
        if ddt:
            assert np.all(params["theta"] == 0) and np.all(params["alpha"] == 0)
        else:
            assert len(set(params["theta"])) > 1
        t = tl.pydt_mcmc(x, 40, ddt=ddt, seed=9, thin=10)
        assert np.array_equal(t.log_joint, s.log_joint)
        assert [a.newick() for a in t.trees] == [a.newick() for a in s.trees]
        assert not np.array_equal(tl.pydt_mcmc(x, 40, ddt=ddt, seed=10).log_joint, s.log_joint)
    # Nothing sampled: the parameters stay where they started.
    f = tl.pydt_mcmc(x, 5, seed=1, sample=[], c=2.0)
    assert np.all(f.params["c"] == 2.0) and np.all(f.params["theta"] == 0.5)


def one_line(excinfo, *needles):
    msg = str(excinfo.value)
    assert msg and "\n" not in msg, msg
    for n in needles:
        assert n in msg, msg


@pytest.mark.parametrize("fn", [tl.coalescent, tl.pydt_map, lambda x: tl.pydt_mcmc(x, 3)])
def test_bad_data_is_a_one_line_error(fn):
    x = small()
    nan = x.copy()
    nan[2, 1] = np.nan
    with pytest.raises(ValueError) as e:
        fn(nan)
    one_line(e, "row 2, column 1")
    inf = x.copy()
    inf[0, 0] = np.inf
    with pytest.raises(ValueError) as e:
        fn(inf)
    one_line(e, "row 0, column 0")
    for bad in (np.ones(4), np.ones((2, 3, 2))):
        with pytest.raises(ValueError) as e:
            fn(bad)
        one_line(e, "2-D")
    for bad in ([[1.0, 2.0]], np.ones((3, 0))):
        with pytest.raises(ValueError) as e:
            fn(bad)
        one_line(e, "n >= 2")
    with pytest.raises(TypeError) as e:
        fn([["a", "b"], ["c", "d"]])
    one_line(e)
    # Lists and ints are converted.
    fn([[0, 1], [3, 1], [1, 5]])


def test_bad_arguments_are_one_line_errors():
    x = small()
    cases = [
        (lambda: tl.coalescent(x, "nope"), METHODS),
        (lambda: tl.coalescent(x, particles=-3), ["particles = -3"]),
        (lambda: tl.coalescent(x, particles=0), ["particles = 0"]),
        (lambda: tl.coalescent(x, seed=-1), ["seed"]),
        (lambda: tl.coalescent(x, weight_mode="faithful"), ["exact", "paper_faithful"]),
        (lambda: tl.coalescent(x, resample_threshold=1.5), ["resample_threshold"]),
        (lambda: tl.coalescent(x, phi=np.eye(2)), ["(3, 3)"]),
        (lambda: tl.coalescent(x, phi=-np.eye(3)), ["positive definite"]),
        (lambda: tl.coalescent(x, phi=np.eye(3), sigma2=2.0), ["not both"]),
        (lambda: tl.coalescent(x, sigma2=0.0), ["sigma2"]),
        (lambda: tl.coalescent(np.vstack([x, x[:1]])), ["identical"]),
        (lambda: tl.pydt_map(x, ddt=True, alpha=0.1), ["ddt=True"]),
        (lambda: tl.pydt_map(x, theta=-1.0), ["theta"]),
        (lambda: tl.pydt_map(x, alpha=1.0), ["alpha"]),
        (lambda: tl.pydt_map(x, c=0.0), ["c"]),
        (lambda: tl.pydt_map(x, noise=-0.1), ["noise"]),
        (lambda: tl.pydt_map(x, iterations=-1), ["iterations"]),
        (lambda: tl.pydt_map(x, learn=["ell"]), ["theta", "alpha", "c", "sigma2"]),
        (lambda: tl.pydt_map(np.vstack([x, x[:1]]), noise=0.0), ["identical"]),
        (lambda: tl.pydt_mcmc(x, 0), ["iterations"]),
        (lambda: tl.pydt_mcmc(x, -5), ["iterations"]),
        (lambda: tl.pydt_mcmc(x, 3, thin=0), ["thin"]),
        (lambda: tl.pydt_mcmc(x, 3, moves=-1), ["moves"]),
        (lambda: tl.pydt_mcmc(x, 3, rule="metropolis"), ["general", "likelihood"]),
        (lambda: tl.pydt_mcmc(x, 3, sample=["nu"]), ["sigma2"]),
        (lambda: tl.pydt_mcmc(np.vstack([x, x[:1]]), 3), ["identical"]),
    ]
    for call, needles in cases:
        with pytest.raises(ValueError) as e:
            call()
        one_line(e, *needles)
