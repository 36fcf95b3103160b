"""Round trips with SciPy and Newick.

- `Tree.from_linkage(t.to_linkage())` is `t` (same clusters, same height on every cluster) on
  the trees of every method the package offers; SciPy accepts every linkage and draws it.
- `Tree.from_linkage` reads SciPy's own linkage matrices and refuses malformed ones with a
  one-line ValueError naming the row and the problem.
- `to_linkage(heights=...)`: the tree's heights, cluster sizes, or subtree costs under an
  energy (the root at minus the tree's log-likelihood), refused by name when not monotone.
- `newick(branch_lengths=True)` gives the heights back through a parser written here,
  `Tree.from_newick`, SciPy's `to_tree` and Bio.Phylo (when installed).
"""

import math
import re

import numpy as np
import pytest
import scipy.cluster.hierarchy as sch

import trellis_lab as tl

N = 7


def similarity(n, seed=0):
    x = np.random.default_rng(seed).normal(size=(n, 2))
    return np.exp(-np.linalg.norm(x[:, None] - x[None], axis=2))


def points(n, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 3))


@pytest.fixture(scope="module")
def jet():
    return tl.generate_jets(1, min_leaves=N, max_leaves=N, seed=4)[0]


@pytest.fixture(scope="module")
def method_trees(jet):
    """(name, tree) for every method the package offers, several trees per sampler."""
    s = similarity(N)
    x = points(N)
    out = []
    for label, kw in [("jet", dict(jet=jet)), ("similarity", dict(similarity=s))]:
        t = tl.exact_trellis(**kw)
        out.append((f"exact MAP {label}", t.map_tree))
        out += [(f"exact sample {label}", u) for u in t.sample(20, seed=1)]
        out.append((f"map_trellis {label}", tl.map_trellis(**kw)[0]))
        out.append((f"beam {label}", tl.beam(**kw)[0]))
        out.append((f"greedy {label}", tl.greedy(**kw)[0]))
        sp = tl.sparse_trellis(**kw)
        out.append((f"sparse MAP {label}", sp.map_tree))
        out += [(f"sparse sample {label}", u) for u in sp.sample(10, seed=2)]
    for p, name in [(1.0, "kt"), (0.0, "C/A"), (-1.0, "anti-kt")]:
        out.append((name, tl.kt(jet, p=p)))
    if jet.truth is not None:
        out.append(("jet truth", jet.truth))
    out.append(("average_linkage", tl.average_linkage(s)))
    for method in ["mpost2", "greedy"]:
        fit = tl.coalescent(x, method, particles=8, seed=3)
        out += [(f"coalescent {method}", u) for u in [fit.tree, *fit.trees]]
    for ddt in [False, True]:
        out.append((f"pydt_map ddt={ddt}", tl.pydt_map(x, ddt=ddt, iterations=5).tree))
        out += [(f"pydt_mcmc ddt={ddt}", u) for u in tl.pydt_mcmc(x, 30, ddt=ddt, seed=5).trees]
    return out


def cluster_heights(t):
    """{frozenset of leaves: height} over the internal nodes."""
    parents, heights = t.parents, t.heights
    members = {}
    for leaf in range(t.n_leaves):
        v = parents[leaf]
        while v >= 0:
            members.setdefault(v, set()).add(leaf)
            v = parents[v]
    return {frozenset(m): float(heights[v]) for v, m in members.items()}


def test_cluster_heights_helper_sees_every_cluster(method_trees):
    for name, t in method_trees[:3]:
        assert sorted(sorted(c) for c in cluster_heights(t)) == t.clusters(), name


def test_from_linkage_inverts_to_linkage_on_every_method(method_trees):
    names = {name for name, _ in method_trees}
    assert len(names) >= 20, names
    multifurcating = 0
    for name, t in method_trees:
        for heights in ["tree", "size"]:
            z = t.to_linkage(heights)
            assert z.shape == (t.n_leaves - 1, 4), name
            assert sch.is_valid_linkage(z), name
            sch.dendrogram(z, no_plot=True)
            want = t if heights == "tree" else t.with_heights("size")
            back = tl.Tree.from_linkage(z, collapse=not t.is_binary)
            assert back == t, (name, heights)
            assert cluster_heights(back) == cluster_heights(want), (name, heights)
        if not t.is_binary:
            multifurcating += 1
            # Without collapse, each node of k children is k - 1 merges at its height.
            binary = tl.Tree.from_linkage(t.to_linkage())
            assert binary.is_binary and set(map(frozenset, t.clusters())) < set(
                map(frozenset, binary.clusters())
            ), name
        else:
            # Linkage ids are the rows: node n + k is made by row k.
            z = t.to_linkage()
            back = tl.Tree.from_linkage(z)
            for k, (a, b, h, size) in enumerate(z):
                assert back.parents[int(a)] == back.parents[int(b)] == t.n_leaves + k, name
    print(f"{len(method_trees)} trees, {multifurcating} multifurcating")


def test_scipy_linkages_read_back_as_scipys_trees():
    x = points(30, seed=9)
    for method in ["single", "complete", "average", "weighted", "ward", "centroid", "median"]:
        z = sch.linkage(x, method)
        t = tl.Tree.from_linkage(z)
        assert t.n_leaves == 30 and t.is_binary
        # Row k made node 30 + k, from the clusters SciPy merged, at SciPy's height (raised to
        # the children's where centroid or median linkage merged below them).
        members = [frozenset([i]) for i in range(30)]
        for a, b, h, size in z:
            members.append(members[int(a)] | members[int(b)])
        assert {frozenset(c) for c in t.clusters()} == set(members[30:]), method
        parents, heights = t.parents, t.heights
        for k, (a, b, h, size) in enumerate(z):
            assert parents[int(a)] == parents[int(b)] == 30 + k
            kids = max(heights[int(a)], heights[int(b)])
            assert heights[30 + k] == max(h, kids), method
        if sch.is_monotonic(z):
            assert np.array_equal(np.sort(t.to_linkage()[:, 2]), np.sort(z[:, 2])), method


def one_line(excinfo, *needles):
    msg = str(excinfo.value)
    assert msg and "\n" not in msg, msg
    for n in needles:
        assert n in msg, msg


def test_malformed_linkages_are_refused_by_row():
    good = sch.linkage(points(5), "average")
    cases = [
        (lambda z: z[:, :3], "shape (4, 3)"),
        (lambda z: z[0], "1 dimensions"),
        (lambda z: _set(z, 1, 0, 0.5), "row 1: cluster id 0.5"),
        (lambda z: _set(z, 1, 0, -1.0), "row 1: cluster id -1 in column 0"),
        (lambda z: _set(z, 1, 0, np.nan), "row 1: cluster id NaN"),
        (lambda z: _set(z, 0, 1, 7.0), "row 0: merges cluster 7, which no earlier row made"),
        (lambda z: _set(z, 0, 1, z[0, 0]), "merges cluster"),
        (lambda z: _set(z, 3, 2, -0.5), "row 3: height -0.5"),
        (lambda z: _set(z, 3, 2, np.inf), "row 3: height inf"),
        (lambda z: _set(z, 3, 3, 4.0), "row 3: count 4"),
        (lambda z: _set(z, 3, 3, 5.5), "row 3: count 5.5"),
    ]
    for edit, says in cases:
        with pytest.raises(ValueError) as e:
            tl.Tree.from_linkage(edit(good.copy()))
        one_line(e, says)
    # A cluster merged twice: rows 0 and 1 both take leaf a.
    z = np.array([[0, 1, 1.0, 2], [0, 2, 2.0, 2], [3, 4, 3.0, 3]], dtype=float)
    with pytest.raises(ValueError) as e:
        tl.Tree.from_linkage(z)
    one_line(e, "row 1: merges cluster 0, already merged at row 0")
    z = np.array([[1, 1, 1.0, 2]], dtype=float)
    with pytest.raises(ValueError) as e:
        tl.Tree.from_linkage(z)
    one_line(e, "row 0: merges cluster 1 with itself")
    with pytest.raises(TypeError) as e:
        tl.Tree.from_linkage(good + 1j)
    one_line(e, "complex")
    # One leaf: no rows.
    t = tl.Tree.from_linkage(np.zeros((0, 4)))
    assert t.n_leaves == 1 and t.to_linkage().shape == (0, 4)


def _set(z, row, col, value):
    z[row, col] = value
    return z


def test_heights_sizes_times_and_costs(jet, method_trees):
    t = tl.exact_trellis(jet).map_tree
    sizes = t.to_linkage("size")
    assert np.array_equal(sizes[:, 2], sizes[:, 3])
    # Costs: the root at minus the tree's log-likelihood, every merge at its subtree's cost.
    z = t.to_linkage("cost", jet=jet)
    assert sch.is_valid_linkage(z) and sch.is_monotonic(z)
    assert math.isclose(z[-1, 2], -t.log_likelihood(jet), rel_tol=1e-12)
    # Similarity energies: every node at its children's costs plus its merge's
    # beta * |C| * w(A, B) (Dasgupta), the root at beta times the tree's Dasgupta cost.
    s = similarity(N)
    g = tl.exact_trellis(similarity=s, beta=2.0).map_tree
    z = g.to_linkage("cost", similarity=s, beta=2.0)
    assert math.isclose(z[-1, 2], 2.0 * g.dasgupta_cost(s), rel_tol=1e-12)
    cost = cluster_heights(g.with_heights("cost", similarity=s, beta=2.0))
    checked = 0
    for c, h in cost.items():
        kids = [k for k in cost if k < c and not any(k < o < c for o in cost)]
        leaves = c - frozenset().union(*kids)
        parts = kids + [frozenset([i]) for i in leaves]
        assert len(parts) == 2
        a, b = parts
        merge = 2.0 * len(c) * s[np.ix_(sorted(a), sorted(b))].sum()
        assert math.isclose(h, sum(cost.get(k, 0.0) for k in parts) + merge, rel_tol=1e-12)
        checked += 1
    assert checked == N - 1
    # Coalescent and diffusion trees: "tree" heights are the model's times.
    for name, u in method_trees:
        if name.startswith(("coalescent", "pydt")):
            got = np.sort(u.to_linkage()[:, 2])
            internal = u.heights[u.n_leaves:]
            assert set(got) == set(internal), name
            assert got.max() == u.heights.max() and got.min() > 0, name


def test_height_choices_are_refused_by_name(jet):
    t = tl.exact_trellis(jet).map_tree
    with pytest.raises(ValueError) as e:
        t.to_linkage("cost")
    one_line(e, "pass jet= or similarity=")
    with pytest.raises(ValueError) as e:
        t.to_linkage("size", jet=jet)
    one_line(e, "does not use an energy")
    with pytest.raises(ValueError) as e:
        t.to_linkage("merge")
    one_line(e, '"merge" is not known', '"tree", "size" or "cost"')
    other = tl.generate_jets(1, min_leaves=N + 1, max_leaves=N + 1, seed=2)[0]
    with pytest.raises(ValueError) as e:
        t.to_linkage("cost", jet=other)
    one_line(e, f"{N} leaves", f"{N + 1}")
    # Negative similarities make Dasgupta merges of positive log psi: a parent would sit below
    # its child, so the costs are refused, naming the node, rather than changed.
    s = -similarity(N)
    g = tl.greedy(similarity=s)[0]
    with pytest.raises(ValueError) as e:
        g.to_linkage("cost", similarity=s)
    one_line(e, "the merge at node", "log psi =", 'use heights="size"')
    # Multifurcating trees have no split scores.
    star = tl.Tree.from_newick("(0,1,2,3,4,5,6);")
    with pytest.raises(ValueError) as e:
        star.to_linkage("cost", jet=jet)
    one_line(e, "needs a binary tree", "7 children")


def parse_newick(text):
    """{frozenset of leaves: height} from Newick with branch lengths on every node but the
    root (heights: leaves 0, a node at its children's height plus their branch length)."""
    pos = 0

    def node():
        nonlocal pos
        if text[pos] == "(":
            pos += 1
            kids = [node()]
            while text[pos] == ",":
                pos += 1
                kids.append(node())
            assert text[pos] == ")"
            pos += 1
            leaves = frozenset().union(*(k[0] for k in kids))
            heights = {k[1] + k[2] for k in kids}
            assert max(heights) - min(heights) <= 1e-9 * max(1.0, max(heights)), text
            out = (leaves, max(heights))
            clusters[leaves] = out[1]
        else:
            start = pos
            while text[pos].isdigit():
                pos += 1
            out = (frozenset([int(text[start:pos])]), 0.0)
        length = None
        if text[pos] == ":":
            pos += 1
            start = pos
            while text[pos] not in ",);":
                pos += 1
            length = float(text[start:pos])
        return out + (length,)

    clusters = {}
    root = node()
    assert text[pos:] == ";" and root[2] is None, text
    return clusters


def close_maps(a, b):
    return a.keys() == b.keys() and all(
        math.isclose(a[k], b[k], rel_tol=1e-12, abs_tol=1e-12) for k in a
    )


def scipy_newick(z):
    """Newick with branch lengths of SciPy's own tree of a linkage matrix."""
    root = sch.to_tree(z)

    def write(n, parent_dist):
        length = f":{float(parent_dist - n.dist)!r}" if parent_dist is not None else ""
        if n.is_leaf():
            return f"{n.id}{length}"
        return f"({write(n.left, n.dist)},{write(n.right, n.dist)}){length}"

    return write(root, None) + ";"


def test_newick_branch_lengths_give_the_heights_back(method_trees, jet):
    for name, t in method_trees:
        for u in [t, t.with_heights("size")]:
            text = u.newick(branch_lengths=True)
            assert re.sub(r":[^,();]+", "", text) == u.newick(), name
            want = cluster_heights(u)
            assert close_maps(parse_newick(text), want), (name, text)
            back = tl.Tree.from_newick(text)
            assert back == u and close_maps(cluster_heights(back), want), name
            if u.is_binary:
                # SciPy's tree of the same linkage, written by SciPy's node distances.
                assert close_maps(parse_newick(scipy_newick(u.to_linkage())), want), name
    t = tl.exact_trellis(jet).map_tree.with_heights("cost", jet=jet)
    assert close_maps(parse_newick(t.newick(branch_lengths=True)), cluster_heights(t))
    # Without branch lengths: the canonical topology alone.
    assert ":" not in t.newick()


def test_newick_branch_lengths_read_by_bio_phylo(method_trees):
    phylo = pytest.importorskip("Bio.Phylo")
    import io

    for name, t in method_trees:
        text = t.newick(branch_lengths=True)
        tree = phylo.read(io.StringIO(text), "newick")
        terminals = tree.get_terminals()
        assert sorted(int(c.name) for c in terminals) == list(range(t.n_leaves)), name
        # Leaves sit at height 0, so every leaf is the root's height away from the root.
        top = float(t.heights.max())
        for c in terminals:
            assert math.isclose(tree.distance(c), top, rel_tol=1e-12, abs_tol=1e-12), name
        # Every clade's distance from the root is the root's height minus the clade's.
        heights = cluster_heights(t)
        for clade in tree.get_nonterminals():
            leaves = frozenset(int(c.name) for c in clade.get_terminals())
            d = tree.distance(clade) if clade is not tree.root else 0.0
            assert math.isclose(d, top - heights[leaves], rel_tol=1e-12, abs_tol=1e-12), name
