"""tl.bhc cross-checked against the public BHC implementations on PyPI.

Peers (pure Python; CI installs BHCAA 0.1, the others need numba; every test here skips when
its peer is absent; see
bhc_peer.md beside this file for the versions, what agreed to how many digits and why the
rest differs):

- BHCAA 0.1 (``BHCAA.BHC``): Beta-Bernoulli with one scalar Beta(a, b) for every feature, and
  Dirichlet-multinomial with a symmetric Dirichlet; in both the prior's first parameter is the
  DP concentration alpha itself (one variable for both).
- BHClustering 0.0.3 (``BHClustering.functions``): Dirichlet-multinomial only, the Dirichlet
  parameter again tied to alpha.
- bayesHC1 0.0.1: univariate Gaussian with the Normal-Gamma prior; its tree search is not BHC
  (d_k is set to 0.5 at every merge and p(D|T) uses a plug-in likelihood), so only its
  marginal likelihood p(D_k | H1) is used here, on our tree, with the paper's recursion.

``tl.bhc`` takes no prior hyperparameters, so the data are chosen so that our data-centred
priors equal the peers' tied ones exactly:
- bernoulli: our prior is Beta(2 m_d, 2 (1 - m_d)) per feature with m_d the column mean, so
  with every column holding the same number of ones, m_d = m, it is the peer's Beta(alpha,
  beta) with alpha = 2m (which is then also the DP concentration) and beta = 2(1 - m);
- multinomial: ours is a symmetric Dirichlet(1), the peers' Dirichlet(alpha): alpha = 1;
- gaussian, one feature: our Normal-Inverse-Wishart (m0 = mean, kappa0 = 0.1, nu0 = 3,
  S0 = 0.25 var) is the Normal-Gamma(mu = m0, kappa = kappa0, alpha0 = nu0 / 2,
  beta = S0 / 2).

The peers compute in probability space (products of gamma functions), so the data are kept
small enough that nothing underflows (p(D|T) above about 1e-300); within that, log p(D|T)
agrees to 1e-9 relative and the trees have the same clusters.
"""

import math
import pathlib

import numpy as np
import pytest

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]
ANIMALS = ROOT / "data" / "animals33" / "animals33_features.tsv"


def close(ours, theirs, rel=1e-9):
    """log-probabilities agree to `rel` relative (the peers' products of gamma functions lose
    about 1e-13 relative; 1e-9 leaves room for other NumPy/SciPy builds)."""
    assert math.isfinite(ours) and math.isfinite(theirs), (ours, theirs)
    assert abs(ours - theirs) <= rel * max(1.0, abs(ours)), (ours, theirs, ours - theirs)


def balanced_bits(n, d, ones, seed):
    """n x d binary rows, every column with exactly `ones` ones (so every column mean is the
    same and our data-centred Beta prior is one Beta for all features)."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    for j in range(d):
        x[rng.choice(n, ones, replace=False), j] = 1.0
    return x


def animals(rows, cols):
    """Rows and columns of the Kemp-Tenenbaum animals (33 x 102 binary features)."""
    table = np.loadtxt(ANIMALS, delimiter="\t", skiprows=1, usecols=range(1, 103))
    return table[np.ix_(rows, cols)]


def poisson_counts(n, d, seed):
    """Counts from two groups with different category rates (row totals vary)."""
    rng = np.random.default_rng(seed)
    rates = np.where(np.arange(d) < d // 2, 3.0, 0.5)
    first = rng.poisson(rates, size=(n // 2, d))
    second = rng.poisson(rates[::-1], size=(n - n // 2, d))
    x = np.vstack([first, second])
    return x.astype(float)


def children(fit):
    """Our tree's children per internal node id (n + k is the k-th merge)."""
    parents = fit.tree.parents
    kids = {}
    for v, p in enumerate(parents):
        if p >= 0:
            kids.setdefault(int(p), []).append(v)
    return kids


def leaves_below(kids, v):
    if v not in kids:
        return [v]
    return sorted(i for c in kids[v] for i in leaves_below(kids, c))


def our_clusters(fit):
    """Every internal node's cluster, as a set of frozensets of rows."""
    return {frozenset(c) for c in fit.tree.clusters().tolist()}


def our_r(fit):
    """r_k of every internal node keyed by its cluster."""
    kids, r, n = children(fit), fit.r, fit.tree.n_leaves
    return {frozenset(leaves_below(kids, v)): float(r[v]) for v in range(n, 2 * n - 1)}


# ---- BHCAA 0.1 --------------------------------------------------------------------------


def bhcaa_run(x, alpha, beta):
    """The peer's greedy BHC: log p(D|T) of its tree, its clusters and each merge's r_k."""
    peer = pytest.importorskip("BHCAA.BHC")
    clusters, root = peer.bhc(x, alpha, beta)
    n = len(x)
    found = {}
    for k in range(n - 1, 0, -1):
        # Level k has k clusters; the merge that made it appended the new key last.
        r_k, keys = clusters[k]
        found[frozenset(int(i) - 1 for i in keys[-1].split(","))] = float(r_k)
    return math.log(peer.prob_dT_k(root)), found


@pytest.mark.parametrize(
    "ones, alpha, seed",
    [(6, 1.0, 2), (6, 1.0, 7), (3, 0.5, 3), (9, 1.5, 4)],
)
def test_bernoulli_matches_bhcaa(ones, alpha, seed):
    # 12 rows, 20 features, `ones` ones per column: our prior is Beta(2m, 2(1 - m)) with
    # m = ones / 12, the peer's Beta(alpha, beta) with alpha = 2m (its DP concentration too).
    n = 12
    x = balanced_bits(n, 20, ones, seed)
    m = ones / n
    assert alpha == pytest.approx(2 * m)
    log_p, r_peer = bhcaa_run(x, alpha, 2 * (1 - m))
    fit = tl.bhc(x, "bernoulli", alpha=alpha)
    close(fit.log_p_tree, log_p)
    assert our_clusters(fit) == set(r_peer)
    r_ours = our_r(fit)
    for c, r in r_peer.items():
        assert r_ours[c] == pytest.approx(r, rel=1e-9, abs=1e-300), sorted(c)
    close(fit.log_p_tree, bhcaa_on_tree(x, fit, alpha, 2 * (1 - m)))


def bhcaa_on_tree(x, fit, alpha, beta):
    """The peer's log p(D|T) of OUR tree: its nodes built bottom up along our merges."""
    peer = pytest.importorskip("BHCAA.BHC")
    kids, n = children(fit), len(x)
    nodes = {i: peer.Node(i, x[[i]], alpha, beta=beta) for i in range(n)}
    for v in range(n, 2 * n - 1):
        left, right = (nodes[c] for c in kids[v])
        rows = leaves_below(kids, v)
        nodes[v] = peer.Node(v, x[rows], alpha, beta=beta, left=left, right=right)
    # The data of a node are its rows in any order: p(D_k | H1) only sums columns.
    return math.log(peer.prob_dT_k(nodes[2 * n - 2]))


def test_bernoulli_tie_resolved_differently_from_bhcaa():
    # Seed 1 has exact ties (in real arithmetic) between overlapping pairs: with a = b = 1 a
    # pair's p(D_k | H1) depends only on how many features agree, so pairs {3, 8} and {3, 9}
    # score the same r_k. Rounding breaks the tie one way in our log-space sums (we merge
    # {3, 9}) and the other in the peer's products ({3, 8}), and the trees part there. Both
    # runs are BHC; the peer's formula on our tree still gives our log p(D|T).
    x = balanced_bits(12, 20, 6, seed=1)
    log_p, r_peer = bhcaa_run(x, 1.0, 1.0)
    fit = tl.bhc(x, "bernoulli", alpha=1.0)
    r_ours = our_r(fit)
    a, b = frozenset({3, 8}), frozenset({3, 9})
    assert a in r_peer and a not in r_ours and b in r_ours and b not in r_peer
    assert r_ours[b] == pytest.approx(r_peer[a], rel=1e-12)
    assert our_clusters(fit) != set(r_peer)
    close(fit.log_p_tree, bhcaa_on_tree(x, fit, 1.0, 1.0))
    # Here the tie happened to favour ours: 0.159 nats higher p(D|T).
    assert fit.log_p_tree - log_p == pytest.approx(0.1589157631, abs=1e-8)


def test_multinomial_matches_bhcaa_on_counts():
    x = poisson_counts(12, 6, seed=5)
    log_p, r_peer = bhcaa_run(x, 1.0, None)
    fit = tl.bhc(x, "multinomial", alpha=1.0)
    close(fit.log_p_tree, log_p)
    assert our_clusters(fit) == set(r_peer)
    r_ours = our_r(fit)
    for c, r in r_peer.items():
        assert r_ours[c] == pytest.approx(r, rel=1e-9, abs=1e-300), sorted(c)


def test_multinomial_matches_bhcaa_on_animals():
    # Binary rows are count vectors too: 12 animals x 16 features, small enough that the
    # peer's probabilities (about 1e-56 here) do not underflow.
    x = animals(range(12), range(16))
    log_p, r_peer = bhcaa_run(x, 1.0, None)
    fit = tl.bhc(x, "multinomial", alpha=1.0)
    close(fit.log_p_tree, log_p)
    assert our_clusters(fit) == set(r_peer)


def test_bhcaa_underflows_where_ours_does_not():
    # All 33 animals x 102 features: p(D_k | H1) of the whole set is far below e^-745, the
    # smallest double, so the peer (products of probabilities) gets 0 and its r_k become 0/0;
    # ours works in logs throughout.
    peer = pytest.importorskip("BHCAA.BHC")
    x = animals(range(33), range(102))
    assert peer.prob_dH1_k(peer.Node(0, x, 1.0)) == 0.0
    fit = tl.bhc(x, "multinomial", alpha=1.0)
    assert math.isfinite(fit.log_p_tree) and fit.log_p_tree < -745


# ---- BHClustering 0.0.3 -----------------------------------------------------------------


def bhclustering_run(x, alpha):
    peer = pytest.importorskip("BHClustering.functions")
    root, _ = peer.bhc(x, alpha)
    found = set()
    stack = [root]
    while stack:
        v = stack.pop()
        if v.l is not None:
            found.add(frozenset(int(i) for i in leaf_ids(v)))
            stack.extend([v.l, v.r])
    # p_dk_tk's alpha defaults to 0.5, not the alpha bhc was run with: pass it.
    return math.log(peer.p_dk_tk(root, alpha)), found


def leaf_ids(v):
    if v.l is None:
        return [v.index]
    return leaf_ids(v.l) + leaf_ids(v.r)


def test_multinomial_matches_bhclustering_on_counts():
    x = poisson_counts(12, 6, seed=5)
    log_p, found = bhclustering_run(x, 1.0)
    fit = tl.bhc(x, "multinomial", alpha=1.0)
    close(fit.log_p_tree, log_p)
    assert our_clusters(fit) == found


def test_multinomial_matches_bhclustering_on_animals():
    x = animals(range(0, 33, 2), range(0, 102, 6))  # 17 animals x 17 features
    log_p, found = bhclustering_run(x, 1.0)
    fit = tl.bhc(x, "multinomial", alpha=1.0)
    close(fit.log_p_tree, log_p)
    assert our_clusters(fit) == found


# ---- bayesHC1 0.0.1: the Normal-Gamma marginal, on our tree -------------------------------


def test_gaussian_one_feature_matches_bayeshc1_marginal():
    peer = pytest.importorskip("bayesHC1")
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.normal(0.0, 1.0, 6), rng.normal(5.0, 0.7, 6)])
    fit = tl.bhc(x[:, None], "gaussian", alpha=1.0)
    # Our from_data prior with D = 1 as the peer's Normal-Gamma.
    mu, var = x.mean(), x.var()
    nu0, kappa0, s0 = 3.0, 0.1, 0.25 * var
    a0, b0 = nu0 / 2, s0 / 2

    def log_h1(rows):
        # The peer's function takes two clusters (tuples whose [3] is the data list and [4]
        # the count); an empty second cluster gives p(D_C | H1) of the first alone.
        c = (0, 0, 0, [float(x[i]) for i in rows], len(rows), 1, 1.0)
        empty = (0, 0, 0, [], 0, 1, 1.0)
        return math.log(peer.prob_dk_null_normal_orig(c, empty, a0, b0, kappa0, mu))

    # The paper's recursion (checked against BHCAA and BHClustering above) over our tree.
    kids, n, alpha = children(fit), len(x), 1.0
    memo = {}

    def node(v):
        if v not in kids:
            return math.log(alpha), log_h1([v])
        (dl, pl), (dr, pr) = (node(c) for c in kids[v])
        rows = leaves_below(kids, v)
        prior = math.log(alpha) + math.lgamma(len(rows))
        d = np.logaddexp(prior, dl + dr)
        h1 = log_h1(rows)
        p = np.logaddexp(prior - d + h1, dl + dr - d + pl + pr)
        memo[v] = prior - d + h1 - p
        return d, p

    _, log_p = node(2 * n - 2)
    close(fit.log_p_tree, log_p)
    for v, log_r in memo.items():
        assert fit.r[v] == pytest.approx(math.exp(log_r), rel=1e-9, abs=1e-300)

    # BHC's greedy search with the peer's marginal (the peer's own search is not BHC) makes
    # the tree we made: merge the pair with the largest r_k until one cluster is left.
    live = {(i,): (math.log(alpha), log_h1([i])) for i in range(n)}
    made = set()
    while len(live) > 1:
        best = None
        keys = sorted(live)
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                (dl, pl), (dr, pr) = live[a], live[b]
                rows = sorted(a + b)
                prior = math.log(alpha) + math.lgamma(len(rows))
                d = np.logaddexp(prior, dl + dr)
                h1 = log_h1(rows)
                p = np.logaddexp(prior - d + h1, dl + dr - d + pl + pr)
                if best is None or prior - d + h1 - p > best[0]:
                    best = (prior - d + h1 - p, a, b, (d, p))
        _, a, b, dp = best
        del live[a], live[b]
        live[tuple(sorted(a + b))] = dp
        made.add(frozenset(a + b))
    assert made == our_clusters(fit)
