"""tl.bhc: Bayesian hierarchical clustering (Heller & Ghahramani 2005) from NumPy arrays."""

import math

import numpy as np
import pytest

import trellis_lab as tl


def two_groups(n=12, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[n // 2 :] += 8.0
    return x


def test_gaussian_bhc_finds_two_groups_and_reports_its_numbers():
    x = two_groups()
    fit = tl.bhc(x, "gaussian", alpha=1.0)
    n = len(x)
    assert fit.model == "gaussian" and fit.alpha == 1.0
    assert fit.tree.n_leaves == n
    assert math.isfinite(fit.log_p_tree) and math.isfinite(fit.log_lower_bound)
    r = fit.r
    assert r.shape == (2 * n - 1,) and np.all((r >= 0) & (r <= 1 + 1e-12))
    assert np.all(r[:n] == 1.0)
    cut = fit.cut
    assert cut.dtype == np.int64 and cut.shape == (n,)
    # The two well-separated groups are the cut's clusters.
    assert len(set(cut[: n // 2])) == 1 and len(set(cut[n // 2 :])) == 1
    assert cut[0] != cut[-1]
    co = fit.coclustering()
    assert co.shape == (n, n) and np.allclose(co, co.T) and np.all(np.diag(co) == 1.0)
    assert co[0, 1] > 0.5 and co[0, -1] < 0.5
    assert "BhcFit" in repr(fit)


def test_bhc_matches_its_recursion_by_hand():
    # Three binary points: BHC merges the closest pair first; check log p(D|T) by the recursion.
    x = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=float)
    alpha = 0.5
    fit = tl.bhc(x, "bernoulli", alpha=alpha)
    m = x.mean(axis=0).clip(1 / 6, 1 - 1 / 6)
    a, b = 2 * m, 2 * (1 - m)

    def lbeta(p, q):
        return math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q)

    def h1(rows):
        c, k = x[rows].sum(axis=0), len(rows)
        return sum(lbeta(a[j] + c[j], b[j] + k - c[j]) - lbeta(a[j], b[j]) for j in range(3))

    def node(left, right, rows):
        (dl, pl), (dr, pr) = left, right
        prior = math.log(alpha) + math.lgamma(len(rows))
        d = np.logaddexp(prior, dl + dr)
        p = np.logaddexp(prior - d + h1(rows), dl + dr - d + pl + pr)
        return d, p

    leaf = [(math.log(alpha), h1([i])) for i in range(3)]
    pair = node(leaf[0], leaf[1], [0, 1])
    root = node(pair, leaf[2], [0, 1, 2])
    assert fit.log_p_tree == pytest.approx(root[1], abs=1e-12)
    bound = root[0] + root[1] + math.lgamma(alpha) - math.lgamma(3 + alpha)
    assert fit.log_lower_bound == pytest.approx(bound, abs=1e-12)
    assert tl.Tree.from_newick("((0,1),2);").clusters() == fit.tree.clusters()


def test_counts_and_refusals():
    x = np.array([[3, 0, 1], [2, 0, 2], [0, 5, 0], [0, 4, 1]])
    fit = tl.bhc(x, "multinomial")
    assert fit.cut[0] == fit.cut[1] and fit.cut[2] == fit.cut[3]
    with pytest.raises(ValueError, match="not known"):
        tl.bhc(x, "poisson")
    with pytest.raises(ValueError, match="0 or 1"):
        tl.bhc(x, "bernoulli")
    with pytest.raises(ValueError, match="non-negative integers"):
        tl.bhc(x + 0.5, "multinomial")
    with pytest.raises(ValueError, match="alpha"):
        tl.bhc(x, "multinomial", alpha=0.0)
