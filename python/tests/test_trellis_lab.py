"""The Python package against the reference values, the command line and SciPy.

Run from the repository (it reads data/ginkgo_jets/ and, for the CLI comparison, the release
binary: TRELLIS_LAB, default target/release/trellis-lab):

    python -m pytest python/tests
"""

import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest
import scipy.cluster.hierarchy as sch

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]
JETS = ROOT / "data" / "ginkgo_jets"
FILES = ["truth_4.json", "truth_5.json", "truth_9.json", "tree_100_n9.json"]


def cli():
    exe = pathlib.Path(os.environ.get("TRELLIS_LAB", ROOT / "target" / "release" / "trellis-lab"))
    if not exe.is_file():
        pytest.fail(f"no trellis-lab binary at {exe}: cargo build --release, or set TRELLIS_LAB")
    return exe


def test_every_reference_jet_matches_its_reference_values():
    for name in FILES:
        raw = json.loads((JETS / name).read_text())["jets"]
        jets = tl.load_jets(JETS / name)
        assert len(jets) == len(raw)
        for jet, r in zip(jets, raw):
            assert jet.name == r["name"] and jet.n_leaves == r["n_leaves"]
            # The generator's tree scores the file's truth log-likelihood.
            assert jet.truth is not None
            assert abs(jet.truth.log_likelihood(jet) - r["truth_loglh"]) < 1e-6
            t = tl.exact_trellis(jet)
            assert t.log_z >= t.map_log_likelihood
            assert t.map_tree.log_likelihood(jet) == t.map_log_likelihood
            ref = r.get("reference")
            if ref:
                assert abs(t.map_log_likelihood - ref["map_loglh"]) < 1e-6
                assert abs(t.log_z - ref["log_z"]) < 1e-6
                assert t.n_trees == ref["n_trees_finite"]
                _, g = tl.greedy(jet)
                assert abs(g - ref["greedy_loglh"]) < 1e-6
                _, b = tl.beam(jet, beam_size=ref["beam_size"])
                assert b >= ref["beam_loglh"] - 1e-6 and b <= t.map_log_likelihood


def test_figure_6_jet():
    jet = tl.load_jets(JETS / "truth_5.json")[2]
    t = tl.exact_trellis(jet)
    assert round(t.log_z, 5) == -26.18018
    assert round(t.map_log_likelihood, 5) == -26.94947
    assert t.n_trees == 90
    assert isinstance(t.n_trees, int)


def test_map_ties_are_counted():
    # Equal similarities: every tree has the same energy, so all (2N-3)!! trees tie at the MAP.
    s = np.ones((5, 5))
    np.fill_diagonal(s, 0)
    for energy in ["dasgupta", "correlation"]:
        t = tl.exact_trellis(similarity=s, energy=energy)
        assert t.n_map_trees == t.n_trees == 105
        assert isinstance(t.n_map_trees, int)
    # A jet's MAP tree is unique, and one of the trees counted.
    t = tl.exact_trellis(tl.load_jets(JETS / "truth_5.json")[2])
    assert t.n_map_trees == 1


def test_the_same_bits_as_the_command_line():
    # `trellis-lab score` prints every number with its shortest round-trip text.
    path = JETS / "truth_9.json"
    out = subprocess.run(
        [str(cli()), "score", str(path)], check=True, capture_output=True, text=True
    ).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    jets = tl.load_jets(path)
    assert len(rows) == len(jets) == 10
    for jet, row in zip(jets, rows):
        t = tl.exact_trellis(jet)
        assert row["map_loglh"] == t.map_log_likelihood
        assert row["log_z"] == t.log_z
        assert row["map_tree"] == t.map_tree.newick()
        assert int(row["n_trees_finite"]) == t.n_trees
        g, gl = tl.greedy(jet)
        assert (row["greedy_tree"], row["greedy_loglh"]) == (g.newick(), gl)
        b, bl = tl.beam(jet)
        assert (row["beam_tree"], row["beam_loglh"]) == (b.newick(), bl)
        assert row["truth_loglh"] == jet.truth.log_likelihood(jet)


def test_sampler_frequencies_match_the_exact_probabilities():
    jet = tl.load_jets(JETS / "truth_5.json")[2]
    t = tl.exact_trellis(jet)
    n = 20000
    samples = t.sample(n, seed=7)
    assert len(samples) == n
    counts = {}
    for s in samples:
        counts[s.newick()] = counts.get(s.newick(), 0) + 1
    exact = {}
    for s in samples:
        exact.setdefault(s.newick(), math.exp(t.log_probability(s)))
    assert sum(exact.values()) <= 1 + 1e-9
    for key, p in exact.items():
        sd = math.sqrt(p * (1 - p) / n)
        assert abs(counts[key] / n - p) < 5 * sd + 1e-3, key
    # The same seed gives the same trees.
    assert [s.newick() for s in t.sample(50, seed=7)] == [s.newick() for s in samples[:50]]


def test_every_methods_tree_is_a_scipy_linkage():
    jet = tl.load_jets(JETS / "truth_9.json")[0]
    rng = np.random.default_rng(1)
    s = rng.random((8, 8))
    s = (s + s.T) / 2
    np.fill_diagonal(s, 0)
    trees = [
        tl.exact_trellis(jet).map_tree,
        tl.beam(jet)[0],
        tl.greedy(jet)[0],
        tl.kt(jet, p=1),
        tl.kt(jet, p=0),
        tl.kt(jet, p=-1),
        jet.truth,
        tl.exact_trellis(similarity=s).map_tree,
        tl.exact_trellis(similarity=s - s.mean(), energy="correlation").map_tree,
        tl.beam(similarity=s)[0],
        tl.greedy(similarity=s)[0],
        tl.average_linkage(s),
        tl.map_trellis(jet)[0],
        tl.sparse_trellis(jet).map_tree,
    ]
    x = np.vstack([rng.normal(0, 1, (5, 2)), rng.normal(5, 1, (5, 2))])
    trees += [tl.coalescent(x, m, seed=1).tree for m in ("mpost2", "smc1", "mgreedy")]
    trees += [tl.pydt_map(x, seed=1).tree, tl.pydt_map(x, ddt=True, seed=1).tree]
    trees += [tl.pydt_mcmc(x, iterations=5, seed=1).trees[-1]]
    for tree in trees:
        z = tree.to_linkage()
        assert z.shape == (tree.n_leaves - 1, 4) and z.dtype == np.float64
        assert sch.is_valid_linkage(z)
        d = sch.dendrogram(z, no_plot=True)
        assert sorted(d["leaves"]) == list(range(tree.n_leaves))
        # The linkage encodes the same clusters.
        root = sch.to_tree(z)
        assert sorted(root.pre_order()) == list(range(tree.n_leaves))


def test_trees_round_trip_through_newick():
    t = tl.Tree.from_newick("((0,2),(1,3));")
    assert t.newick() == "((0,2),(1,3));"
    assert tl.Tree.from_newick(t.newick()) == t
    assert [0, 2] in t.clusters() and t.n_leaves == 4


def test_integer_arrays_are_converted():
    jet = tl.Jet(np.array([[40, 1, 2, 30], [30, -2, 1, 20], [20, 1, -1, 10]]))
    assert jet.leaves.dtype == np.float64
    s = np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]])
    assert tl.exact_trellis(similarity=s).n_trees == 3


def test_a_jet_from_an_array():
    jet = tl.load_jets(JETS / "truth_5.json")[0]
    again = tl.Jet(jet.leaves, t_cut=jet.t_cut, lam=jet.lam, lam_root=jet.lam_root)
    assert again.leaves.shape == (5, 4)
    assert tl.exact_trellis(again).log_z == tl.exact_trellis(jet).log_z
    # A non-contiguous view gives the same jet.
    wide = np.zeros((5, 8))
    wide[:, ::2] = jet.leaves
    view = wide[:, ::2]
    assert not view.flags["C_CONTIGUOUS"]
    assert tl.exact_trellis(tl.Jet(view)).log_z == tl.exact_trellis(tl.Jet(jet.leaves)).log_z


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: tl.Jet(np.array([[np.nan, 0, 0, 1.0], [2.0, 0, 0, 1.0]])), ValueError),
        (lambda: tl.Jet(np.ones((3, 3))), ValueError),
        (lambda: tl.Jet(np.array([[1, 0, 0, 0]], dtype=np.int64), t_cut=1e-300), ValueError),
        (lambda: tl.Jet([["a", "b", "c", "d"]]), TypeError),
        (lambda: tl.Jet(np.ones(4)), ValueError),
        (lambda: tl.Jet(np.array([[1.0, 0, 0, 2.0], [2.0, 0, 0, 1.0]])), ValueError),
        (lambda: tl.Jet(np.ones((2, 4)), t_cut=-1.0), ValueError),
        (lambda: tl.exact_trellis(similarity=np.ones((3, 4))), ValueError),
        (lambda: tl.exact_trellis(similarity=np.array([[0, 1.0], [2.0, 0]])), ValueError),
        (lambda: tl.exact_trellis(similarity=np.full((3, 3), np.inf)), ValueError),
        (lambda: tl.exact_trellis(similarity=np.zeros((3, 3)), energy="magic"), ValueError),
        (lambda: tl.exact_trellis(similarity=np.zeros((3, 3)), beta=1e308), ValueError),
        (lambda: tl.exact_trellis(similarity=np.zeros((30, 30)), max_leaves=22), ValueError),
        (lambda: tl.exact_trellis(), ValueError),
        (lambda: tl.load_jets("/no/such/file.json"), ValueError),
        (lambda: tl.load_jets("/dev/zero"), ValueError),
        (lambda: tl.Tree.from_newick("((0,1);"), ValueError),
        (lambda: tl.exact_trellis(similarity="not an array"), TypeError),
    ],
)
def test_bad_input_raises_and_never_crashes(call, error):
    with pytest.raises(error) as e:
        call()
    assert "\n" not in str(e.value)


def test_beyond_the_exact_limit_the_message_states_memory_and_time():
    with pytest.raises(ValueError, match="memory") as e:
        tl.exact_trellis(similarity=np.zeros((30, 30)), max_leaves=22)
    assert "N = 30" in str(e.value)


def test_generator_map_trellis_marginals_and_linkage():
    jets = tl.generate_jets(5, min_leaves=6, max_leaves=8, seed=3)
    assert len(jets) == 5 and all(6 <= j.n_leaves <= 8 for j in jets)
    assert [j.leaves.tolist() for j in tl.generate_jets(5, 6, 8, seed=3)] == [
        j.leaves.tolist() for j in jets
    ]
    for jet in jets:
        full = tl.exact_trellis(jet)
        tree, value = tl.map_trellis(jet)
        assert value == full.map_log_likelihood and tree == full.map_tree
        # Every leaf and the root are clusters of every tree; a pair is sometimes.
        assert abs(full.cluster_marginal(list(range(jet.n_leaves))) - 1) < 1e-12
        assert abs(full.cluster_marginal([0]) - 1) < 1e-12
        assert 0 <= full.cluster_marginal([0, 1]) <= 1
    s = np.array([[0, 3, 1, 0], [3, 0, 1, 0], [1, 1, 0, 2], [0, 0, 2, 0.0]])
    # (0, 1) at 3, then (2, 3) at 2 (above {0, 1} with 2 at 1), then the root.
    assert tl.average_linkage(s).newick() == "((0,1),(2,3));"


def test_flat_trellis_on_affinities():
    a = np.array([[0, 2, -1, -1], [2, 0, -1, -1], [-1, -1, 0, 2], [-1, -1, 2, 0.0]])
    f = tl.flat_trellis(a)
    assert f.map_labels().tolist() == [0, 0, 1, 1]
    m = f.pairwise_marginals()
    assert m.shape == (4, 4) and np.allclose(m, m.T) and np.all((m >= 0) & (m <= 1 + 1e-12))
    assert m[0, 1] > m[0, 2]
    assert f.log_z >= f.map_log_energy
    with pytest.raises(ValueError):
        tl.flat_trellis(np.ones((2, 3)))


def test_the_stub_lists_every_public_name_and_member():
    import ast

    import trellis_lab._trellis_lab as ext

    stub = ast.parse((pathlib.Path(tl.__file__).parent / "_trellis_lab.pyi").read_text())
    declared = {}
    for node in stub.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("_"):
            continue  # a typing helper of the stub alone (a TypedDict), not a runtime name
        if isinstance(node, ast.ClassDef):
            declared[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef)
            }
        elif isinstance(node, ast.FunctionDef):
            declared[node.name] = None
    public = {n for n in dir(ext) if not n.startswith("_")}
    # The package adds the command line's results (trellis_lab.results, pure Python).
    assert public == set(declared) == set(tl.__all__) - set(tl.results.__all__)
    for name, members in declared.items():
        if members is None or issubclass(getattr(ext, name), BaseException):
            continue
        real = {m for m in dir(getattr(ext, name)) if not m.startswith("_")}
        assert real == {m for m in members if not m.startswith("_")}, name
