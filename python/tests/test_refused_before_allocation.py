"""Nothing aborts the interpreter: the six inputs that did (issue 50) are refused by name and
cost before anything is converted or allocated, each in a child process (two under a 2 GB
address-space limit, as `ulimit -v 2000000` sets), and tree identity, hashing and clusters take
time and memory linear in the leaves (a 100,000-leaf caterpillar). Also the integer arguments
too large for their limit, an empty jet list, and a Newick label of a million digits."""

import json
import random
import subprocess
import sys

import numpy as np
import pytest

import trellis_lab as tl

CHILD = r"""
import json, resource, sys, time
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import trellis_lab as tl
X = np.random.default_rng(0).normal(size=(20, 3))
big = np.ones((10**5, 10**3), np.float32) if "400 MB" in sys.argv[2] else None
calls = {
    "pydt_mcmc iterations": lambda: tl.pydt_mcmc(X, 10**10),
    "coalescent particles": lambda: tl.coalescent(X, particles=10**9),
    "from_parents": lambda: tl.Tree.from_parents(
        10**9, np.broadcast_to(np.int64(-1), (2 * 10**9 - 1,))
    ),
    "coalescent 400 MB": lambda: tl.coalescent(big),
    "standardize 400 MB": lambda: tl.standardize(big),
}
t0 = time.monotonic()
try:
    out = calls[sys.argv[2]]()
    kind, message = "returned", type(out).__name__
except Exception as e:
    kind, message = type(e).__name__, str(e)
print(json.dumps({"kind": kind, "message": message, "seconds": time.monotonic() - t0}))
"""

GIB2 = 2_000_000 * 1024  # ulimit -v 2000000 (KiB)

# (call, address-space limit, the words the refusal must hold)
CASES = [
    ("pydt_mcmc iterations", 0,
     ["iterations = 10000000000 is more than 1000000", "pydt.mcmc.iterations", "years"]),
    ("coalescent particles", 0,
     ["particles = 1000000000 is more than 100000", "over 20 points they may take up to", "TiB"]),
    ("from_parents", 0, ["parents: a tree of 1999999999 nodes would take", "GiB"]),
    ("coalescent 400 MB", GIB2, ["data has shape (100000, 1000)", "pairwise tables", "GiB"]),
]


def run_child(name, limit):
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(limit), name],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr[-2000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name,limit,words", CASES, ids=[c[0] for c in CASES])
def test_an_input_that_aborted_is_refused_at_once_by_name_and_cost(name, limit, words):
    got = run_child(name, limit)
    assert got["kind"] == "ValueError", got
    msg = got["message"]
    assert "\n" not in msg and len(msg) < 600, msg
    for w in words:
        assert w in msg, (w, msg)
    assert got["seconds"] < 0.5, got


def test_standardize_of_a_400_mb_float32_array_under_2_gb_answers_without_aborting():
    # One float64 copy (800 MB) is made: it fits beside the input, or is refused by its cost.
    got = run_child("standardize 400 MB", GIB2)
    if got["kind"] == "returned":
        assert got["message"] == "ndarray"
    else:
        assert got["kind"] in ("ValueError", "MemoryError"), got
        assert "data" in got["message"] and "\n" not in got["message"], got


CATERPILLAR = r"""
import resource, sys, time
import trellis_lab as tl
n = int(sys.argv[1])
parts = ["(" * (n - 1), "0"] + [f",{i})" for i in range(1, n)] + [";"]
t = tl.Tree.from_newick("".join(parts))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.monotonic(); h = hash(t); t1 = time.monotonic() - t0
u = tl.Tree.from_parents(n, t.parents)
t0 = time.monotonic(); same = (t == u) and (t == t); t2 = time.monotonic() - t0
t0 = time.monotonic(); c = t.clusters(); t3 = time.monotonic() - t0
first, last = c[0], c[-1]
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(h == hash(u), same, len(c), first == [0, 1], last == list(range(n)),
      c.total_size == n * (n + 1) // 2 - 1, [0, 1, 2] in c, c.index([0, 1, 2]),
      len(repr(c)) < 200, round(t1, 3), round(t2, 3), round(t3, 3), grown)
"""


def test_a_100000_leaf_caterpillar_hashes_compares_and_lists_its_clusters_in_linear_memory():
    n = 100_000
    r = subprocess.run(
        [sys.executable, "-c", CATERPILLAR, str(n)],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout.split()
    assert out[:9] == ["True", "True", str(n - 1), "True", "True", "True", "True", "1", "True"], out
    hash_s, eq_s, clusters_s, grown_kib = map(float, out[9:])
    assert hash_s < 1.0 and eq_s < 2.0 and clusters_s < 1.0, out
    # Linear: a few dozen bytes per leaf (the quadratic lists would be 40 GB).
    assert grown_kib < 100 * 1024, f"peak memory grew by {grown_kib} KiB"


def brute_clusters(t):
    """Every internal node's sorted leaves, the lists sorted, from the parent array."""
    n, parents = t.n_leaves, t.parents.tolist()
    below = {v: [] for v in range(len(parents))}
    for leaf in range(n):
        v = parents[leaf]
        while v != -1:
            below[v].append(leaf)
            v = parents[v]
    return sorted(sorted(c) for v, c in below.items() if v >= n)


def random_tree(n, rng, arity=2):
    """A random tree over n leaves, nodes joining up to `arity` clusters at a time."""
    live = list(range(n))
    parents = [-1] * n
    while len(live) > 1:
        k = min(len(live), rng.randint(2, arity))
        picked = rng.sample(live, k)
        node = len(parents)
        parents.append(-1)
        for c in picked:
            parents[c] = node
            live.remove(c)
        live.append(node)
    return tl.Tree.from_parents(n, parents)


def test_the_lazy_clusters_are_the_sorted_lists_and_equal_trees_hash_equal():
    rng = random.Random(5)
    for case in range(300):
        n = rng.randint(1 if case == 0 else 2, 40)
        t = random_tree(n, rng, arity=rng.choice([2, 2, 3, 5]))
        want = brute_clusters(t)
        c = t.clusters()
        assert list(c) == want and c.tolist() == want and c == want and len(c) == len(want)
        assert c[::-1] == want[::-1] and c[1:3] == want[1:3]
        if want:
            assert c[-1] == want[-1] and want[0] in c and c.index(want[-1]) == len(want) - 1
            assert c.count(want[0]) == 1 and [n] not in c and "x" not in c
            if len(want[0]) > 1:
                assert want[0][::-1] not in c
        # The same tree numbered otherwise: equal, the same hash, the same clusters.
        again = tl.Tree.from_newick(t.newick())
        assert again == t and hash(again) == hash(t) and again.clusters() == c
        assert len({t, again}) == 1
    with pytest.raises(IndexError):
        tl.Tree.from_newick("((0,1),2);").clusters()[2]
    assert tl.Tree.from_newick("((0,1),2);") != tl.Tree.from_newick("((0,2),1);")
    from collections.abc import Sequence

    assert isinstance(tl.Tree.from_newick("(0,1);").clusters(), Sequence)


def test_integers_beyond_their_limit_say_the_limit():
    s = np.random.default_rng(0).random((5, 5))
    s = (s + s.T) / 2
    t = tl.exact_trellis(similarity=s)
    cases = [
        (lambda: t.sample(2**64), ["n = 18446744073709551616 is more than", "draw at most"]),
        (lambda: t.sample_parents(2**64), ["n = 18446744073709551616 is more than"]),
        (lambda: t.rank(t.map_tree, cap=10**30),
         ["cap = 1000000000000000000000000000000 is more than 1000000000", "board.rank_cap"]),
        (lambda: t.rank(t.map_tree, cap=10**40), ["cap = 2**127 or more", "1000000000"]),
        (lambda: t.rank(t.map_tree, cap=10**12), ["13.9 h by the cost model", "10 ns per tree"]),
        (lambda: tl.exact_trellis(similarity=s, max_leaves=10**40), ["max_leaves = 2**127"]),
        (lambda: tl.generate_jets(3, seed=2**64), ["seed = 18446744073709551616"]),
        (lambda: tl.pydt_map(s, iterations=10**6), ["iterations = 1000000 is more than 100000"]),
    ]
    for call, words in cases:
        with pytest.raises(ValueError) as e:
            call()
        msg = str(e.value)
        assert "must be an integer >= 0" not in msg and "\n" not in msg, msg
        for w in words:
            assert w in msg, (w, msg)


def test_an_empty_jet_list_is_said_empty():
    for call in (lambda: tl.fit_lambda([]), lambda: tl.lambda_curve([], [1.0, 2.0]),
                 lambda: tl.fit_lambda([], by="truth")):
        with pytest.raises(ValueError, match="jets is empty"):
            call()


def test_a_newick_label_of_a_million_digits_gives_a_short_error():
    for text in ("(" + "1" * 10**6 + ",0);", "((0,1):" + "9x" * 10**6 + ",2);"):
        with pytest.raises(ValueError) as e:
            tl.Tree.from_newick(text)
        msg = str(e.value)
        assert len(msg) < 300 and "more characters" in msg and "\n" not in msg, msg[:400]
