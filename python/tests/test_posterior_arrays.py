"""Posterior summaries as arrays.

- `sample_parents(n, seed)` is `sample(n, seed)` as an int64 array of canonical parent rows:
  the same trees in the same order (across the sampler's batches too), equal trees as equal
  rows, the documented numbering.
- `coclustering()`: P(i and j share a cluster of size <= k) as an (N + 1, N, N) array, equal
  to enumeration of every tree (through `log_probability`), to Monte Carlo from samples within
  a binomial tolerance, symmetric, monotone in k, with the sibling probabilities (cluster
  marginals of pairs) at k = 2 and the expected size of the smallest common cluster.
- Cancel tokens and Ctrl-C stop both.
"""

import concurrent.futures
import itertools
import math
import time

import numpy as np
import pytest

import trellis_lab as tl

import test_safety


def similarity(n, seed=0):
    x = np.random.default_rng(seed).normal(size=(n, 2))
    return np.exp(-np.linalg.norm(x[:, None] - x[None], axis=2))


def trellises():
    jet = tl.generate_jets(1, min_leaves=7, max_leaves=7, seed=4)[0]
    return {
        "jet": tl.exact_trellis(jet),
        "dasgupta": tl.exact_trellis(similarity=similarity(7), beta=3.0),
        "correlation": tl.exact_trellis(
            similarity=similarity(6, seed=2) - 0.4, energy="correlation", beta=2.0
        ),
    }


@pytest.fixture(scope="module")
def built():
    return trellises()


def canonical_row(t):
    """The documented numbering: internal nodes n.. in post-order, children by lowest leaf."""
    n = t.n_leaves
    parents = t.parents
    children = {}
    for v, p in enumerate(parents):
        if p >= 0:
            children.setdefault(int(p), []).append(v)
    lowest = {}

    def low(v):
        if v not in lowest:
            lowest[v] = v if v < n else min(low(c) for c in children[v])
        return lowest[v]

    row = [-1] * len(parents)
    ids = {}
    counter = [n]

    def visit(v):
        if v < n:
            ids[v] = v
            return
        for c in sorted(children[v], key=low):
            visit(c)
        ids[v] = counter[0]
        counter[0] += 1

    root = int(np.flatnonzero(parents < 0)[0])
    visit(root)
    for v, p in enumerate(parents):
        if p >= 0:
            row[ids[v]] = ids[int(p)]
    return row


def test_sample_parents_are_the_sampled_trees(built):
    sparse = tl.sparse_trellis(similarity=similarity(9), seed_trees=40)
    for name, t in [*built.items(), ("sparse", sparse)]:
        n = t.map_tree.n_leaves
        for seed in [0, 11]:
            rows = t.sample_parents(500, seed)
            trees = t.sample(500, seed)
            assert rows.shape == (500, 2 * n - 1) and rows.dtype == np.int64, name
            for row, tree in zip(rows, trees):
                assert tl.Tree.from_parents(n, row) == tree, name
                assert row.tolist() == canonical_row(tree), name
            # The root is the last node; equal trees give equal rows.
            assert (rows[:, -1] == -1).all() and (rows[:, :-1] >= n).all(), name
            distinct = np.unique(rows, axis=0).shape[0]
            assert distinct == len(set(trees)), name
        assert t.sample_parents(0).shape == (0, 2 * n - 1)
        with pytest.raises(ValueError, match="n = -1 must be an integer >= 0"):
            t.sample_parents(-1)
        with pytest.raises(ValueError, match="seed = -2"):
            t.sample_parents(3, seed=-2)


def test_sample_parents_across_batches_equal_the_list():
    t = tl.exact_trellis(similarity=similarity(5), beta=0.5)
    rows = t.sample_parents(9000, seed=3)
    trees = t.sample(9000, seed=3)
    assert len({tuple(r) for r in rows}) == len(set(trees)) > 50
    again = [tuple(canonical_row(u)) for u in trees]
    assert again == [tuple(r) for r in rows.tolist()]


def all_trees(leaves):
    """Every rooted binary tree over `leaves` as Newick text (without `;`)."""
    if len(leaves) == 1:
        return [str(leaves[0])]
    first, rest = leaves[0], leaves[1:]
    out = []
    for r in range(len(rest)):
        for others in itertools.combinations(rest, r):
            left = [first, *others]
            right = [x for x in rest if x not in others]
            for a in all_trees(left):
                for b in all_trees(right):
                    out.append(f"({a},{b})")
    return out


def lca_sizes(tree):
    """(N, N) sizes of the smallest cluster holding i and j (1 on the diagonal)."""
    n = tree.n_leaves
    out = np.full((n, n), n)
    np.fill_diagonal(out, 1)
    for c in sorted(tree.clusters(), key=len, reverse=True):
        for i in c:
            for j in c:
                if i != j:
                    out[i, j] = len(c)
    return out


def test_coclustering_equals_enumeration_of_every_tree(built):
    for name in ["correlation", "jet"]:
        t = built[name]
        n = t.n_leaves
        want = np.zeros((n + 1, n, n))
        trees = all_trees(list(range(n)))
        assert len(trees) == math.prod(range(1, 2 * n - 2, 2))
        total = 0.0
        for text in trees:
            u = tl.Tree.from_newick(text + ";")
            p = math.exp(t.log_probability(u))
            total += p
            sizes = lca_sizes(u)
            for k in range(n + 1):
                want[k] += p * (sizes <= k)
        assert math.isclose(total, 1.0, rel_tol=1e-12)
        got = t.coclustering()
        assert got.shape == (n + 1, n, n) and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=name)


def test_coclustering_properties(built):
    for name, t in built.items():
        n = t.n_leaves
        c = t.coclustering()
        eye = np.eye(n, dtype=bool)
        assert (c[0] == 0).all() and (c[n] == 1).all(), name
        assert (c[1:, eye] == 1).all() and (c[1][~eye] == 0).all(), name
        assert np.array_equal(c, c.transpose(0, 2, 1)), name
        assert (np.diff(c, axis=0) >= -1e-15).all(), name
        assert ((c >= 0) & (c <= 1)).all(), name
        # Row i at k: the expected size of the largest cluster of <= k leaves holding i.
        rows = c.sum(axis=2)
        for k in range(1, n + 1):
            assert (rows[k] <= k + 1e-12).all() and (rows[k] >= 1).all(), (name, k)
        # k = 2: siblings, the cluster marginals of pairs.
        sib = t.sibling_probabilities()
        assert np.array_equal(sib, np.where(eye, 0.0, c[2])), name
        for i, j in itertools.combinations(range(n), 2):
            assert math.isclose(sib[i, j], t.cluster_marginal([i, j]), abs_tol=1e-12), name
        # E|lca(i, j)| = sum over k < N of P(|lca| > k), between 2 and N off the diagonal.
        e = t.expected_lca_size()
        assert np.allclose(e, (1 - c[:n]).sum(axis=0), rtol=0, atol=1e-12), name
        assert (np.diag(e) == 1).all(), name
        assert ((e[~eye] >= 2 - 1e-12) & (e[~eye] <= n + 1e-12)).all(), name
        # Same bits every time.
        assert np.array_equal(c, t.coclustering()), name


def test_coclustering_agrees_with_monte_carlo(built):
    m = 20_000
    for name in ["jet", "dasgupta"]:
        t = built[name]
        n = t.n_leaves
        rows = t.sample_parents(m, seed=7)
        # The size of the smallest common cluster of every pair in every sample, from the rows:
        # a node's members are found by walking up from each leaf.
        size = np.ones((m, 2 * n - 1), dtype=np.int8)
        size[:, n:] = 0
        anc = np.zeros((m, n, 2 * n - 1), dtype=bool)
        idx = np.arange(m)
        for leaf in range(n):
            v = np.full(m, leaf)
            while True:
                anc[idx, leaf, v] = True
                p = rows[idx, v]
                if (p < 0).all():
                    break
                v = np.where(p < 0, v, p)
        size[:, n:] = anc[:, :, n:].sum(axis=1)
        both = anc[:, :, None, :] & anc[:, None, :, :]
        lca = np.where(both, size[:, None, None, :], 2 * n).min(axis=3)
        exact = t.coclustering()
        for k in range(n + 1):
            p_hat = (lca <= k).mean(axis=0)
            p = exact[k]
            tol = 5 * np.sqrt(p * (1 - p) / m) + 1e-9
            assert (np.abs(p_hat - p) <= tol).all(), (name, k, np.abs(p_hat - p).max())


@pytest.fixture(scope="module")
def long_inputs():
    return {
        "big": tl.exact_trellis(similarity=similarity(18), max_leaves=18),
        "small": tl.exact_trellis(similarity=similarity(12)),
    }


def test_a_cancelled_token_stops_them(built, long_inputs):
    tok = tl.CancelToken()
    tok.cancel()
    t = built["dasgupta"]
    for call in [
        lambda: t.coclustering(cancel=tok),
        lambda: t.expected_lca_size(cancel=tok),
        lambda: t.sibling_probabilities(cancel=tok),
        lambda: t.sample_parents(10, cancel=tok),
    ]:
        with pytest.raises(tl.CancelledError):
            call()
    # A token with a short timeout stops a long co-clustering on another thread.
    big = long_inputs["big"]
    tok = tl.CancelToken(timeout=0.2)
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(big.coclustering, cancel=tok)
        with pytest.raises(TimeoutError):
            future.result()
    assert time.monotonic() - t0 < 1.5


LONG_CALLS = {
    "Trellis.coclustering": lambda b: b["big"].coclustering(),
    "Trellis.sample_parents": lambda b: b["small"].sample_parents(5_000_000),
}


@pytest.mark.parametrize("delay", [0.05, 0.15, 1.0])
@pytest.mark.parametrize("name", list(LONG_CALLS))
def test_ctrl_c_stops_them_promptly(long_inputs, name, delay, monkeypatch):
    # The package's Ctrl-C check (SIGINT from a timer thread, KeyboardInterrupt within a
    # second of it), run on these calls.
    monkeypatch.setitem(test_safety.LONG_CALLS, name, LONG_CALLS[name])
    test_safety.test_ctrl_c_stops_every_long_call_promptly(long_inputs, name, delay)
