"""tl.brt, tl.bhc_exact and pickling BhcFit and BrtFit: greedy Bayesian rose trees scored by their
recursion by hand, the exact DPM evidence, MAP partition, co-clustering and best BHC tree
against enumeration of every partition and every binary tree, the gaps of a greedy fit, the
board's `bhc` and `brt` rows equal to these calls, and the refusals before anything is copied."""

import itertools
import math
import os
import pathlib
import pickle
import subprocess

import numpy as np
import pytest

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bits(n, d=4, seed=0):
    """0/1 rows in two noisy groups."""
    rng = np.random.default_rng(seed)
    p = np.where((np.arange(n)[:, None] % 2 == 0) == (np.arange(d)[None, :] < d // 2), 0.8, 0.2)
    return (rng.random((n, d)) < p).astype(float)


def bernoulli_h1(x):
    """log p(D_C) of the rows of x in C under the Beta-Bernoulli prior tl.bhc uses."""
    n = len(x)
    m = x.mean(axis=0).clip(0.5 / n, 1 - 0.5 / n)
    a, b = 2 * m, 2 * (1 - m)

    def lbeta(p, q):
        return math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q)

    def h1(rows):
        c, k = x[list(rows)].sum(axis=0), len(rows)
        return sum(lbeta(a[j] + c[j], b[j] + k - c[j]) - lbeta(a[j], b[j]) for j in range(len(a)))

    return h1


def partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1 :]
        yield [[first]] + p


def binary_trees(s):
    """Every binary tree over the tuple s, as nested pairs (leaves are ints)."""
    if len(s) == 1:
        yield s[0]
        return
    first, rest = s[0], s[1:]
    for k in range(len(rest)):
        for other in itertools.combinations(rest, k):
            a = (first,) + other
            b = tuple(i for i in rest if i not in other)
            for ta in binary_trees(a):
                for tb in binary_trees(b):
                    yield (ta, tb)


def leaves(t):
    return [t] if isinstance(t, int) else leaves(t[0]) + leaves(t[1])


def test_bhc_fit_pickles_bit_for_bit_and_a_bad_pickle_is_refused():
    x = np.random.default_rng(1).normal(size=(30, 3))
    fit = tl.bhc(x, "gaussian", alpha=0.7)
    back = pickle.loads(pickle.dumps(fit))
    assert back == fit and back is not fit
    assert (back.model, back.alpha, back.log_p_tree, back.log_lower_bound) == (
        fit.model, fit.alpha, fit.log_p_tree, fit.log_lower_bound)
    assert back.tree == fit.tree
    assert np.array_equal(back.r, fit.r) and np.array_equal(back.cut, fit.cut)
    assert np.array_equal(back.coclustering(), fit.coclustering())
    assert fit != tl.bhc(x, "gaussian", alpha=0.8)
    # A pickle whose nodes are not a tree is refused by name.
    func, (model, alpha, n, nodes) = fit.__reduce__()
    bad = list(nodes)
    bad[-1] = (bad[-1][0], (0, 0), *bad[-1][2:])
    with pytest.raises(ValueError, match="BhcFit pickle"):
        func(model, alpha, n, bad)
    with pytest.raises(ValueError, match="BhcFit pickle"):
        func(model, alpha, n + 1, nodes)


def test_brt_fit_pickles_bit_for_bit_and_a_bad_pickle_is_refused():
    x = np.random.default_rng(2).normal(size=(25, 3))
    fit = tl.brt(x, "gaussian", gamma=0.4)
    assert "collapse" in fit.ops or "absorb" in fit.ops
    back = pickle.loads(pickle.dumps(fit))
    assert back == fit and back is not fit
    assert (back.model, back.gamma, back.log_p_tree, back.ops) == (
        fit.model, fit.gamma, fit.log_p_tree, fit.ops)
    assert back.tree == fit.tree
    assert fit != tl.brt(x, "gaussian", gamma=0.6)
    func, (model, gamma, n, nodes, ops) = fit.__reduce__()
    # Nodes that are not a rose tree, an unknown operation, a wrong count: refused by name.
    root = nodes[-1]
    bad = list(nodes)
    bad[-1] = ([0, 0], *root[1:])
    with pytest.raises(ValueError, match="BrtFit pickle"):
        func(model, gamma, n, bad, ops)
    with pytest.raises(ValueError, match="BrtFit pickle"):
        func(model, gamma, n, nodes, ops[:-1])
    with pytest.raises(ValueError, match="BrtFit pickle"):
        func(model, gamma, n, nodes, ["merge"] + ops[1:])
    with pytest.raises(ValueError, match="BrtFit pickle"):
        func(model, gamma, n + 1, nodes, ops)
    with pytest.raises(ValueError, match="BrtFit pickle"):
        func(model, 1.5, n, nodes, ops)


def test_brt_log_p_is_its_recursion_over_the_rose_tree():
    x = bits(9, 5, seed=3)
    h1 = bernoulli_h1(x)
    for gamma in (0.3, 0.5, 0.9):
        fit = tl.brt(x, "bernoulli", gamma=gamma)
        assert fit.model == "bernoulli" and fit.gamma == gamma
        n, parents = fit.tree.n_leaves, fit.tree.parents
        children = {v: [c for c in range(len(parents)) if parents[c] == v] for v in range(n, len(parents))}
        assert len(fit.ops) == 8 and set(fit.ops) <= {"join", "absorb", "collapse"}

        def rec(v):
            if v < n:
                return [v], h1([v])
            kids = [rec(c) for c in children[v]]
            rows = sorted(r for k in kids for r in k[0])
            k = len(kids)
            pi = 1 - (1 - gamma) ** (k - 1)
            split = sum(p for _, p in kids)
            own = math.log(pi) + h1(rows) if pi > 0 else -math.inf
            rest = math.log1p(-pi) + split if pi < 1 else -math.inf
            return rows, np.logaddexp(own, rest)

        root = int(np.flatnonzero(parents < 0)[0])
        assert fit.log_p_tree == pytest.approx(rec(root)[1], abs=1e-10)
    with pytest.raises(ValueError, match="gamma"):
        tl.brt(x, "bernoulli", gamma=0.0)


def test_bhc_exact_is_enumeration_of_every_partition_and_every_binary_tree():
    x = bits(6, 4, seed=5)
    n, alpha = len(x), 0.8
    h1 = bernoulli_h1(x)

    def log_g(rows):
        return math.log(alpha) + math.lgamma(len(rows)) + h1(rows)

    const = math.lgamma(alpha) - math.lgamma(n + alpha)
    parts = list(partitions(list(range(n))))
    assert len(parts) == 203  # Bell(6)
    scores = np.array([sum(log_g(c) for c in p) for p in parts])
    log_z = np.logaddexp.reduce(scores)
    ex = tl.bhc_exact(x, "bernoulli", alpha=alpha)
    assert ex.model == "bernoulli" and ex.alpha == alpha
    assert ex.log_evidence == pytest.approx(const + log_z, abs=1e-10)
    best = parts[int(np.argmax(scores))]
    labels = ex.map_partition
    assert labels.dtype == np.int64
    assert sorted(sorted(c) for c in best) == sorted(
        sorted(np.flatnonzero(labels == k).tolist()) for k in set(labels.tolist()))
    assert ex.map_log_posterior == pytest.approx(scores.max() - log_z, abs=1e-10)
    co = np.zeros((n, n))
    for p, s in zip(parts, scores):
        w = math.exp(s - log_z)
        for c in p:
            for i in c:
                for j in c:
                    co[i, j] += w
    assert np.allclose(ex.coclustering(), co, atol=1e-12)

    # Every binary tree: f(T) = g(S) + f(A) f(B).
    def log_f(t):
        if isinstance(t, int):
            return log_g([t])
        return np.logaddexp(log_g(leaves(t)), log_f(t[0]) + log_f(t[1]))

    trees = list(binary_trees(tuple(range(n))))
    assert len(trees) == 945  # (2n - 3)!!
    fs = np.array([log_f(t) for t in trees])
    assert ex.best_log_bound == pytest.approx(const + fs.max(), abs=1e-10)
    assert ex.mean_log_bound == pytest.approx(const + np.logaddexp.reduce(fs) - math.log(945), abs=1e-10)
    assert ex.best_tree.n_leaves == n and ex.best_tree.is_binary

    # The gaps of a greedy fit, given or run here (the same numbers).
    fit = tl.bhc(x, "bernoulli", alpha=alpha)
    assert ex.greedy_log_bound == fit.log_lower_bound
    given = tl.bhc_exact(x, "bernoulli", alpha=alpha, fit=fit)
    for name in ("gap_evidence_greedy", "gap_evidence_best", "gap_best_greedy",
                 "greedy_is_best", "ari_cut_map", "coclustering_max_abs_diff", "log_evidence"):
        assert getattr(given, name) == getattr(ex, name), name
    assert ex.gap_evidence_greedy == pytest.approx(const + log_z - fit.log_lower_bound, abs=1e-10)
    assert ex.gap_best_greedy == pytest.approx(ex.best_log_bound - fit.log_lower_bound, abs=1e-12)
    assert ex.gap_evidence_greedy >= ex.gap_evidence_best - 1e-12 and ex.gap_evidence_best >= 0
    assert ex.gap_best_greedy >= -1e-12
    # Whether the greedy tree is the best tree returned; when it is not, but attains the best
    # value, another tree ties with it (here: equal rows make mirror-image trees).
    assert ex.greedy_is_best == (fit.tree == ex.best_tree)
    at_best = abs(const + fs.max() - fit.log_lower_bound) < 1e-9
    ties = int(np.sum(fs > fs.max() - 1e-9))
    assert at_best if ex.greedy_is_best else (not at_best or ties > 1)
    assert ex.coclustering_max_abs_diff == pytest.approx(
        np.abs(fit.coclustering() - co)[np.triu_indices(n, 1)].max(), abs=1e-12)


def test_bhc_exact_refuses_by_name_before_copying():
    # A read-only view of 10^6 x 10^4 values (80 GB if copied): refused from its shape.
    huge = np.broadcast_to(np.float64(1.0), (10**6, 10**4))
    with pytest.raises(ValueError, match="at most 22 rows"):
        tl.bhc_exact(huge)
    with pytest.raises(ValueError, match="at most 22 rows"):
        tl.bhc_exact(np.zeros((23, 2)))
    x = bits(6)
    fit = tl.bhc(x, "bernoulli")
    with pytest.raises(ValueError, match="alpha"):
        tl.bhc_exact(x, "bernoulli", alpha=2.0, fit=fit)
    with pytest.raises(ValueError, match="gaussian"):
        tl.bhc_exact(x, "gaussian", fit=fit)
    with pytest.raises(ValueError, match="fit has 6 rows and data 5"):
        tl.bhc_exact(x[:5], "bernoulli", fit=fit)
    other = x.copy()
    other[0] = 1 - other[0]
    with pytest.raises(ValueError, match="BhcFit of this data"):
        tl.bhc_exact(other, "bernoulli", fit=fit)
    token = tl.CancelToken()
    token.cancel()
    for call in (lambda: tl.bhc_exact(x, "bernoulli", cancel=token),
                 lambda: tl.brt(x, "bernoulli", cancel=token)):
        with pytest.raises(tl.CancelledError):
            call()


def test_the_boards_bhc_and_brt_rows_are_these_calls(tmp_path):
    exe = pathlib.Path(os.environ.get("TRELLIS_LAB", ROOT / "target" / "release" / "trellis-lab"))
    if not exe.exists():
        pytest.fail(f"no trellis-lab binary at {exe}: cargo build --release, or set TRELLIS_LAB")
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    csv = ROOT / "data" / "examples" / "points_labelled.csv"
    subprocess.run(
        [str(exe), "cluster", str(csv), "--label-column", "kind", "--methods", "bhc,brt",
         "--output-dir", str(tmp_path)],
        check=True, capture_output=True, text=True,
    )
    board = pd.read_parquet(tmp_path / "points_labelled" / "board.parquet")
    trees = pd.read_parquet(tmp_path / "points_labelled" / "trees.parquet")
    x = pd.read_csv(csv).drop(columns="kind").to_numpy()

    def row(method, metric):
        v = board[(board.method == method) & (board.metric == metric)].value
        assert len(v) == 1
        return float(v.iloc[0])

    def tree(method):
        return tl.Tree.from_newick(trees[trees.method == method].newick.iloc[0])

    fit = tl.bhc(x, "gaussian", alpha=1.0)
    assert row("bhc", "own_objective") == fit.log_p_tree
    assert row("bhc", "bhc_lower_bound") == fit.log_lower_bound
    assert tree("bhc") == fit.tree
    rose = tl.brt(x, "gaussian", gamma=0.5)
    assert row("brt", "own_objective") == rose.log_p_tree
    assert tree("brt") == rose.tree
