"""Safe under Ctrl-C, cancel tokens and huge inputs; wrong inputs refused by name.

- Ctrl-C (SIGINT from a timer thread) 0.05 s, 0.15 s and 1 s after the start of every long
  call raises KeyboardInterrupt promptly (within STOP seconds of the signal), whether it lands in
  the argument conversion, the set-up of the computation or its main loop.
- A call on another thread stops when its CancelToken is cancelled or times out.
- Oversized inputs are refused, without a copy, in a subprocess under a 2 GiB address-space cap.
- Complex arrays, trees over other leaves and negative or huge integers are one-line errors
  naming the argument.
"""

import concurrent.futures
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import trellis_lab as tl
from made_up import jet_of, points, similarity

# How long a call may run on after Ctrl-C (the poll is 50 ms; batches take milliseconds).
STOP = 1.0


@pytest.fixture(scope="module")
def built():
    """Trellises to sample from (built once)."""
    return {
        "exact": tl.exact_trellis(similarity=similarity(12)),
        "sparse": tl.sparse_trellis(similarity=similarity(24), seed_trees=2000),
    }


# Every long call, with inputs that keep it busy for well over the longest delay (several
# seconds to minutes when left to run).
LONG_CALLS = {
    "exact_trellis similarity (split loop)": lambda b: tl.exact_trellis(
        similarity=similarity(21), max_leaves=21
    ),
    "exact_trellis jet (eight lanes)": lambda b: tl.exact_trellis(jet_of(21), max_leaves=21),
    "map_trellis": lambda b: tl.map_trellis(similarity=similarity(23), max_leaves=23),
    "flat_trellis": lambda b: tl.flat_trellis(similarity(21) - 0.5),
    "sparse_trellis": lambda b: tl.sparse_trellis(similarity=similarity(64), seed_trees=2000),
    "beam": lambda b: tl.beam(similarity=similarity(64), beam_size=2000),
    "Trellis.sample": lambda b: b["exact"].sample(3_000_000),
    "SparseTrellis.sample": lambda b: b["sparse"].sample(3_000_000),
    "coalescent": lambda b: tl.coalescent(points(1500), particles=200),
    "pydt_map": lambda b: tl.pydt_map(points(200), iterations=100_000),
    "pydt_mcmc": lambda b: tl.pydt_mcmc(points(60), 1_000_000),
    "generate_jets": lambda b: tl.generate_jets(1_000_000, min_leaves=8, max_leaves=12),
}


@pytest.mark.filterwarnings("ignore::trellis_lab.CostWarning")
@pytest.mark.parametrize("delay", [0.05, 0.15, 1.0])
@pytest.mark.parametrize("name", list(LONG_CALLS))
def test_ctrl_c_stops_every_long_call_promptly(built, name, delay):
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    returned = []
    timer = threading.Timer(delay, interrupt)
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            LONG_CALLS[name](built)
            # Reached only if the call ended first: take the signal here, then fail below.
            returned.append(time.monotonic() - t0)
            time.sleep(delay + 5)
    finally:
        timer.cancel()
    end = time.monotonic()
    assert not returned, f"{name} ended after {returned[0]:.2f} s, before Ctrl-C"
    assert sent, "the call raised before the signal was sent"
    assert end - sent[0] < STOP, f"{name}: stopped {end - sent[0]:.2f} s after Ctrl-C"
    assert sent[0] - t0 >= delay


def test_after_ctrl_c_the_next_computation_runs_normally():
    timer = threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tl.exact_trellis(similarity=similarity(21), max_leaves=21)
    finally:
        timer.cancel()
    assert tl.exact_trellis(similarity=similarity(6)).n_trees == 945


def test_a_token_stops_a_call_on_another_thread():
    s = similarity(21)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        token = tl.CancelToken()
        t0 = time.monotonic()
        future = pool.submit(tl.exact_trellis, similarity=s, max_leaves=21, cancel=token)
        time.sleep(0.3)
        assert not future.done()
        token.cancel()
        with pytest.raises(tl.CancelledError) as e:
            future.result(timeout=STOP + 0.5)
        assert time.monotonic() - t0 < 0.3 + STOP
        assert "\n" not in str(e.value) and token.cancelled and not token.timed_out
        # A cancelled token stops a later call at once.
        t0 = time.monotonic()
        with pytest.raises(tl.CancelledError):
            pool.submit(tl.beam, similarity=similarity(64), beam_size=2000, cancel=token).result()
        assert time.monotonic() - t0 < 0.5

        # A timeout: TimeoutError once it has passed.
        token = tl.CancelToken(timeout=0.3)
        t0 = time.monotonic()
        future = pool.submit(tl.map_trellis, similarity=similarity(23), max_leaves=23, cancel=token)
        with pytest.raises(TimeoutError) as e:
            future.result(timeout=0.3 + STOP + 0.5)
        assert 0.3 <= time.monotonic() - t0 < 0.3 + STOP
        assert "timeout of 0.3 s" in str(e.value) and token.timed_out

    # A token that is never cancelled changes nothing, and Ctrl-C with a token still raises
    # KeyboardInterrupt (without cancelling the token).
    token = tl.CancelToken(timeout=3600)
    assert tl.exact_trellis(similarity=s[:6, :6], cancel=token).n_trees == 945
    timer = threading.Timer(0.15, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tl.exact_trellis(similarity=s, max_leaves=21, cancel=token)
    finally:
        timer.cancel()
    assert not token.cancelled
    with pytest.raises(ValueError, match="timeout = -1"):
        tl.CancelToken(timeout=-1)


OVERSIZED = r"""
import resource, sys
import numpy as np
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import trellis_lab as tl

before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
row = np.array([10.0, 1.0, 2.0, 3.0])
huge_s = np.broadcast_to(1.0, (40000, 40000))
small_s = np.ones((5, 5)) - np.eye(5)
t = tl.exact_trellis(similarity=small_s)
sp = tl.sparse_trellis(similarity=small_s)
cases = [
    ("Jet float view", lambda: tl.Jet(np.broadcast_to(row, (10**9, 4))), "leaves has 1000000000 rows"),
    ("Jet int view", lambda: tl.Jet(np.broadcast_to(np.int64(3), (10**9, 4))), "at most 64 leaves"),
    ("exact_trellis", lambda: tl.exact_trellis(similarity=huge_s), "(40000, 40000)"),
    ("exact_trellis int", lambda: tl.exact_trellis(similarity=np.broadcast_to(1, (40000, 40000))), "at most 64"),
    ("map_trellis", lambda: tl.map_trellis(similarity=huge_s), "at most 64"),
    ("beam", lambda: tl.beam(similarity=huge_s), "at most 64"),
    ("greedy", lambda: tl.greedy(similarity=huge_s), "at most 64"),
    ("sparse_trellis", lambda: tl.sparse_trellis(similarity=huge_s), "at most 64"),
    ("average_linkage", lambda: tl.average_linkage(huge_s), "average linkage of 40000 points would take"),
    ("flat_trellis", lambda: tl.flat_trellis(huge_s), "affinity has shape (40000, 40000)"),
    ("dasgupta_cost", lambda: t.map_tree.dasgupta_cost(huge_s), "for a tree of 5 leaves"),
    ("Trellis.sample", lambda: t.sample(10**10), "draw at most"),
    ("SparseTrellis.sample", lambda: sp.sample(10**10), "draw at most"),
    ("generate_jets", lambda: tl.generate_jets(10**10), "generate at most"),
    ("coalescent copy", lambda: tl.coalescent(np.broadcast_to(row[:2], (10**9, 2))), "data has shape (1000000000, 2)"),
    ("coalescent tables", lambda: tl.coalescent(np.arange(200000.0).reshape(-1, 2)), "cluster fewer points"),
    ("pydt_map", lambda: tl.pydt_map(np.broadcast_to(row[:2], (10**9, 2))), "more than 20000"),
    ("pydt_mcmc", lambda: tl.pydt_mcmc(np.broadcast_to(row[:2], (10**9, 2)), 3), "more than 20000"),
    ("standardize", lambda: tl.standardize(np.broadcast_to(row[:2], (10**9, 2))), "would take"),
]
for name, call, needle in cases:
    try:
        call()
    except ValueError as e:
        msg = str(e)
        assert needle in msg and "\n" not in msg, (name, msg)
        print("refused:", name, "|", msg)
    else:
        sys.exit(f"{name}: not refused")
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print("peak grew by KiB:", grown)
assert grown < 200 * 1024, f"peak memory grew by {grown} KiB: something was copied"
print("ALL REFUSED")
"""


def test_oversized_inputs_are_refused_without_a_copy_under_a_2_gib_cap():
    r = subprocess.run(
        [sys.executable, "-c", OVERSIZED], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "ALL REFUSED" in r.stdout, r.stdout


def one_line(excinfo, *needles):
    msg = str(excinfo.value)
    assert msg and "\n" not in msg, msg
    for n in needles:
        assert n in msg, msg


def test_a_tree_over_other_leaves_has_no_probability():
    t = tl.exact_trellis(similarity=similarity(5))
    for newick, n in [("((0,1),2);", 3), ("((((((0,1),2),3),4),5),6);", 7)]:
        with pytest.raises(ValueError) as e:
            t.log_probability(tl.Tree.from_newick(newick))
        one_line(e, f"the tree has {n} leaves", "built over 5")
    assert t.log_probability(t.map_tree) < 0


def test_complex_arrays_are_refused_not_truncated():
    jet = jet_of(5)
    s = similarity(5)
    x = points(6)
    cases = [
        (lambda: tl.Jet(jet.leaves + 1j), "leaves"),
        (lambda: tl.Jet((jet.leaves + 0j).tolist()), "leaves"),
        (lambda: tl.exact_trellis(similarity=s + 1j * s), "similarity"),
        (lambda: tl.beam(similarity=s.astype(np.complex64)), "similarity"),
        (lambda: tl.flat_trellis(s + 0j), "affinity"),
        (lambda: tl.coalescent(x + 1j), "data"),
        (lambda: tl.pydt_map(x + 1j), "data"),
        (lambda: tl.standardize(x + 1j), "data"),
        (lambda: tl.coalescent(x, phi=np.eye(2) + 0j), "phi"),
        (lambda: tl.exact_trellis(similarity=s).map_tree.dasgupta_cost(s + 1j), "similarity"),
    ]
    for call, name in cases:
        with pytest.raises(TypeError) as e:
            call()
        one_line(e, name)
        assert "complex" in str(e.value) or "real numbers" in str(e.value)


def test_negative_and_huge_integers_name_the_argument():
    s = similarity(5)
    t = tl.exact_trellis(similarity=s)
    sp = tl.sparse_trellis(similarity=s)
    x = points(6)
    cases = [
        (lambda: tl.exact_trellis(similarity=s, max_leaves=-1), "max_leaves = -1"),
        (lambda: tl.map_trellis(similarity=s, max_leaves=-1), "max_leaves = -1"),
        (lambda: tl.beam(similarity=s, beam_size=-1), "beam_size = -1"),
        (lambda: tl.beam(similarity=s, beam_size=0), "beam_size = 0"),
        (lambda: t.sample(-1), "n = -1"),
        (lambda: t.sample(3, seed=-1), "seed = -1"),
        (lambda: t.sample(3, seed=2**64), "seed = 18446744073709551616"),
        (lambda: t.sample(2**70), "n = 1180591620717411303424"),
        (lambda: sp.sample(-1), "n = -1"),
        (lambda: sp.sample(3, seed=-1), "seed = -1"),
        (lambda: tl.sparse_trellis(similarity=s, seed_trees=-1), "seed_trees = -1"),
        (lambda: tl.generate_jets(-1), "n = -1"),
        (lambda: tl.generate_jets(3, min_leaves=-2), "min_leaves = -2"),
        (lambda: tl.generate_jets(3, max_leaves=-2), "max_leaves = -2"),
        (lambda: tl.generate_jets(3, seed=-1), "seed = -1"),
        (lambda: tl.generate_jets(3, max_tries=-1), "max_tries = -1"),
        (lambda: t.cluster_marginal([0, -1]), "leaf -1"),
        (lambda: tl.Tree.from_parents(-1, [-1]), "n_leaves = -1"),
        (lambda: tl.coalescent(x, particles=-1), "particles = -1"),
        (lambda: tl.coalescent(x, seed=-1), "seed = -1"),
        (lambda: tl.pydt_map(x, seed=-1), "seed = -1"),
        (lambda: tl.pydt_mcmc(x, -1), "iterations = -1"),
    ]
    for call, needle in cases:
        with pytest.raises(ValueError) as e:
            call()
        one_line(e, needle)
    # NumPy integers are integers too.
    assert len(t.sample(np.int64(3), seed=np.uint64(7))) == 3
